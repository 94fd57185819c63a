// optimized/plane_transpose.h — transposes of planes of 1-, 2- and 4-byte
// elements with AVX2: dst[j][i] = src[i][j] for i < rows, j < cols, row
// strides in elements. The HTP NCHW layouts (each position of the loops
// around a plane) and the NVDLA weights of one channel block (a group's
// kernels' channel rows against its positions) use them.
//
// Tiles of 64 or 32 bytes of each row on both sides (4n or 2n rows by 4n or
// 2n columns, n = 16 / kE): a tile's source pieces are read whole into a
// stage on the stack (the next ones fetched meanwhile: rows of a plane are
// often a power-of-two stride apart, and lines read a piece at a time fall
// out of the few ways of the cache sets they share), then transposed from it
// in blocks of 2n rows by n columns, each destination row written by one or
// two adjacent stores (streamed when asked: whole lines past the cache); with
// AVX-512 a 64 x 64-byte tile of rows a multiple of 4 KiB apart goes through
// registers only. A plane's rows and columns past its last whole tiles, and
// planes narrower than a tile, go in blocks of 2n rows by n columns, partial
// blocks and element by element, the last block of a row or column of them
// ending at the plane's last row or column (over the one before: its
// elements written again, the same); a run of planes whose rows are
// gathered by address (gather_tiles_avx2) ends its rows and columns so with
// a tile. src and dst must not overlap.
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
    // The last whole block ends at the last row it may read (over the block
    // before it), so that only those past it go element by element (a
    // plane's last 2n rows so took 0.27 -> 0.18 of memcpy in some builds of
    // the same code: a loop of byte moves is at the mercy of where it lands).
    const uint64_t past = n * kE - cols * kE, safe = rows - std::min(rows, (past + sb - 1) / sb);
    const uint64_t end = std::min(r1, safe);
    uint64_t i = r0;
    for (; i + block <= end; i += block) block_avx2<kE, true>(src + i * sb, sb, dst + i * kE, db, block, cols);
    if (i < end && end >= r0 + block) {  // mutate: equivalent (at end == r0 + block no rows are left)
      block_avx2<kE, true>(src + (end - block) * sb, sb, dst + (end - block) * kE, db, block, cols);
      i = end;
    }
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

// One staged tile: kR rows by kC columns (each 2n or 4n elements: 32 or 64
// bytes of a row on either side), source row i at src_row(i) and
// destination row j at dst_row(j), each at the tile's first element. Its
// source pieces are read whole into a stage on the stack, then transposed
// from it in blocks of 2n rows by n columns, each destination row's pieces
// of a column group stored one after the other (a 64-byte row by two
// adjacent stores; kStream: non-temporal, for 64-byte rows on lines only,
// which the caller checks). `next`: see transpose_plane_avx2.
template <size_t kE, bool kStream, uint64_t kR, uint64_t kC, class SrcRow, class DstRow>
__attribute__((target("avx2"), always_inline)) inline void tile_staged_avx2(SrcRow src_row, DstRow dst_row,
                                                                            uint64_t next) {
  constexpr uint64_t n = 16 / kE, halves = kR / (2 * n);
  alignas(64) uint8_t stage[kR][kC * kE];
  for (uint64_t i = 0; i < kR; ++i) {
    const uint8_t* from = src_row(i);
    __builtin_prefetch(from + kAhead);
    if (next != 0) {
      for (uint64_t b = 0; b < kC * kE; b += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(from + next + b), _MM_HINT_T1);
      }
    }
    for (uint64_t b = 0; b < kC * kE; b += 32) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(stage[i] + b),
                         _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + b)));
    }
  }
  for (uint64_t q = 0; q < kC / n; ++q) {
    __m256i v[halves][n];
#pragma GCC unroll 2
    for (uint64_t h = 0; h < halves; ++h) {
#pragma GCC unroll 16
      for (uint64_t i = 0; i < n; ++i) {
        const __m128i lo = _mm_load_si128(reinterpret_cast<const __m128i*>(stage[2 * n * h + i] + 16 * q));
        const __m128i hi = _mm_load_si128(reinterpret_cast<const __m128i*>(stage[2 * n * h + n + i] + 16 * q));
        v[h][i] = _mm256_set_m128i(hi, lo);
      }
      transpose_lanes_avx2<kE>(v[h]);
    }
#pragma GCC unroll 16
    for (uint64_t j = 0; j < n; ++j) {
      uint8_t* out = dst_row(q * n + j);
#pragma GCC unroll 2
      for (uint64_t h = 0; h < halves; ++h) {
        __m256i* at = reinterpret_cast<__m256i*>(out + 32 * h);
        if (kStream) _mm256_stream_si256(at, v[h][j]);
        else _mm256_storeu_si256(at, v[h][j]);
      }
    }
  }
}

