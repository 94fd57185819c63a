// Small transposes by byte permutes (AVX-512 VBMI; in-lane shuffles with
// AVX2, further down), shared by the optimized families whose blocks of a
// small image are contiguous on both sides: a run of groups, each R rows of
// L elements of E bytes one after the other (the logical side) <-> L pixels
// of R elements one after the other (the physical side), P = R x L x E bytes
// either way (NVDLA feature surfaces of at most 20 positions: R = 32 / E
// channels; MegEngine NCHWx blocks of small images: R = x; NVDLA weights: a
// kernel). A block of k groups (k P at most ten registers) goes through the
// registers at a time; each 64 bytes out is merge-masked two-source byte
// permutes of the input's register pairs, one per pair it draws on, with
// indices and masks that depend only on (R, L, E, direction), built once per
// thread and kept in registers from one block to the next.
#ifndef LAYOUTCHECK_OPTIMIZED_GROUP_PERMUTES_H_
#define LAYOUTCHECK_OPTIMIZED_GROUP_PERMUTES_H_

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include "optimized/masked.h"
#define LC_GROUP_PERMUTES 1
#endif

namespace layoutcheck::group_permutes {

constexpr uint64_t kMaxRegs = 10;
constexpr uint64_t kMaxBytes = 64 * kMaxRegs;  // bytes of a group, at most

// Whether groups of R x L elements of E bytes fit (a group at most kMaxBytes).
inline bool fits(uint64_t R, uint64_t L, uint64_t E) {
  return R != 0 && L != 0 && E != 0 && R <= kMaxBytes && L <= kMaxBytes && E <= kMaxBytes && R * L * E <= kMaxBytes;
}

// The byte of a group that byte y of its transpose comes from. Pack:
// physical byte y is pixel y / (R E), row y % (R E) / E, byte y % E: logical
// byte row x L E + pixel x E + byte. Unpack: the other way.
inline uint64_t source_byte(uint64_t y, uint64_t R, uint64_t L, uint64_t E, bool pack) {
  const uint64_t pixel = R * E, row = L * E;
  return pack ? y % pixel / E * row + y / pixel * E + y % E : y % row / E * pixel + y / row * E + y % E;
}

struct Tables {
  uint64_t R = 0, L = 0, E = 0;
  bool pack = false;
  uint64_t group_bytes = 0, groups = 0, bytes = 0;  // a group; groups and bytes of a block
  uint64_t regs = 0, pairs = 0;                     // registers of a block; pairs of input registers
  alignas(64) uint8_t idx[kMaxRegs][kMaxRegs / 2][64];
  uint64_t mask[kMaxRegs][kMaxRegs / 2];
};

// The tables of (R, L, E, pack), for fits(R, L, E); one set per thread.
inline const Tables& tables(uint64_t R, uint64_t L, uint64_t E, bool pack) {
  static thread_local Tables t;
  if (t.R == R && t.L == L && t.E == E && t.pack == pack && t.regs != 0) return t;
  t.R = R, t.L = L, t.E = E, t.pack = pack;
  t.group_bytes = R * L * E;
  // Groups a block: the most bytes a permute (each register out takes one per
  // pair of registers in), the fewest groups of those.
  const auto per_permute = [&](uint64_t k) {
    const uint64_t regs = (k * t.group_bytes + 63) / 64;
    return static_cast<double>(k * t.group_bytes) / static_cast<double>(regs * ((regs + 1) / 2));
  };
  t.groups = 1;
  for (uint64_t k = 2; k * t.group_bytes <= kMaxBytes; ++k) {
    if (per_permute(k) > per_permute(t.groups)) t.groups = k;
  }
  t.bytes = t.groups * t.group_bytes;
  t.regs = (t.bytes + 63) / 64, t.pairs = (t.regs + 1) / 2;
  const uint64_t P = t.group_bytes;
  for (uint64_t o = 0; o < t.regs; ++o) {
    for (uint64_t q = 0; q < t.pairs; ++q) t.mask[o][q] = 0;
    for (uint64_t i = 0; i < 64 && 64 * o + i < t.bytes; ++i) {
      const uint64_t x = 64 * o + i;
      const uint64_t from = x / P * P + source_byte(x % P, R, L, E, pack);
      const uint64_t q = from / 128;
      t.mask[o][q] |= uint64_t{1} << i;
      t.idx[o][q][i] = static_cast<uint8_t>(from % 128);
    }
  }
  return t;
}

#if defined(LC_GROUP_PERMUTES)
#define LC_GROUP_PERMUTES_VBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")))
#define LC_GROUP_PERMUTES_INLINE \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"), always_inline))

// One block of n bytes at src, dst: kRegs - 1 whole registers and a last one
// of `last` bytes (a whole block); with kTail any n, each register masked to
// the bytes left.
template <uint64_t kRegs, bool kTail>
LC_GROUP_PERMUTES_INLINE inline void block(const __m512i (&idx)[kRegs][(kRegs + 1) / 2],
                                           const __mmask64 (&mask)[kRegs][(kRegs + 1) / 2], __mmask64 last,
                                           const uint8_t* src, uint8_t* dst, uint64_t n) {
  constexpr uint64_t kPairs = (kRegs + 1) / 2;
  const auto part = [n](uint64_t r) -> __mmask64 {
    if (n >= 64 * (r + 1)) return ~__mmask64{0};
    return n <= 64 * r ? 0 : (__mmask64{1} << (n - 64 * r)) - 1;
  };
  __m512i v[2 * kPairs];
#pragma GCC unroll 8
  for (uint64_t r = 0; r < 2 * kPairs; ++r) {
    if (r >= kRegs) v[r] = _mm512_setzero_si512();
    else if (kTail) v[r] = masked::_mm512_maskz_loadu_epi8(part(r), src + 64 * r);
    else if (r + 1 < kRegs) v[r] = _mm512_loadu_si512(src + 64 * r);
    else v[r] = masked::_mm512_maskz_loadu_epi8(last, src + 64 * r);
  }
#pragma GCC unroll 8
  for (uint64_t o = 0; o < kRegs; ++o) {
    __m512i x = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (uint64_t q = 0; q < kPairs; ++q) {
      x = _mm512_mask_mov_epi8(x, mask[o][q], _mm512_permutex2var_epi8(v[2 * q], idx[o][q], v[2 * q + 1]));
    }
    if (kTail) masked::_mm512_mask_storeu_epi8(dst + 64 * o, part(o), x);
    else if (o + 1 < kRegs) _mm512_storeu_si512(dst + 64 * o, x);
    else masked::_mm512_mask_storeu_epi8(dst + 64 * o, last, x);
  }
}

// `count` groups from src to dst (one after the other on both sides); the
// block past the last whole one masked to the groups left.
template <uint64_t kRegs>
LC_GROUP_PERMUTES_VBMI void run_regs(const Tables& t, const uint8_t* src, uint8_t* dst, uint64_t count) {
  constexpr uint64_t kPairs = (kRegs + 1) / 2;
  __m512i idx[kRegs][kPairs];
  __mmask64 mask[kRegs][kPairs];
#pragma GCC unroll 8
  for (uint64_t o = 0; o < kRegs; ++o) {
#pragma GCC unroll 4
    for (uint64_t q = 0; q < kPairs; ++q) idx[o][q] = _mm512_load_si512(t.idx[o][q]), mask[o][q] = t.mask[o][q];
  }
  const __mmask64 last = t.bytes % 64 == 0 ? ~__mmask64{0} : (__mmask64{1} << (t.bytes % 64)) - 1;
  const uint64_t total = count * t.group_bytes;
  uint64_t at = 0;
  for (; at + t.bytes <= total; at += t.bytes) block<kRegs, false>(idx, mask, last, src + at, dst + at, t.bytes);
  if (at < total) block<kRegs, true>(idx, mask, last, src + at, dst + at, total - at);
}

inline void run(const Tables& t, const uint8_t* src, uint8_t* dst, uint64_t count) {
  switch (t.regs) {
    case 1: return run_regs<1>(t, src, dst, count);
    case 2: return run_regs<2>(t, src, dst, count);
    case 3: return run_regs<3>(t, src, dst, count);
    case 4: return run_regs<4>(t, src, dst, count);
    case 5: return run_regs<5>(t, src, dst, count);
    case 6: return run_regs<6>(t, src, dst, count);
    case 7: return run_regs<7>(t, src, dst, count);
    case 8: return run_regs<8>(t, src, dst, count);
    case 9: return run_regs<9>(t, src, dst, count);
    default: return run_regs<10>(t, src, dst, count);
  }
}
#undef LC_GROUP_PERMUTES_VBMI
#undef LC_GROUP_PERMUTES_INLINE

// The same transposes on hosts without VBMI (AVX2 and up): in-lane byte
// shuffles of 16-byte pieces. Output piece o of a group is the OR of one
// vpshufb of each input piece it draws on (indices 0x80 elsewhere, which
// give zeros); two groups go at a time, one per 128-bit lane, each input
// piece one load and one insert. (Every piece padded to the same number of
// shuffles, for a loop without branches, was slower: NVDLA image weights
// 4096 x 3 x 7 x 7 int8 0.09 -> 0.08 of memcpy.) A group's last piece is
// written whole (its bytes past the group zero) and its last input piece
// read whole, both into the next group, which the pass after rewrites: the
// last two groups of a run go through a scratch copy, so nothing outside the
// run is touched.
constexpr uint64_t kMaxPieces = kMaxBytes / 16;
constexpr uint64_t kMaxShuffles = 6 * kMaxPieces;  // beyond 6 a piece on average, declined

struct ShuffleTables {
  uint64_t R = 0, L = 0, E = 0;
  bool pack = false;
  bool ok = false;  // 16 bytes a group or more, at most kMaxShuffles shuffles
  uint64_t group_bytes = 0, pieces = 0, shuffles = 0;
  uint16_t first[kMaxPieces + 1];             // output piece o: shuffles first[o] .. first[o + 1] - 1
  uint8_t source[kMaxShuffles];               // a shuffle's input piece
  alignas(32) uint8_t idx[kMaxShuffles][32];  // its indices, the same in both lanes
};

// The shuffle tables of (R, L, E, pack), for fits(R, L, E); one set per
// thread. ok is false for groups under 16 bytes, and past kMaxShuffles (many
// rows: each piece out draws on many pieces in).
inline const ShuffleTables& shuffle_tables(uint64_t R, uint64_t L, uint64_t E, bool pack) {
  static thread_local ShuffleTables t;
  if (t.R == R && t.L == L && t.E == E && t.pack == pack && t.pieces != 0) return t;
  t.R = R, t.L = L, t.E = E, t.pack = pack;
  t.group_bytes = R * L * E;
  t.pieces = (t.group_bytes + 15) / 16;
  t.shuffles = 0;
  t.ok = t.group_bytes >= 16;  // a piece's spill (at most 15 bytes) inside the next group
  if (!t.ok) return t;
  const uint64_t P = t.group_bytes;
  for (uint64_t o = 0; o < t.pieces; ++o) {
    const uint64_t first = t.first[o] = static_cast<uint16_t>(t.shuffles);
    for (uint64_t i = 0; i < 16 && 16 * o + i < P; ++i) {
      const uint64_t from = source_byte(16 * o + i, R, L, E, pack);
      uint64_t k = first;
      while (k < t.shuffles && t.source[k] != from / 16) ++k;
      if (k == t.shuffles) {
        if (t.shuffles == kMaxShuffles) {
          t.ok = false;
          return t;
        }
        t.source[k] = static_cast<uint8_t>(from / 16);
        for (uint8_t& x : t.idx[k]) x = 0x80;
        ++t.shuffles;
      }
      t.idx[k][i] = t.idx[k][16 + i] = static_cast<uint8_t>(from % 16);
    }
  }
  t.first[t.pieces] = static_cast<uint16_t>(t.shuffles);
  return t;
}

#define LC_GROUP_SHUFFLES_AVX2 __attribute__((target("avx2")))

// Groups g and g + 1 at src, dst (group_bytes apart): group g's pieces
// first, so that its last piece's spill into group g + 1 is rewritten.
LC_GROUP_SHUFFLES_AVX2 inline void shuffle_pair(const ShuffleTables& t, const uint8_t* src, uint8_t* dst) {
  const uint64_t P = t.group_bytes;
  __m256i in[kMaxPieces], out[kMaxPieces];
  for (uint64_t q = 0; q < t.pieces; ++q) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * q));
    in[q] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo),
                                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + P + 16 * q)), 1);
  }
  for (uint64_t o = 0; o < t.pieces; ++o) {
    __m256i x = _mm256_setzero_si256();
    for (uint64_t k = t.first[o]; k < t.first[o + 1]; ++k) {
      const __m256i idx = _mm256_load_si256(reinterpret_cast<const __m256i*>(t.idx[k]));
      x = _mm256_or_si256(x, _mm256_shuffle_epi8(in[t.source[k]], idx));
    }
    out[o] = x;
  }
  for (uint64_t o = 0; o < t.pieces; ++o) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16 * o), _mm256_castsi256_si128(out[o]));
  }
  for (uint64_t o = 0; o < t.pieces; ++o) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + P + 16 * o), _mm256_extracti128_si256(out[o], 1));
  }
}

