// Vector kernels for NVDLA weights (see nvdla_weight_simd.h).
//
// Why it equals the portable path: a physical line of kernel k is its W*C
// channels of line h in (w, c) order, at most one vector. Packing builds it
// from the logical rows (plane c, line h: W elements) of the kernel: the rows
// of channels c0..c1-1 lie inside one vector-sized window starting at row
// (c0, h), so one masked load reads them; two windows feed one two-table
// permute whose index for output element w*C + c is the element's place in
// its window (plus one vector's width for the second window), and the merge
// mask keeps only those output elements. Unpacking runs the other way: plane
// c of a kernel is built R = vector / W logical rows at a time, two physical
// lines per permute (row r's element w is element w*C + c of line r).
// Masked loads and stores touch no byte outside the rows and lines named.
// Image weights without post-extension and with at most 8 lines take the
// runs of kernels further down instead (fewer permutes and stores per byte).
#include "optimized/nvdla_weight_simd.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// gcc 12 warns inside avx512fintrin.h, whose _mm512_undefined_* functions read an
// uninitialized variable on purpose (a false positive for every intrinsic using them).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "optimized/head_store.h"
#include "optimized/masked.h"
#define LC_WEIGHT_AVX512 1
#endif

#include "optimized/byte_transpose.h"
#include "optimized/group_permutes.h"
#include "optimized/isa.h"

namespace layoutcheck {

#if defined(LC_WEIGHT_AVX512)
namespace {

bool has_avx512_vbmi() { return isa_at_least(Isa::kAvx512Vbmi); }

#define LC_AVX512_VBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"), always_inline)) inline

// Element-size specific operations: N elements per 64-byte vector.
template <typename T>
struct Ops;

template <>
struct Ops<uint8_t> {
  using Mask = __mmask64;
  static constexpr uint64_t N = 64;
  LC_AVX512_VBMI static Mask first(uint64_t n) { return n >= 64 ? ~Mask{0} : (Mask{1} << n) - 1; }
  LC_AVX512_VBMI static __m512i load(Mask m, const uint8_t* p) { return masked::_mm512_maskz_loadu_epi8(m, p); }
  LC_AVX512_VBMI static void store(uint8_t* p, Mask m, __m512i v) { masked::_mm512_mask_storeu_epi8(p, m, v); }
  LC_AVX512_VBMI static __m512i permute2(Mask m, __m512i a, __m512i idx, __m512i b) {
    return _mm512_maskz_permutex2var_epi8(m, a, idx, b);
  }
  LC_AVX512_VBMI static __m512i add(__m512i v, uint64_t c) {
    return _mm512_add_epi8(v, _mm512_set1_epi8(static_cast<char>(c)));
  }
};

template <>
struct Ops<uint16_t> {
  using Mask = __mmask32;
  static constexpr uint64_t N = 32;
  LC_AVX512_VBMI static Mask first(uint64_t n) { return n >= 32 ? ~Mask{0} : static_cast<Mask>((uint64_t{1} << n) - 1); }
  LC_AVX512_VBMI static __m512i load(Mask m, const uint8_t* p) { return masked::_mm512_maskz_loadu_epi16(m, p); }
  LC_AVX512_VBMI static void store(uint8_t* p, Mask m, __m512i v) { masked::_mm512_mask_storeu_epi16(p, m, v); }
  LC_AVX512_VBMI static __m512i permute2(Mask m, __m512i a, __m512i idx, __m512i b) {
    return _mm512_maskz_permutex2var_epi16(m, a, idx, b);
  }
  LC_AVX512_VBMI static __m512i add(__m512i v, uint64_t c) {
    return _mm512_add_epi16(v, _mm512_set1_epi16(static_cast<short>(c)));
  }
};

// Physical element of kernel kk's line h in the group of gk kernels at `base`.
struct Lines {
  uint64_t H, wc, width, shift, ext;
  uint64_t line(uint64_t base, uint64_t gk, uint64_t kk, uint64_t h) const {
    const uint64_t j = h >> shift, h0 = j << shift, wj = std::min(ext, H - h0) * wc;
    return base + j * gk * width + kk * wj + (h - h0) * wc;
  }
};

// The windows of image_pack below: runs of channels [c0, c1) whose rows at a
// line (c1 - 1 - c0 planes and W elements) fit one vector.
inline uint64_t pack_windows(const ImageWeightShape& s) {
  const uint64_t n = 64 / s.eb, hw = s.H * s.W;
  uint64_t windows = 0;
  for (uint64_t c0 = 0; c0 < s.C; ++windows) {
    uint64_t c1 = c0 + 1;
    while (c1 < s.C && (c1 - c0) * hw + s.W <= n) ++c1;
    c0 = c1;
  }
  return windows;
}

template <typename T>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"))) void image_pack(const ImageWeightShape& s,
                                                                                        const uint8_t* src,
                                                                                        uint8_t* dst) {
  using O = Ops<T>;
  using Mask = typename O::Mask;
  constexpr uint64_t N = O::N, eb = sizeof(T);
  const uint64_t C = s.C, H = s.H, W = s.W, hw = H * W, chw = C * hw, wc = W * C;
  // Windows of channels [c0, c1): one load of (c1-1-c0)*hw + W elements at
  // row (c0, h); windows 2i and 2i+1 share one permute.
  uint64_t offset[N];
  Mask loads[N], merge[N / 2] = {};
  alignas(64) T idx[N / 2][N] = {};
  uint64_t windows = 0;
  for (uint64_t c0 = 0; c0 < C;) {
    uint64_t c1 = c0 + 1;
    while (c1 < C && (c1 - c0) * hw + W <= N) ++c1;
    const uint64_t pair = windows / 2, second = windows % 2;
    for (uint64_t c = c0; c < c1; ++c) {
      for (uint64_t w = 0; w < W; ++w) {
        idx[pair][w * C + c] = static_cast<T>(second * N + (c - c0) * hw + w);
        merge[pair] |= Mask{1} << (w * C + c);
      }
    }
    offset[windows] = c0 * hw;
    loads[windows] = O::first((c1 - 1 - c0) * hw + W);
    ++windows;
    c0 = c1;
  }
  const uint64_t pairs = (windows + 1) / 2;
  const Mask store = O::first(wc);
  const __m512i zero = _mm512_setzero_si512();
  const Lines lines{H, wc, s.ext * wc, s.ext == 1 ? 0u : s.ext == 2 ? 1u : 2u, s.ext};
  const uint8_t* const src_end = src + s.K * chw * eb;
  uint8_t* const dst_end = dst + s.K * chw * eb;
  for (uint64_t k0 = 0; k0 < s.K; k0 += s.group) {
    const uint64_t gk = std::min(s.group, s.K - k0), base = k0 * chw;
    if (windows <= 2 && s.ext == 1) {
      // One permute per line. Walked in physical order (line h of kernels
      // 0..gk-1 is one run), whole-vector loads and stores while they stay
      // inside the data: a store's bytes past the line belong to lines
      // written after it.
      const __m512i i = _mm512_load_si512(idx[0]);
      const Mask m = merge[0], la = loads[0], lb = windows == 2 ? loads[1] : 0;
      const uint64_t ob = windows == 2 ? offset[1] * eb : 0, kstep = chw * eb;
      uint8_t* out = dst + base * eb;
      for (uint64_t h = 0; h < H; ++h) {
        const uint8_t* row = src + (base + h * W) * eb;
        for (uint64_t kk = 0; kk < gk; ++kk, row += kstep, out += wc * eb) {
          const bool whole_in = row + ob + 64 <= src_end, whole_out = out + 64 <= dst_end;
          const __m512i a = whole_in ? _mm512_loadu_si512(row) : O::load(la, row);
          const __m512i b = whole_in ? _mm512_loadu_si512(row + ob) : O::load(lb, row + ob);
          const __m512i v = O::permute2(m, a, i, b);
          if (whole_out) _mm512_storeu_si512(out, v);
          else O::store(out, store, v);
        }
      }
      continue;
    }
    for (uint64_t kk = 0; kk < gk; ++kk) {
      const uint8_t* row = src + (k0 + kk) * chw * eb;
      for (uint64_t h = 0; h < H; ++h, row += W * eb) {
        __m512i v = zero;
        for (uint64_t p = 0; p < pairs; ++p) {
          const __m512i a = O::load(loads[2 * p], row + offset[2 * p] * eb);
          const __m512i b = 2 * p + 1 < windows ? O::load(loads[2 * p + 1], row + offset[2 * p + 1] * eb) : zero;
          const __m512i i = _mm512_load_si512(idx[p]);
          v = _mm512_or_si512(v, O::permute2(merge[p], a, i, b));
        }
        O::store(dst + lines.line(base, gk, kk, h) * eb, store, v);
      }
    }
  }
}

// One kernel of at most 4 channels whose planes fit one vector (lines ls
// bytes apart): each pair of lines is read once and feeds every plane.
template <typename T>
struct Kernel {
  const uint8_t* first;
  uint64_t ls, H, plane_bytes;
  bool whole_in;
  typename Ops<T>::Mask line_mask;
  const T (*idx)[Ops<T>::N];
  const typename Ops<T>::Mask* merge;
  const uint8_t* dst_end;
  typename Ops<T>::Mask out_mask;
};

template <typename T, int kC>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"), always_inline)) inline void unpack_planes(
    const Kernel<T>& k, uint8_t* out) {
  using O = Ops<T>;
  const __m512i zero = _mm512_setzero_si512();
  __m512i v[kC];
  _Pragma("GCC unroll 4") for (int c = 0; c < kC; ++c) v[c] = zero;
  const uint8_t* at = k.first;
  for (uint64_t p = 0; 2 * p < k.H; ++p, at += 2 * k.ls) {
    const bool odd = 2 * p + 1 < k.H;
    const __m512i a = k.whole_in ? _mm512_loadu_si512(at) : O::load(k.line_mask, at);
    const __m512i b = !odd ? zero : k.whole_in ? _mm512_loadu_si512(at + k.ls) : O::load(k.line_mask, at + k.ls);
    const __m512i i = _mm512_load_si512(k.idx[p]);
    _Pragma("GCC unroll 4") for (int c = 0; c < kC; ++c) {
      v[c] = _mm512_or_si512(v[c], O::permute2(k.merge[p], a, O::add(i, static_cast<uint64_t>(c)), b));
    }
  }
  _Pragma("GCC unroll 4") for (int c = 0; c < kC; ++c, out += k.plane_bytes) {
    if (out + 64 <= k.dst_end) _mm512_storeu_si512(out, v[c]);
    else O::store(out, k.out_mask, v[c]);
  }
}

// int8 kernels of at most 4 channels whose two logical rows fit 16 bytes: one
// permute per pair of lines puts rows h, h+1 of plane c in 128-bit lane c,
// and each lane is one 16-byte store (its bytes past the two rows are the
// next rows of the same plane, written after it; near the plane's end the
// store is masked). `idx` maps lane c element r*W + w to element w*C + c of
// line r of the pair.
template <typename T, int kC>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"), always_inline)) inline void unpack_row_pairs(
    const Kernel<T>& k, __m512i idx, uint64_t W, uint64_t hw, uint8_t* out) {
  using O = Ops<T>;
  constexpr uint64_t eb = sizeof(T), lane = 16 / eb;
  const __m512i zero = _mm512_setzero_si512();
  const uint8_t* at = k.first;
  uint64_t h = 0;
  if (k.whole_in) {
    // Pairs of two lines whose lanes are whole stores: no branch.
    for (; h + 1 < k.H && h * W + lane <= hw; h += 2, at += 2 * k.ls) {
      const __m512i v = _mm512_permutex2var_epi8(_mm512_loadu_si512(at), idx, _mm512_loadu_si512(at + k.ls));
      uint8_t* to = out + h * W * eb;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to), _mm512_castsi512_si128(v));
      if (kC > 1) _mm_storeu_si128(reinterpret_cast<__m128i*>(to + hw * eb), _mm512_extracti32x4_epi32(v, 1));
      if (kC > 2) _mm_storeu_si128(reinterpret_cast<__m128i*>(to + 2 * hw * eb), _mm512_extracti32x4_epi32(v, 2));
      if (kC > 3) _mm_storeu_si128(reinterpret_cast<__m128i*>(to + 3 * hw * eb), _mm512_extracti32x4_epi32(v, 3));
    }
  }
  for (; h < k.H; h += 2, at += 2 * k.ls) {
    const bool odd = h + 1 < k.H;
    const __m512i a = k.whole_in ? _mm512_loadu_si512(at) : O::load(k.line_mask, at);
    const __m512i b = !odd ? zero : k.whole_in ? _mm512_loadu_si512(at + k.ls) : O::load(k.line_mask, at + k.ls);
    const __m512i v = _mm512_permutex2var_epi8(a, idx, b);
    const __m128i l[4] = {_mm512_castsi512_si128(v), _mm512_extracti32x4_epi32(v, 1), _mm512_extracti32x4_epi32(v, 2),
                          _mm512_extracti32x4_epi32(v, 3)};
    const bool whole = h * W + lane <= hw;
    const __mmask16 rows = static_cast<__mmask16>((1u << ((odd ? 2 : 1) * W * eb)) - 1);
    _Pragma("GCC unroll 4") for (int c = 0; c < kC; ++c) {
      uint8_t* to = out + (c * hw + h * W) * eb;
      if (whole) _mm_storeu_si128(reinterpret_cast<__m128i*>(to), l[c]);
      else masked::_mm_mask_storeu_epi8(to, rows, l[c]);
    }
  }
}

