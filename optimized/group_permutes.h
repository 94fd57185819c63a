// Small transposes by byte permutes (AVX-512 VBMI), shared by the optimized
// families whose blocks of a small image are contiguous on both sides: a run
// of groups, each R rows of L elements of E bytes one after the other (the
// logical side) <-> L pixels of R elements one after the other (the physical
// side), P = R x L x E bytes either way (NVDLA feature surfaces of at most 20
// positions: R = 32 / E channels; MegEngine NCHWx blocks of small images: R =
// x). A block of k groups (k P at most ten registers) goes through the
// registers at a time; each 64 bytes out is merge-masked two-source byte
// permutes of the input's register pairs, one per pair it draws on, with
// indices and masks that depend only on (R, L, E, direction), built once per
// thread and kept in registers from one block to the next.
#ifndef LAYOUTCHECK_OPTIMIZED_GROUP_PERMUTES_H_
#define LAYOUTCHECK_OPTIMIZED_GROUP_PERMUTES_H_

#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LC_GROUP_PERMUTES 1
#endif

namespace layoutcheck::group_permutes {

constexpr uint64_t kMaxRegs = 10;
constexpr uint64_t kMaxBytes = 64 * kMaxRegs;  // bytes of a group, at most

// Whether groups of R x L elements of E bytes fit (a group at most kMaxBytes).
inline bool fits(uint64_t R, uint64_t L, uint64_t E) {
  return R != 0 && L != 0 && E != 0 && R <= kMaxBytes && L <= kMaxBytes && E <= kMaxBytes && R * L * E <= kMaxBytes;
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
  const uint64_t P = t.group_bytes, pixel = R * E, row = L * E;
  for (uint64_t o = 0; o < t.regs; ++o) {
    for (uint64_t q = 0; q < t.pairs; ++q) t.mask[o][q] = 0;
    for (uint64_t i = 0; i < 64 && 64 * o + i < t.bytes; ++i) {
      const uint64_t x = 64 * o + i, g = x / P, y = x % P;
      // Pack: physical byte y of a group is pixel y / (R E), row y % (R E) / E,
      // byte y % E: logical byte row x L E + pixel x E + byte. Unpack: the other way.
      const uint64_t from = g * P + (pack ? y % pixel / E * row + y / pixel * E + y % E
                                          : y % row / E * pixel + y / row * E + y % E);
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
    else if (kTail) v[r] = _mm512_maskz_loadu_epi8(part(r), src + 64 * r);
    else if (r + 1 < kRegs) v[r] = _mm512_loadu_si512(src + 64 * r);
    else v[r] = _mm512_maskz_loadu_epi8(last, src + 64 * r);
  }
#pragma GCC unroll 8
  for (uint64_t o = 0; o < kRegs; ++o) {
    __m512i x = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (uint64_t q = 0; q < kPairs; ++q) {
      x = _mm512_mask_mov_epi8(x, mask[o][q], _mm512_permutex2var_epi8(v[2 * q], idx[o][q], v[2 * q + 1]));
    }
    if (kTail) _mm512_mask_storeu_epi8(dst + 64 * o, part(o), x);
    else if (o + 1 < kRegs) _mm512_storeu_si512(dst + 64 * o, x);
    else _mm512_mask_storeu_epi8(dst + 64 * o, last, x);
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
#endif

}  // namespace layoutcheck::group_permutes

#endif  // LAYOUTCHECK_OPTIMIZED_GROUP_PERMUTES_H_
