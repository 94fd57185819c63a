// AVX-512 (with VBMI byte permutes) kernels for the NVDLA weight formats,
// chosen at run time by optimized/nvdla.cc; each returns false when the CPU,
// the instruction-set cap (optimized/isa.h) or the shape rules it out, and the
// caller then takes its portable path.
#pragma once

#include <cstdint>

namespace layoutcheck {

// The shape of image weights whose line of W*C channels fits one cube:
// kernel k (K of them, `group` per kernel group), line h, channel c, column w
// is logical element ((k * C + c) * H + h) * W + w and physical element
// k0 * C*H*W + j * gk * ext*W*C + kk * wj + (h - j*ext) * W*C + w * C + c,
// with k0 = the group's first kernel, gk its kernels, kk = k - k0, j = h / ext
// and wj = (lines in line group j) * W*C.
struct ImageWeightShape {
  uint64_t K = 0, C = 0, H = 0, W = 0, eb = 1, group = 32, ext = 1;
};

bool image_weight_copy_avx512(const ImageWeightShape& s, const uint8_t* src, uint8_t* dst, bool to_physical);

}  // namespace layoutcheck
