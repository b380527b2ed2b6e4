// JavaScriptCore's C API: WebKitGTK's javascriptcoregtk-4.1 on Linux, the
// JavaScriptCore framework on Apple platforms. Linking is set per platform in
// Package.swift (RelataScript's linker settings).
#ifndef RELATA_CJAVASCRIPTCORE_SHIM_H
#define RELATA_CJAVASCRIPTCORE_SHIM_H

#if defined(__APPLE__)
#include <JavaScriptCore/JavaScriptCore.h>
#else
#include <JavaScriptCore/JavaScript.h>
#endif

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

// Not in JavaScriptCore's public headers (JSContextRefPrivate.h), so not declared
// here: Relata looks them up at run time (RelataScript's PrivateJavaScriptCore),
// which keeps an app linked cleanly against Apple's framework, where they are
// private API. Their contracts:
//
// void JSContextGroupSetExecutionTimeLimit(JSContextGroupRef group, double limit,
//                                          JSShouldTerminateCallback shouldTerminate, void *context);
//   The limit counts the CPU time of the thread running JavaScript since the VM
//   was entered; when it is exceeded, `shouldTerminate` is called and, when it
//   returns true, execution ends with an exception the script cannot catch.
//   If it returns false the limit is disarmed until it is set again.
// void JSContextGroupClearExecutionTimeLimit(JSContextGroupRef group);
// void JSGlobalContextSetEvalEnabled(JSGlobalContextRef ctx, bool enabled, JSStringRef message);
//   Turns `eval` (and `new Function`, and JSObjectMakeFunction) off for a context;
//   calling them throws an EvalError with `message`.
typedef bool (*JSShouldTerminateCallback)(JSContextRef ctx, void *context);

#ifdef __cplusplus
}
#endif

#endif
