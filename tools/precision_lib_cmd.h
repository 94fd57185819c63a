// `layoutcheck precision nvdla --lib PATH.so`: a user's own NVDLA precision
// tables (nvdla_precision_supported, include/layoutcheck/nvdla_precision_compat.h)
// checked against the reference's tables on every combination, and its SDP layer
// rules (nvdla_layer_supported, when it exports it) against check_sdp_layer on
// every layer of a finite space, in a child process (tools/precision_lib_cmd.cc).
// With --mode/--input/--output/--conv/--data it asks the layer function that one
// layer (the repro line of a disagreement). Exit status: 0 every answer agrees,
// 1 one differs, 2 bad input or a library that cannot be loaded, crashes or hangs.
#pragma once

#include <string>

#include "layoutcheck/precision.h"
#include "tools/cli_args.h"

namespace layoutcheck::cli {

int precision_lib_main(const Args& a);

// Whether `--lib` asks a library about this row of the tables.
bool precision_lib_covers(const PrecisionRow& row);

// Whether some layer `--lib` asks nvdla_layer_supported about breaks the rule
// `rule` (an nvdla.precision/... id) first, by the reference.
bool precision_lib_layer_reaches(const std::string& rule);

}  // namespace layoutcheck::cli
