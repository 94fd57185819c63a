// AVX-512F kernels, 16 values per step: the same instructions as the F16C path
// (vcvtps2ph / vcvtph2ps on zmm registers) and the same fp32 clamp, so equal to
// the reference for the same reasons (precision_f16c.cc).
#include "optimized/precision_kernels.h"

#if defined(__x86_64__) && defined(__AVX512F__)
// gcc 12 warns inside avx512fintrin.h, whose _mm512_undefined_* helpers read an
// uninitialized variable on purpose (a false positive for every intrinsic using them).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstring>

namespace layoutcheck::precision_kernels {
namespace {

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

inline __m512 nvdla_clamp(__m512 x, const NvdlaClamp& c) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
  __m512i bits = _mm512_castps_si512(x);
  if (c.flush_nan) bits = _mm512_maskz_mov_epi32(_mm512_cmp_ps_mask(x, x, _CMP_ORD_Q), bits);
  const __m512i abs = _mm512_and_si512(bits, abs_mask);
  const __mmask16 is_inf = _mm512_cmpeq_epi32_mask(abs, _mm512_set1_epi32(0x7f800000));
  const __m512i replaced = _mm512_or_si512(_mm512_andnot_si512(abs_mask, bits),
                                           _mm512_castps_si512(_mm512_set1_ps(c.inf_value)));
  x = _mm512_castsi512_ps(_mm512_mask_blend_epi32(is_inf, bits, replaced));
  x = _mm512_min_ps(_mm512_set1_ps(c.max), x);
  return _mm512_max_ps(_mm512_set1_ps(-c.max), x);
}

void f32_to_f16(const uint8_t* src, uint8_t* dst, size_t n, const NvdlaClamp* clamp) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 x = _mm512_loadu_ps(src + 4 * i);
    if (clamp) x = nvdla_clamp(x, *clamp);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 2 * i), _mm512_cvtps_ph(x, kRound));
  }
  if (i < n) {  // mutate: equivalent (at i == n the tail copies nothing)
    uint8_t in[64] = {}, out[32];
    std::memcpy(in, src + 4 * i, 4 * (n - i));
    __m512 x = _mm512_loadu_ps(in);
    if (clamp) x = nvdla_clamp(x, *clamp);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtps_ph(x, kRound));
    std::memcpy(dst + 2 * i, out, 2 * (n - i));
  }
}

void f16_to_f32(const uint8_t* src, uint8_t* dst, size_t n, const NvdlaClamp* clamp) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 x = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * i)));
    if (clamp) x = nvdla_clamp(x, *clamp);
    _mm512_storeu_ps(dst + 4 * i, x);
  }
  if (i < n) {  // mutate: equivalent (at i == n the tail copies nothing)
    uint8_t in[32] = {}, out[64];
    std::memcpy(in, src + 2 * i, 2 * (n - i));
    __m512 x = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in)));
    if (clamp) x = nvdla_clamp(x, *clamp);
    _mm512_storeu_ps(out, x);
    std::memcpy(dst + 4 * i, out, 4 * (n - i));
  }
}

}  // namespace

Kernels avx512_kernels() { return {&f32_to_f16, &f16_to_f32}; }

}  // namespace layoutcheck::precision_kernels

#else

namespace layoutcheck::precision_kernels {
Kernels avx512_kernels() { return {nullptr, nullptr}; }
}  // namespace layoutcheck::precision_kernels

#endif
