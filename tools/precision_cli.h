// The precision commands of the layoutcheck CLI (tools/precision_cli.cc):
//   layoutcheck precision nvdla --layer conv|sdp|lrn|pdp --input FORMAT --output PRECISION
//   layoutcheck convert --rule RULE --from D --to D [--offset X --scale Y] [--truncate M]
//                       [--unit U] [--flush-nan] [--impl reference|optimized] [--in F] [--out F]
// Each takes the whole argv (argv[1] is the command) and returns the exit status:
// 0 success (a valid table row), 1 an invalid table row, 2 bad input.
#pragma once

namespace layoutcheck::cli {

int precision_main(int argc, char** argv);
int convert_main(int argc, char** argv);

}  // namespace layoutcheck::cli
