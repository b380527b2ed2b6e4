#ifndef RELATA_PROCESS_H
#define RELATA_PROCESS_H

#include <stdbool.h>

/// True once JavaScriptCore's process-wide options are set: a constructor sets them when
/// the program loads, before `main` and before any thread or engine exists.
bool relata_javascriptcore_configured(void);

#endif
