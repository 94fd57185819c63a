// Independent IEEE fp16 oracles for the precision tests: the x86 F16C
// instructions, the compiler's _Float16 (gcc: soft-float in libgcc, since the
// tests are not built with -mf16c) and libfp16 (Debian libfp16-dev). Each gives
// the `ieee` rule; nvdla_from_ieee() applies the NVDLA clip to an fp16 result.
#pragma once

#include <cpuid.h>
#include <fp16.h>
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "layoutcheck/precision.h"

namespace layoutcheck::testing {

inline bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  const bool f16c = __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
  return f16c && __builtin_cpu_supports("avx2");
}

inline float as_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t as_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline bool is_nan16(uint16_t h) { return (h & 0x7fff) > 0x7c00; }
inline bool is_nan32(uint32_t x) { return (x & 0x7fffffffu) > 0x7f800000u; }

__attribute__((target("avx2,f16c"))) inline void f16c_f32_to_f16(const uint32_t* src, uint16_t* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_loadu_ps(reinterpret_cast<const float*>(src + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) {
    __m128i h = _mm_cvtps_ph(_mm_set_ss(as_float(src[i])), _MM_FROUND_TO_NEAREST_INT);
    dst[i] = static_cast<uint16_t>(_mm_extract_epi16(h, 0));
  }
}

__attribute__((target("avx2,f16c"))) inline uint32_t f16c_f16_to_f32(uint16_t h) {
  return as_bits(_mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h))));
}
__attribute__((target("avx2,f16c"))) inline uint16_t f16c_f32_to_f16(uint32_t x) {
  uint16_t h;
  f16c_f32_to_f16(&x, &h, 1);
  return h;
}

inline uint16_t fp16lib_f32_to_f16(uint32_t x) { return fp16_ieee_from_fp32_value(as_float(x)); }
// libfp16 passes a zero to __builtin_clz for +-0 (undefined behaviour, which
// UBSan reports); the zeros are answered here and every other value by libfp16.
inline uint32_t fp16lib_f16_to_f32(uint16_t h) {
  return (h & 0x7fff) == 0 ? static_cast<uint32_t>(h) << 16 : fp16_ieee_to_fp32_bits(h);
}

#if defined(__FLT16_MAX__)
constexpr bool kHaveFloat16 = true;
inline uint16_t float16_f32_to_f16(uint32_t x) {
  _Float16 h = static_cast<_Float16>(as_float(x));
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
inline uint32_t float16_f16_to_f32(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return as_bits(static_cast<float>(h));
}
#else
constexpr bool kHaveFloat16 = false;
inline uint16_t float16_f32_to_f16(uint32_t) { return 0; }
inline uint32_t float16_f16_to_f32(uint16_t) { return 0; }
#endif

// The nvdla rule from an ieee fp32 -> fp16 result: an INF (from overflow, or from
// an INF input, whose unit value is at least 65504) is clipped to +-65504, and a
// NaN input becomes +0 under flush_nan.
inline uint16_t nvdla_from_ieee(uint32_t input, uint16_t ieee, bool flush_nan) {
  if (is_nan32(input)) return flush_nan ? 0 : ieee;
  if ((ieee & 0x7fff) == 0x7c00) return static_cast<uint16_t>((ieee & 0x8000) | 0x7bff);
  return ieee;
}

// Equal bits, or both NaN when `nan_class_only` (oracles that canonicalize NaNs).
inline bool same16(uint16_t a, uint16_t b, bool nan_class_only) {
  return a == b || (nan_class_only && is_nan16(a) && is_nan16(b));
}
inline bool same32(uint32_t a, uint32_t b, bool nan_class_only) {
  return a == b || (nan_class_only && is_nan32(a) && is_nan32(b));
}

inline ConvertSpec spec(ConvertRule rule, DType from, DType to, NvdlaUnit unit = NvdlaUnit::kConv,
                        bool flush_nan = false) {
  ConvertSpec s;
  s.rule = rule;
  s.from = from;
  s.to = to;
  s.unit = unit;
  s.flush_nan = flush_nan;
  return s;
}

// Converts with `c`, failing the test on a bad status.
template <typename To, typename From>
std::vector<To> run(const Converter& c, const ConvertSpec& s, const std::vector<From>& in, NanCounts* nan = nullptr) {
  std::vector<To> out(in.size());
  Status st = c.convert(s, in.data(), in.size() * sizeof(From), out.data(), out.size() * sizeof(To), nan);
  EXPECT_TRUE(st.ok()) << c.name() << " " << to_string(s) << ": " << st.message();
  return out;
}

// The optimized paths this CPU runs (portable always).
inline std::vector<SimdPath> simd_paths() {
  std::vector<SimdPath> out = {SimdPath::kPortable};
  for (SimdPath p : {SimdPath::kF16cAvx2, SimdPath::kAvx512}) {
    if (simd_path_available(p)) out.push_back(p);
  }
  return out;
}

}  // namespace layoutcheck::testing