// `count` groups from src to dst (one after the other on both sides), t.ok.
LC_GROUP_SHUFFLES_AVX2 inline void run_shuffles(const ShuffleTables& t, const uint8_t* src, uint8_t* dst,
                                                uint64_t count) {
  const uint64_t P = t.group_bytes;
  uint64_t g = 0;
  for (; g + 2 < count; g += 2) shuffle_pair(t, src + g * P, dst + g * P);
  if (g == count) return;
  // The last one or two: through scratch of two groups and a piece.
  alignas(32) uint8_t in[2 * kMaxBytes + 16], out[2 * kMaxBytes + 16];
  const uint64_t n = (count - g) * P;
  std::memcpy(in, src + g * P, n);
  std::memset(in + n, 0, 2 * P + 16 - n);
  shuffle_pair(t, in, out);
  std::memcpy(dst + g * P, out, n);
}

// Groups of 2 to 4 rows of at most 16 bytes a pixel (R x E <= 16) and rows
// of 16 bytes or more (L x E >= 16), with AVX2: a block is 16 bytes of each
// row, B = 16 / E pixels, whose R x 16 bytes of pixels are R pieces; piece a
// out (a row's 16 bytes, unpacking) is the OR of one vpshufb of each of the
// R pieces in. With 4 rows, a 4 x 4 transpose of dwords and one vpshufb a
// piece instead (8 + 4 instructions for 16 + 12). Two blocks at a time, one
// per 128-bit lane; the last block of a row ends at its last pixel,
// overlapping the one before (its bytes written again, the same). Nothing
// outside a group is read or written. (The shuffles above take a piece out
// from every piece in that it draws on, looked up in tables: NVDLA image
// weights 4096 x 3 x 7 x 7 int8, capped at AVX2 on a Zen 5, 0.07 of memcpy
// against 0.17 here.)
struct PlaneTables {
  uint64_t R = 0, E = 0;
  bool pack = false;
  alignas(32) uint8_t idx[4][4][32];  // piece a out from piece b in; the same in both lanes
  alignas(32) uint8_t dwords[32];     // R = 4: a piece's bytes <-> its rows' dwords (both lanes)
};

