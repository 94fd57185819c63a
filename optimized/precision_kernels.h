// Conversion kernels of the optimized precision library, one set per vector path.
// Buffers are byte pointers (any alignment), little-endian values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace layoutcheck::precision_kernels {

// The nvdla rule applied to an fp32 value before the final rounding: a NaN becomes
// +0 when flush_nan, +-INF becomes +-inf_value, then the value is clamped to
// +-max (the target's largest finite value). Clamping before rounding to nearest
// gives the same result as rounding and then clipping, because every value above
// max rounds either to max or to INF, and INF is clipped to max.
struct NvdlaClamp {
  bool flush_nan;
  float inf_value;
  float max;
};

// n fp32 -> n fp16, round to nearest even; clamp == nullptr is the ieee rule.
using F32ToF16 = void (*)(const uint8_t* src, uint8_t* dst, size_t n, const NvdlaClamp* clamp);
// n fp16 -> n fp32 (exact); clamp == nullptr is the ieee rule.
using F16ToF32 = void (*)(const uint8_t* src, uint8_t* dst, size_t n, const NvdlaClamp* clamp);

struct Kernels {
  F32ToF16 f32_to_f16;
  F16ToF32 f16_to_f32;
};

Kernels portable_kernels();
// Null kernels when the file was built for another architecture.
Kernels f16c_avx2_kernels();
Kernels avx512_kernels();

}  // namespace layoutcheck::precision_kernels
