// The precision commands of the layoutcheck CLI (tools/precision_cli.cc):
//   layoutcheck precision nvdla --layer conv|sdp|lrn|pdp --input FORMAT --output PRECISION
//   layoutcheck convert --rule RULE --from D --to D [--offset X --scale Y] [--truncate M]
//                       [--unit U] [--flush-nan] [--impl reference|optimized] [--in F] [--out F]
// Each takes the parsed command line (tools/cli_args.h) and returns the exit status:
// 0 success (a valid table row), 1 an invalid table row, 2 bad input.
#pragma once

#include "tools/cli_args.h"

namespace layoutcheck::cli {

int precision_main(const Args& a);
int convert_main(const Args& a);

}  // namespace layoutcheck::cli
