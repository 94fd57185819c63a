// `layoutcheck precision nvdla --lib PATH.so`: a user's own NVDLA precision
// tables (nvdla_precision_supported, include/layoutcheck/nvdla_precision_compat.h)
// checked against the reference's tables on every combination, in a child process
// (tools/precision_lib_cmd.cc). Exit status: 0 every answer agrees, 1 one differs,
// 2 bad input or a library that cannot be loaded, crashes or hangs.
#pragma once

#include "layoutcheck/precision.h"
#include "tools/cli_args.h"

namespace layoutcheck::cli {

int precision_lib_main(const Args& a);

// Whether `--lib` asks a library about this row of the tables.
bool precision_lib_covers(const PrecisionRow& row);

}  // namespace layoutcheck::cli
