// optimized/plane_transpose.h — transposes of planes of 1-, 2- and 4-byte
// elements with AVX2: dst[j][i] = src[i][j] for i < rows, j < cols, row
// strides in elements. The HTP NCHW layouts (each position of the loops
// around a plane) and the NVDLA weights of one channel block (a group's
// kernels' channel rows against its positions) use them.
//
// Tiles of 64 / kE rows and as many columns (64 bytes of each row on both
// sides): a tile's source lines are read whole into a stage on the stack (the
// next ones fetched meanwhile: rows of a plane are often a power-of-two
// stride apart, and lines read a piece at a time fall out of the few ways of
// the cache sets they share), then transposed from it in two blocks per 16
// bytes of columns, each destination line written by two adjacent stores
// (streamed when asked: whole lines past the cache). The rest of the plane
// goes in blocks of 2n rows by n columns (n = 16 / kE), the last block of a
// row or column of blocks ending at the plane's last row or column and
// overlapping the one before (its elements written again, the same); a plane
// narrower than a block goes in partial blocks and element by element. src
// and dst must not overlap.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "optimized/byte_transpose.h"
#include "optimized/head_store.h"
#include "optimized/isa.h"

// GCC 12 reads the _mm512_undefined_epi32() operand of some AVX-512 intrinsics
// as an uninitialized value.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace layoutcheck::plane_transpose {

// How far ahead of a tile's source lines the next ones are fetched.
constexpr uint64_t kAhead = 128;

// Per 128-bit lane of v (n = 16 / kE registers): the n x n transpose of
// kE-byte elements, element j of v[i] ending in v[j] at element i.
template <size_t kE>
__attribute__((target("avx2"), always_inline)) inline void transpose_lanes_avx2(__m256i* v) {
  if constexpr (kE == 1) {
    byte_transpose::transpose16x16_epi8_x2(v);
  } else if constexpr (kE == 2) {
    byte_transpose::transpose8x8_epi16_x2(v, v);
  } else {
    byte_transpose::transpose4x4_epi32_x2(v);
  }
}

// One block: `r` rows (up to 2n) of n elements at src, stride sb bytes,
// become n rows of r elements at dst, stride db. Rows i and n + i share a
// register, one per lane, so a destination row's 2n elements are one store.
// With `out` < n, only the first `out` destination rows are written (the
// columns past them read, not stored).
template <size_t kE, bool kFull>
__attribute__((target("avx2"), always_inline)) inline void block_avx2(const uint8_t* src, uint64_t sb, uint8_t* dst,
                                                                      uint64_t db, uint64_t r, uint64_t out = 16 / kE) {
  constexpr uint64_t n = 16 / kE;
  __m256i v[n];
#pragma GCC unroll 16
  for (uint64_t i = 0; i < n; ++i) {
    const __m128i lo = kFull || i < r ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * sb))
                                      : _mm_setzero_si128();
    const __m128i hi = kFull || n + i < r ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (n + i) * sb))
                                          : _mm_setzero_si128();
    v[i] = _mm256_set_m128i(hi, lo);
  }
  transpose_lanes_avx2<kE>(v);
#pragma GCC unroll 16
  for (uint64_t j = 0; j < n; ++j) {
    if (j >= out) break;
    if (kFull) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j * db), v[j]);
    } else {
      // From the register; through the stack and a memcpy call a row, 1 x 14 x 14 x 256 uint8 NCHW packed at 0.049 of
      // memcpy, 0.13-0.14 so (an Intel Xeon, pinned).
      store_head_avx2(dst + j * db, v[j], r * kE);
    }
  }
}

// The n x n transpose of kE-byte elements in n 16-byte registers (SSE2).
template <size_t kE>
__attribute__((always_inline)) inline void transpose_square_sse2(__m128i* v) {
  if constexpr (kE == 1) {
    byte_transpose::transpose16x16_epi8(v);
  } else if constexpr (kE == 2) {
    byte_transpose::transpose8x8_epi16(v, v);
  } else {
    byte_transpose::transpose4x4_epi32(v);
  }
}

// One n x n block in 128-bit registers (SSE2): n rows of n elements at src
// become n rows of n elements at dst.
template <size_t kE>
__attribute__((always_inline)) inline void square_sse2(const uint8_t* src, uint64_t sb, uint8_t* dst, uint64_t db) {
  constexpr uint64_t n = 16 / kE;
  __m128i v[n];
  for (uint64_t i = 0; i < n; ++i) v[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * sb));
  transpose_square_sse2<kE>(v);
  for (uint64_t j = 0; j < n; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j * db), v[j]);
}

