// libzstd for Swift. Needs libzstd-dev (pkg-config name: libzstd).
#ifndef DALLY_CZSTD_SHIM_H
#define DALLY_CZSTD_SHIM_H

#include <zstd.h>
#include <zdict.h>

#endif
