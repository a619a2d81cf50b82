// libzstd for Swift. Needs libzstd-dev (pkg-config name: libzstd).
#ifndef DALLY_CZSTD_SHIM_H
#define DALLY_CZSTD_SHIM_H

// The COVER and fastCover trainers' parameter structs (ZDICT_cover_params_t,
// ZDICT_fastCover_params_t) sit in zdict.h's "static linking only" section. Debian's and
// Ubuntu's shared libzstd export those functions, and libzstd-dev always matches the installed
// libzstd1 at build time; see ZstdDictionary+Training.swift for why Dally uses them.
#define ZDICT_STATIC_LINKING_ONLY

#include <zstd.h>
#include <zdict.h>
#include <zstd_errors.h>

#endif
