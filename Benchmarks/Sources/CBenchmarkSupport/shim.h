#include <sqlite3.h>
#if defined(__linux__)
#include <malloc.h>
#endif
