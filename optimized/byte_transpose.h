// 16x16 byte transposes in registers: the interleave network shared by the
// kernels that turn 16 rows of 16 bytes into 16 columns (NVDLA feature atoms,
// MegEngine NCHWx groups).
//
// Four rounds of unpacks at 8, 16, 32 and 64 bits: after the round of width
// 2^k bytes, each register holds 2^k-byte pieces of 2^(k+1) source rows. Rows
// in v[0..15], byte j of row i ends in v[j] at byte i. Example: v[i] = {16i,
// 16i+1, ..., 16i+15} becomes v[j] = {j, 16+j, 32+j, ..., 240+j}.
// transpose16x16_epi8_x2 does two independent transposes, one per 128-bit lane;
// transpose16x16_epi8_x4 four, for 512-bit rows.
#pragma once

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

namespace layoutcheck::byte_transpose {

#define LC_BYTE_TRANSPOSE_NETWORK(V, T, LO8, HI8, LO16, HI16, LO32, HI32, LO64, HI64) \
  _Pragma("GCC unroll 16") for (int i = 0; i < 8; ++i) {                            \
    T[2 * i] = LO8(V[2 * i], V[2 * i + 1]);                                          \
    T[2 * i + 1] = HI8(V[2 * i], V[2 * i + 1]);                                      \
  }                                                                                  \
  _Pragma("GCC unroll 16") for (int i = 0; i < 4; ++i) {                            \
    _Pragma("GCC unroll 16") for (int j = 0; j < 2; ++j) {                          \
      V[4 * i + 2 * j] = LO16(T[4 * i + j], T[4 * i + j + 2]);                       \
      V[4 * i + 2 * j + 1] = HI16(T[4 * i + j], T[4 * i + j + 2]);                   \
    }                                                                                \
  }                                                                                  \
  _Pragma("GCC unroll 16") for (int i = 0; i < 2; ++i) {                            \
    _Pragma("GCC unroll 16") for (int j = 0; j < 4; ++j) {                          \
      T[8 * i + 2 * j] = LO32(V[8 * i + j], V[8 * i + j + 4]);                       \
      T[8 * i + 2 * j + 1] = HI32(V[8 * i + j], V[8 * i + j + 4]);                   \
    }                                                                                \
  }                                                                                  \
  _Pragma("GCC unroll 16") for (int j = 0; j < 8; ++j) {                            \
    V[2 * j] = LO64(T[j], T[j + 8]);                                                 \
    V[2 * j + 1] = HI64(T[j], T[j + 8]);                                             \
  }

__attribute__((always_inline)) inline void transpose16x16_epi8(__m128i v[16]) {
  __m128i t[16];
  LC_BYTE_TRANSPOSE_NETWORK(v, t, _mm_unpacklo_epi8, _mm_unpackhi_epi8, _mm_unpacklo_epi16, _mm_unpackhi_epi16,
                            _mm_unpacklo_epi32, _mm_unpackhi_epi32, _mm_unpacklo_epi64, _mm_unpackhi_epi64)
}

__attribute__((target("avx2"), always_inline)) inline void transpose16x16_epi8_x2(__m256i v[16]) {
  __m256i t[16];
  LC_BYTE_TRANSPOSE_NETWORK(v, t, _mm256_unpacklo_epi8, _mm256_unpackhi_epi8, _mm256_unpacklo_epi16,
                            _mm256_unpackhi_epi16, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32,
                            _mm256_unpacklo_epi64, _mm256_unpackhi_epi64)
}

// Four independent 16x16 transposes, one per 128-bit lane of 16 512-bit rows.
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void transpose16x16_epi8_x4(__m512i v[16]) {
  __m512i t[16];
  LC_BYTE_TRANSPOSE_NETWORK(v, t, _mm512_unpacklo_epi8, _mm512_unpackhi_epi8, _mm512_unpacklo_epi16,
                            _mm512_unpackhi_epi16, _mm512_unpacklo_epi32, _mm512_unpackhi_epi32,
                            _mm512_unpacklo_epi64, _mm512_unpackhi_epi64)
}

#undef LC_BYTE_TRANSPOSE_NETWORK

}  // namespace layoutcheck::byte_transpose

#endif