inline bool planes_fit(uint64_t R, uint64_t L, uint64_t E) {
  return R >= 2 && R <= 4 && (E == 1 || E == 2 || E == 4) && R * E <= 16 && L >= 16 / E;
}

// The tables of (R, E, pack), for planes_fit; one set per thread.
inline const PlaneTables& plane_tables(uint64_t R, uint64_t E, bool pack) {
  static thread_local PlaneTables t;
  if (t.R == R && t.E == E && t.pack == pack) return t;
  t.R = R, t.E = E, t.pack = pack;
  for (auto& a : t.idx) {
    for (auto& b : a) std::memset(b, 0x80, sizeof b);
  }
  // Byte y of a block's pixels is pixel y / (R E), row y % (R E) / E, byte y % E.
  for (uint64_t y = 0; y < 16 * R; ++y) {
    const uint64_t row = y % (R * E) / E, at = y / (R * E) * E + y % E;  // in its row's 16 bytes
    const uint64_t a = pack ? y / 16 : row, b = pack ? row : y / 16;
    const uint64_t i = pack ? y % 16 : at, from = pack ? at : y % 16;
    t.idx[a][b][i] = t.idx[a][b][16 + i] = static_cast<uint8_t>(from);
  }
  // With 4 rows, a piece of pixels and dword a of each row (the same pixels)
  // are one 4 x 4 transpose of dwords apart, and then a shuffle inside the piece:
  // pixel j, row c, byte e <-> dword c's byte j E + e.
  for (uint64_t i = 0; i < 16; ++i) {
    const uint64_t dword_byte = i % (4 * E) / E * 4 + i / (4 * E) * E + i % E;
    const uint64_t to = pack ? i : dword_byte, from = pack ? dword_byte : i;
    t.dwords[to] = t.dwords[16 + to] = static_cast<uint8_t>(from);
  }
  return t;
}

// `count` groups of kR rows of L elements of kE bytes, src -> dst.
template <uint64_t kR, uint64_t kE, bool kPack>
LC_GROUP_SHUFFLES_AVX2 void run_planes_of(const PlaneTables& t, const uint8_t* src, uint8_t* dst, uint64_t L,
                                          uint64_t count) {
  constexpr uint64_t B = 16 / kE, kPixel = kR * kE;
  const uint64_t last = L - B, row = L * kE, P = kR * row;
  __m256i idx[kR][kR];
#pragma GCC unroll 4
  for (uint64_t a = 0; a < kR; ++a) {
#pragma GCC unroll 4
    for (uint64_t b = 0; b < kR; ++b) idx[a][b] = _mm256_load_si256(reinterpret_cast<const __m256i*>(t.idx[a][b]));
  }
  const __m256i dwords = _mm256_load_si256(reinterpret_cast<const __m256i*>(t.dwords));
  // Piece b in and piece a out of the block at pixel p: rows' bytes or pixels' bytes.
  const auto in_at = [row](uint64_t b, uint64_t p) { return kPack ? b * row + p * kE : p * kPixel + 16 * b; };
  const auto out_at = [row](uint64_t a, uint64_t p) { return kPack ? p * kPixel + 16 * a : a * row + p * kE; };
  for (uint64_t g = 0; g < count; ++g, src += P, dst += P) {
    for (uint64_t p = 0;; p += 2 * B) {
      const uint64_t p0 = std::min(p, last), p1 = std::min(p + B, last);
      __m256i in[kR];
#pragma GCC unroll 4
      for (uint64_t b = 0; b < kR; ++b) {
        const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + in_at(b, p0)));
        in[b] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo),
                                        _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + in_at(b, p1))), 1);
      }
      if constexpr (kR == 4) {
        // Rows' dwords <-> pieces: a 4 x 4 transpose of dwords in each lane, a shuffle before or after.
        if (!kPack && kE != 4) {
          in[0] = _mm256_shuffle_epi8(in[0], dwords), in[1] = _mm256_shuffle_epi8(in[1], dwords);
          in[2] = _mm256_shuffle_epi8(in[2], dwords), in[3] = _mm256_shuffle_epi8(in[3], dwords);
        }
        const __m256i t0 = _mm256_unpacklo_epi32(in[0], in[1]), t1 = _mm256_unpackhi_epi32(in[0], in[1]);
        const __m256i t2 = _mm256_unpacklo_epi32(in[2], in[3]), t3 = _mm256_unpackhi_epi32(in[2], in[3]);
        __m256i out[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2), _mm256_unpacklo_epi64(t1, t3),
                          _mm256_unpackhi_epi64(t1, t3)};