// A 64 x 64-byte tile of bytes with AVX-512 (512-bit operations whole: on a
// CPU that splits them the AVX2 tiles run), without a stage: rows i, 16 + i,
// 32 + i and 48 + i are read as four whole lines, their 16-byte lanes
// transposed so that each register holds one 16-byte column group of the
// four rows, and a 16 x 16 transpose per lane leaves each destination line
// in one register. Bytes only: 2- and 4-byte tiles measured faster staged
// (on an Intel Xeon, pinned, of memcpy, HTP NCHW 1 x 32 x 32 x 128 fp16
// pack / unpack 0.32 / 0.32 -> 0.37 / 0.35, 1 x 16 x 32 x 256 fp32 0.32 /
// 0.30 -> 0.42 / 0.40; 1 x 64 x 64 x 64 uint8 0.28 / 0.28 against 0.27).
template <bool kStream, class SrcRow, class DstRow>
__attribute__((target("avx512f,avx512bw"))) void tile_avx512_epi8(SrcRow src_row, DstRow dst_row, uint64_t next) {
  __m512i groups[4][16];  // [16-byte column group][row i]: rows i, 16 + i, 32 + i, 48 + i
  for (uint64_t i = 0; i < 16; ++i) {
    __m512i x[4];
    for (uint64_t k = 0; k < 4; ++k) {
      const uint8_t* line = src_row(16 * k + i);
      __builtin_prefetch(line + kAhead);
      if (next != 0) _mm_prefetch(reinterpret_cast<const char*>(line + next), _MM_HINT_T1);
      x[k] = _mm512_loadu_si512(line);
    }
    byte_transpose::transpose_lanes4x4(x);
    for (uint64_t q = 0; q < 4; ++q) groups[q][i] = x[q];
  }
  for (uint64_t q = 0; q < 4; ++q) {
    byte_transpose::transpose16x16_epi8_x4(groups[q]);
    for (uint64_t j = 0; j < 16; ++j) {
      uint8_t* out = dst_row(16 * q + j);
      if (kStream) _mm512_stream_si512(reinterpret_cast<__m512i*>(out), groups[q][j]);  // lines (the caller's)
      else _mm512_storeu_si512(out, groups[q][j]);
    }
  }
}

// The tile along an axis of `len` elements (at least `half`) that starts at
// `at`, a multiple of the axis's step (`tile` elements, or `half` on an axis
// shorter than a tile): its first element and, in *size, its length. A tile
// that would pass the axis's end ends there instead, over the tiles before
// it, a half tile when what is left fits in one.
inline uint64_t tile_at(uint64_t len, uint64_t at, uint64_t tile, uint64_t half, uint64_t* size) {
  const uint64_t step = len >= tile ? tile : half;
  if (at + step <= len) {
    *size = step;
    return at;
  }
  *size = len - at <= half ? half : tile;  // mutate: equivalent (a whole tile: the same bytes)
  return len - *size;
}

// One tile of tr rows by tc columns (each 2n or 4n), by its size; `lines`:
// a 4n-row tile whose destination rows are whole lines, streamed when
// kStream. `apart`: source rows a multiple of 4 KiB apart, where a 64 x 64
// byte tile goes through AVX-512 registers without a stage; elsewhere the
// stage measured faster (on an Intel Xeon, pinned, of memcpy, HTP NCHW uint8
// packs and unpacks: rows 4 KiB apart, 1 x 64 x 64 x 64 0.27 against 0.25,
// 64 KiB, 1 x 256 x 256 x 1024 unpack 0.47-0.49 against 0.43; rows 672 bytes
// apart or gathered, 1 x 224 x 224 x 3 0.25 / 0.22 against 0.26 / 0.26, 1 x
// 28 x 28 x 128 pack 0.31 against 0.37, 1 x 35 x 35 x 96 0.31 against 0.37).
template <size_t kE, bool kStream, class SrcRow, class DstRow>
__attribute__((target("avx2"), always_inline)) inline void tile_any(uint64_t tr, uint64_t tc, bool lines, bool apart,
                                                                    SrcRow src_row, DstRow dst_row, uint64_t next) {
  constexpr uint64_t half = 32 / kE, tile = 64 / kE;
  if (tr == tile && tc == tile) {
    if (kE == 1 && apart && isa_at_least(Isa::kAvx512) && !splits_512bit_ops()) {  // mutate: equivalent (a path)
      if (kStream && lines) tile_avx512_epi8<true>(src_row, dst_row, next);
      else tile_avx512_epi8<false>(src_row, dst_row, next);
    } else if (kStream && lines) {
      tile_staged_avx2<kE, true, tile, tile>(src_row, dst_row, next);
    } else {
      tile_staged_avx2<kE, false, tile, tile>(src_row, dst_row, next);
    }
  } else if (tr == tile) {
    if (kStream && lines) tile_staged_avx2<kE, true, tile, half>(src_row, dst_row, next);
    else tile_staged_avx2<kE, false, tile, half>(src_row, dst_row, next);
  } else if (tc == tile) {
    tile_staged_avx2<kE, false, half, tile>(src_row, dst_row, next);
  } else {
    tile_staged_avx2<kE, false, half, half>(src_row, dst_row, next);
  }
}

// A plane in tiles of 4n rows by 4n columns, the rows and columns past the
// last whole tiles by rect_avx2; planes of fewer than 4n rows or columns by
// rect_avx2 whole, but for those of exactly 2n whose rows are a line or
// more apart on both sides, in tiles of 2n that way (on an Intel Xeon,
// pinned, of memcpy, HTP NCHW 1 x 32 x 32 x 256 uint8 unpack 0.20 -> 0.27;
// NVDLA weights of 4 x 4 fp16 kernels, their source or destination rows
// side by side, 0.65 / 0.81 -> 0.60 / 0.68 so). Tiles moved back over the
// last whole ones (instead of rect_avx2's blocks) measured slower: a plane
// of 17 x 160 fp16 in two 16-column tiles 0.54 -> 0.36, the last columns of
// 64 x 64 x 7 x 7 fp16 NVDLA weights 0.41 -> 0.37. kStream: tiles of 4n rows
// on whole lines stream.
template <size_t kE, bool kStream>
__attribute__((target("avx2"))) void tiles_avx2(const uint8_t* src, uint64_t ss, uint8_t* dst, uint64_t ds,
                                                uint64_t rows, uint64_t cols, uint64_t next) {
  constexpr uint64_t half = 32 / kE, tile = 64 / kE;
  const uint64_t sb = ss * kE, db = ds * kE;
  const bool apart = sb >= 64 && db >= 64;  // mutate: equivalent (a choice of path)
  if ((rows < tile && (rows != half || !apart)) || (cols < tile && (cols != half || !apart))) {
    rect_avx2<kE>(src, sb, dst, db, rows, cols, 0, rows, 0, cols);
    return;
  }
  // A tile wider than a plane of 2n leaves it to rect_avx2: the same bytes.
  const uint64_t tr = rows >= tile ? tile : half;  // mutate: equivalent (see above)
  const uint64_t tc = cols >= tile ? tile : half;  // mutate: equivalent (see above)
  const uint64_t full_r = rows - rows % tr, full_c = cols - cols % tc;
  const bool apart_4k = sb % 4096 == 0;  // mutate: equivalent (a choice of path, see tile_any)
  for (uint64_t r0 = 0; r0 < full_r; r0 += tr) {
    for (uint64_t c0 = 0; c0 < full_c; c0 += tc) {
      const uint8_t* s = src + r0 * sb + c0 * kE;
      uint8_t* d = dst + c0 * db + r0 * kE;
      tile_any<kE, kStream>(tr, tc, true, apart_4k, [=](uint64_t i) { return s + i * sb; },
                            [=](uint64_t j) { return d + j * db; }, next);
    }
  }
  rect_avx2<kE>(src, sb, dst, db, rows, cols, 0, full_r, full_c, cols);
  rect_avx2<kE>(src, sb, dst, db, rows, cols, full_r, rows, 0, cols);
}

// The rows of a run of planes: row v at base + (v / count) * outer +
// (v % count) * inner bytes (count rows a plane, `inner` bytes apart, the
// planes `outer` bytes apart).
struct RunRows {
  uint8_t* base;
  uint64_t count, inner, outer;

  uint8_t* row(uint64_t v) const { return base + (v / count) * outer + (v % count) * inner; }
  // Rows v..v+k-1 within one plane: one stride apart.
  bool in_one_plane(uint64_t v, uint64_t k) const { return v % count + k <= count; }
  // Rows v..v+k-1 into out[0..k).
  void rows(uint64_t v, uint64_t k, uint8_t** out) const {
    uint64_t h = v % count;
    uint8_t* plane = base + (v / count) * outer;
    uint8_t* at = plane + h * inner;
    for (uint64_t i = 0; i < k; ++i) {
      out[i] = at;
      at += inner;
      if (++h == count) h = 0, plane += outer, at = plane;
    }
  }
};

// dst[j][v] = row v's element j for v < rows, j < cols: the source's rows
// those of a run of planes (RunRows, each row's elements contiguous), the
// destination a plane of row stride ds elements; rows and cols at least 2n.
// A band of rows within one plane is one stride; across planes its row
// pointers are made once for the band. kStream: the tiles of 4n rows whose
// destination rows are whole lines stream.
template <size_t kE, bool kStream>
__attribute__((target("avx2"))) void gather_tiles_avx2(const RunRows& from, uint64_t rows, uint64_t cols, uint8_t* dst,
                                                       uint64_t ds) {
  constexpr uint64_t half = 32 / kE, tile = 64 / kE;
  const uint64_t db = ds * kE, sb = from.inner;
  const uint64_t r_step = rows >= tile ? tile : half, c_step = cols >= tile ? tile : half;
  const bool apart_4k = sb % 4096 == 0;  // mutate: equivalent (a choice of path, see tile_any)
  uint8_t* at[tile];
  for (uint64_t r_at = 0; r_at < rows; r_at += r_step) {
    uint64_t tr = 0;
    const uint64_t r0 = tile_at(rows, r_at, tile, half, &tr);
    const bool strided = from.in_one_plane(r0, tr);
    const uint8_t* first = from.row(r0);
    if (!strided) from.rows(r0, tr, at);
    const bool lines = db % 64 == 0 && reinterpret_cast<uintptr_t>(dst + r0 * kE) % 64 == 0;
    for (uint64_t c_at = 0; c_at < cols; c_at += c_step) {
      uint64_t tc = 0;
      const uint64_t c0 = tile_at(cols, c_at, tile, half, &tc);
      uint8_t* d = dst + c0 * db + r0 * kE;
      const auto dst_row = [=](uint64_t j) { return d + j * db; };
      if (strided) {
        const uint8_t* s = first + c0 * kE;
        tile_any<kE, kStream>(tr, tc, lines, apart_4k, [=](uint64_t i) { return s + i * sb; }, dst_row, 0);
      } else {
        tile_any<kE, kStream>(tr, tc, lines, false, [&](uint64_t i) { return at[i] + c0 * kE; }, dst_row, 0);
      }
    }
  }
}

// dst[j][i] = src[i][j] for i < rows, j < cols, row strides ss and ds in
// elements of kE bytes. `next` (bytes, 0 for none): each source line a tile
// reads also fetches the line that far on into L2 (the next plane's, for a
// walk of planes far apart in memory). When every destination row starts at
// the same place in a line, the rows before the first whose destination
// bytes start a line go by rect_avx2 first, so that the tiles write whole
// lines (kStream: with non-temporal stores, for which dst must be
// kE-aligned and ds * kE a multiple of 64; the caller fences).
template <size_t kE, bool kStream>
__attribute__((target("avx2"))) void transpose_plane_avx2(const uint8_t* src, uint64_t ss, uint8_t* dst, uint64_t ds,
                                                          uint64_t rows, uint64_t cols, uint64_t next = 0) {
  const uint64_t sb = ss * kE, db = ds * kE, misaligned = reinterpret_cast<uintptr_t>(dst) % 64;
  const uint64_t head = db % 64 == 0 && misaligned % kE == 0 ? std::min(rows, (64 - misaligned) % 64 / kE) : 0;
  rect_avx2<kE>(src, sb, dst, db, rows, cols, 0, head, 0, cols);
  tiles_avx2<kE, kStream>(src + head * sb, ss, dst + head * kE, ds, rows - head, cols, next);
}

}  // namespace layoutcheck::plane_transpose

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif
