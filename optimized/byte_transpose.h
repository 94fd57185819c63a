// 16x16 byte and 8x8 word transposes in registers: the interleave networks
// shared by the kernels that turn rows into columns (NVDLA feature atoms,
// MegEngine NCHWx groups, TLA n-fractals).
//
// Four rounds of unpacks at 8, 16, 32 and 64 bits: after the round of width
// 2^k bytes, each register holds 2^k-byte pieces of 2^(k+1) source rows. Rows
// in v[0..15], byte j of row i ends in v[j] at byte i. Example: v[i] = {16i,
// 16i+1, ..., 16i+15} becomes v[j] = {j, 16+j, 32+j, ..., 240+j}.
// transpose16x16_epi8_x2 does two independent transposes, one per 128-bit lane;
// transpose16x16_epi8_x4 four, for 512-bit rows. Below them: 8x8 word and
// 4x4 dword transposes per lane, the 4 x 4 transpose of 128-bit lanes, and
// 16 x 16 32-bit elements.
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

// 8x8 transposes of 16-bit words per 128-bit lane: word j of row i ends in
// out[j] at word i. Three rounds of unpacks at 16, 32 and 64 bits; `out` may
// be `in`.
#define LC_WORD_TRANSPOSE_NETWORK(IN, OUT, T, LO16, HI16, LO32, HI32, LO64, HI64) \
  _Pragma("GCC unroll 8") for (int i = 0; i < 4; ++i) {                          \
    T[0][2 * i] = LO16(IN[2 * i], IN[2 * i + 1]);                                  \
    T[0][2 * i + 1] = HI16(IN[2 * i], IN[2 * i + 1]);                              \
  }                                                                                \
  _Pragma("GCC unroll 8") for (int i = 0; i < 2; ++i) {                          \
    _Pragma("GCC unroll 8") for (int j = 0; j < 2; ++j) {                        \
      T[1][4 * i + 2 * j] = LO32(T[0][4 * i + j], T[0][4 * i + j + 2]);            \
      T[1][4 * i + 2 * j + 1] = HI32(T[0][4 * i + j], T[0][4 * i + j + 2]);        \
    }                                                                              \
  }                                                                                \
  _Pragma("GCC unroll 8") for (int j = 0; j < 4; ++j) {                          \
    OUT[2 * j] = LO64(T[1][j], T[1][j + 4]);                                       \
    OUT[2 * j + 1] = HI64(T[1][j], T[1][j + 4]);                                   \
  }

__attribute__((always_inline)) inline void transpose8x8_epi16(const __m128i in[8], __m128i out[8]) {
  __m128i t[2][8];
  LC_WORD_TRANSPOSE_NETWORK(in, out, t, _mm_unpacklo_epi16, _mm_unpackhi_epi16, _mm_unpacklo_epi32,
                            _mm_unpackhi_epi32, _mm_unpacklo_epi64, _mm_unpackhi_epi64)
}

__attribute__((target("avx2"), always_inline)) inline void transpose8x8_epi16_x2(const __m256i in[8], __m256i out[8]) {
  __m256i t[2][8];
  LC_WORD_TRANSPOSE_NETWORK(in, out, t, _mm256_unpacklo_epi16, _mm256_unpackhi_epi16, _mm256_unpacklo_epi32,
                            _mm256_unpackhi_epi32, _mm256_unpacklo_epi64, _mm256_unpackhi_epi64)
}

__attribute__((target("avx512f,avx512bw"), always_inline)) inline void transpose8x8_epi16_x4(const __m512i in[8],
                                                                                           __m512i out[8]) {
  __m512i t[2][8];
  LC_WORD_TRANSPOSE_NETWORK(in, out, t, _mm512_unpacklo_epi16, _mm512_unpackhi_epi16, _mm512_unpacklo_epi32,
                            _mm512_unpackhi_epi32, _mm512_unpacklo_epi64, _mm512_unpackhi_epi64)
}

