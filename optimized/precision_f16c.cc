// F16C + AVX2 kernels, 8 values per step. Equal to the reference because
// vcvtps2ph with imm8 = round-to-nearest-even is the IEEE 754 conversion (NaN:
// quiet, leading payload bits kept, as the reference's quiet_nan), vcvtph2ps is
// exact, and the nvdla clamp (precision_kernels.h) is applied in fp32 first.
// min/max take the NaN from their second operand, so the value goes second.
#include "optimized/precision_kernels.h"

#if defined(__x86_64__) && defined(__F16C__) && defined(__AVX2__)
#include <immintrin.h>

#include <cstring>

namespace layoutcheck::precision_kernels {
namespace {

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

inline __m256 nvdla_clamp(__m256 x, const NvdlaClamp& c) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  if (c.flush_nan) x = _mm256_andnot_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q), x);
  const __m256 abs = _mm256_and_ps(x, abs_mask);
  const __m256 is_inf = _mm256_cmp_ps(abs, _mm256_set1_ps(__builtin_inff()), _CMP_EQ_OQ);
  const __m256 replaced = _mm256_or_ps(_mm256_andnot_ps(abs_mask, x), _mm256_set1_ps(c.inf_value));
  x = _mm256_blendv_ps(x, replaced, is_inf);
  x = _mm256_min_ps(_mm256_set1_ps(c.max), x);
  return _mm256_max_ps(_mm256_set1_ps(-c.max), x);
}

void f32_to_f16(const uint8_t* src, uint8_t* dst, size_t n, const NvdlaClamp* clamp) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 4 * i));
    if (clamp) x = nvdla_clamp(x, *clamp);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), _mm256_cvtps_ph(x, kRound));
  }
  if (i < n) {  // the tail through a zero-padded block; mutate: equivalent (at i == n the tail copies nothing)
    uint8_t in[32] = {}, out[16];
    std::memcpy(in, src + 4 * i, 4 * (n - i));
    __m256 x = _mm256_loadu_ps(reinterpret_cast<const float*>(in));
    if (clamp) x = nvdla_clamp(x, *clamp);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_cvtps_ph(x, kRound));
    std::memcpy(dst + 2 * i, out, 2 * (n - i));
  }
}

void f16_to_f32(const uint8_t* src, uint8_t* dst, size_t n, const NvdlaClamp* clamp) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i)));
    if (clamp) x = nvdla_clamp(x, *clamp);
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + 4 * i), x);
  }
  if (i < n) {  // mutate: equivalent (at i == n the tail copies nothing)
    uint8_t in[16] = {}, out[32];
    std::memcpy(in, src + 2 * i, 2 * (n - i));
    __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
    if (clamp) x = nvdla_clamp(x, *clamp);
    _mm256_storeu_ps(reinterpret_cast<float*>(out), x);
    std::memcpy(dst + 4 * i, out, 4 * (n - i));
  }
}

}  // namespace

Kernels f16c_avx2_kernels() { return {&f32_to_f16, &f16_to_f32}; }

}  // namespace layoutcheck::precision_kernels

#else

namespace layoutcheck::precision_kernels {
Kernels f16c_avx2_kernels() { return {nullptr, nullptr}; }
}  // namespace layoutcheck::precision_kernels

#endif