template <typename T>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"))) void image_unpack(const ImageWeightShape& s,
                                                                                          const uint8_t* src,
                                                                                          uint8_t* dst) {
  using O = Ops<T>;
  using Mask = typename O::Mask;
  constexpr uint64_t N = O::N, eb = sizeof(T);
  const uint64_t C = s.C, H = s.H, W = s.W, hw = H * W, chw = C * hw, wc = W * C;
  // R logical rows per store; rows 2p and 2p+1 of them come from one permute
  // of their two lines, element w of row r from element w*C + c.
  const uint64_t R = N / W;
  Mask merge[N / 2] = {};
  alignas(64) T idx[N / 2][N] = {};
  for (uint64_t r = 0; r < R; ++r) {
    for (uint64_t w = 0; w < W; ++w) {
      idx[r / 2][r * W + w] = static_cast<T>((r % 2) * N + w * C);
      merge[r / 2] |= Mask{1} << (r * W + w);
    }
  }
  const __m512i zero = _mm512_setzero_si512();
  const Mask line_mask = O::first(wc);
  const Lines lines{H, wc, s.ext * wc, s.ext == 1 ? 0u : s.ext == 2 ? 1u : 2u, s.ext};
  const uint8_t* const src_end = src + s.K * chw * eb;
  uint8_t* const dst_end = dst + s.K * chw * eb;
  const bool single = H <= R;
  // unpack_row_pairs: two rows of a plane in a 128-bit lane, a lane a channel.
  const bool row_pairs = eb == 1 && C <= 4 && 2 * W <= 16;
  alignas(64) T pair_table[N] = {};
  for (uint64_t c = 0; row_pairs && c < C; ++c) {
    for (uint64_t r = 0; r < 2; ++r) {
      for (uint64_t w = 0; w < W; ++w) pair_table[c * (16 / eb) + r * W + w] = static_cast<T>(r * N + w * C + c);
    }
  }
  const __m512i pair_idx = _mm512_load_si512(pair_table);
  for (uint64_t k0 = 0; k0 < s.K; k0 += s.group) {
    const uint64_t gk = std::min(s.group, s.K - k0), base = k0 * chw;
    if (single && s.ext == 1) {
      // Lines gk * wc apart; each permute reads its two lines itself (from
      // L1), whole vectors while inside the data.
      const uint64_t ls = gk * wc * eb;
      const Mask out_mask = O::first(H * W);
      for (uint64_t kk = 0; kk < gk; ++kk) {
        const uint8_t* first = src + (base + kk * wc) * eb;
        uint8_t* out = dst + (k0 + kk) * chw * eb;
        const bool whole_in = first + (H - 1) * ls + 64 <= src_end;
        if (C <= 4) {
          const Kernel<T> k{first, ls, H, hw * eb, whole_in, line_mask, idx, merge, dst_end, out_mask};
          if (row_pairs) {
            switch (C) {
              case 1: unpack_row_pairs<T, 1>(k, pair_idx, W, hw, out); break;
              case 2: unpack_row_pairs<T, 2>(k, pair_idx, W, hw, out); break;
              case 3: unpack_row_pairs<T, 3>(k, pair_idx, W, hw, out); break;
              default: unpack_row_pairs<T, 4>(k, pair_idx, W, hw, out); break;
            }
            continue;
          }
          switch (C) {
            case 1: unpack_planes<T, 1>(k, out); break;
            case 2: unpack_planes<T, 2>(k, out); break;
            case 3: unpack_planes<T, 3>(k, out); break;
            default: unpack_planes<T, 4>(k, out); break;
          }
          continue;
        }
        for (uint64_t c = 0; c < C; ++c, out += hw * eb) {
          __m512i v = zero;
          const uint8_t* at = first;
          for (uint64_t p = 0; 2 * p < H; ++p, at += 2 * ls) {
            const bool odd = 2 * p + 1 < H;
            const __m512i a = whole_in ? _mm512_loadu_si512(at) : O::load(line_mask, at);
            const __m512i b = !odd ? zero : whole_in ? _mm512_loadu_si512(at + ls) : O::load(line_mask, at + ls);
            v = _mm512_or_si512(v, O::permute2(merge[p], a, O::add(_mm512_load_si512(idx[p]), c), b));
          }
          if (out + 64 <= dst_end) _mm512_storeu_si512(out, v);
          else O::store(out, out_mask, v);
        }
      }
      continue;
    }
    for (uint64_t kk = 0; kk < gk; ++kk) {
      uint8_t* kernel = dst + (k0 + kk) * chw * eb;
      for (uint64_t r0 = 0; r0 < H; r0 += R) {
        // The chunk's lines, read once; a missing odd line reads as zeros.
        const uint64_t rows = std::min(R, H - r0);
        __m512i line[N + 1];
        for (uint64_t r = 0; r < rows; ++r) {
          const uint8_t* at = src + lines.line(base, gk, kk, r0 + r) * eb;
          line[r] = at + 64 <= src_end ? _mm512_loadu_si512(at) : O::load(line_mask, at);
        }
        line[rows] = zero;
        const Mask out_mask = O::first(rows * W);
        uint8_t* out = kernel + r0 * W * eb;
        for (uint64_t c = 0; c < C; ++c, out += hw * eb) {
          __m512i v = zero;
          for (uint64_t p = 0; 2 * p < rows; ++p) {
            v = _mm512_or_si512(v, O::permute2(merge[p], line[2 * p], O::add(_mm512_load_si512(idx[p]), c), line[2 * p + 1]));
          }
          // With one chunk per plane, the bytes past it belong to planes
          // (and kernels) written after it.
          if (single && out + 64 <= dst_end) _mm512_storeu_si512(out, v);
          else O::store(out, out_mask, v);
        }
      }
    }
  }
}

// ---- image weights without post-extension: runs of P = N / (W*C) kernels ----
//
// A run is P kernels of a group, kk0..kk0+P-1: logically P*C*H*W elements in
// a row; physically, in each line h of the group, the P*W*C elements at
// h*gk*W*C + kk0*W*C (lines h of the P kernels back to back). Both sides are
// at most H vectors (P*C*H*W <= N*H); with H <= 8 the side read is read once
// into registers, and each vector of the side written is a fixed pattern of
// them, the same for every run and group of the shape: its tables are built
// once per shape and held in registers for the whole call:
//   packing: line h's vector takes element (p, w, c) from run element
//     p*C*H*W + c*H*W + h*W + w (registers: the run's logical vectors);
//   unpacking: logical vector v's element (p, c, h, w) comes from element
//     p*W*C + w*C + c of line h (registers: the lines of the run).
// Registers pair up (2q, 2q+1) for two-table permutes. A vector starts as its
// index table (element i: its place in its pair) and each pair's permute
// rewrites, merge-masked, the elements of that pair (mask: the pair table
// equals q), so the vector is one permute per pair and no OR; the masks come
// from a compare of registers (loading them from memory, 28 per run of the
// 7x7x3 int8 row, doubled its time). A whole-vector store covers elements past
// the run (next run, written after it); where those were written before (the
// group's last run when packing, whose overflow is the next line) or lie past
// the data, the store is masked.
constexpr uint64_t kRunMax = 8;

template <typename T>
struct RunTables {
  static constexpr uint64_t N = Ops<T>::N;
  uint64_t C = 0, H = 0, W = 0;  // the shape they were built for (K and the group do not matter)
  uint64_t P = 0;                // kernels per run
  uint64_t in_vectors = 0;       // logical vectors of a run (at most H)
  // [h] when packing, [v] when unpacking: index in the pair, pair of each element (0xff..: none).
  alignas(64) T pack_idx[kRunMax][N];
  alignas(64) T pack_pair[kRunMax][N];
  alignas(64) T unpack_idx[kRunMax][N];
  alignas(64) T unpack_pair[kRunMax][N];
};

template <typename T>
void build_run_tables(RunTables<T>* t, uint64_t C, uint64_t H, uint64_t W) {
  constexpr uint64_t N = Ops<T>::N;
  const uint64_t hw = H * W, wc = W * C, chw = C * hw;
  t->C = C, t->H = H, t->W = W;
  t->P = N / wc;
  t->in_vectors = (t->P * chw + N - 1) / N;
  std::memset(t->pack_idx, 0, sizeof(t->pack_idx));
  std::memset(t->unpack_idx, 0, sizeof(t->unpack_idx));
  std::memset(t->pack_pair, 0xff, sizeof(t->pack_pair));
  std::memset(t->unpack_pair, 0xff, sizeof(t->unpack_pair));
  for (uint64_t h = 0; h < H; ++h) {
    for (uint64_t i = 0; i < t->P * wc; ++i) {
      const uint64_t p = i / wc, w = i % wc / C, c = i % C, e = p * chw + c * hw + h * W + w;
      t->pack_idx[h][i] = static_cast<T>(e % (2 * N));
      t->pack_pair[h][i] = static_cast<T>(e / (2 * N));
    }
  }
  for (uint64_t e = 0; e < t->P * chw; ++e) {
    const uint64_t p = e / chw, r = e % chw, c = r / hw, h = r % hw / W, w = r % W;
    t->unpack_idx[e / N][e % N] = static_cast<T>(h % 2 * N + p * wc + w * C + c);
    t->unpack_pair[e / N][e % N] = static_cast<T>(h / 2);
  }
}

// Built once per shape and thread (the checker and the benchmarks repeat a shape).
template <typename T>
const RunTables<T>& run_tables(uint64_t C, uint64_t H, uint64_t W) {
  thread_local std::unique_ptr<RunTables<T>> t;
  if (!t) {
    t = std::make_unique<RunTables<T>>();
    build_run_tables(t.get(), C, H, W);
  } else if (t->C != C || t->H != H || t->W != W) {
    build_run_tables(t.get(), C, H, W);
  }
  return *t;
}

// One vector from the registers reg[0..2Q): its index table idx, pair table pairs.
template <typename T, uint64_t kQ>
LC_AVX512_VBMI __m512i gather_pairs(const __m512i* reg, __m512i idx, __m512i pairs, const __m512i* q_of) {
  __m512i v = idx;
  _Pragma("GCC unroll 4") for (uint64_t q = 0; q < kQ; ++q) {
    if (sizeof(T) == 1) {
      v = _mm512_mask2_permutex2var_epi8(reg[2 * q], v, _mm512_cmpeq_epi8_mask(pairs, q_of[q]), reg[2 * q + 1]);
    } else {
      v = _mm512_mask2_permutex2var_epi16(reg[2 * q], v, _mm512_cmpeq_epi16_mask(pairs, q_of[q]), reg[2 * q + 1]);
    }
  }
  return v;
}

template <typename T>
LC_AVX512_VBMI __m512i pair_number(uint64_t q) {
  return sizeof(T) == 1 ? _mm512_set1_epi8(static_cast<char>(q)) : _mm512_set1_epi16(static_cast<short>(q));
}

// Vector j (of N elements) of the n elements at p, reading none past them.
template <typename T>
LC_AVX512_VBMI __m512i load_part(const uint8_t* p, uint64_t n, uint64_t j) {
  constexpr uint64_t N = Ops<T>::N;
  if (j * N >= n) return _mm512_setzero_si512();
  const uint8_t* at = p + j * 64;
  return n - j * N >= N ? _mm512_loadu_si512(at) : Ops<T>::load(Ops<T>::first(n - j * N), at);
}

// kH lines; the run's logical vectors (at most kH) and the tables of the lines
// stay in registers.
template <typename T, uint64_t kH>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"))) void image_pack_runs(const ImageWeightShape& s,
                                                                                             const RunTables<T>& t,
                                                                                             const uint8_t* src,
                                                                                             uint8_t* dst) {
  using O = Ops<T>;
  constexpr uint64_t eb = sizeof(T), kQ = (kH + 1) / 2, N = O::N;
  const uint64_t W = s.W, chw = s.C * kH * W, wc = W * s.C, P = t.P, total = s.K * chw, nv = t.in_vectors;
  __m512i q_of[kQ], idx[kH], pairs[kH];
  _Pragma("GCC unroll 4") for (uint64_t q = 0; q < kQ; ++q) q_of[q] = pair_number<T>(q);
  _Pragma("GCC unroll 8") for (uint64_t h = 0; h < kH; ++h) {
    idx[h] = _mm512_load_si512(t.pack_idx[h]);
    pairs[h] = _mm512_load_si512(t.pack_pair[h]);
  }
  for (uint64_t k0 = 0; k0 < s.K; k0 += s.group) {
    const uint64_t gk = std::min(s.group, s.K - k0), ls = gk * wc * eb;
    for (uint64_t kk0 = 0; kk0 < gk; kk0 += P) {
      const uint64_t first = (k0 + kk0) * chw;
      __m512i reg[2 * kQ];
      const uint8_t* in = src + first * eb;
      if (first + nv * N <= total) {
        _Pragma("GCC unroll 8") for (uint64_t j = 0; j < kH; ++j) {
          reg[j] = j < nv ? _mm512_loadu_si512(in + j * 64) : _mm512_setzero_si512();
        }
      } else {
        _Pragma("GCC unroll 8") for (uint64_t j = 0; j < kH; ++j) reg[j] = load_part<T>(in, total - first, j);
      }
      if (kH % 2) reg[kH] = _mm512_setzero_si512();
      uint8_t* out = dst + (k0 * chw + kk0 * wc) * eb;
      if (kk0 + P < gk) {
        _Pragma("GCC unroll 8") for (uint64_t h = 0; h < kH; ++h) {
          _mm512_storeu_si512(out + h * ls, gather_pairs<T, kQ>(reg, idx[h], pairs[h], q_of));
        }
      } else {
        const typename O::Mask m = O::first((gk - kk0) * wc);
        _Pragma("GCC unroll 8") for (uint64_t h = 0; h < kH; ++h) {
          O::store(out + h * ls, m, gather_pairs<T, kQ>(reg, idx[h], pairs[h], q_of));
        }
      }
    }
  }
}

template <typename T, uint64_t kH>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"))) void image_unpack_runs(
    const ImageWeightShape& s, const RunTables<T>& t, const uint8_t* src, uint8_t* dst) {
  using O = Ops<T>;
  constexpr uint64_t N = O::N, eb = sizeof(T), kQ = (kH + 1) / 2;
  const uint64_t chw = s.C * kH * s.W, wc = s.W * s.C, P = t.P, total = s.K * chw;
  uint8_t* const dst_end = dst + total * eb;
  __m512i q_of[kQ], idx[kH], pairs[kH];
  _Pragma("GCC unroll 4") for (uint64_t q = 0; q < kQ; ++q) q_of[q] = pair_number<T>(q);
  _Pragma("GCC unroll 8") for (uint64_t v = 0; v < kH; ++v) {
    idx[v] = _mm512_load_si512(t.unpack_idx[v]);
    pairs[v] = _mm512_load_si512(t.unpack_pair[v]);
  }
  for (uint64_t k0 = 0; k0 < s.K; k0 += s.group) {
    const uint64_t gk = std::min(s.group, s.K - k0), base = k0 * chw, lw = gk * wc;
    for (uint64_t kk0 = 0; kk0 < gk; kk0 += P) {
      const uint64_t pk = std::min(P, gk - kk0), vectors = (pk * chw + N - 1) / N;
      __m512i reg[2 * kQ];
      const uint64_t first = base + kk0 * wc;
      const uint8_t* at = src + first * eb;
      if (first + (kH - 1) * lw + N <= total) {
        _Pragma("GCC unroll 8") for (uint64_t h = 0; h < kH; ++h) reg[h] = _mm512_loadu_si512(at + h * lw * eb);
      } else {
        _Pragma("GCC unroll 8") for (uint64_t h = 0; h < kH; ++h) {
          reg[h] = load_part<T>(at + h * lw * eb, total - first - h * lw, 0);
        }
      }
      if (kH % 2) reg[kH] = _mm512_setzero_si512();
      uint8_t* out = dst + (k0 + kk0) * chw * eb;
      if (out + vectors * 64 <= dst_end) {
        _Pragma("GCC unroll 8") for (uint64_t v = 0; v < kH; ++v) {
          if (v < vectors) _mm512_storeu_si512(out + v * 64, gather_pairs<T, kQ>(reg, idx[v], pairs[v], q_of));
        }
        continue;
      }
      for (uint64_t v = 0; v < vectors; ++v, out += 64) {
        const __m512i r = gather_pairs<T, kQ>(reg, idx[v], pairs[v], q_of);
        if (out + 64 <= dst_end) _mm512_storeu_si512(out, r);
        else O::store(out, O::first((dst_end - out) / eb), r);
      }
    }
  }
}

