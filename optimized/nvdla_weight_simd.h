// Vector kernels for the NVDLA weight formats (AVX-512, most with VBMI byte
// permutes; AVX2 shuffles and transposes where there is no VBMI or no
// AVX-512), chosen at run time by optimized/nvdla.cc; each returns false when
// the CPU, the instruction-set cap (optimized/isa.h) or the shape rules it
// out, and the caller then takes its portable path.
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

// The same without VBMI (AVX2 and up: in-lane byte shuffles), for kernels of
// at most group_permutes::kMaxBytes bytes; false having copied nothing otherwise.
bool image_weight_copy_shuffles(const ImageWeightShape& s, const uint8_t* src, uint8_t* dst, bool to_physical);

// Direct-convolution weights (K, C, H, W): kernel k's channels c0..c0+63 of a
// full 64-channel block are logical elements k*C*H*W + c0*H*W + [0, 64*H*W)
// (channel-major), and position pos of them is the physical row of 64
// elements at k0*C*H*W + c0*H*W*gk + (pos*gk + kk)*64. Copies every full
// block (c0 + 64 <= C) of int8 or 16-bit kernels of 9 positions (3x3) and
// returns true, or returns false having copied nothing; blocks of fewer channels are
// the caller's either way.
struct DcWeightShape {
  uint64_t K = 0, C = 0, H = 0, W = 0, eb = 1, group = 32;
};

bool dc_weight_full_blocks(const DcWeightShape& s, const uint8_t* src, uint8_t* dst, bool to_physical);

// Kernels of one channel block (C <= 64) whose blocks are small (C*H*W
// elements within the byte permutes' reach): the whole copy through byte
// permutes (AVX-512 VBMI) and true, or false having copied nothing.
bool dc_weight_one_block_permutes(const DcWeightShape& s, const uint8_t* src, uint8_t* dst, bool to_physical);

}  // namespace layoutcheck
