// `layoutcheck okk --lib PATH.so`: a user's own okk_* functions checked against
// the reference (tools/okk_cmd.cc).
//
// The library exports, with C linkage, any of the functions of the Sophgo TPU
// document with the signatures of include/layoutcheck/okkernel_compat.h:
//
//   int  okk_channle_num_per_npu(int start_idx, int num_channels, const okk_compat_config* cfg);
//   void okk_continuous_stride(dim4* stride, const dim4* shape);
//   void okk_128_byte_aligned_stride_for_32bit(dim4* stride, int start_idx, const dim4* shape,
//                                              const okk_compat_config* cfg);   // also _16bit, _8bit
//   void okk_compact_stride(dim4* stride, int start_idx, const dim4* shape, const okk_compat_config* cfg);
//
// Each one it exports is called, in a child process, over a grid of start NPUs,
// channel counts around multiples of X and H*W around multiples of the EU, and
// compared with the strides the TPU reference describes for the same tensor
// (tpu.continuous, tpu.aligned, tpu.compact). A function it does not export is
// "not provided". Exit status: 0 all provided functions agree, 1 one differs,
// 2 bad input or a library that cannot be loaded, crashes or hangs.
#pragma once

#include <string>

#include "tools/cli_args.h"

namespace layoutcheck::cli {

int okk_main(const Args& a);

// The reference layout whose facts give the expected values of a function
// `okk` checks ("tpu.compact" for okk_compact_stride), or nullptr for a name it does not check.
const char* okk_reference_layout(const std::string& symbol);

}  // namespace layoutcheck::cli