// True when it copied: no post-extension, a line in one vector, at most
// kRunMax lines.
template <typename T>
bool image_runs_copy(const ImageWeightShape& s, const uint8_t* src, uint8_t* dst, bool to_physical) {
  if (s.ext != 1 || s.H == 0 || s.H > kRunMax || s.W * s.C > Ops<T>::N) return false;
  const RunTables<T>& t = run_tables<T>(s.C, s.H, s.W);
  if (to_physical) {
    switch (s.H) {
      case 1: image_pack_runs<T, 1>(s, t, src, dst); break;
      case 2: image_pack_runs<T, 2>(s, t, src, dst); break;
      case 3: image_pack_runs<T, 3>(s, t, src, dst); break;
      case 4: image_pack_runs<T, 4>(s, t, src, dst); break;
      case 5: image_pack_runs<T, 5>(s, t, src, dst); break;
      case 6: image_pack_runs<T, 6>(s, t, src, dst); break;
      case 7: image_pack_runs<T, 7>(s, t, src, dst); break;
      default: image_pack_runs<T, 8>(s, t, src, dst); break;
    }
    return true;
  }
  switch (s.H) {
    case 1: image_unpack_runs<T, 1>(s, t, src, dst); break;
    case 2: image_unpack_runs<T, 2>(s, t, src, dst); break;
    case 3: image_unpack_runs<T, 3>(s, t, src, dst); break;
    case 4: image_unpack_runs<T, 4>(s, t, src, dst); break;
    case 5: image_unpack_runs<T, 5>(s, t, src, dst); break;
    case 6: image_unpack_runs<T, 6>(s, t, src, dst); break;
    case 7: image_unpack_runs<T, 7>(s, t, src, dst); break;
    default: image_unpack_runs<T, 8>(s, t, src, dst); break;
  }
  return true;
}

// ---- direct-convolution weights: full 64-channel blocks of 3x3 kernels ----
//
// A block of one kernel is 64 channels x 9 positions, channel-major; position
// pos of it is the physical row of 64 elements at the group's block base +
// (pos * gk + kk) * 64. Int8 unpacks with VBMI: the block is 9 whole vectors
// ("windows"), and window j draws on every position row (element 64j + i is
// channel (64j + i) / 9 of row (64j + i) % 9), two rows per permute. The 9
// rows of a kernel stay in registers; each window is gather_pairs of them
// (five merge-masked permutes, masks by compare) with an index and a pair
// table that depend on nothing but the shape, built once.
constexpr int kDcHw = 9, kDcPairs = (kDcHw + 1) / 2;

struct DcTables {
  alignas(64) uint8_t idx[kDcHw][64];   // element i's place in its pair
  alignas(64) uint8_t pair[kDcHw][64];  // element i's pair (gather_pairs)
};

// Window a, element i: channel e / 9 of row e % 9, rows paired (2p, 2p+1).
DcTables dc_unpack_tables() {
  DcTables t;
  for (int a = 0; a < kDcHw; ++a) {
    for (int i = 0; i < 64; ++i) {
      const int e = 64 * a + i, pos = e % 9;
      t.idx[a][i] = static_cast<uint8_t>(pos % 2 * 64 + e / 9);
      t.pair[a][i] = static_cast<uint8_t>(pos / 2);
    }
  }
  return t;
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"))) void dc3x3_unpack_permutes(
    const DcWeightShape& s, const uint8_t* src, uint8_t* dst) {
  // Built once, not per call (64 x 64 x 3 x 3 int8 on a Zen 5, best of 7:
  // 0.16 of memcpy -> 0.22; the five permutes of each 64 bytes out bound it).
  static const DcTables t = dc_unpack_tables();
  const uint64_t khw = s.C * kDcHw;
  __m512i q_of[kDcPairs];
  _Pragma("GCC unroll 5") for (int q = 0; q < kDcPairs; ++q) q_of[q] = pair_number<uint8_t>(q);
  for (uint64_t k0 = 0; k0 < s.K; k0 += s.group) {
    const uint64_t gk = std::min(s.group, s.K - k0), row_step = gk * 64;
    for (uint64_t c0 = 0; c0 + 64 <= s.C; c0 += 64) {
      const uint64_t rows = k0 * khw + c0 * kDcHw * gk;
      for (uint64_t kk = 0; kk < gk; ++kk) {
        const uint8_t* in = src + rows + kk * 64;
        uint8_t* out = dst + (k0 + kk) * khw + c0 * kDcHw;
        __m512i v[kDcHw + 1];
        _Pragma("GCC unroll 9") for (int j = 0; j < kDcHw; ++j) v[j] = _mm512_loadu_si512(in + j * row_step);
        v[kDcHw] = _mm512_setzero_si512();
        _Pragma("GCC unroll 9") for (int a = 0; a < kDcHw; ++a) {
          const __m512i r =
              gather_pairs<uint8_t, kDcPairs>(v, _mm512_load_si512(t.idx[a]), _mm512_load_si512(t.pair[a]), q_of);
          _mm512_storeu_si512(out + a * 64, r);
        }
      }
    }
  }
}

// The other int8 copies by byte transposes in lanes (AVX-512BW):
// channels i, 16 + i, 32 + i, 48 + i of a block, 16 bytes from each (its 9
// positions and 7 bytes of the next channel), are the lanes of register i,
// so the 16 x 16 byte transposes per lane leave in register pos, lane q,
// position pos of channels 16q..16q+15: the whole position row. Unpacking,
// the 9 rows (and 7 zero registers) go the other way and each channel's 9
// bytes leave by a masked store. A block whose 16-byte reads would pass the
// end of the logical buffer (the last kernel's last block) is read from a
// copy. Packs take it with VBMI too, and so do unpacks where 512-bit
// operations are whole (measured on a Zen 5, 256 x 256 x 3 x 3, pack /
// unpack: capped at AVX-512 without VBMI, the rows' loop 0.13 / 0.16 of
// memcpy -> 0.47 / 0.39; with it, the permutes 0.42 / 0.40 against 0.47 /
// 0.37; on an Intel Xeon, in the benchmark, the permutes' unpack 0.31-0.33
// against 0.39 in these lanes). Where they split (a Zen 4) the permutes
// unpack, 0.53 of memcpy in the run of commit d18ae55.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void dc3x3_lanes_epi8(const DcWeightShape& s,
                                                                          const uint8_t* src, uint8_t* dst,
                                                                          bool to_physical) {
  const uint64_t khw = s.C * kDcHw, end = s.K * khw;
  for (uint64_t k0 = 0; k0 < s.K; k0 += s.group) {
    const uint64_t gk = std::min(s.group, s.K - k0), row_step = gk * 64;
    for (uint64_t c0 = 0; c0 + 64 <= s.C; c0 += 64) {
      const uint64_t rows = k0 * khw + c0 * kDcHw * gk;
      for (uint64_t kk = 0; kk < gk; ++kk) {
        const uint64_t block = (k0 + kk) * khw + c0 * kDcHw;
        __m512i v[16];
        if (to_physical) {
          alignas(64) uint8_t copy[64 * kDcHw + 16];
          const uint8_t* in = src + block;
          if (block + 64 * kDcHw + 16 > end) {
            std::memcpy(copy, in, 64 * kDcHw);
            std::memset(copy + 64 * kDcHw, 0, 16);
            in = copy;
          }
          _Pragma("GCC unroll 16") for (int i = 0; i < 16; ++i) {
            const auto channel = [&](int c) __attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) {
              return _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + kDcHw * c));
            };
            __m512i x = _mm512_castsi128_si512(channel(i));
            x = _mm512_mask_broadcast_i32x4(x, 0x00F0, channel(16 + i));
            x = _mm512_mask_broadcast_i32x4(x, 0x0F00, channel(32 + i));
            v[i] = _mm512_mask_broadcast_i32x4(x, 0xF000, channel(48 + i));
          }
          byte_transpose::transpose16x16_epi8_x4(v);
          _Pragma("GCC unroll 9") for (int pos = 0; pos < kDcHw; ++pos) {
            _mm512_storeu_si512(dst + rows + kk * 64 + pos * row_step, v[pos]);
          }
          continue;
        }
        _Pragma("GCC unroll 16") for (int j = 0; j < 16; ++j) {
          v[j] = j < kDcHw ? _mm512_loadu_si512(src + rows + kk * 64 + j * row_step) : _mm512_setzero_si512();
        }
        byte_transpose::transpose16x16_epi8_x4(v);
        uint8_t* out = dst + block;
        _Pragma("GCC unroll 16") for (int i = 0; i < 16; ++i) {
          masked::_mm_mask_storeu_epi8(out + kDcHw * i, 0x1FF, _mm512_castsi512_si128(v[i]));
          masked::_mm_mask_storeu_epi8(out + kDcHw * (16 + i), 0x1FF, _mm512_extracti32x4_epi32(v[i], 1));
          masked::_mm_mask_storeu_epi8(out + kDcHw * (32 + i), 0x1FF, _mm512_extracti32x4_epi32(v[i], 2));
          masked::_mm_mask_storeu_epi8(out + kDcHw * (48 + i), 0x1FF, _mm512_extracti32x4_epi32(v[i], 3));
        }
      }
    }
  }
}

// The same with AVX2: a half of a block (32 channels) at a time, channels i
// and 16 + i of it the lanes of register i. Unpacking, each channel's 9
// bytes leave by a 16-byte store whose last 7 bytes are the next channel's
// (written after it: the low lanes first), but the block's last channel,
// whose next bytes another block holds, by a copy of its 9.
__attribute__((target("avx2"))) void dc3x3_lanes_epi8_avx2(const DcWeightShape& s, const uint8_t* src, uint8_t* dst,
                                                          bool to_physical) {
  const uint64_t khw = s.C * kDcHw, end = s.K * khw;
  for (uint64_t k0 = 0; k0 < s.K; k0 += s.group) {
    const uint64_t gk = std::min(s.group, s.K - k0), row_step = gk * 64;
    for (uint64_t c0 = 0; c0 + 64 <= s.C; c0 += 64) {
      const uint64_t rows = k0 * khw + c0 * kDcHw * gk;
      for (uint64_t kk = 0; kk < gk; ++kk) {
        const uint64_t block = (k0 + kk) * khw + c0 * kDcHw;
        alignas(32) uint8_t copy[64 * kDcHw + 16];
        const uint8_t* in = src + block;
        if (to_physical && block + 64 * kDcHw + 16 > end) {
          std::memcpy(copy, in, 64 * kDcHw);
          std::memset(copy + 64 * kDcHw, 0, 16);
          in = copy;
        }
        for (uint64_t h = 0; h < 2; ++h) {
          __m256i v[16];
          const uint64_t row = rows + kk * 64 + h * 32;
          if (to_physical) {
            _Pragma("GCC unroll 16") for (int i = 0; i < 16; ++i) {
              const uint8_t* at = in + kDcHw * (32 * h + i);
              v[i] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(at + 16 * kDcHw),
                                         reinterpret_cast<const __m128i*>(at));
            }
            byte_transpose::transpose16x16_epi8_x2(v);
            _Pragma("GCC unroll 9") for (int pos = 0; pos < kDcHw; ++pos) {
              _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + row + pos * row_step), v[pos]);
            }
            continue;
          }
          _Pragma("GCC unroll 16") for (int j = 0; j < 16; ++j) {
            v[j] = j < kDcHw ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + row + j * row_step))
                             : _mm256_setzero_si256();
          }
          byte_transpose::transpose16x16_epi8_x2(v);
          uint8_t* out = dst + block + 32 * h * kDcHw;
          _Pragma("GCC unroll 16") for (int i = 0; i < 16; ++i) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out + kDcHw * i), _mm256_castsi256_si128(v[i]));
          }
          _Pragma("GCC unroll 15") for (int i = 0; i < 15; ++i) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out + kDcHw * (16 + i)), _mm256_extracti128_si256(v[i], 1));
          }
          alignas(16) uint8_t last[16];
          _mm_store_si128(reinterpret_cast<__m128i*>(last), _mm256_extracti128_si256(v[15], 1));
          if (h == 0) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + kDcHw * 31), _mm_load_si128(reinterpret_cast<const __m128i*>(last)));
          else std::memcpy(out + kDcHw * 31, last, kDcHw);
        }
      }
    }
  }
}

// 16-bit, the same by 8 x 8 word transposes in lanes: per half of a block
// (32 channels, 64 bytes of a position row), channels i, 8 + i, 16 + i,
// 24 + i of it are the lanes of register i, 8 words each: positions 0..7
// from a channel's first word, and (a second transpose) 1..8 from its second,
// whose last register is position 8. Unpacking, rows 0..7 and 1..8 the other
// way, each channel's words 0..7 and 1..8 by 16-byte stores (words 1..7
// twice, the same). No read passes the block. Faster than the permutes both
// ways (measured on a Zen 5, 256 x 256 x 3 x 3 fp16, pack / unpack: the
// permutes 0.54 / 0.55 of memcpy, here 0.65 / 0.54; capped at AVX-512
// without VBMI, the rows' loop 0.20 / 0.38 -> 0.65 / 0.55).
__attribute__((target("avx512f,avx512bw,avx512vl"))) void dc3x3_lanes_epi16(const DcWeightShape& s,
                                                                           const uint8_t* src, uint8_t* dst,
                                                                           bool to_physical) {
  const uint64_t khw = s.C * kDcHw;
  for (uint64_t k0 = 0; k0 < s.K; k0 += s.group) {
    const uint64_t gk = std::min(s.group, s.K - k0), row_step = gk * 128;
    for (uint64_t c0 = 0; c0 + 64 <= s.C; c0 += 64) {
      const uint64_t rows = (k0 * khw + c0 * kDcHw * gk) * 2;
      for (uint64_t kk = 0; kk < gk; ++kk) {
        const uint64_t block = ((k0 + kk) * khw + c0 * kDcHw) * 2;
        for (uint64_t h = 0; h < 2; ++h) {
          const uint8_t* block_in = src + block + h * 32 * 2 * kDcHw;
          uint8_t* block_out = dst + block + h * 32 * 2 * kDcHw;
          const uint64_t row = rows + kk * 128 + h * 64;
          for (uint64_t first = 0; first < 2; ++first) {  // positions first..first + 7
            __m512i v[8];
            if (to_physical) {
              _Pragma("GCC unroll 8") for (int i = 0; i < 8; ++i) {
                const auto channel = [&](int c) __attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) {
                  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(block_in + 2 * (kDcHw * c + first)));
                };
                __m512i x = _mm512_castsi128_si512(channel(i));
                x = _mm512_mask_broadcast_i32x4(x, 0x00F0, channel(8 + i));
                x = _mm512_mask_broadcast_i32x4(x, 0x0F00, channel(16 + i));
                v[i] = _mm512_mask_broadcast_i32x4(x, 0xF000, channel(24 + i));
              }
              byte_transpose::transpose8x8_epi16_x4(v, v);
              if (first == 0) {
                _Pragma("GCC unroll 8") for (int pos = 0; pos < 8; ++pos) {
                  _mm512_storeu_si512(dst + row + pos * row_step, v[pos]);
                }
              } else {
                _mm512_storeu_si512(dst + row + 8 * row_step, v[7]);
              }
              continue;
            }
            _Pragma("GCC unroll 8") for (int j = 0; j < 8; ++j) {
              v[j] = _mm512_loadu_si512(src + row + (first + j) * row_step);
            }
            byte_transpose::transpose8x8_epi16_x4(v, v);
            uint8_t* out = block_out + 2 * first;
            _Pragma("GCC unroll 8") for (int i = 0; i < 8; ++i) {
              _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * kDcHw * i), _mm512_castsi512_si128(v[i]));
              _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * kDcHw * (8 + i)), _mm512_extracti32x4_epi32(v[i], 1));
              _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * kDcHw * (16 + i)), _mm512_extracti32x4_epi32(v[i], 2));
              _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * kDcHw * (24 + i)), _mm512_extracti32x4_epi32(v[i], 3));
            }
          }
        }
      }
    }
  }
}

// The same with AVX2: a quarter of a block (16 channels, 32 bytes of a
// position row) at a time, channels i and 8 + i of it the lanes of register
// i.
__attribute__((target("avx2"))) void dc3x3_lanes_epi16_avx2(const DcWeightShape& s, const uint8_t* src, uint8_t* dst,
                                                           bool to_physical) {
  const uint64_t khw = s.C * kDcHw;
  for (uint64_t k0 = 0; k0 < s.K; k0 += s.group) {
    const uint64_t gk = std::min(s.group, s.K - k0), row_step = gk * 128;
    for (uint64_t c0 = 0; c0 + 64 <= s.C; c0 += 64) {
      const uint64_t rows = (k0 * khw + c0 * kDcHw * gk) * 2;
      for (uint64_t kk = 0; kk < gk; ++kk) {
        const uint64_t block = ((k0 + kk) * khw + c0 * kDcHw) * 2;
        for (uint64_t q = 0; q < 4; ++q) {
          const uint8_t* block_in = src + block + q * 16 * 2 * kDcHw;
          uint8_t* block_out = dst + block + q * 16 * 2 * kDcHw;
          const uint64_t row = rows + kk * 128 + q * 32;
          for (uint64_t first = 0; first < 2; ++first) {  // positions first..first + 7
            __m256i v[8];
            if (to_physical) {
              _Pragma("GCC unroll 8") for (int i = 0; i < 8; ++i) {
                const uint8_t* at = block_in + 2 * (kDcHw * i + first);
                v[i] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(at + 2 * kDcHw * 8),
                                           reinterpret_cast<const __m128i*>(at));
              }
              byte_transpose::transpose8x8_epi16_x2(v, v);
              if (first == 0) {
                _Pragma("GCC unroll 8") for (int pos = 0; pos < 8; ++pos) {
                  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + row + pos * row_step), v[pos]);
                }
              } else {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + row + 8 * row_step), v[7]);
              }
              continue;
            }
            _Pragma("GCC unroll 8") for (int j = 0; j < 8; ++j) {
              v[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + row + (first + j) * row_step));
            }
            byte_transpose::transpose8x8_epi16_x2(v, v);
            uint8_t* out = block_out + 2 * first;
            _Pragma("GCC unroll 8") for (int i = 0; i < 8; ++i) {
              _mm256_storeu2_m128i(reinterpret_cast<__m128i*>(out + 2 * kDcHw * (8 + i)),
                                   reinterpret_cast<__m128i*>(out + 2 * kDcHw * i), v[i]);
            }
          }
        }
      }
    }
  }
}

// ---- direct-convolution weights of one channel block (C <= 64) ----
//
// Every kernel is one block: kernel k is the logical run k*C*H*W + [0,
// C*H*W), channel-major, and the group's physical block (kernels k0.. of the
// group, gk of them) holds position pos of kernel kk at (pos*gk + kk)*C. So
// a group is gk kernels of C rows x H*W positions back to back, their
// transposes (H*W pieces of C elements) interleaved by position. The
// transposes go through the byte permutes of small blocks
// (group_permutes.h: each kernel a group) into a stage, kernel after kernel;
// the pieces go between the stage and the block in one pass of masked moves.
// Packing: permutes, then pieces out; unpacking: pieces in, then permutes.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"))) void dc_one_block(const DcWeightShape& s,
                                                                                          const uint8_t* src,
                                                                                          uint8_t* dst,
                                                                                          bool to_physical) {
  const uint64_t hw = s.H * s.W, piece = s.C * s.eb, kernel = piece * hw;
  const group_permutes::Tables& t = group_permutes::tables(s.C, hw, s.eb, to_physical);
  alignas(64) static thread_local uint8_t stage[32 * group_permutes::kMaxBytes];
  const __mmask64 m0 = piece >= 64 ? ~__mmask64{0} : (__mmask64{1} << piece) - 1;
  const __mmask64 m1 = piece <= 64 ? 0 : piece >= 128 ? ~__mmask64{0} : (__mmask64{1} << (piece - 64)) - 1;
  for (uint64_t k0 = 0; k0 < s.K; k0 += s.group) {
    const uint64_t gk = std::min(s.group, s.K - k0);
    if (to_physical) group_permutes::run(t, src + k0 * kernel, stage, gk);
    uint8_t* block = (to_physical ? dst : const_cast<uint8_t*>(src)) + k0 * kernel;
    for (uint64_t pos = 0; pos < hw; ++pos) {
      for (uint64_t kk = 0; kk < gk; ++kk) {
        uint8_t* st = stage + kk * kernel + pos * piece;
        uint8_t* ph = block + (pos * gk + kk) * piece;
        const uint8_t* from = to_physical ? st : ph;
        uint8_t* to = to_physical ? ph : st;
        masked::_mm512_mask_storeu_epi8(to, m0, masked::_mm512_maskz_loadu_epi8(m0, from));
        if (m1 != 0) masked::_mm512_mask_storeu_epi8(to + 64, m1, masked::_mm512_maskz_loadu_epi8(m1, from + 64));
      }
    }
    if (!to_physical) group_permutes::run(t, stage, dst + k0 * kernel, gk);
  }
}

// ---- image weights without VBMI (AVX2 and up) ----
//
// Kernel k's C planes of H*W (logical, channel-major) transposed are its H*W
// pixels of C elements: lines h0..h1-1 of it, (h1 - h0) * W*C elements in
// (h, w, c) order, are then contiguous, and a line group's run of a kernel
// (physical base + j*gk*width + kk*w_j) is exactly that. So each group of
// kernels goes through a stage of their transposes (group_permutes.h's
// shuffles, every kernel a group of C rows of H*W), and the runs move
// between the stage and their places in short overlapping copies. Packing:
// shuffles, then runs out; unpacking: runs in, then shuffles (measured on a
// Zen 5 capped at AVX2, and at AVX-512 without VBMI: 4096 x 3 x 7 x 7 int8
// 0.03 / 0.02 of memcpy element by element -> 0.10 / 0.10, pack / unpack;
// each shuffle's table lookups bound it). Kernels whose lines are 16 to 32
// bytes of 4- to 8-byte channel rows take the line shuffles further down
// instead, one pass without a stage.

// `count` runs of n bytes (at most 128), run i from from + i * fp to to + i * tp.
__attribute__((target("avx2"))) inline void copy_runs(uint8_t* to, uint64_t tp, const uint8_t* from, uint64_t fp,
                                                      uint64_t count, uint64_t n) {
  if (n < 16 || n > 32) {
    for (uint64_t i = 0; i < count; ++i) copy_run(to + i * tp, from + i * fp, n);
    return;
  }
  for (uint64_t i = 0; i < count; ++i, to += tp, from += fp) {  // the size checked once for the runs
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + n - 16));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to), a);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + n - 16), b);
  }
}

// `count` runs of fewer than kBytes (16 or 32) bytes, each by one load and
// store of kBytes, where copy_runs takes two overlapping moves: the caller
// makes sure the kBytes are in the buffers and those past the run are written
// later (measured on a Zen 4 capped at AVX2, pinned, alternating, three pairs,
// 4096 x 3 x 7 x 7 int8, runs of 21 bytes, pack / unpack, of memcpy: 0.30-0.31
// / 0.30-0.31 -> 0.32-0.33 / 0.31-0.32).
template <int kBytes>
__attribute__((target("avx2"))) inline void copy_runs_over(uint8_t* to, uint64_t tp, const uint8_t* from, uint64_t fp,
                                                           uint64_t count) {
  for (uint64_t i = 0; i < count; ++i, to += tp, from += fp) {
    if (kBytes == 32) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from)));
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to), _mm_loadu_si128(reinterpret_cast<const __m128i*>(from)));
    }
  }
}

// `transpose(from, to, n)`: n kernels' transposes, one after the other on
// both sides. kDirect (one channel: a kernel is its own transpose): no stage,
// the runs move between the logical tensor and their places.
template <bool kDirect, typename F>
__attribute__((target("avx2"))) void image_stage_shuffles(const ImageWeightShape& s, const F& transpose,
                                                          const uint8_t* src, uint8_t* dst, bool to_physical) {
  const uint64_t hw = s.H * s.W, kernel = s.C * hw * s.eb, wc = s.W * s.C * s.eb, width = s.ext * wc;
  const uint64_t total = s.K * kernel;
  // 32 bytes past the kernels for copy_runs_over's reads.
  alignas(64) static thread_local uint8_t stage_buffer[kDirect ? 1 : 32 * group_permutes::kMaxBytes + 32];
  for (uint64_t k0 = 0; k0 < s.K; k0 += s.group) {
    const uint64_t gk = std::min(s.group, s.K - k0);
    uint8_t* stage = kDirect ? (to_physical ? const_cast<uint8_t*>(src) : dst) + k0 * kernel : stage_buffer;
    if (to_physical && !kDirect) transpose(src + k0 * kernel, stage, gk);
    uint8_t* block = (to_physical ? dst : const_cast<uint8_t*>(src)) + k0 * kernel;
    for (uint64_t j = 0; j * s.ext < s.H; ++j) {
      const uint64_t h0 = j * s.ext, wj = (std::min(s.H, h0 + s.ext) - h0) * wc;
      uint8_t* run = block + j * gk * width;
      // Runs of fewer than 16 or 32 bytes by one move of 16 or 32 each where
      // it stays in the tensor (the runs after it in physical order, written
      // later when packing) and, unpacking, in the kernel (its next lines,
      // written later), and reads and writes on the logical side stay in the
      // stage or the tensor; the rest by exact moves.
      const uint64_t move = wj < 16 ? 16 : 32, at = k0 * kernel + j * gk * width;
      uint64_t over = 0;
      if (wj < 32 && wj != 16 && at + move <= total && (to_physical || h0 * wc + move <= kernel)) {
        over = std::min(gk, (total - at - move) / wj + 1);
        const uint64_t logical = k0 * kernel + h0 * wc;
        if (kDirect) over = logical + move > total ? 0 : std::min(over, (total - logical - move) / kernel + 1);
      }
      const auto over_runs = [&](uint8_t* to, uint64_t tp, const uint8_t* from, uint64_t fp) {
        if (move == 16) copy_runs_over<16>(to, tp, from, fp, over);
        else copy_runs_over<32>(to, tp, from, fp, over);
      };
      if (to_physical) {
        over_runs(run, wj, stage + h0 * wc, kernel);
        copy_runs(run + over * wj, wj, stage + h0 * wc + over * kernel, kernel, gk - over, wj);
      } else {
        over_runs(stage + h0 * wc, kernel, run, wj);
        copy_runs(stage + h0 * wc + over * kernel, kernel, run + over * wj, wj, gk - over, wj);
      }
    }
    if (!to_physical && !kDirect) transpose(stage, dst + k0 * kernel, gk);
  }
}

// ---- image weights without VBMI, kernel lines of 16 to 32 bytes ----
//
// Where each channel's row of a kernel line is 4 to 8 bytes (R = W*eb) and
// C <= 4, a line of W*C elements (wc = C*R bytes, 16 to 32) is read by two
// 16-byte loads, one at its start and one ending at its end, and in-lane
// shuffles of the two give two channels' rows a register (channel 2q in the
// low 8 bytes, 2q + 1 in the high ones): in the kernel's planes (row h of
// channel c at c*H*R + h*R) each is stored as 8 bytes, in h order, so that
// the 8 - R bytes past a row are written again by the next row. Past a
// plane's last row they are the next plane's first bytes, already written:
// the shuffles of that row fill them from the kernel's first line, which
// holds them. Past the last plane they are the next kernel's (written after
// it); the tensor's last kernel goes through a scratch copy. Packing is the
// same shuffles the other way: the rows of a line loaded two channels a
// register, the line's two 16-byte halves each a shuffle of every register,
// ORed. One pass over the bytes where the stage above takes two (measured on
// a Zen 4 capped at AVX2, pinned, alternating, 4096 x 3 x 7 x 7 int8 beside a
// memcpy of 0.013 ms: pack 0.040 -> 0.028 ms, unpack 0.044 -> 0.033). The
// loop is bound by its instructions: with the tensor's last kernel and the
// post-extension's choice checked in it and four fill shuffles a kernel
// where one or two take bytes, 0.031 and 0.040 ms.
struct LineShuffles {
  __m128i a[2], b[2];    // line -> rows, from the line's first and last 16 bytes
  __m128i j[2];          // the last rows' bytes past them, from the first 16 bytes of the kernel's first line
  __m128i pa[2], pb[2];  // rows -> the line's first and last 16 bytes
};

// After image_weight_copy_shuffles' checks (eb 1 or 2, H >= 1, a kernel of
// at most group_permutes::kMaxBytes, a group of 1 to 32 kernels).
inline bool line_shuffles_apply(const ImageWeightShape& s) {
  const uint64_t R = s.W * s.eb;
  return s.C >= 2 && s.C <= 4 && R >= 4 && R <= 8 && s.C * R >= 16;
}

__attribute__((target("avx2"))) inline LineShuffles line_shuffles(const ImageWeightShape& s) {
  const uint64_t R = s.W * s.eb, wc = s.C * R;
  alignas(16) int8_t m[5][2][16];  // a, b, j, pa, pb
  std::memset(m, -1, sizeof m);
  const auto at = [&](uint64_t c, uint64_t i) { return (i / s.eb * s.C + c) * s.eb + i % s.eb; };  // row byte i
  for (uint64_t c = 0; c < s.C; ++c) {
    const uint64_t q = c / 2, half = 8 * (c % 2);
    for (uint64_t i = 0; i < 8; ++i) {
      if (i < R) {
        const uint64_t o = at(c, i);
        if (o < 16) m[0][q][half + i] = static_cast<int8_t>(o), m[3][q][o] = static_cast<int8_t>(half + i);
        else m[1][q][half + i] = static_cast<int8_t>(o - (wc - 16));
        if (o >= wc - 16) m[4][q][o - (wc - 16)] = static_cast<int8_t>(half + i);
      } else if (c + 1 < s.C) {
        // The next plane's byte i - R < 8 - R <= 4 <= R, in its row 0: element (i - R) / eb <= 3 of
        // channel c + 1 <= 3, at (3 * 4 + 3) * 1 or (1 * 4 + 3) * 2 + 1 = 15 at most in the line.
        m[2][q][half + i] = static_cast<int8_t>(at(c + 1, i - R));
      }
    }
  }
  LineShuffles t;
  __m128i* to[5] = {t.a, t.b, t.j, t.pa, t.pb};
  for (int k = 0; k < 5; ++k) {
    for (int q = 0; q < 2; ++q) to[k][q] = _mm_load_si128(reinterpret_cast<const __m128i*>(m[k][q]));
  }
  return t;
}

// One kernel of kC channels of H rows of R bytes: `line(h)` is the address
// of its line h, `planes` of its planes. What it reads is in locals (its
// byte stores may alias any memory, and the compiler reloads what they might
// have changed), its registers named (an array of them went through the
// stack, its halves read back by 8-byte loads that waited on the 16-byte store).
template <uint64_t kC, bool kPack, typename L>
__attribute__((target("avx2"), always_inline)) inline void line_shuffle_kernel(const LineShuffles& t, uint64_t H,
                                                                              uint64_t R, const L& line,
                                                                              uint8_t* planes) {
  static_assert(kC >= 2 && kC <= 4, "two registers of two channels at most");
  constexpr bool kTwo = kC > 2;  // a second register, of channels 2 and (kC == 4) 3
  const uint64_t wc = kC * R, plane = H * R;
  if (kPack) {
    const __m128i pa0 = t.pa[0], pb0 = t.pb[0], pa1 = t.pa[1], pb1 = t.pb[1];
    for (uint64_t h = 0; h < H; ++h) {
      const uint8_t* row = planes + h * R;
      const __m128d lo8 = _mm_castsi128_pd(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row)));
      const __m128i x0 = _mm_castpd_si128(_mm_loadh_pd(lo8, reinterpret_cast<const double*>(row + plane)));
      __m128i lo = _mm_shuffle_epi8(x0, pa0), hi = _mm_shuffle_epi8(x0, pb0);
      if (kTwo) {
        __m128i x1 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + 2 * plane));
        if (kC == 4) {
          x1 = _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(x1), reinterpret_cast<const double*>(row + 3 * plane)));
        }
        lo = _mm_or_si128(lo, _mm_shuffle_epi8(x1, pa1));
        hi = _mm_or_si128(hi, _mm_shuffle_epi8(x1, pb1));
      }
      uint8_t* to = const_cast<uint8_t*>(line(h));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to), lo);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to + wc - 16), hi);
    }
    return;
  }
  const __m128i ma0 = t.a[0], mb0 = t.b[0], ma1 = t.a[1], mb1 = t.b[1];
  const uint8_t* first = line(0);
  const __m128i a0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(first));
  __m128i a = a0, b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(first + wc - 16));
  for (uint64_t h = 0;;) {
    __m128i x0 = _mm_or_si128(_mm_shuffle_epi8(a, ma0), _mm_shuffle_epi8(b, mb0));
    __m128i x1 = kTwo ? _mm_or_si128(_mm_shuffle_epi8(a, ma1), _mm_shuffle_epi8(b, mb1)) : x0;
    const bool last = h + 1 == H;
    if (last) {  // channels 0 and (kC == 4) 2 have a next plane
      x0 = _mm_or_si128(x0, _mm_shuffle_epi8(a0, t.j[0]));
      if (kC == 4) x1 = _mm_or_si128(x1, _mm_shuffle_epi8(a0, t.j[1]));
    }
    uint8_t* row = planes + h * R;
    _mm_storel_epi64(reinterpret_cast<__m128i*>(row), x0);
    _mm_storeh_pd(reinterpret_cast<double*>(row + plane), _mm_castsi128_pd(x0));
    if (kTwo) _mm_storel_epi64(reinterpret_cast<__m128i*>(row + 2 * plane), x1);
    if (kC == 4) _mm_storeh_pd(reinterpret_cast<double*>(row + 3 * plane), _mm_castsi128_pd(x1));
    if (last) break;
    const uint8_t* from = line(++h);
    a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
    b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + wc - 16));
  }
}

// ---- image weights without VBMI, channel rows of 9 to 16 bytes ----
//
// Where each channel's row is 9 to 16 bytes (R = W*eb; 7 x 7 fp16, 9 to 16
// int8 columns) and C <= 4, a row is one 16-byte register and a line (wc =
// C*R bytes, 18 to 64) kL = 2 to 4 16-byte pieces: at 0, 16, then the last
// ones ending at the line's end (kL 4: wc - 32 and wc - 16). Each source
// piece is loaded into both lanes of a 256-bit register (a broadcast load,
// no shuffle), so that one in-lane shuffle of it gives two outputs their
// bytes: unpacking, two channels' rows a register (channel 2q in the low
// lane, 2q + 1 in the high one), each the OR of one shuffle per line piece,
// each stored as 16 bytes in h order (the 16 - R bytes past a row are the
// next row's, written next; past a plane's last row the next plane's first
// bytes, at line offsets below 28 and so in the first line's first two
// pieces, which the last row's shuffles fill them from; past the last plane
// the next kernel's, or the tensor's last kernel's scratch). Packing, the
// other way: each channel's row broadcast, two line pieces a register (0 and
// 16 stored as 32 bytes, then the last one or two), the OR of one shuffle per
// channel. One pass, (kC + 1) / 2 * kL shuffles a line unpacking (two
// channels each) and kC * (kL + 1) / 2 packing.
struct PairShuffles {
  __m256i m[2][4];  // output pair q from source s (unpack: pieces -> rows; pack: rows -> pieces)
  __m256i j[2][2];  // unpack, the last rows' bytes past them from the first line's pieces 0 and 1
  uint64_t piece[4];
};

inline bool pair_shuffles_apply(const ImageWeightShape& s) {
  const uint64_t R = s.W * s.eb;
  return s.C >= 2 && s.C <= 4 && R >= 9 && R <= 16;
}

// The first of the n 16-byte pieces at piece[0..n) (ascending) that holds byte o.
inline uint64_t first_piece(const uint64_t* piece, uint64_t n, uint64_t o) {
  uint64_t p = 0;
  while (p + 1 < n && o - piece[p] >= 16) ++p;
  return p;
}

__attribute__((target("avx2"))) inline PairShuffles pair_shuffles(const ImageWeightShape& s, bool pack) {
  const uint64_t R = s.W * s.eb, wc = s.C * R, L = (wc + 15) / 16;
  PairShuffles t;
  for (uint64_t l = 0; l < 4; ++l) t.piece[l] = l + 1 == L ? wc - 16 : (l + 2 == L && L == 4 ? wc - 32 : 16 * l);
  alignas(32) int8_t m[2][4][32], j[2][2][32];
  std::memset(m, -1, sizeof m);
  std::memset(j, -1, sizeof j);
  const auto at = [&](uint64_t c, uint64_t i) { return (i / s.eb * s.C + c) * s.eb + i % s.eb; };  // row byte i
  for (uint64_t q = 0; q < 2; ++q) {
    for (uint64_t lane = 0; lane < 2; ++lane) {
      const uint64_t out = 2 * q + lane;  // channel (unpack) or piece (pack)
      for (uint64_t i = 0; i < 16; ++i) {
        int8_t* byte = &m[q][0][16 * lane + i];  // + 32 * source
        if (pack && out < L) {
          const uint64_t o = t.piece[out] + i, e = o / s.eb;
          byte[32 * (e % s.C)] = static_cast<int8_t>(e / s.C * s.eb + o % s.eb);
        } else if (!pack && out < s.C && i < R) {
          const uint64_t o = at(out, i), p = first_piece(t.piece, L, o);
          byte[32 * p] = static_cast<int8_t>(o - t.piece[p]);
        } else if (!pack && out + 1 < s.C) {
          // The next plane's byte i - R < 7 in its row 0: element (i - R) / eb <= 6 of channel out + 1 <= 3,
          // at (6 * 4 + 3) * 1 or (2 * 4 + 3) * 2 + 1 = 27 at most in the line.
          const uint64_t o = at(out + 1, i - R), p = first_piece(t.piece, 2, o);
          j[q][p][16 * lane + i] = static_cast<int8_t>(o - t.piece[p]);
        }
      }
    }
  }
  for (uint64_t q = 0; q < 2; ++q) {
    for (uint64_t p = 0; p < 4; ++p) t.m[q][p] = _mm256_load_si256(reinterpret_cast<const __m256i*>(m[q][p]));
    for (uint64_t p = 0; p < 2; ++p) t.j[q][p] = _mm256_load_si256(reinterpret_cast<const __m256i*>(j[q][p]));
  }
  return t;
}

__attribute__((target("avx2"), always_inline)) inline __m256i broadcast16(const uint8_t* p) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// The OR of kN shuffles, source s by mask s.
template <uint64_t kN>
__attribute__((target("avx2"), always_inline)) inline __m256i shuffle_or(__m256i s0, __m256i s1, __m256i s2, __m256i s3,
                                                                        __m256i m0, __m256i m1, __m256i m2,
                                                                        __m256i m3) {
  __m256i r = _mm256_shuffle_epi8(s0, m0);
  if (kN > 1) r = _mm256_or_si256(r, _mm256_shuffle_epi8(s1, m1));
  if (kN > 2) r = _mm256_or_si256(r, _mm256_shuffle_epi8(s2, m2));
  if (kN > 3) r = _mm256_or_si256(r, _mm256_shuffle_epi8(s3, m3));
  return r;
}

// One kernel of kC channels of H rows of R bytes whose lines are kL pieces
// (see line_shuffle_kernel for `line`, `planes` and the registers' names).
template <uint64_t kC, uint64_t kL, bool kPack, typename L>
__attribute__((target("avx2"), always_inline)) inline void pair_shuffle_kernel(const PairShuffles& t, uint64_t H,
                                                                              uint64_t R, const L& line,
                                                                              uint8_t* planes) {
  static_assert(kC >= 2 && kC <= 4 && kL >= 2 && kL <= 4, "two output pairs of four sources at most");
  constexpr uint64_t kN = kPack ? kC : kL;          // sources
  constexpr bool kTwo = kPack ? kL > 2 : kC > 2;  // a second output pair
  const uint64_t plane = H * R, p1 = t.piece[1], p2 = t.piece[2], p3 = t.piece[3];
  const __m256i m00 = t.m[0][0], m01 = t.m[0][1], m02 = t.m[0][2], m03 = t.m[0][3];
  const __m256i m10 = t.m[1][0], m11 = t.m[1][1], m12 = t.m[1][2], m13 = t.m[1][3];
  if (kPack) {
    for (uint64_t h = 0; h < H; ++h) {
      const uint8_t* row = planes + h * R;
      const __m256i s0 = broadcast16(row), s1 = broadcast16(row + plane);
      const __m256i s2 = kN > 2 ? broadcast16(row + 2 * plane) : s0, s3 = kN > 3 ? broadcast16(row + 3 * plane) : s0;
      const __m256i y0 = shuffle_or<kN>(s0, s1, s2, s3, m00, m01, m02, m03);
      uint8_t* to = const_cast<uint8_t*>(line(h));
      if (kL == 2) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to), _mm256_castsi256_si128(y0));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to + p1), _mm256_extracti128_si256(y0, 1));
      } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), y0);
      }
      if (kTwo) {
        const __m256i y1 = shuffle_or<kN>(s0, s1, s2, s3, m10, m11, m12, m13);
        if (kL == 4) _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + p2), y1);
        else _mm_storeu_si128(reinterpret_cast<__m128i*>(to + p2), _mm256_castsi256_si128(y1));
      }
    }
    return;
  }
  for (uint64_t h = 0;; ++h) {
    const uint8_t* from = line(h);
    const __m256i s0 = broadcast16(from), s1 = broadcast16(from + p1);
    const __m256i s2 = kN > 2 ? broadcast16(from + p2) : s0, s3 = kN > 3 ? broadcast16(from + p3) : s0;
    __m256i y0 = shuffle_or<kN>(s0, s1, s2, s3, m00, m01, m02, m03);
    __m256i y1 = kTwo ? shuffle_or<kN>(s0, s1, s2, s3, m10, m11, m12, m13) : y0;
    const bool last = h + 1 == H;
    if (last) {  // channels 0, 1 and (kC == 4) 2 have a next plane
      const uint8_t* first = line(0);
      const __m256i f0 = broadcast16(first), f1 = broadcast16(first + p1);
      y0 = _mm256_or_si256(y0, _mm256_or_si256(_mm256_shuffle_epi8(f0, t.j[0][0]), _mm256_shuffle_epi8(f1, t.j[0][1])));
      if (kC == 4) {
        y1 = _mm256_or_si256(y1, _mm256_or_si256(_mm256_shuffle_epi8(f0, t.j[1][0]), _mm256_shuffle_epi8(f1, t.j[1][1])));
      }
    }
    uint8_t* row = planes + h * R;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(row), _mm256_castsi256_si128(y0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(row + plane), _mm256_extracti128_si256(y0, 1));
    if (kTwo) _mm_storeu_si128(reinterpret_cast<__m128i*>(row + 2 * plane), _mm256_castsi256_si128(y1));
    if (kC == 4) _mm_storeu_si128(reinterpret_cast<__m128i*>(row + 3 * plane), _mm256_extracti128_si256(y1, 1));
    if (last) break;
  }
}

// ---- image weights without VBMI, kernels of at most 64 bytes in lines of at most 16 ----
//
// Where a whole kernel is at most 64 bytes (3 x 3 int8 of up to 5 channels,
// one channel of 7 x 7) and each of its physical units (a line, or a
// post-extension's line group) at most 16, a kernel is kP = 1 to 4 16-byte
// pieces (at 0, 16, 32, the last ending at the kernel's end; one of 16 bytes
// from the kernel's start below that) and each unit the OR of one in-lane
// shuffle of each piece. Packing goes kernel pair by kernel pair
// (small_kernel_pack_pairs); unpacking in logical order, each kernel's pieces
// the OR of one shuffle of each unit's 16 bytes, stored in order. The tensor's
// last group goes through scratch on both sides, so that no load or store
// leaves the buffers (a kernel under 16 bytes is read as one piece of 16, the
// unpacked kernels stored 16 bytes at a time). Bound by its instructions and
// stores (a store a unit). Packing had gone unit by unit, each unit's kernels
// in physical order with their pieces reloaded from L1, so that the bytes past
// a unit were the next one's, written next (18 instructions a 3 x 3 x 3 int8
// kernel); two kernels a 256-bit register, one in each lane, in that order
// measured no better (on a Zen 4 capped at AVX2, pinned, 1024 x 3 x 3 x 3 int8
// pack / unpack 0.23 / 0.16-0.18 of memcpy -> 0.24 / 0.20, 1 x 7 x 7 0.14 /
// 0.12 -> 0.11 / 0.15; an Intel Xeon, 4096 x 3 x 3 x 3 pack 0.28 -> 0.30);
// kernel pair by kernel pair, every unit from the same loads, the last kernels
// stored exactly, 0.28-0.29 -> 0.40-0.42 there (capped at AVX2, pinned,
// alternating).
constexpr uint64_t kSmallUnits = 16;

struct SmallKernelShuffles {
  uint64_t P = 0, U = 0, kernel = 0, piece[4] = {};
  uint64_t off[kSmallUnits] = {}, len[kSmallUnits] = {};  // unit u of kernel kk at off[u] + kk * len[u] in the group
  // Packing kernel by kernel, the group's last last[u] kernels store unit u
  // exactly (a 16-byte store would pass the unit's end), and the kernel
  // pairs stop before the last `exact` kernels (the most of them).
  uint64_t last[kSmallUnits] = {}, exact = 0;
  alignas(16) int8_t m[kSmallUnits][4][16];                // unit u from piece p (pack), piece p from unit u (unpack)
  // Packing whole groups of an even number of kernels with units of 8 to 16
  // bytes (`tails`), a group's last kernel's unit u is one 16-byte store
  // ending at the unit's end: the kernel before's last 16 - len[u] bytes by
  // tail[u][0] from the low lane of the last pair's register, its own by
  // tail[u][1] from the high lane.
  bool tails = false;
  alignas(16) int8_t tail[kSmallUnits][2][16];
  // Unpacking kernels of more than 16 bytes by 32-byte stores (see
  // small_kernel_unpack_wide), byte j of store q from unit u by wide[u][q][j]
  // (each lane shuffles the unit's 16 bytes, loaded into both).
  alignas(32) int8_t wide[kSmallUnits][2][32];
};

inline bool small_kernels_apply(const ImageWeightShape& s) {
  const uint64_t kernel = s.C * s.H * s.W * s.eb, units = (s.H + s.ext - 1) / s.ext;
  return kernel <= 64 && units <= kSmallUnits && std::min(s.ext, s.H) * s.C * s.W * s.eb <= 16;
}

// Unit u's place for a group of gk kernels.
inline void small_kernel_units(const ImageWeightShape& s, uint64_t gk, SmallKernelShuffles* t) {
  for (uint64_t u = 0; u < t->U; ++u) t->off[u] = u * gk * s.ext * s.C * s.W * s.eb;
}

inline void small_kernel_shuffles(const ImageWeightShape& s, bool pack, SmallKernelShuffles* t) {
  const uint64_t wc = s.C * s.W * s.eb;
  t->kernel = s.C * s.H * s.W * s.eb;
  t->P = (t->kernel + 15) / 16, t->U = (s.H + s.ext - 1) / s.ext;
  for (uint64_t p = 0; p < 4; ++p) {
    t->piece[p] = p + 1 == t->P ? (t->kernel < 16 ? 0 : t->kernel - 16) : 16 * p;
  }
  std::memset(t->m, -1, sizeof t->m);
  std::memset(t->tail, -1, sizeof t->tail);
  std::memset(t->wide, -1, sizeof t->wide);
  t->tails = pack;
  for (uint64_t u = 0; u < t->U; ++u) {
    t->len[u] = (std::min(s.H, (u + 1) * s.ext) - u * s.ext) * wc;
    t->last[u] = (16 + t->len[u] - 1) / t->len[u] - 1;
    t->exact = std::max(t->exact, t->last[u]);
    const uint64_t len = t->len[u], before = 16 - std::min<uint64_t>(len, 16);
    t->tails = t->tails && len >= 8 && len <= 16;
    for (uint64_t i = 0; i < 16 && t->tails; ++i) {
      if (i < before) t->tail[u][0][i] = static_cast<int8_t>(len - before + i);
      else t->tail[u][1][i] = static_cast<int8_t>(i - before);
    }
    for (uint64_t i = 0; i < t->len[u]; ++i) {
      // Unit byte i: line h, element e of it (channel e % C of column e / C).
      const uint64_t h = u * s.ext + i / wc, b = i % wc, e = b / s.eb, c = e % s.C, w = e / s.C;
      const uint64_t o = ((c * s.H + h) * s.W + w) * s.eb + b % s.eb;  // its kernel byte
      const uint64_t p = first_piece(t->piece, t->P, o);
      if (pack) t->m[u][p][i] = static_cast<int8_t>(o - t->piece[p]);
      if (!pack && o < 32) t->wide[u][0][o] = static_cast<int8_t>(i);
      if (!pack && t->kernel > 32 && o + 32 >= t->kernel) t->wide[u][1][o + 32 - t->kernel] = static_cast<int8_t>(i);
      // Unpacking, every piece holding the byte takes it (the pieces overlap).
      for (uint64_t q = 0; q < t->P && !pack; ++q) {
        if (o - t->piece[q] < 16) t->m[u][q][o - t->piece[q]] = static_cast<int8_t>(i);
      }
    }
  }
}

// small_kernel_shuffles of the last shape each thread converted: a network
// converts each layer's shape again and again, and building the masks took a
// third of a tiny tensor's call (64 x 1 x 5 x 5 int8 capped at AVX2 on an
// Intel Xeon, pinned: 0.57 -> 0.38 us a pack).
inline const SmallKernelShuffles& small_kernel_shuffles_of(const ImageWeightShape& s, bool pack) {
  struct Last {
    uint64_t C = 0, H = 0, W = 0, eb = 0, ext = 0;
    bool pack = false;
    SmallKernelShuffles t;
  };
  static thread_local Last last;
  if (last.C != s.C || last.H != s.H || last.W != s.W || last.eb != s.eb || last.ext != s.ext || last.pack != pack) {
    last = Last{s.C, s.H, s.W, s.eb, s.ext, pack, SmallKernelShuffles{}};
    small_kernel_shuffles(s, pack, &last.t);
  }
  return last.t;
}

// The OR of kU shuffles, unit u's 16 bytes by mask u.
template <uint64_t kU>
__attribute__((target("avx2"), always_inline)) inline __m128i units_or(__m128i x0, __m128i x1, __m128i x2, __m128i x3,
                                                                      __m128i a, __m128i b, __m128i c, __m128i d) {
  __m128i y = _mm_shuffle_epi8(x0, a);
  if (kU > 1) y = _mm_or_si128(y, _mm_shuffle_epi8(x1, b));
  if (kU > 2) y = _mm_or_si128(y, _mm_shuffle_epi8(x2, c));
  if (kU > 3) y = _mm_or_si128(y, _mm_shuffle_epi8(x3, d));
  return y;
}

// small_kernel_group's unpacking of kernels of kU <= 4 units and at most 16
// bytes (kP 1; longer ones by small_kernel_unpack_wide below): each unit's
// place advanced by its length a kernel, its masks loaded once (measured
// while it took 3 x 3 x 3 int8 kernels by two pieces too, 4096 of them on a
// Zen 4 capped at AVX2, pinned, of memcpy: 0.18 -> 0.36 against the places
// and masks read from the tables each time). Packing the same way, kernel by
// kernel with the units in registers (the group's last kernel's units copied
// exactly), measured slower than unit by unit: 0.245 -> 0.23.
template <uint64_t kU>
__attribute__((target("avx2"))) void small_kernel_unpack_units(const SmallKernelShuffles& t, uint64_t count,
                                                               const uint8_t* from, uint8_t* to) {
  const uint64_t kernel = t.kernel;
  const uint8_t* u0 = from + t.off[0];
  const uint8_t* u1 = from + t.off[kU > 1 ? 1 : 0];
  const uint8_t* u2 = from + t.off[kU > 2 ? 2 : 0];
  const uint8_t* u3 = from + t.off[kU > 3 ? 3 : 0];
  const uint64_t l0 = t.len[0], l1 = t.len[1], l2 = t.len[2], l3 = t.len[3];
  const __m128i* m = reinterpret_cast<const __m128i*>(t.m);  // m[4 * u]: the kernel's one piece from unit u
  const __m128i m0 = m[0], m1 = m[4], m2 = m[8], m3 = m[12];
  uint8_t* k = to;
  for (uint64_t kk = 0; kk < count; ++kk, k += kernel, u0 += l0, u1 += l1, u2 += l2, u3 += l3) {
    const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(u0));
    const __m128i x1 = kU > 1 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(u1)) : x0;
    const __m128i x2 = kU > 2 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(u2)) : x0;
    const __m128i x3 = kU > 3 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(u3)) : x0;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(k), units_or<kU>(x0, x1, x2, x3, m0, m1, m2, m3));
  }
}

// The 16 bytes at `at` in both lanes.
__attribute__((target("avx2"), always_inline)) inline __m256i both_lanes_at(const uint8_t* at) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
}

// small_kernel_unpack_units for kernels of 17 to 64 bytes (kP 2 to 4): each
// kernel the 32-byte OR of one shuffle of each unit's 16 bytes, loaded into
// both lanes; above 32 bytes (kTwo) a second such store ends at the kernel's
// end. The bytes a kernel of under 32 bytes writes past it are the next
// kernel's, written next. A 3 x 3 x 3 int8 kernel takes three 256-bit
// shuffles and a store, against six 128-bit shuffles and two stores by
// pieces. Measured on a Zen 5 capped at AVX2, pinned, alternating, the
// fastest of 2,000 calls, int8, 4096 kernels: 3 x 3 x 3 4.1 -> 3.6 us (0.25
// -> 0.28 of memcpy), 4 x 3 x 3 5.6 -> 4.4, 5 x 4 x 3 (60 bytes, two stores)
// 10.7 -> 5.7; fp16 8192 x 2 x 3 x 2 8.0 -> 7.1. The 3 x 3 x 3 bench row's
// median over repetitions on new buffers stays 0.195 either way there (its
// calls take 5.3-6.0 us most of the time, both forms alike).
template <uint64_t kU, bool kTwo>
__attribute__((target("avx2"))) void small_kernel_unpack_wide(const SmallKernelShuffles& t, uint64_t count,
                                                              const uint8_t* from, uint8_t* to) {
  const uint64_t kernel = t.kernel, second = kTwo ? kernel - 32 : 0;
  const uint8_t* u0 = from + t.off[0];
  const uint8_t* u1 = from + t.off[kU > 1 ? 1 : 0];
  const uint8_t* u2 = from + t.off[kU > 2 ? 2 : 0];
  const uint8_t* u3 = from + t.off[kU > 3 ? 3 : 0];
  const uint64_t l0 = t.len[0], l1 = t.len[1], l2 = t.len[2], l3 = t.len[3];
  const __m256i* w = reinterpret_cast<const __m256i*>(t.wide);  // w[2 * u + q]
  const __m256i w00 = w[0], w10 = w[kU > 1 ? 2 : 0], w20 = w[kU > 2 ? 4 : 0], w30 = w[kU > 3 ? 6 : 0];
  const __m256i w01 = w[1], w11 = w[kU > 1 ? 3 : 1], w21 = w[kU > 2 ? 5 : 1], w31 = w[kU > 3 ? 7 : 1];
  uint8_t* k = to;
  for (uint64_t kk = 0; kk < count; ++kk, k += kernel, u0 += l0, u1 += l1, u2 += l2, u3 += l3) {
    const __m256i x0 = both_lanes_at(u0);
    const __m256i x1 = kU > 1 ? both_lanes_at(u1) : x0;
    const __m256i x2 = kU > 2 ? both_lanes_at(u2) : x0;
    const __m256i x3 = kU > 3 ? both_lanes_at(u3) : x0;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(k), shuffle_or<kU>(x0, x1, x2, x3, w00, w10, w20, w30));
    if (kTwo) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(k + second), shuffle_or<kU>(x0, x1, x2, x3, w01, w11, w21, w31));
    }
  }
}

// Piece `at` of kernels k and k + 1 (`kernel` bytes on), one in each lane:
// the second loaded into both lanes and blended in (a load and a blend where a
// lane insert takes a shuffle: 4096 x 3 x 3 x 3 int8 on a Zen 5 capped at
// AVX2, pinned, alternating, packing 0.24 -> 0.25 of memcpy).
__attribute__((target("avx2"), always_inline)) inline __m256i kernel_pair(const uint8_t* k, uint64_t kernel, uint64_t at) {
  const __m128i second = _mm_loadu_si128(reinterpret_cast<const __m128i*>(k + kernel + at));
  return _mm256_blend_epi32(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(k + at))),
                            _mm256_broadcastsi128_si256(second), 0xF0);
}

__attribute__((target("avx2"), always_inline)) inline __m256i both_lanes(__m128i x) {
  return _mm256_broadcastsi128_si256(x);
}

// How a kernel pair's units end: both by 16-byte stores (kOpen); the second
// exactly (kExact: the group's last kernel); or the second by one 16-byte
// store ending at the unit's end, after the first's last bytes (kTail, see
// SmallKernelShuffles::tail).
enum PairEnd { kOpen, kExact, kTail };

// Two kernels' unit: kernel kk's at `unit`, kk + 1's `len` bytes on, in that
// order, `unit` left past them (no register for twice the length: the loop
// below had too few).
__attribute__((target("avx2"), always_inline)) inline void store_unit_pair(uint8_t*& unit, uint64_t len, __m256i y,
                                                                           PairEnd end = kOpen,
                                                                           const int8_t (*tail)[16] = nullptr) {
  const __m128i lo = _mm256_castsi256_si128(y), hi = _mm256_extracti128_si256(y, 1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(unit), lo);
  unit += len;
  if (end == kExact) {
    store_head_avx2(unit, _mm256_castsi128_si256(hi), len);
  } else if (end == kTail) {
    const __m128i a = _mm_load_si128(reinterpret_cast<const __m128i*>(tail[0]));
    const __m128i b = _mm_load_si128(reinterpret_cast<const __m128i*>(tail[1]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(unit + len - 16),
                     _mm_or_si128(_mm_shuffle_epi8(lo, a), _mm_shuffle_epi8(hi, b)));
  } else {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(unit), hi);
  }
  unit += len;
}

// The kernels kk.. of a group after the pairs below, one at a time, each
// unit by a 16-byte store or, for the group's last t.last[u] kernels, exactly.
template <uint64_t kP>
__attribute__((target("avx2"))) void small_kernel_pack_rest(const SmallKernelShuffles& t, uint64_t kk, uint64_t count,
                                                            const uint8_t* from, uint8_t* to) {
  const uint64_t p1 = t.piece[1], p2 = t.piece[2], p3 = t.piece[3];
  const __m128i* m = reinterpret_cast<const __m128i*>(t.m);  // m[4 * u + p]
  for (; kk < count; ++kk) {
    const uint8_t* k = from + kk * t.kernel;
    const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(k));
    const __m128i x1 = kP > 1 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(k + p1)) : x0;
    const __m128i x2 = kP > 2 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(k + p2)) : x0;
    const __m128i x3 = kP > 3 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(k + p3)) : x0;
    for (uint64_t u = 0; u < t.U; ++u) {
      const __m128i y = units_or<kP>(x0, x1, x2, x3, m[4 * u], m[4 * u + 1], m[4 * u + 2], m[4 * u + 3]);
      uint8_t* unit = to + t.off[u] + kk * t.len[u];
      if (kk + t.last[u] < count) _mm_storeu_si128(reinterpret_cast<__m128i*>(unit), y);
      else store_head_avx2(unit, _mm256_castsi128_si256(y), t.len[u]);
    }
  }
}

// small_kernel_group's packing: two kernels a 256-bit register (kernel kk's
// pieces in the low lane, kk + 1's in the high one), loaded once for all
// their units, the units stored kernel pair by kernel pair. The bytes a
// 16-byte store writes past its unit are the next kernels' units, written
// later, up to the group's last kernels, whose units are followed by the next
// units' first kernels (written before them): the last pair's second kernel
// ends at its unit's end (t.tails) or is stored exactly, and
// small_kernel_pack_rest stores the kernels left exactly. Kernels of kU <= 4
// units keep their masks in registers. `groups` whole groups of `count`
// kernels go one after the other (t.tails and `count` even where there are
// more than one), the masks loaded once for all: 4096 x 3 x 3 x 3 int8 on a
// Zen 5 capped at AVX2, pinned, alternating, against a call a group with the
// last kernel stored exactly, 0.22 -> 0.24 of memcpy while the host was
// quiet, 0.19 -> 0.22 while it was loaded (a call a group ending in the tail
// store alone 0.22).
template <uint64_t kP, uint64_t kU>
__attribute__((target("avx2"))) void small_kernel_pack_pairs(const SmallKernelShuffles& t, uint64_t count,
                                                             uint64_t groups, const uint8_t* from, uint8_t* to) {
  const uint64_t kernel = t.kernel, p1 = t.piece[1], p2 = t.piece[2], p3 = t.piece[3];
  const uint64_t l0 = t.len[0], l1 = t.len[1], l2 = t.len[2], l3 = t.len[3];
  const __m128i* m = reinterpret_cast<const __m128i*>(t.m);  // m[4 * u + p]
  const __m256i w00 = both_lanes(m[0]), w01 = both_lanes(m[1]), w02 = both_lanes(m[2]), w03 = both_lanes(m[3]);
  const __m256i w10 = both_lanes(m[4]), w11 = both_lanes(m[5]), w12 = both_lanes(m[6]), w13 = both_lanes(m[7]);
  const __m256i w20 = both_lanes(m[8]), w21 = both_lanes(m[9]), w22 = both_lanes(m[10]), w23 = both_lanes(m[11]);
  const __m256i w30 = both_lanes(m[12]), w31 = both_lanes(m[13]), w32 = both_lanes(m[14]), w33 = both_lanes(m[15]);
  uint8_t *u0 = nullptr, *u1 = nullptr, *u2 = nullptr, *u3 = nullptr;
  // Kernels k and k + 1, `end` how the second's units end. Inlined at every call, `end` a constant in each (a
  // choice inside the loop measured 0.41 -> 0.31 of memcpy: 4096 x 3 x 3 x 3 int8 on an Intel Xeon capped at AVX2,
  // pinned, alternating).
  const auto pair = [&](const uint8_t* k, PairEnd end) __attribute__((target("avx2"), always_inline)) {
    const __m256i x0 = kernel_pair(k, kernel, 0);
    const __m256i x1 = kP > 1 ? kernel_pair(k, kernel, p1) : x0;
    const __m256i x2 = kP > 2 ? kernel_pair(k, kernel, p2) : x0;
    const __m256i x3 = kP > 3 ? kernel_pair(k, kernel, p3) : x0;
    store_unit_pair(u0, l0, shuffle_or<kP>(x0, x1, x2, x3, w00, w01, w02, w03), end, t.tail[0]);
    if (kU > 1) store_unit_pair(u1, l1, shuffle_or<kP>(x0, x1, x2, x3, w10, w11, w12, w13), end, t.tail[1]);
    if (kU > 2) store_unit_pair(u2, l2, shuffle_or<kP>(x0, x1, x2, x3, w20, w21, w22, w23), end, t.tail[2]);
    if (kU > 3) store_unit_pair(u3, l3, shuffle_or<kP>(x0, x1, x2, x3, w30, w31, w32, w33), end, t.tail[3]);
  };
  for (uint64_t g = 0; g < groups; ++g, from += count * kernel, to += count * kernel) {
    u0 = to + t.off[0];
    u1 = to + t.off[kU > 1 ? 1 : 0];
    u2 = to + t.off[kU > 2 ? 2 : 0];
    u3 = to + t.off[kU > 3 ? 3 : 0];
    const uint8_t* k = from;
    if (t.tails && count % 2 == 0) {
      for (const uint8_t* const end = from + (count - 2) * kernel; k != end; k += 2 * kernel) pair(k, kOpen);
      pair(k, kTail);
      continue;
    }
    const uint64_t pairs = count > t.exact ? (count - t.exact) / 2 : 0;
    for (const uint8_t* const end = from + 2 * pairs * kernel; k != end; k += 2 * kernel) pair(k, kOpen);
    if (count - 2 * pairs == 2 && t.exact == 1) pair(k, kExact);
    else small_kernel_pack_rest<kP>(t, 2 * pairs, count, from, to);
  }
}

// The same for any number of units, their masks (w: each of t.m's in both
// lanes) read as operands of the shuffles.
template <uint64_t kP>
__attribute__((target("avx2"))) void small_kernel_pack_pairs_any(const SmallKernelShuffles& t, const __m256i (*w)[4],
                                                                 uint64_t count, const uint8_t* from, uint8_t* to) {
  const uint64_t kernel = t.kernel, p1 = t.piece[1], p2 = t.piece[2], p3 = t.piece[3];
  const uint64_t pairs = count > t.exact ? (count - t.exact) / 2 : 0;
  for (uint64_t kk = 0; kk < 2 * pairs; kk += 2) {
    const uint8_t* k = from + kk * kernel;
    const __m256i x0 = kernel_pair(k, kernel, 0);
    const __m256i x1 = kP > 1 ? kernel_pair(k, kernel, p1) : x0;
    const __m256i x2 = kP > 2 ? kernel_pair(k, kernel, p2) : x0;
    const __m256i x3 = kP > 3 ? kernel_pair(k, kernel, p3) : x0;
    for (uint64_t u = 0; u < t.U; ++u) {
      uint8_t* unit = to + t.off[u] + kk * t.len[u];
      store_unit_pair(unit, t.len[u], shuffle_or<kP>(x0, x1, x2, x3, w[u][0], w[u][1], w[u][2], w[u][3]));
    }
  }
  small_kernel_pack_rest<kP>(t, 2 * pairs, count, from, to);
}

// Whether small_kernel_group packs with the masks in registers
// (small_kernel_pack_pairs): at most 4 units and 8 masks.
template <uint64_t kP>
bool small_kernel_masks_held(const SmallKernelShuffles& t) {
  return t.U <= 4 && kP * t.U <= 8;
}

// Whether small_kernel_group packs whole groups of `count` kernels in one call.
template <uint64_t kP>
bool small_kernel_groups_fit(const SmallKernelShuffles& t, uint64_t count) {
  return small_kernel_masks_held<kP>(t) && t.tails && count % 2 == 0;
}

// `groups` groups of `count` kernels (more than one only packing where small_kernel_groups_fit) from their logical
// bytes to the groups' units (pack), or back. Unpacking keeps a call a group: whole groups in one call, the inner
// loop the same, measured no better on a Zen 5 capped at AVX2 (4096 x 3 x 3 x 3 int8, pinned, alternating: 0.24 ->
// 0.21 of memcpy in one state of the host, 0.17 -> 0.19 in another).
template <uint64_t kP, bool kPack>
__attribute__((target("avx2"))) void small_kernel_group(const SmallKernelShuffles& t, uint64_t count, uint64_t groups,
                                                        const uint8_t* from, uint8_t* to) {
  const uint64_t kernel = t.kernel, p1 = t.piece[1], p2 = t.piece[2], p3 = t.piece[3];
  const auto mask = [&t](uint64_t u, uint64_t p) { return _mm_load_si128(reinterpret_cast<const __m128i*>(t.m[u][p])); };
  if (kPack) {
    if (small_kernel_masks_held<kP>(t)) {
      using Pack = void (*)(const SmallKernelShuffles&, uint64_t, uint64_t, const uint8_t*, uint8_t*);
      static constexpr Pack kPairs[4] = {small_kernel_pack_pairs<kP, 1>, small_kernel_pack_pairs<kP, 2>,
                                         small_kernel_pack_pairs<kP, 3>, small_kernel_pack_pairs<kP, 4>};
      kPairs[t.U - 1](t, count, groups, from, to);
      return;
    }
    __m256i w[kSmallUnits][4];
    for (uint64_t u = 0; u < t.U; ++u) {
      for (uint64_t p = 0; p < 4; ++p) w[u][p] = both_lanes(_mm_load_si128(reinterpret_cast<const __m128i*>(t.m[u][p])));
    }
    small_kernel_pack_pairs_any<kP>(t, w, count, from, to);
    return;
  }
  uint8_t* k = to;
  if (t.U <= 4) {  // the units' places and masks in registers
    using Unpack = void (*)(const SmallKernelShuffles&, uint64_t, const uint8_t*, uint8_t*);
    static constexpr Unpack kUnpack[4] = {
        kP == 1 ? small_kernel_unpack_units<1> : small_kernel_unpack_wide<1, (kP > 2)>,
        kP == 1 ? small_kernel_unpack_units<2> : small_kernel_unpack_wide<2, (kP > 2)>,
        kP == 1 ? small_kernel_unpack_units<3> : small_kernel_unpack_wide<3, (kP > 2)>,
        kP == 1 ? small_kernel_unpack_units<4> : small_kernel_unpack_wide<4, (kP > 2)>};
    kUnpack[t.U - 1](t, count, from, to);
    return;
  }
  for (uint64_t kk = 0; kk < count; ++kk, k += kernel) {
    __m128i y0 = _mm_setzero_si128(), y1 = y0, y2 = y0, y3 = y0;
    for (uint64_t u = 0; u < t.U; ++u) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + t.off[u] + kk * t.len[u]));
      y0 = _mm_or_si128(y0, _mm_shuffle_epi8(x, mask(u, 0)));
      if (kP > 1) y1 = _mm_or_si128(y1, _mm_shuffle_epi8(x, mask(u, 1)));
      if (kP > 2) y2 = _mm_or_si128(y2, _mm_shuffle_epi8(x, mask(u, 2)));
      if (kP > 3) y3 = _mm_or_si128(y3, _mm_shuffle_epi8(x, mask(u, 3)));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(k), y0);
    if (kP > 1) _mm_storeu_si128(reinterpret_cast<__m128i*>(k + p1), y1);
    if (kP > 2) _mm_storeu_si128(reinterpret_cast<__m128i*>(k + p2), y2);
    if (kP > 3) _mm_storeu_si128(reinterpret_cast<__m128i*>(k + p3), y3);
  }
}

template <uint64_t kP, bool kPack>
__attribute__((target("avx2"))) void small_kernel_copy(const ImageWeightShape& s, const uint8_t* src, uint8_t* dst) {
  SmallKernelShuffles t = small_kernel_shuffles_of(s, kPack);
  const uint64_t kernel = t.kernel;
  const uint8_t* logical = kPack ? src : dst;
  uint8_t* physical = kPack ? dst : const_cast<uint8_t*>(src);
  // Groups whose loads and stores could pass the tensor's end (the last one, and the one before where the last
  // is shorter than 16 bytes: a whole group is 32 bytes or more) through scratch of 16 bytes to spare.
  alignas(16) uint8_t in[32 * 64 + 16], out[32 * 64 + 16];
  uint64_t units_of = s.group;
  small_kernel_units(s, s.group, &t);
  const uint8_t* const from0 = kPack ? logical : physical;
  uint8_t* const to0 = kPack ? physical : const_cast<uint8_t*>(logical);
  // Packing, the whole groups before those in one call where it takes them (s.K * kernel is 16 or more: see above).
  uint64_t k0 = 0;
  if (kPack && small_kernel_groups_fit<kP>(t, s.group) && s.K * kernel >= 16) {
    const uint64_t whole = std::min(s.K / s.group, (s.K * kernel - 16) / (s.group * kernel));
    if (whole != 0) small_kernel_group<kP, kPack>(t, s.group, whole, from0, to0);
    k0 = whole * s.group;
  }
  for (; k0 < s.K; k0 += s.group) {
    const uint64_t gk = std::min(s.group, s.K - k0), bytes = gk * kernel;
    if (gk != units_of) small_kernel_units(s, gk, &t), units_of = gk;
    const uint8_t* from = from0 + k0 * kernel;
    uint8_t* to = to0 + k0 * kernel;
    if ((k0 + gk) * kernel + 16 <= s.K * kernel) {
      small_kernel_group<kP, kPack>(t, gk, 1, from, to);
      continue;
    }
    std::memcpy(in, from, bytes);
    small_kernel_group<kP, kPack>(t, gk, 1, in, out);
    std::memcpy(to, out, bytes);
  }
}

// A kernel by line_shuffle_kernel (kL 0) or pair_shuffle_kernel (lines of kL pieces).
template <uint64_t kC, uint64_t kL, bool kPack, typename T, typename L>
__attribute__((target("avx2"), always_inline)) inline void shuffle_kernel(const T& t, uint64_t H, uint64_t R,
                                                                         const L& line, uint8_t* planes) {
  if constexpr (kL == 0) {
    line_shuffle_kernel<kC, kPack>(t, H, R, line, planes);
  } else {
    pair_shuffle_kernel<kC, kL, kPack>(t, H, R, line, planes);
  }
}

template <uint64_t kC, uint64_t kL, bool kPack>
__attribute__((target("avx2"))) void line_shuffle_copy(const ImageWeightShape& s, const uint8_t* src, uint8_t* dst) {
  std::conditional_t<kL == 0, LineShuffles, PairShuffles> t;
  if constexpr (kL == 0) {
    t = line_shuffles(s);
  } else {
    t = pair_shuffles(s, kPack);
  }
  const uint64_t wc = s.W * s.C * s.eb, kernel = s.H * wc, width = s.ext * wc;
  const uint8_t* logical = kPack ? src : dst;
  uint8_t* physical = kPack ? dst : const_cast<uint8_t*>(src);
  uint64_t off[group_permutes::kMaxBytes / 16], step[group_permutes::kMaxBytes / 16];
  // The last kernel's planes with 8 bytes to spare (its last rows' 8-byte moves).
  alignas(16) static thread_local uint8_t scratch[group_permutes::kMaxBytes + 16];
  uint8_t* const spare = scratch;  // its address once (a call each time in a shared library)
  const uint64_t K = s.K, H = s.H, R = s.W * s.eb;
  for (uint64_t k0 = 0; k0 < K; k0 += s.group) {
    const uint64_t gk = std::min(s.group, K - k0), rs = gk * wc;
    for (uint64_t h = 0; h < H; ++h) {  // line h of kernel kk: off[h] + kk * step[h] into the group
      const uint64_t j = h / s.ext, rows = std::min(H, (j + 1) * s.ext) - j * s.ext;
      off[h] = j * gk * width + (h % s.ext) * wc, step[h] = rows * wc;
    }
    const uint8_t* block = physical + k0 * kernel;
    uint8_t* planes = const_cast<uint8_t*>(logical) + k0 * kernel;
    const uint64_t n = k0 + gk == K ? gk - 1 : gk;  // the tensor's last kernel after the others
    if (s.ext == 1) {  // line h at h * rs: no table loads (unpack 0.046 -> 0.034 ms, pack 0.038 -> 0.028)
      for (uint64_t kk = 0; kk < n; ++kk) {
        const uint8_t* first = block + kk * wc;
        const auto lines = [first, rs](uint64_t h) { return first + h * rs; };
        shuffle_kernel<kC, kL, kPack>(t, H, R, lines, planes + kk * kernel);
      }
    } else {
      for (uint64_t kk = 0; kk < n; ++kk) {
        const auto lines = [block, kk, &off, &step](uint64_t h) { return block + off[h] + kk * step[h]; };
        shuffle_kernel<kC, kL, kPack>(t, H, R, lines, planes + kk * kernel);
      }
    }
    if (n < gk) {
      const auto lines = [block, n, &off, &step](uint64_t h) { return block + off[h] + n * step[h]; };
      if (kPack) std::memcpy(spare, planes + n * kernel, kernel);
      shuffle_kernel<kC, kL, kPack>(t, H, R, lines, spare);
      if (!kPack) std::memcpy(planes + n * kernel, spare, kernel);
    }
  }
}

// Whether image_weight_copy_shuffles takes the shape, given AVX2.
bool shuffles_take(const ImageWeightShape& s) {
  return (s.eb == 1 || s.eb == 2) && (s.ext == 1 || s.ext == 2 || s.ext == 4) && s.C != 0 && s.W != 0 && s.H != 0 &&
         s.W * s.C <= 64 && s.group != 0 && s.group <= 32 && group_permutes::fits(s.C, s.H * s.W, s.eb);
}

}  // namespace

bool image_weight_copy_shuffles(const ImageWeightShape& s, const uint8_t* src, uint8_t* dst, bool to_physical) {
  if (!shuffles_take(s) || !isa_at_least(Isa::kAvx2)) return false;
  using Copy = void (*)(const ImageWeightShape&, const uint8_t*, uint8_t*);
  if (line_shuffles_apply(s)) {
    static constexpr Copy kCopy[2][3] = {
        {line_shuffle_copy<2, 0, false>, line_shuffle_copy<3, 0, false>, line_shuffle_copy<4, 0, false>},
        {line_shuffle_copy<2, 0, true>, line_shuffle_copy<3, 0, true>, line_shuffle_copy<4, 0, true>}};
    kCopy[to_physical][s.C - 2](s, src, dst);
    return true;
  }
  if (pair_shuffles_apply(s)) {
    // By channels and pieces a line: C 2 with 2 pieces (18 to 32 bytes), C 3 with 2 or 3 (27 to 48), C 4 with 3
    // or 4 (36 to 64).
    static constexpr Copy kCopy[2][5] = {
        {line_shuffle_copy<2, 2, false>, line_shuffle_copy<3, 2, false>, line_shuffle_copy<3, 3, false>,
         line_shuffle_copy<4, 3, false>, line_shuffle_copy<4, 4, false>},
        {line_shuffle_copy<2, 2, true>, line_shuffle_copy<3, 2, true>, line_shuffle_copy<3, 3, true>,
         line_shuffle_copy<4, 3, true>, line_shuffle_copy<4, 4, true>}};
    const uint64_t pieces = (s.C * s.W * s.eb + 15) / 16;
    kCopy[to_physical][s.C == 2 ? 0 : s.C == 3 ? pieces - 1 : pieces](s, src, dst);
    return true;
  }
  // One channel: a kernel's lines are its plane's rows, moved without shuffles, but for the units under 7 bytes of
  // kernels of at most 64 (each run's share of a group's set-up costing more than the small kernels' pairs; an Intel
  // Xeon capped at AVX2, pinned, 4096 kernels, pack / unpack of memcpy, against the shuffles: 11 x 11 int8 0.14 /
  // 0.12 -> 0.26 / 0.25, fp16 0.17 -> 0.55 / 0.48, 7 x 7 int8 0.15 / 0.11 -> 0.16 / 0.15, 4 x 8 fp16 0.31 / 0.38 ->
  // 0.44; 5 x 5 int8 0.14 / 0.11 -> 0.11 / 0.10, 3 x 3 0.10 / 0.19 -> 0.07 / 0.03).
  if (s.C == 1 && (!small_kernels_apply(s) || std::min(s.ext, s.H) * s.W * s.eb >= 7)) {
    const auto none = [](const uint8_t*, uint8_t*, uint64_t) {};
    image_stage_shuffles<true>(s, none, src, dst, to_physical);
    return true;
  }
  if (small_kernels_apply(s)) {
    static constexpr Copy kCopy[2][4] = {
        {small_kernel_copy<1, false>, small_kernel_copy<2, false>, small_kernel_copy<3, false>,
         small_kernel_copy<4, false>},
        {small_kernel_copy<1, true>, small_kernel_copy<2, true>, small_kernel_copy<3, true>, small_kernel_copy<4, true>}};
    kCopy[to_physical][(s.C * s.H * s.W * s.eb + 15) / 16 - 1](s, src, dst);
    return true;
  }
  const uint64_t hw = s.H * s.W;
  if (group_permutes::planes_fit(s.C, hw, s.eb)) {
    // Kernels of 2 to 4 channels of 16 bytes or more: a few planes'
    // shuffles, no table lookups (measured on a Zen 5 capped at AVX2, best of
    // 7, pack / unpack, against the shuffles below: 4096 x 3 x 7 x 7 int8
    // 0.07 / 0.06 of memcpy -> 0.17 / 0.19, 2048 x 4 x 7 x 7 0.05 / 0.06 ->
    // 0.19 / 0.20, 2048 x 3 x 5 x 5 fp16 0.05 -> 0.15 / 0.14; the same
    // capped at AVX-512 without VBMI).
    const group_permutes::PlaneTables& t = group_permutes::plane_tables(s.C, s.eb, to_physical);
    const auto planes = [&](const uint8_t* from, uint8_t* to, uint64_t n) {
      group_permutes::run_planes(t, from, to, hw, n);
    };
    image_stage_shuffles<false>(s, planes, src, dst, to_physical);
    return true;
  }
  const group_permutes::ShuffleTables& t = group_permutes::shuffle_tables(s.C, hw, s.eb, to_physical);
  if (!t.ok) return false;
  const auto shuffles = [&](const uint8_t* from, uint8_t* to, uint64_t n) { group_permutes::run_shuffles(t, from, to, n); };
  image_stage_shuffles<false>(s, shuffles, src, dst, to_physical);
  return true;
}

bool image_weight_copy_avx512(const ImageWeightShape& s, const uint8_t* src, uint8_t* dst, bool to_physical) {
  if ((s.eb != 1 && s.eb != 2) || (s.ext != 1 && s.ext != 2 && s.ext != 4) || s.C == 0 || s.W == 0) return false;
  if (s.W * s.C > 64 / s.eb || !has_avx512_vbmi()) return false;
  // Rows of 9 to 16 bytes by the AVX2 pairs' 256-bit shuffles: where 512-bit operations split (measured on a Zen 4,
  // pinned, alternating, 4096 x 3 x 7 x 7 fp16 of memcpy: 0.47-0.49 -> 0.61; unpacking par, 0.50-0.51) and where
  // they do not (an Intel Xeon, pinned, 1024 x 3 x 7 x 7 fp16, pack / unpack: 0.26 / 0.37 -> 0.55 / 0.47).
  if (pair_shuffles_apply(s) && shuffles_take(s)) return false;
  if (s.eb == 1 ? image_runs_copy<uint8_t>(s, src, dst, to_physical) : image_runs_copy<uint16_t>(s, src, dst, to_physical)) {
    return true;
  }
  // Past the runs, the in-lane shuffles where they take the kernels: unpacking and, with post-extension, packing
  // (on a Zen 4, 1024 kernels, of memcpy, pack / unpack, these permutes against the shuffles capped at AVX2: 3 x 11 x
  // 11 int8 0.47 / 0.12 against 0.46-0.82 / 0.40-0.71, 2 x 11 x 11 fp16 0.57 / 0.18 against 0.41 / 0.40;
  // post-extension 2, 3 x 7 x 7 int8 0.12 / 0.10 against 0.32 / 0.28, 3 x 3 x 3 fp16 0.11 / 0.07 against 0.25 / 0.21).
  // Packing without post-extension, the permutes only where a line is one (two windows at most, image_pack's
  // first loop): the lines of more windows, their loads, permutes and masked store one after the other, measured
  // slower than the shuffles (on an Intel Xeon, 1024 kernels, pinned, of memcpy, the permutes -> the shuffles: 3 x 11
  // x 11 int8 0.06 -> 0.51, 3 x 9 x 9 0.06 -> 0.48, 3 x 7 x 7 fp16 0.26 -> 0.55).
  if ((!to_physical || s.ext > 1 || pack_windows(s) > 2) && shuffles_take(s)) return false;
  if (s.eb == 1) {
    if (to_physical) image_pack<uint8_t>(s, src, dst);
    else image_unpack<uint8_t>(s, src, dst);
  } else {
    if (to_physical) image_pack<uint16_t>(s, src, dst);
    else image_unpack<uint16_t>(s, src, dst);
  }
  return true;
}

bool dc_weight_full_blocks(const DcWeightShape& s, const uint8_t* src, uint8_t* dst, bool to_physical) {
  if ((s.eb != 1 && s.eb != 2) || s.H * s.W != static_cast<uint64_t>(kDcHw) || s.C < 64) return false;
  if (s.eb == 1 && isa_at_least(Isa::kAvx512) && (to_physical || !has_avx512_vbmi() || !splits_512bit_ops())) {
    dc3x3_lanes_epi8(s, src, dst, to_physical);
    return true;
  }
  if (s.eb == 2 && isa_at_least(Isa::kAvx512)) {
    dc3x3_lanes_epi16(s, src, dst, to_physical);
    return true;
  }
  if (s.eb == 1 && !to_physical && has_avx512_vbmi()) {
    dc3x3_unpack_permutes(s, src, dst);
    return true;
  }
  if (!isa_at_least(Isa::kAvx2)) return false;
  // Without AVX-512 (measured on a Zen 5 capped at AVX2, best of 7, pack /
  // unpack, against small_kernel_block and transpose_block kernel by
  // kernel: 256 x 256 x 3 x 3 int8 0.11 / 0.16 of memcpy -> 0.38 / 0.36,
  // fp16 0.21 / 0.37 -> 0.65 / 0.49; 64 x 512 x 3 x 3 int8 0.09 -> 0.30 /
  // 0.25, fp16 0.13 / 0.25 -> 0.44 / 0.35).
  if (s.eb == 1) dc3x3_lanes_epi8_avx2(s, src, dst, to_physical);
  else dc3x3_lanes_epi16_avx2(s, src, dst, to_physical);
  return true;
}

bool dc_weight_one_block_permutes(const DcWeightShape& s, const uint8_t* src, uint8_t* dst, bool to_physical) {
  const uint64_t hw = s.H * s.W;
  // Faster than the rows' path even for pieces of a few bytes (32 x 8 x 3 x
  // 3 int8 on a Zen 5: 0.014 -> 0.060 of memcpy; 32 x 32 x 3 x 3 0.05 -> 0.16).
  if ((s.eb != 1 && s.eb != 2) || s.C == 0 || s.C > 64 || hw < 2 || s.group == 0 ||
      s.group > 32 || !group_permutes::fits(s.C, hw, s.eb) || !has_avx512_vbmi()) {
    return false;
  }
  dc_one_block(s, src, dst, to_physical);
  return true;
}

#else

bool image_weight_copy_avx512(const ImageWeightShape&, const uint8_t*, uint8_t*, bool) { return false; }
bool image_weight_copy_shuffles(const ImageWeightShape&, const uint8_t*, uint8_t*, bool) { return false; }
bool dc_weight_one_block_permutes(const DcWeightShape&, const uint8_t*, uint8_t*, bool) { return false; }
bool dc_weight_full_blocks(const DcWeightShape&, const uint8_t*, uint8_t*, bool) { return false; }

#endif

}  // namespace layoutcheck