#pragma GCC unroll 4
        for (uint64_t a = 0; a < 4; ++a) {
          if (kPack && kE != 4) out[a] = _mm256_shuffle_epi8(out[a], dwords);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + out_at(a, p0)), _mm256_castsi256_si128(out[a]));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + out_at(a, p1)), _mm256_extracti128_si256(out[a], 1));
        }
        if (p + 2 * B >= L) break;
        continue;
      }
#pragma GCC unroll 4
      for (uint64_t a = 0; a < kR; ++a) {
        __m256i x = _mm256_shuffle_epi8(in[0], idx[a][0]);
#pragma GCC unroll 4
        for (uint64_t b = 1; b < kR; ++b) x = _mm256_or_si256(x, _mm256_shuffle_epi8(in[b], idx[a][b]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + out_at(a, p0)), _mm256_castsi256_si128(x));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + out_at(a, p1)), _mm256_extracti128_si256(x, 1));
      }
      if (p + 2 * B >= L) break;
    }
  }
}

template <uint64_t kR>
inline void run_planes_rows(const PlaneTables& t, const uint8_t* src, uint8_t* dst, uint64_t L, uint64_t count) {
  switch (t.E * 2 + t.pack) {
    case 2: return run_planes_of<kR, 1, false>(t, src, dst, L, count);
    case 3: return run_planes_of<kR, 1, true>(t, src, dst, L, count);
    case 4: return run_planes_of<kR, 2, false>(t, src, dst, L, count);
    case 5: return run_planes_of<kR, 2, true>(t, src, dst, L, count);
    case 8: return run_planes_of<kR, 4, false>(t, src, dst, L, count);
    default: return run_planes_of<kR, 4, true>(t, src, dst, L, count);
  }
}

// `count` groups of t.R rows of L elements from src to dst, planes_fit(t.R, L, t.E).
inline void run_planes(const PlaneTables& t, const uint8_t* src, uint8_t* dst, uint64_t L, uint64_t count) {
  switch (t.R) {
    case 2: return run_planes_rows<2>(t, src, dst, L, count);
    case 3: return run_planes_rows<3>(t, src, dst, L, count);
    default: return run_planes_rows<4>(t, src, dst, L, count);
  }
}
#undef LC_GROUP_SHUFFLES_AVX2
#endif

}  // namespace layoutcheck::group_permutes

#endif  // LAYOUTCHECK_OPTIMIZED_GROUP_PERMUTES_H_