// Rows [r0, r1) x columns [c0, c1) of a rows x cols plane (strides in bytes)
// by blocks, the last of each row or column of them moved back inside the
// plane; a plane of fewer than 2n rows by n x n squares the same way; one
// of fewer than n rows or columns by partial blocks, its columns past the
// last multiple of n element by element.
template <size_t kE>
__attribute__((target("avx2"))) void rect_avx2(const uint8_t* src, uint64_t sb, uint8_t* dst, uint64_t db,
                                               uint64_t rows, uint64_t cols, uint64_t r0, uint64_t r1, uint64_t c0,
                                               uint64_t c1) {
  constexpr uint64_t n = 16 / kE, block = 2 * n;
  if (r0 >= r1 || c0 >= c1) return;
  if (rows >= block && cols >= n) {
    for (uint64_t i0 = r0; i0 < r1; i0 += block) {
      const uint64_t i = std::min(i0, rows - block);
      for (uint64_t j0 = c0; j0 < c1; j0 += n) {
        const uint64_t j = std::min(j0, cols - n);
        block_avx2<kE, true>(src + i * sb + j * kE, sb, dst + j * db + i * kE, db, block);
      }
    }
    return;
  }
  if (rows >= n && cols >= n) {
    for (uint64_t i0 = r0; i0 < r1; i0 += n) {
      const uint64_t i = std::min(i0, rows - n);
      for (uint64_t j0 = c0; j0 < c1; j0 += n) {
        const uint64_t j = std::min(j0, cols - n);
        square_sse2<kE>(src + i * sb + j * kE, sb, dst + j * db + i * kE, db);
      }
    }
    return;
  }
  if (cols < n && rows >= block && c0 == 0 && c1 == cols) {
    // A plane narrower than n columns and at least 2n rows (the unpack of
    // 14 x 14 NCHW planes): whole blocks whose rows read n elements, the
    // ones past each row its next row's, the first cols destination rows
    // stored; the rows whose reads would pass the plane's last element go
    // element by element (on an Intel Xeon, pinned, of memcpy, 1 x 14 x 14 x
    // 256 uint8 NCHW unpack 0.073 -> 0.27).
    const uint64_t past = n * kE - cols * kE, safe = rows - std::min(rows, (past + sb - 1) / sb);
    uint64_t i = r0;
    for (; i + block <= std::min(r1, safe); i += block) block_avx2<kE, true>(src + i * sb, sb, dst + i * kE, db, block, cols);
    for (uint64_t j = 0; j < cols; ++j) {
      for (uint64_t k = i; k < r1; ++k) std::memcpy(dst + j * db + k * kE, src + k * sb + j * kE, kE);
    }
    return;
  }
  const uint64_t whole = c0 + (c1 - c0) / n * n;
  for (uint64_t i = r0; i < r1; i += block) {
    const uint64_t r = std::min(block, r1 - i);
    for (uint64_t j = c0; j < whole; j += n) {
      const uint8_t* s = src + i * sb + j * kE;
      uint8_t* d = dst + j * db + i * kE;
      if (r == block) block_avx2<kE, true>(s, sb, d, db, r);
      else block_avx2<kE, false>(s, sb, d, db, r);
    }
  }
  for (uint64_t j = whole; j < c1; ++j) {
    for (uint64_t i = r0; i < r1; ++i) std::memcpy(dst + j * db + i * kE, src + i * sb + j * kE, kE);
  }
}

// The staged tiles of a plane, then its edges by rect_avx2.
template <size_t kE, bool kStream>
__attribute__((target("avx2"))) void tiles_avx2(const uint8_t* src, uint64_t ss, uint8_t* dst, uint64_t ds,
                                                uint64_t rows, uint64_t cols) {
  constexpr uint64_t n = 16 / kE, block = 2 * n, tile = 4 * n;
  const uint64_t sb = ss * kE, db = ds * kE;
  const uint64_t full_r = rows - rows % tile, full_c = cols - cols % tile;
  alignas(64) uint8_t stage[tile][64];
  for (uint64_t r0 = 0; r0 < full_r; r0 += tile) {
    for (uint64_t c0 = 0; c0 < full_c; c0 += tile) {
      const uint8_t* s = src + r0 * sb + c0 * kE;
      for (uint64_t i = 0; i < tile; ++i) {
        __builtin_prefetch(s + i * sb + kAhead);
        const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i * sb));
        const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i * sb + 32));
        _mm256_store_si256(reinterpret_cast<__m256i*>(stage[i]), x0);
        _mm256_store_si256(reinterpret_cast<__m256i*>(stage[i] + 32), x1);
      }
      for (uint64_t q = 0; q < 4; ++q) {
        __m256i v[n], w[n];
#pragma GCC unroll 16
        for (uint64_t i = 0; i < n; ++i) {
          const __m128i* at = reinterpret_cast<const __m128i*>(stage[i] + 16 * q);
          v[i] = _mm256_set_m128i(_mm_load_si128(at + 4 * n), _mm_load_si128(at));
          w[i] = _mm256_set_m128i(_mm_load_si128(at + 4 * (block + n)), _mm_load_si128(at + 4 * block));
        }
        transpose_lanes_avx2<kE>(v);
        transpose_lanes_avx2<kE>(w);
        uint8_t* d = dst + (c0 + q * n) * db + r0 * kE;
#pragma GCC unroll 16
        for (uint64_t j = 0; j < n; ++j) {
          __m256i* out = reinterpret_cast<__m256i*>(d + j * db);
          if (kStream) {  // lines (checked by the caller)
            _mm256_stream_si256(out, v[j]);
            _mm256_stream_si256(out + 1, w[j]);
          } else {
            _mm256_storeu_si256(out, v[j]);
            _mm256_storeu_si256(out + 1, w[j]);
          }
        }
      }
    }
  }
  rect_avx2<kE>(src, sb, dst, db, rows, cols, 0, full_r, full_c, cols);
  rect_avx2<kE>(src, sb, dst, db, rows, cols, full_r, rows, 0, cols);
}

// The same tiles with AVX-512 (512-bit operations whole: on a CPU that splits
// them the AVX2 tiles run), without a stage: rows i, n + i, 2n + i and 3n + i
// of a tile are read as four whole lines, their 16-byte lanes transposed so
// that each register holds one 16-byte column group of the four rows, and a
// transpose per lane leaves each destination line in one register. Half the
// shuffles of the AVX2 tiles, whose lane inserts and transposes bound them in
// the cache.
template <size_t kE>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void transpose_lanes_avx512(__m512i* v) {
  if constexpr (kE == 1) {
    byte_transpose::transpose16x16_epi8_x4(v);
  } else if constexpr (kE == 2) {
    byte_transpose::transpose8x8_epi16_x4(v, v);
  } else {
    byte_transpose::transpose4x4_epi32_x4(v);
  }
}

template <size_t kE, bool kStream>
__attribute__((target("avx512f,avx512bw"))) void tiles_avx512(const uint8_t* src, uint64_t ss, uint8_t* dst,
                                                              uint64_t ds, uint64_t rows, uint64_t cols) {
  constexpr uint64_t n = 16 / kE, tile = 4 * n;
  const uint64_t sb = ss * kE, db = ds * kE;
  const uint64_t full_r = rows - rows % tile, full_c = cols - cols % tile;
  __m512i groups[4][n];  // [16-byte column group][row i]: rows i, n + i, 2n + i, 3n + i
  for (uint64_t r0 = 0; r0 < full_r; r0 += tile) {
    for (uint64_t c0 = 0; c0 < full_c; c0 += tile) {
      const uint8_t* s = src + r0 * sb + c0 * kE;
      for (uint64_t i = 0; i < n; ++i) {
        __m512i x[4];
        for (uint64_t k = 0; k < 4; ++k) {
          const uint8_t* line = s + (k * n + i) * sb;
          __builtin_prefetch(line + kAhead);
          x[k] = _mm512_loadu_si512(line);
        }
        byte_transpose::transpose_lanes4x4(x);
        for (uint64_t q = 0; q < 4; ++q) groups[q][i] = x[q];
      }
      for (uint64_t q = 0; q < 4; ++q) {
        transpose_lanes_avx512<kE>(groups[q]);
        uint8_t* d = dst + (c0 + q * n) * db + r0 * kE;
        for (uint64_t j = 0; j < n; ++j) {
          if (kStream) _mm512_stream_si512(reinterpret_cast<__m512i*>(d + j * db), groups[q][j]);  // lines (the caller's)
          else _mm512_storeu_si512(d + j * db, groups[q][j]);
        }
      }
    }
  }
  rect_avx2<kE>(src, sb, dst, db, rows, cols, 0, full_r, full_c, cols);
  rect_avx2<kE>(src, sb, dst, db, rows, cols, full_r, rows, 0, cols);
}

// dst[j][i] = src[i][j] for i < rows, j < cols, row strides ss and ds in
// elements of kE bytes. When every destination row starts at the same place
// in a line, the rows before the first whose destination bytes start a line
// go by rect_avx2 first, so that the tiles write whole lines (kStream: with
// non-temporal stores, for which dst must be kE-aligned and ds * kE a
// multiple of 64; the caller fences).
template <size_t kE, bool kStream>
__attribute__((target("avx2"))) void transpose_plane_avx2(const uint8_t* src, uint64_t ss, uint8_t* dst, uint64_t ds,
                                                          uint64_t rows, uint64_t cols) {
  const uint64_t sb = ss * kE, db = ds * kE, misaligned = reinterpret_cast<uintptr_t>(dst) % 64;
  const uint64_t head = db % 64 == 0 && misaligned % kE == 0 ? std::min(rows, (64 - misaligned) % 64 / kE) : 0;
  rect_avx2<kE>(src, sb, dst, db, rows, cols, 0, head, 0, cols);
  if (isa_at_least(Isa::kAvx512) && !splits_512bit_ops()) {
    tiles_avx512<kE, kStream>(src + head * sb, ss, dst + head * kE, ds, rows - head, cols);
  } else {
    tiles_avx2<kE, kStream>(src + head * sb, ss, dst + head * kE, ds, rows - head, cols);
  }
}

}  // namespace layoutcheck::plane_transpose

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif
