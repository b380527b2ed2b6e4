#include "RelataProcess.h"
#include <stdlib.h>

static bool configured = false;

// JavaScriptCore reads its options from the environment once, when the first VM is made.
// Polling traps make compiled loops check for termination themselves instead of waiting
// for a signal, so the CPU time limit stops a runaway loop even while other threads run
// their own engines. The variable is set here, while the process is still single-threaded:
// setenv is not safe once other threads may read the environment. A value the user set
// is kept.
__attribute__((constructor)) static void relata_configure_javascriptcore(void) {
    setenv("JSC_usePollingTraps", "true", 0);
    configured = true;
}

bool relata_javascriptcore_configured(void) {
    return configured;
}
