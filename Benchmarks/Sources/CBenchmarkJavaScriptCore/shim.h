// JavaScriptCore's C API for the rules' floor, called without Relata in between.
#include <JavaScriptCore/JavaScript.h>
#include <stdbool.h>

// Exported by WebKitGTK's library but declared only in its private headers: the time limit the
// rule runtime arms for every call, armed by the floor too.
typedef bool (*JSShouldTerminateCallback)(JSContextRef ctx, void *context);
void JSContextGroupSetExecutionTimeLimit(JSContextGroupRef group, double limit,
                                         JSShouldTerminateCallback shouldTerminate, void *context);