#undef LC_WORD_TRANSPOSE_NETWORK

// 4x4 transposes of 32-bit elements per 128-bit lane, in place: element j of
// v[i] ends in v[j] at element i. Unpacks at 32 and 64 bits.
#define LC_DWORD_TRANSPOSE_NETWORK(V, VEC, LO32, HI32, LO64, HI64)       \
  const VEC a = LO32(V[0], V[1]), b = LO32(V[2], V[3]);                 \
  const VEC c = HI32(V[0], V[1]), d = HI32(V[2], V[3]);                 \
  V[0] = LO64(a, b);                                                    \
  V[1] = HI64(a, b);                                                    \
  V[2] = LO64(c, d);                                                    \
  V[3] = HI64(c, d)

__attribute__((always_inline)) inline void transpose4x4_epi32(__m128i v[4]) {
  LC_DWORD_TRANSPOSE_NETWORK(v, __m128i, _mm_unpacklo_epi32, _mm_unpackhi_epi32, _mm_unpacklo_epi64,
                             _mm_unpackhi_epi64);
}

__attribute__((target("avx2"), always_inline)) inline void transpose4x4_epi32_x2(__m256i v[4]) {
  LC_DWORD_TRANSPOSE_NETWORK(v, __m256i, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32, _mm256_unpacklo_epi64,
                             _mm256_unpackhi_epi64);
}

__attribute__((target("avx512f"), always_inline)) inline void transpose4x4_epi32_x4(__m512i v[4]) {
  LC_DWORD_TRANSPOSE_NETWORK(v, __m512i, _mm512_unpacklo_epi32, _mm512_unpackhi_epi32, _mm512_unpacklo_epi64,
                             _mm512_unpackhi_epi64);
}

#undef LC_DWORD_TRANSPOSE_NETWORK

// The 4 x 4 transpose of the 128-bit lanes of four registers: lane l of v[i]
// ends in v[l] at lane i.
__attribute__((target("avx512f"), always_inline)) inline void transpose_lanes4x4(__m512i v[4]) {
  const __m512i s0 = _mm512_shuffle_i64x2(v[0], v[1], 0x44), s1 = _mm512_shuffle_i64x2(v[2], v[3], 0x44);
  const __m512i s2 = _mm512_shuffle_i64x2(v[0], v[1], 0xEE), s3 = _mm512_shuffle_i64x2(v[2], v[3], 0xEE);
  v[0] = _mm512_shuffle_i64x2(s0, s1, 0x88);
  v[1] = _mm512_shuffle_i64x2(s0, s1, 0xDD);
  v[2] = _mm512_shuffle_i64x2(s2, s3, 0x88);
  v[3] = _mm512_shuffle_i64x2(s2, s3, 0xDD);
}

// 16 x 16 32-bit elements, one 64-byte row per register: element j of v[i]
// ends in v[j] at element i. Unpacks at 32 and 64 bits make 4 x 4 transposes
// per lane, then the lanes of every fourth register are transposed.
__attribute__((target("avx512f"), always_inline)) inline void transpose16x16_epi32(__m512i v[16]) {
  __m512i t[16];
  _Pragma("GCC unroll 16") for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(v[2 * i], v[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(v[2 * i], v[2 * i + 1]);
  }
  // u[4g + m], lane L: element 4L + m of rows 4g..4g+3.
  __m512i u[16];
  _Pragma("GCC unroll 16") for (int g = 0; g < 4; ++g) {
    u[4 * g] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
    u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
    u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
    u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
  }
  _Pragma("GCC unroll 16") for (int m = 0; m < 4; ++m) {
    __m512i w[4] = {u[m], u[4 + m], u[8 + m], u[12 + m]};
    transpose_lanes4x4(w);
    _Pragma("GCC unroll 16") for (int l = 0; l < 4; ++l) v[4 * l + m] = w[l];
  }
}

}  // namespace layoutcheck::byte_transpose

#endif
