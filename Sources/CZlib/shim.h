// zlib for Swift. Needs zlib1g-dev (pkg-config name: zlib).
#ifndef DALLY_CZLIB_SHIM_H
#define DALLY_CZLIB_SHIM_H

#include <zlib.h>

// deflateInit2 and inflateInit2 are function-like macros (they pass ZLIB_VERSION and
// sizeof(z_stream) to the real *_ functions), and Swift does not import function-like
// macros. These wrappers give Swift something to call.

static inline int CZlib_deflateInit2(z_streamp strm, int level, int method, int windowBits,
                                     int memLevel, int strategy) {
    return deflateInit2(strm, level, method, windowBits, memLevel, strategy);
}

static inline int CZlib_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}

#endif
