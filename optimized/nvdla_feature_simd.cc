// AVX-512 NVDLA feature, bit-field pixel and 8-bit semi-planar pixel kernels.
//
// Why the feature kernel equals the reference: surface s holds channels
// s*C'..s*C'+C'-1 (C' = 32 / eb); the atom of (h, w) is those channels'
// elements at (h, w), in channel order, and the logical rows of those channels
// are H*W contiguous elements each. So the atoms of positions j = h*W + w are
// the transpose of the C' x (H*W) block of logical rows, laid out line by line
// (a whole surface is one line when lines have no gap). The kernel moves
// 64-byte pieces of the C' rows through registers: a 16x16 byte (8x8 word)
// transpose per 128-bit lane, then two lane exchanges, which leave atoms 2P
// and 2P+1 in one register. Rows past C are zero; every byte after a line
// (line gap) and after a surface (surface gap) is written 0 by the same
// sequential writer. Large outputs go out with streaming stores in whole
// 64-byte lines, straight from the registers while the output is at a line
// boundary (a line-aligned buffer, lines without gaps), else through a line
// buffer; the partial lines at either end with ordinary stores.
#include "optimized/nvdla_feature_simd.h"

#include <algorithm>
#include <cstring>

#include "optimized/isa.h"
#include "optimized/threads.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include "optimized/masked.h"

#include "optimized/byte_transpose.h"
#include "optimized/group_permutes.h"
// GCC 12 reads the _mm512_undefined_epi32() operand of some AVX-512 intrinsics
// as an uninitialized value.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define LC_FEATURE_AVX512 1
#define LC_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define LC_AVX512_INLINE __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"), always_inline)) inline
#define LC_UNROLL_ALL _Pragma("GCC unroll 32")
#endif

namespace layoutcheck::nvdla_simd {

#if defined(LC_FEATURE_AVX512)
namespace {

constexpr uint64_t kAtom = 32;
constexpr uint64_t kLine = 64;                // cache line, one 512-bit register
constexpr uint64_t kChunkBytes = 32 * kLine;  // one transposed block: 64 atoms
constexpr uint64_t kDirectBlocks = 2;  // in cache, runs of up to this many blocks unpack straight into the rows
// Runs of a gap-free surface are cut at this many positions, so threads share
// even a single surface.
constexpr uint64_t kRunPositions = 4096;

// Physical bytes written in physical order, either straight to memory or,
// when streaming, through a buffer that holds them until a whole 64-byte line
// is complete. A block producer asks reserve() for room (kChunkBytes), writes
// there and commit()s what it wrote.
class SequentialWriter {
 public:
  SequentialWriter(uint8_t* at, bool streaming) : streaming_(streaming), next_(at) {
    if (!streaming_) return;
    // buf_[i] stands for the byte at line_ + i; bytes before lo_ are not ours.
    const uint64_t misalign = reinterpret_cast<uintptr_t>(at) % kLine;
    line_ = reinterpret_cast<uintptr_t>(at) - misalign;
    lo_ = fill_ = misalign;
  }
  uint8_t* reserve() { return streaming_ ? buf_ + fill_ : next_; }
  // Streaming with no partial line pending: the 64-byte aligned address the
  // next n bytes (whole lines) go to, for the caller's own streaming stores,
  // which it then passes with skip(n). Otherwise nullptr (use reserve()).
  uint8_t* stream_to(uint64_t n) const {
    return streaming_ && fill_ == 0 && lo_ == 0 && n % kLine == 0 ? at(0) : nullptr;
  }
  void skip(uint64_t n) { line_ += n; }
  LC_AVX512 void commit(uint64_t n) {
    if (!streaming_) {
      next_ += n;
      return;
    }
    fill_ += n;
    const uint64_t lines = fill_ / kLine;
    if (lines == 0) return;
    uint64_t k = 0;
    if (lo_) {  // the first line is not all ours: its bytes before lo_ are someone else's
      std::memcpy(at(lo_), buf_ + lo_, kLine - lo_);
      lo_ = 0, k = 1;
    }
    for (; k < lines; ++k) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(at(k * kLine)),
                          _mm512_load_si512(reinterpret_cast<const __m512i*>(buf_ + k * kLine)));
    }
    _mm512_store_si512(reinterpret_cast<__m512i*>(buf_),
                       _mm512_load_si512(reinterpret_cast<const __m512i*>(buf_ + lines * kLine)));
    line_ += lines * kLine;
    fill_ -= lines * kLine;
  }
  LC_AVX512 void zeros(uint64_t n) {
    if (!streaming_) {
      std::memset(next_, 0, n);
      next_ += n;
      return;
    }
    while (n) {
      const uint64_t k = std::min(n, kChunkBytes);
      std::memset(buf_ + fill_, 0, k);
      commit(k);
      n -= k;
    }
  }
  // Writes the last partial line and orders the streaming stores before
  // whatever the caller does next (another thread may read the output).
  LC_AVX512 void finish() {
    if (!streaming_) return;
    if (fill_ > lo_) std::memcpy(at(lo_), buf_ + lo_, fill_ - lo_);
    lo_ = fill_ = 0;
    _mm_sfence();
  }

 private:
  uint8_t* at(uint64_t i) const { return reinterpret_cast<uint8_t*>(line_ + i); }

  bool streaming_;
  uint8_t* next_;          // not streaming: the next byte
  uintptr_t line_ = 0;     // streaming: the 64-byte aligned address buf_[0] stands for
  uint64_t lo_ = 0, fill_ = 0;
  alignas(64) uint8_t buf_[kLine + kChunkBytes + kLine];
};

// ---- register transposes: rows <-> atoms ----------------------------------------
//
// A block is 32 registers (int8: 32 channel rows of 64 positions) or 16
// (16-bit: 16 rows of 32 positions). Bits of an element's place: register
// index q and byte (word) index p. Rows: q = channel, p = position. Atoms:
// register P holds atoms 2P, 2P+1 (the lower one in the low 256 bits). Each
// step below swaps two bits of the place, so each is its own inverse and the
// atoms-to-rows direction runs the same steps in reverse order.

// Swaps the low lane bit (p4 for bytes, p3 for words) with the register bit
// that tells x from y: x = [x0 y0 x2 y2], y = [x1 y1 x3 y3] in 128-bit lanes.
LC_AVX512_INLINE void swap_lane_bit0(__m512i& x, __m512i& y) {
  const __m512i lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const __m512i hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  const __m512i a = _mm512_permutex2var_epi64(x, lo, y);
  y = _mm512_permutex2var_epi64(x, hi, y);
  x = a;
}

// Swaps the high lane bit with the register bit of x/y: x = [x0 x1 y0 y1], y = [x2 x3 y2 y3].
LC_AVX512_INLINE void swap_lane_bit1(__m512i& x, __m512i& y) {
  const __m512i a = _mm512_shuffle_i64x2(x, y, 0x44);
  y = _mm512_shuffle_i64x2(x, y, 0xEE);
  x = a;
}


// int8: after the per-lane 16x16 transposes, q = (w0..w3, c4), p = (c0..c3, w4, w5);
// swap_lane_bit0 on (i, i + 16) makes it q = (w0..w4), p = (c0..c4, w5); swap_lane_bit1
// on (2i, 2i + 1) q = (w5, w1..w4), p = (c0..c4, w0). So atom pair P is in register
// u8_register(P).
constexpr int u8_register(int P) { return (P & 15) << 1 | P >> 4; }

LC_AVX512_INLINE void rows_to_atoms_u8(__m512i* v) {
  byte_transpose::transpose16x16_epi8_x4(v);
  byte_transpose::transpose16x16_epi8_x4(v + 16);
  LC_UNROLL_ALL
  for (int i = 0; i < 16; ++i) swap_lane_bit0(v[i], v[i + 16]);
  LC_UNROLL_ALL
  for (int i = 0; i < 16; ++i) swap_lane_bit1(v[2 * i], v[2 * i + 1]);
}

LC_AVX512_INLINE void atoms_to_rows_u8(__m512i* v) {
  LC_UNROLL_ALL
  for (int i = 0; i < 16; ++i) swap_lane_bit1(v[2 * i], v[2 * i + 1]);
  LC_UNROLL_ALL
  for (int i = 0; i < 16; ++i) swap_lane_bit0(v[i], v[i + 16]);
  byte_transpose::transpose16x16_epi8_x4(v);
  byte_transpose::transpose16x16_epi8_x4(v + 16);
}

// 16-bit: after the per-lane 8x8 transposes q = (w0..w2, c3), p = (c0..c2, w3, w4);
// then as above with lane bits p3, p4: q = (w4, w1..w3), p = (c0..c3, w0).
constexpr int u16_register(int P) { return (P & 7) << 1 | P >> 3; }

LC_AVX512_INLINE void rows_to_atoms_u16(__m512i* v) {
  byte_transpose::transpose8x8_epi16_x4(v, v);
  byte_transpose::transpose8x8_epi16_x4(v + 8, v + 8);
  LC_UNROLL_ALL
  for (int i = 0; i < 8; ++i) swap_lane_bit0(v[i], v[i + 8]);
  LC_UNROLL_ALL
  for (int i = 0; i < 8; ++i) swap_lane_bit1(v[2 * i], v[2 * i + 1]);
}

LC_AVX512_INLINE void atoms_to_rows_u16(__m512i* v) {
  LC_UNROLL_ALL
  for (int i = 0; i < 8; ++i) swap_lane_bit1(v[2 * i], v[2 * i + 1]);
  LC_UNROLL_ALL
  for (int i = 0; i < 8; ++i) swap_lane_bit0(v[i], v[i + 8]);
  byte_transpose::transpose8x8_epi16_x4(v, v);
  byte_transpose::transpose8x8_epi16_x4(v + 8, v + 8);
}

// ---- runs ---------------------------------------------------------------------------
//
// A run: n positions (in-plane index j = h*W + w) of one surface from j0, cut
// at multiples of kRunPositions so threads can share a surface. Position j's
// atom is at s*ss + (j / W)*ls + (j % W)*32; a line's atoms are contiguous, so
// blocks inside one line move straight between registers and memory, and a
// block that crosses a line end goes through a buffer.

struct Run {
  uint64_t surface, j0, n;
};

struct Runs {
  FeatureGeometry g;
  uint64_t per_surface;
  Run at(uint64_t i) const {
    const uint64_t s = i / per_surface, j0 = i % per_surface * kRunPositions;
    return {s, j0, std::min(kRunPositions, g.H * g.W - j0)};
  }
  uint64_t phys(uint64_t s, uint64_t j) const { return s * g.ss + j / g.W * g.ls + j % g.W * kAtom; }
};

// Lines without a gap are one line of H*W atoms per surface.
Runs runs_of(FeatureGeometry g) {
  if (g.ls == g.W * kAtom) g.W *= g.H, g.ls *= g.H, g.H = 1;
  return {g, (g.H * g.W + kRunPositions - 1) / kRunPositions};
}

// Positions per block, the first of a run cut so that later blocks start on a
// 64-byte boundary of channel row 0's logical bytes.
template <int kEb>
uint64_t first_block(const uint8_t* row0) {
  constexpr uint64_t kPos = 64 / kEb;
  const uint64_t misalign = reinterpret_cast<uintptr_t>(row0) % kLine;
  const uint64_t first = misalign % kEb == 0 ? (kLine - misalign) % kLine / kEb : 0;
  return first ? first : kPos;
}

template <int kEb>
LC_AVX512_INLINE __m512i load_row(const uint8_t* p, uint64_t cnt) {
  if constexpr (kEb == 1) {
    const __mmask64 m = cnt >= 64 ? ~__mmask64{0} : (__mmask64{1} << cnt) - 1;
    return masked::_mm512_maskz_loadu_epi8(m, p);
  } else {
    const __mmask32 m = cnt >= 32 ? ~__mmask32{0} : (__mmask32{1} << cnt) - 1;
    return masked::_mm512_maskz_loadu_epi16(m, p);
  }
}

template <int kEb>
LC_AVX512_INLINE void store_row(uint8_t* p, __m512i v, uint64_t cnt, bool streaming) {
  if (cnt == 64 / kEb) {
    if (streaming && reinterpret_cast<uintptr_t>(p) % kLine == 0) _mm512_stream_si512(reinterpret_cast<__m512i*>(p), v);
    else _mm512_storeu_si512(p, v);
    return;
  }
  if constexpr (kEb == 1) {
    masked::_mm512_mask_storeu_epi8(p, (__mmask64{1} << cnt) - 1, v);
  } else {
    masked::_mm512_mask_storeu_epi16(p, (__mmask32{1} << cnt) - 1, v);
  }
}

// How far ahead (bytes) each channel row is prefetched while packing.
constexpr uint64_t kPrefetchAhead = 512;

// Packing cuts blocks at line ends, so each block's atoms are contiguous.
template <int kEb>
LC_AVX512 void pack_runs(const Runs& runs, const uint8_t* src, uint8_t* dst, bool streaming, uint64_t begin,
                         uint64_t end) {
  constexpr int kRegs = 32 / kEb;
  constexpr uint64_t kPos = 64 / kEb;
  const FeatureGeometry& g = runs.g;
  const uint64_t plane = g.H * g.W * kEb, positions = g.H * g.W, gap = g.ls - g.W * kAtom, tail = g.ss - g.H * g.ls;
  const Run first = runs.at(begin);
  SequentialWriter out(dst + runs.phys(first.surface, first.j0), streaming);
  for (uint64_t i = begin; i < end; ++i) {
    const Run run = runs.at(i);
    const uint64_t c0 = run.surface * kRegs;
    const int real = static_cast<int>(std::min<uint64_t>(kRegs, g.C - c0));
    const uint8_t* base = src + c0 * plane + run.j0 * kEb;
    uint64_t w = run.j0 % g.W;
    for (uint64_t j = 0; j < run.n;) {
      const uint64_t cnt = std::min({kPos, run.n - j, g.W - w});
      __m512i v[kRegs];
      LC_UNROLL_ALL
      for (int r = 0; r < kRegs; ++r) {
        const uint8_t* row = base + r * plane + j * kEb;
        if (r < real && run.j0 + j + kPos + kPrefetchAhead / kEb < positions) {
          _mm_prefetch(reinterpret_cast<const char*>(row + kPrefetchAhead), _MM_HINT_T0);
        }
        v[r] = r < real ? load_row<kEb>(row, cnt) : _mm512_setzero_si512();
      }
      if constexpr (kEb == 1) rows_to_atoms_u8(v);
      else rows_to_atoms_u16(v);
      const int pairs = static_cast<int>(cnt / 2);
      if (uint8_t* to = out.stream_to(cnt * kAtom)) {  // whole lines straight from the registers
        LC_UNROLL_ALL
        for (int P = 0; P < kRegs; ++P) {
          if (P < pairs) {
            _mm512_stream_si512(reinterpret_cast<__m512i*>(to + P * kLine), v[kEb == 1 ? u8_register(P) : u16_register(P)]);
          }
        }
        out.skip(cnt * kAtom);
      } else {
        uint8_t* o = out.reserve();
        LC_UNROLL_ALL
        for (int P = 0; P < kRegs; ++P) {
          const __m512i a = v[kEb == 1 ? u8_register(P) : u16_register(P)];
          if (P < pairs) _mm512_storeu_si512(o + P * kLine, a);
          else if (P == pairs && cnt % 2) masked::_mm512_mask_storeu_epi64(o + P * kLine, 0x0F, a);
        }
        out.commit(cnt * kAtom);
      }
      j += cnt, w += cnt;
      if (w == g.W) {
        out.zeros(run.j0 + j == positions ? gap + tail : gap);
        w = 0;
      }
    }
  }
  out.finish();
}

// How far ahead (bytes) a streamed unpack fetches the atoms it reads: the
// hardware prefetchers do not keep the atoms' sequential read ahead while 32
// or 16 rows a plane apart are written (measured on a Zen 5, means of two runs
// beside a memcpy, without / 4 KiB ahead: 256 x 256 x 256 int8 0.52 -> 0.82
// of memcpy, 256 x 255 x 257 0.37 -> 0.45, 32 x 540 x 960 0.44 -> 0.66,
// 128 x 256 x 256 fp16 0.57 -> 0.95; 8 KiB ahead 0.85, 0.44, 0.83, 0.78).
constexpr uint64_t kUnpackAhead = 4096;

// Unpacking gathers kGroup blocks of each channel row in L1 and writes them
// row after row: a row's 64-byte lines go to memory together rather than
// interleaved with 31 other rows a plane apart. In cache a group of kGroup
// whole blocks leaves as each row's kGroup lines, unrolled, without the
// per-block masks (measured on a Zen 5: 512 x 14 x 14 fp16 0.23 -> 0.29 of
// memcpy, 64 x 56 x 56 int8 0.30 -> 0.39).
template <int kEb, int kGroup = 4>
LC_AVX512 void unpack_runs(const Runs& runs, const uint8_t* src, uint8_t* dst, bool streaming, uint64_t begin,
                           uint64_t end) {
  constexpr int kRegs = 32 / kEb;
  constexpr uint64_t kPos = 64 / kEb;
  const FeatureGeometry& g = runs.g;
  const uint64_t plane = g.H * g.W * kEb;
  alignas(64) uint8_t staged[kChunkBytes];
  alignas(64) uint8_t rows[kRegs * kGroup * kLine];  // [channel row][block]
  for (uint64_t i = begin; i < end; ++i) {
    const Run run = runs.at(i);
    const uint64_t c0 = run.surface * kRegs;
    const int real = static_cast<int>(std::min<uint64_t>(kRegs, g.C - c0));
    uint8_t* base = dst + c0 * plane + run.j0 * kEb;
    // Blocks start on a line of channel row 0 only when streaming (whole lines
    // out): in cache a 7 x 7 surface is then one block, not two (measured on
    // a Zen 5, 2048 x 7 x 7 int8: 0.15 -> 0.19 of memcpy).
    const uint64_t block = streaming ? first_block<kEb>(base) : kPos;
    const bool direct = !streaming && run.n <= kDirectBlocks * kPos;
    uint64_t h = run.j0 / g.W, w = run.j0 % g.W;
    for (uint64_t j = 0; j < run.n;) {
     const uint64_t group_j = j;
     uint64_t cnts[kGroup];
     int blocks = 0;
     for (; blocks < kGroup && j < run.n; ++blocks) {
      const uint64_t cnt = std::min<uint64_t>(j == 0 ? block : kPos, run.n - j);
      // Atoms 0..s1-1 of the block at a1, the rest (past a line end) at a2.
      const uint8_t* a1 = src + run.surface * g.ss + h * g.ls + w * kAtom;
      const uint8_t* a2 = a1;
      uint64_t s1 = cnt;
      if (w + cnt <= g.W) {
        w += cnt;
      } else if (cnt - (g.W - w) <= g.W) {  // one line end inside the block
        s1 = g.W - w, w = cnt - s1, ++h;
        a2 = src + run.surface * g.ss + h * g.ls;
      } else {  // lines shorter than a block: gather atom by atom
        for (uint64_t k = 0; k < cnt; ++k) {
          std::memcpy(staged + k * kAtom, src + run.surface * g.ss + h * g.ls + w * kAtom, kAtom);
          if (++w == g.W) w = 0, ++h;
        }
        a1 = staged;
      }
      if (w == g.W) w = 0, ++h;
      __m512i v[kRegs];
      if (streaming) {  // mutate: equivalent (a prefetch: the same bytes)
        // Near the end the addresses pass it: a prefetch never faults.
        const uintptr_t ahead = reinterpret_cast<uintptr_t>(a1) + kUnpackAhead;  // mutate: equivalent (a prefetch: the same bytes)
        for (uint64_t k = 0; k < cnt * kAtom; k += kLine) _mm_prefetch(reinterpret_cast<const char*>(ahead + k), _MM_HINT_T0);  // mutate: equivalent (a prefetch: the same bytes)
      }
      if (s1 == cnt) {  // no line end inside: pair P's atoms masked to the block's, no branch
        LC_UNROLL_ALL
        for (int P = 0; P < kRegs; ++P) {
          const uint64_t k = 2 * static_cast<uint64_t>(P);
          const __mmask8 m = k + 1 < cnt ? 0xFF : k < cnt ? 0x0F : 0;
          v[kEb == 1 ? u8_register(P) : u16_register(P)] = masked::_mm512_maskz_loadu_epi64(m, a1 + k * kAtom);
        }
      }
      LC_UNROLL_ALL
      for (int P = 0; P < kRegs && s1 != cnt; ++P) {
        const uint64_t k = 2 * static_cast<uint64_t>(P);
        __m512i x = _mm512_setzero_si512();
        if (k + 1 < s1) {
          x = _mm512_loadu_si512(a1 + k * kAtom);
        } else if (k >= s1 && k < cnt) {
          x = k + 1 < cnt ? _mm512_loadu_si512(a2 + (k - s1) * kAtom)
                          : masked::_mm512_maskz_loadu_epi64(0x0F, a2 + (k - s1) * kAtom);
        } else if (k < cnt) {  // k == s1 - 1: the pair spans the line end
          const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a1 + k * kAtom));
          const __m256i hi = k + 1 < cnt ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a2)) : _mm256_setzero_si256();
          x = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
        }
        v[kEb == 1 ? u8_register(P) : u16_register(P)] = x;
      }
      if constexpr (kEb == 1) atoms_to_rows_u8(v);
      else atoms_to_rows_u16(v);
      if (direct) {
        // A run of one or two blocks (a small surface in cache): the rows
        // straight from the registers, one mask a block (measured on a Zen 5,
        // 2048 x 7 x 7 int8: 0.21 -> 0.30 of memcpy with the loads above;
        // two blocks: 512 x 7 x 7 fp16 0.19 through the group of blocks, 0.23
        // so; 256 x 8 x 16 int8 0.19 -> 0.30).
        const __mmask64 m = cnt * kEb >= 64 ? ~__mmask64{0} : (__mmask64{1} << (cnt * kEb)) - 1;
        LC_UNROLL_ALL
        for (int r = 0; r < kRegs; ++r) {
          if (r < real) masked::_mm512_mask_storeu_epi8(base + r * plane + j * kEb, m, v[r]);
        }
        j += cnt;
        continue;
      }
      LC_UNROLL_ALL
      for (int r = 0; r < kRegs; ++r) _mm512_store_si512(rows + (r * kGroup + blocks) * kLine, v[r]);
      cnts[blocks] = cnt;
      j += cnt;
     }
     if (direct) continue;  // the run's blocks, written above
     if (!streaming && blocks == kGroup && j - group_j == kGroup * kPos) {  // whole blocks: each row's lines in a row
       for (int r = 0; r < real; ++r) {
         uint8_t* d = base + r * plane + group_j * kEb;
         LC_UNROLL_ALL
         for (int b = 0; b < kGroup; ++b) _mm512_storeu_si512(d + b * kLine, _mm512_load_si512(rows + (r * kGroup + b) * kLine));
       }
       continue;
     }
     for (int r = 0; r < real; ++r) {
       uint8_t* d = base + r * plane + group_j * kEb;
       for (int b = 0; b < blocks; ++b) {
         store_row<kEb>(d, _mm512_load_si512(rows + (r * kGroup + b) * kLine), cnts[b], streaming);
         d += cnts[b] * kEb;
       }
     }
    }
  }
  if (streaming) _mm_sfence();
}

}  // namespace

bool feature_copy_avx512(const FeatureGeometry& g, const uint8_t* src, uint8_t* dst, bool pack) {
  if (!isa_at_least(Isa::kAvx512) || (g.eb != 1 && g.eb != 2) || g.H * g.W == 0 || g.surfaces == 0) return false;
  const Runs runs = runs_of(g);
  const uint64_t physical = g.surfaces * g.ss, logical = g.C * g.H * g.W * g.eb;
  const bool streaming = (pack ? physical : logical) >= kStreamingBytes;
  // Streamed unpacks on a CPU that splits 512-bit operations in two take the
  // AVX2 squares of atom_lines instead: a block's 64 (32) positions take
  // their transposes' 512-bit shuffles at half rate there, and the int8
  // one's 32 registers spill. Measured on a Zen 4, pinned, alternating, 256
  // x 256 x 256, the unpack's own time in ms: int8 1.26-1.28 -> 0.85-0.90,
  // fp16 0.98-1.04 -> 0.66-0.73, int8 with lines 8224 bytes apart 1.27-1.32
  // -> 0.85-0.86 (fetching 2 or 8 KiB ahead, into L2 or non-temporally,
  // groups of 8 blocks, unmasked loads and 256-bit non-temporal stores left
  // the AVX-512 unpack at 0.87-1.08 for fp16). Its packs keep AVX-512
  // (faster there: fp16 1.04-1.28 of memcpy against 0.93-1.01), and so does
  // every unpack on a Zen 5 (0.82 int8 and 0.95 fp16 of memcpy against
  // 0.63-0.67 and 0.74 capped at AVX2).
  if (!pack && streaming && splits_512bit_ops()) return false;
  const uint64_t per_atom = kAtom / g.eb;
  if (!streaming && group_permutes::fits(per_atom, g.H * g.W, g.eb) && g.ls == g.W * kAtom && g.ss == g.H * g.ls &&
      isa_at_least(Isa::kAvx512Vbmi)) {
    // Gap-free surfaces of at most 20 positions (3 x 3, 4 x 4, 4 x 5 ...):
    // each one run of 32 bytes a position on both sides, transposed by byte
    // permutes (group_permutes.h), where the transposes above take a whole
    // block of 64 (32) positions for a surface of 9 (measured on a Zen 5,
    // best of 7, pack / unpack: 1024 x 3 x 3 int8 0.05 / 0.05 of memcpy ->
    // 0.21 / 0.21, fp16 0.09 / 0.08 -> 0.28 / 0.28; 65536 x 3 x 3 int8 0.08
    // / 0.10 -> 0.59 / 0.58, fp16 0.28 / 0.25 -> 0.92 / 0.92; 512 x 4 x 4
    // int8 0.08 -> 0.18; the indices loaded every surface instead of kept in
    // registers: 0.09 on 1024 x 3 x 3). A last surface of fewer channels
    // (zeros past them) goes through the runs.
    const uint64_t whole = g.C / per_atom;
    parallel_ranges(whole, std::max(physical, logical), [&](uint64_t begin, uint64_t end) {
      const group_permutes::Tables& t = group_permutes::tables(per_atom, g.H * g.W, g.eb, pack);
      const uint64_t at = begin * t.group_bytes;
      group_permutes::run(t, src + at, dst + at, end - begin);
    });
    if (whole < g.surfaces) {
      if (pack && g.eb == 1) pack_runs<1>(runs, src, dst, false, whole, g.surfaces);
      else if (pack) pack_runs<2>(runs, src, dst, false, whole, g.surfaces);
      else if (g.eb == 1) unpack_runs<1>(runs, src, dst, false, whole, g.surfaces);
      else unpack_runs<2>(runs, src, dst, false, whole, g.surfaces);
    }
    return true;
  }
  parallel_ranges(g.surfaces * runs.per_surface, std::max(physical, logical), [&](uint64_t begin, uint64_t end) {
    if (pack && g.eb == 1) pack_runs<1>(runs, src, dst, streaming, begin, end);
    else if (pack) pack_runs<2>(runs, src, dst, streaming, begin, end);
    else if (g.eb == 1) unpack_runs<1>(runs, src, dst, streaming, begin, end);
    else unpack_runs<2>(runs, src, dst, streaming, begin, end);
  });
  return true;
}

// ---- bit-field pixels -------------------------------------------------------------
//
// Eight pixels per register: a pixel's four 16-bit components are one 64-bit
// lane; each component is masked out, shifted to its field and ORed, and the
// lanes narrowed to 32-bit words. Unpacking widens the words and cuts the
// fields back out. The same expressions as the portable line kernels.

namespace {

struct FieldShifts {
  __m128i s[4];
};

LC_AVX512_INLINE __m512i fields_of(__m512i v, const FieldShifts& f) {
  const __m512i m16 = _mm512_set1_epi64(0xFFFF);
  const __m512i c0 = _mm512_sll_epi64(_mm512_and_si512(v, m16), f.s[0]);
  const __m512i c1 = _mm512_sll_epi64(_mm512_and_si512(_mm512_srli_epi64(v, 16), m16), f.s[1]);
  const __m512i c2 = _mm512_sll_epi64(_mm512_and_si512(_mm512_srli_epi64(v, 32), m16), f.s[2]);
  const __m512i c3 = _mm512_sll_epi64(_mm512_srli_epi64(v, 48), f.s[3]);
  return _mm512_ternarylogic_epi64(c0, c1, _mm512_or_si512(c2, c3), 0xFE);
}

LC_AVX512_INLINE __m512i components_of(__m256i words, const FieldShifts& f, const __m512i* mask) {
  const __m512i x = _mm512_cvtepu32_epi64(words);
  const __m512i c0 = _mm512_and_si512(_mm512_srl_epi64(x, f.s[0]), mask[0]);
  const __m512i c1 = _mm512_slli_epi64(_mm512_and_si512(_mm512_srl_epi64(x, f.s[1]), mask[1]), 16);
  const __m512i c2 = _mm512_slli_epi64(_mm512_and_si512(_mm512_srl_epi64(x, f.s[2]), mask[2]), 32);
  const __m512i c3 = _mm512_slli_epi64(_mm512_and_si512(_mm512_srl_epi64(x, f.s[3]), mask[3]), 48);
  return _mm512_ternarylogic_epi64(c0, c1, _mm512_or_si512(c2, c3), 0xFE);
}

LC_AVX512 FieldShifts field_shifts(const uint32_t shift[4]) {
  FieldShifts f;
  for (int k = 0; k < 4; ++k) f.s[k] = _mm_cvtsi32_si128(static_cast<int>(shift[k]));
  return f;
}

}  // namespace

LC_AVX512 bool pixel_fields_pack_line_avx512(const uint8_t* row, uint8_t* line, uint64_t W, const uint32_t shift[4],
                                             const uint32_t width[4]) {
  uint64_t fits = 0;
  for (int k = 0; k < 4; ++k) fits |= ((uint64_t{1} << width[k]) - 1) << (16 * k);
  const uint64_t full = W / 8 * 8;
  const __mmask8 tail = static_cast<__mmask8>((1u << (W - full)) - 1);
  __m512i seen = _mm512_setzero_si512();
  for (uint64_t w = 0; w < full; w += 8) seen = _mm512_or_si512(seen, _mm512_loadu_si512(row + w * 8));
  seen = _mm512_or_si512(seen, masked::_mm512_maskz_loadu_epi64(tail, row + full * 8));
  if (_mm512_test_epi64_mask(seen, _mm512_set1_epi64(static_cast<int64_t>(~fits)))) return false;
  const FieldShifts f = field_shifts(shift);
  for (uint64_t w = 0; w < full; w += 8) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(line + w * 4),
                        _mm512_cvtepi64_epi32(fields_of(_mm512_loadu_si512(row + w * 8), f)));
  }
  if (tail) _mm512_mask_cvtepi64_storeu_epi32(line + full * 4, tail, fields_of(masked::_mm512_maskz_loadu_epi64(tail, row + full * 8), f));
  return true;
}

LC_AVX512 void pixel_fields_unpack_line_avx512(const uint8_t* line, uint8_t* row, uint64_t W, const uint32_t shift[4],
                                               const uint32_t width[4]) {
  __m512i mask[4];
  for (int k = 0; k < 4; ++k) mask[k] = _mm512_set1_epi64(static_cast<int64_t>((uint64_t{1} << width[k]) - 1));
  const FieldShifts f = field_shifts(shift);
  const uint64_t full = W / 8 * 8;
  for (uint64_t w = 0; w < full; w += 8) {
    _mm512_storeu_si512(row + w * 8,
                        components_of(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(line + w * 4)), f, mask));
  }
  const __mmask8 tail = static_cast<__mmask8>((1u << (W - full)) - 1);
  if (tail) masked::_mm512_mask_storeu_epi64(row + full * 8, tail, components_of(masked::_mm256_maskz_loadu_epi32(tail, line + full * 4), f, mask));
}

// The same with AVX2, four pixels a register: eight pixels' 64-bit lanes
// narrowed to words by one dword shuffle of the two registers and one qword
// permute, words widened by zero extension. A last partial group of pixels
// goes through a block of 8 zero pixels (zero fits every field). (Measured
// on a Zen 5 capped at AVX2, 1080 x 1920 A2B10G10R10, pack / unpack: the
// portable lines 0.22 / 0.29 of memcpy, these 0.53 / 0.97.)
namespace {

#define LC_FIELDS_AVX2 __attribute__((target("avx2")))
#define LC_FIELDS_AVX2_INLINE __attribute__((target("avx2"), always_inline)) inline

struct FieldShiftsAvx2 {
  __m128i s[4];
  __m256i mask[4];  // unpacking: the fields' widths
};

LC_FIELDS_AVX2 FieldShiftsAvx2 field_shifts_avx2(const uint32_t shift[4], const uint32_t width[4]) {
  FieldShiftsAvx2 f;
  for (int k = 0; k < 4; ++k) {
    f.s[k] = _mm_cvtsi32_si128(static_cast<int>(shift[k]));
    f.mask[k] = _mm256_set1_epi64x(static_cast<int64_t>((uint64_t{1} << width[k]) - 1));
  }
  return f;
}

LC_FIELDS_AVX2_INLINE __m256i fields_of_avx2(__m256i v, const FieldShiftsAvx2& f) {
  const __m256i m16 = _mm256_set1_epi64x(0xFFFF);
  const __m256i c0 = _mm256_sll_epi64(_mm256_and_si256(v, m16), f.s[0]);
  const __m256i c1 = _mm256_sll_epi64(_mm256_and_si256(_mm256_srli_epi64(v, 16), m16), f.s[1]);
  const __m256i c2 = _mm256_sll_epi64(_mm256_and_si256(_mm256_srli_epi64(v, 32), m16), f.s[2]);
  const __m256i c3 = _mm256_sll_epi64(_mm256_srli_epi64(v, 48), f.s[3]);
  return _mm256_or_si256(_mm256_or_si256(c0, c1), _mm256_or_si256(c2, c3));
}

LC_FIELDS_AVX2_INLINE __m256i components_of_avx2(__m128i words, const FieldShiftsAvx2& f) {
  const __m256i x = _mm256_cvtepu32_epi64(words);
  const __m256i c0 = _mm256_and_si256(_mm256_srl_epi64(x, f.s[0]), f.mask[0]);
  const __m256i c1 = _mm256_slli_epi64(_mm256_and_si256(_mm256_srl_epi64(x, f.s[1]), f.mask[1]), 16);
  const __m256i c2 = _mm256_slli_epi64(_mm256_and_si256(_mm256_srl_epi64(x, f.s[2]), f.mask[2]), 32);
  const __m256i c3 = _mm256_slli_epi64(_mm256_and_si256(_mm256_srl_epi64(x, f.s[3]), f.mask[3]), 48);
  return _mm256_or_si256(_mm256_or_si256(c0, c1), _mm256_or_si256(c2, c3));
}

// Eight pixels (64 bytes) -> eight words (32 bytes).
LC_FIELDS_AVX2_INLINE void pack8_avx2(const uint8_t* row, uint8_t* line, const FieldShiftsAvx2& f) {
  const __m256i a = fields_of_avx2(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row)), f);
  const __m256i b = fields_of_avx2(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 32)), f);
  // Low dwords: pixels 0 1 4 5 | 2 3 6 7, then in order.
  const __m256 lows = _mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), _MM_SHUFFLE(2, 0, 2, 0));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(line),
                      _mm256_permute4x64_epi64(_mm256_castps_si256(lows), _MM_SHUFFLE(3, 1, 2, 0)));
}

LC_FIELDS_AVX2_INLINE void unpack8_avx2(const uint8_t* line, uint8_t* row, const FieldShiftsAvx2& f) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(row),
                      components_of_avx2(_mm_loadu_si128(reinterpret_cast<const __m128i*>(line)), f));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + 32),
                      components_of_avx2(_mm_loadu_si128(reinterpret_cast<const __m128i*>(line + 16)), f));
}

}  // namespace

LC_FIELDS_AVX2 bool pixel_fields_pack_line_avx2(const uint8_t* row, uint8_t* line, uint64_t W, const uint32_t shift[4],
                                                const uint32_t width[4]) {
  uint64_t fits = 0;
  for (int k = 0; k < 4; ++k) fits |= ((uint64_t{1} << width[k]) - 1) << (16 * k);
  const uint64_t full = W / 8 * 8, rest = W - full;
  alignas(32) uint8_t last[64] = {}, words[32];
  std::memcpy(last, row + full * 8, rest * 8);
  __m256i seen = _mm256_or_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(last)),
                                 _mm256_load_si256(reinterpret_cast<const __m256i*>(last + 32)));
  for (uint64_t w = 0; w < full; w += 4) {
    seen = _mm256_or_si256(seen, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + w * 8)));
  }
  if (!_mm256_testz_si256(seen, _mm256_set1_epi64x(static_cast<int64_t>(~fits)))) return false;
  const FieldShiftsAvx2 f = field_shifts_avx2(shift, width);
  for (uint64_t w = 0; w < full; w += 8) pack8_avx2(row + w * 8, line + w * 4, f);
  if (rest) {
    pack8_avx2(last, words, f);
    std::memcpy(line + full * 4, words, rest * 4);
  }
  return true;
}

LC_FIELDS_AVX2 void pixel_fields_unpack_line_avx2(const uint8_t* line, uint8_t* row, uint64_t W,
                                                  const uint32_t shift[4], const uint32_t width[4]) {
  const FieldShiftsAvx2 f = field_shifts_avx2(shift, width);
  const uint64_t full = W / 8 * 8, rest = W - full;
  for (uint64_t w = 0; w < full; w += 8) unpack8_avx2(line + w * 4, row + w * 8, f);
  if (rest == 0) return;
  alignas(32) uint8_t words[32] = {}, last[64];
  std::memcpy(words, line + full * 4, rest * 4);
  unpack8_avx2(words, last, f);
  std::memcpy(row + full * 8, last, rest * 8);
}

// ---- 8-bit semi-planar lines ----
//
// 64 pixels are 192 logical bytes (three vectors; pixel i at 3i: Y, first,
// second chroma) and 64 Y bytes plus 128 chroma bytes (pixel i's pair at 2i:
// second, first). Each output vector draws on at most three inputs: a
// two-table permute of the two it needs most, and, where a third is needed,
// a merge-masked one-table permute for the rest.
namespace {

#define LC_AVX512_VBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")))

struct SemiPlanarTables {
  // [output vector]: index into (first, second) input, index into the third,
  // and the output bytes that come from the third.
  alignas(64) uint8_t pack2[3][64], pack1[3][64];
  alignas(64) uint8_t unpack2[3][64], unpack1[3][64];
  __mmask64 pack_third[3], unpack_third[3];
};

// The input vector (0..2) and byte feeding byte e of output vector v.
struct Source {
  unsigned vec, byte;
};

const SemiPlanarTables& semi_planar_tables() {
  static const SemiPlanarTables t = [] {
    SemiPlanarTables s{};
    // Pack: outputs Y, UV 0-63, UV 64-127 from logical vectors 0..2; the
    // two-table inputs are (0, 1), (0, 1), (1, 2).
    // Unpack: logical vectors 0..2 from Y, UV 0-63, UV 64-127; the two-table
    // inputs are (Y, UV0), (Y, UV0), (Y, UV1).
    const unsigned pack_pair[3][2] = {{0, 1}, {0, 1}, {1, 2}}, unpack_pair[3][2] = {{0, 1}, {0, 1}, {0, 2}};
    for (unsigned v = 0; v < 3; ++v) {
      for (unsigned e = 0; e < 64; ++e) {
        // Pack: output v byte e.
        unsigned q = 0;  // logical byte
        if (v == 0) q = 3 * e;
        else {
          const unsigned b = 64 * (v - 1) + e, i = b / 2;  // chroma byte b of pixel i
          q = 3 * i + (b % 2 ? 1 : 2);
        }
        Source src{q / 64, q % 64};
        if (src.vec == pack_pair[v][0]) s.pack2[v][e] = static_cast<uint8_t>(src.byte);
        else if (src.vec == pack_pair[v][1]) s.pack2[v][e] = static_cast<uint8_t>(64 + src.byte);
        else s.pack1[v][e] = static_cast<uint8_t>(src.byte), s.pack_third[v] |= __mmask64{1} << e;
        // Unpack: logical byte 64v + e of pixel i.
        const unsigned l = 64 * v + e, i = l / 3, r = l % 3;
        const unsigned b = r == 0 ? i : r == 1 ? 2 * i + 1 : 2 * i;  // byte of Y (r == 0) or of UV
        src = r == 0 ? Source{0, b} : Source{1 + b / 64, b % 64};
        if (src.vec == unpack_pair[v][0]) s.unpack2[v][e] = static_cast<uint8_t>(src.byte);
        else if (src.vec == unpack_pair[v][1]) s.unpack2[v][e] = static_cast<uint8_t>(64 + src.byte);
        else s.unpack1[v][e] = static_cast<uint8_t>(src.byte), s.unpack_third[v] |= __mmask64{1} << e;
      }
    }
    return s;
  }();
  return t;
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"), always_inline)) inline __m512i
from3(const SemiPlanarTables& t, bool pack, unsigned v, __m512i a, __m512i b, __m512i third) {
  const uint8_t* two = pack ? t.pack2[v] : t.unpack2[v];
  const uint8_t* one = pack ? t.pack1[v] : t.unpack1[v];
  const __mmask64 m = pack ? t.pack_third[v] : t.unpack_third[v];
  const __m512i r = _mm512_permutex2var_epi8(a, _mm512_load_si512(two), b);
  return m ? _mm512_mask_permutexvar_epi8(r, m, _mm512_load_si512(one), third) : r;
}

// The first n (<= 64, or none when n is "negative") bytes.
inline __mmask64 first_bytes(uint64_t n) { return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1; }
inline uint64_t past(uint64_t n, uint64_t start) { return n > start ? n - start : 0; }

}  // namespace

LC_AVX512_VBMI void semi_planar_pack_line_vbmi(const uint8_t* logical, uint8_t* y, uint8_t* uv, uint64_t W) {
  const SemiPlanarTables& t = semi_planar_tables();
  uint64_t w = 0;
  for (; w + 64 <= W; w += 64) {
    const uint8_t* in = logical + 3 * w;
    const __m512i l0 = _mm512_loadu_si512(in), l1 = _mm512_loadu_si512(in + 64), l2 = _mm512_loadu_si512(in + 128);
    _mm512_storeu_si512(y + w, from3(t, true, 0, l0, l1, l2));
    _mm512_storeu_si512(uv + 2 * w, from3(t, true, 1, l0, l1, l2));
    _mm512_storeu_si512(uv + 2 * w + 64, from3(t, true, 2, l1, l2, l0));
  }
  if (w == W) return;
  const uint64_t n = W - w, bytes = 3 * n;
  const uint8_t* in = logical + 3 * w;
  const __m512i l0 = masked::_mm512_maskz_loadu_epi8(first_bytes(bytes), in);
  const __m512i l1 = masked::_mm512_maskz_loadu_epi8(first_bytes(past(bytes, 64)), in + 64);
  const __m512i l2 = masked::_mm512_maskz_loadu_epi8(first_bytes(past(bytes, 128)), in + 128);
  masked::_mm512_mask_storeu_epi8(y + w, first_bytes(n), from3(t, true, 0, l0, l1, l2));
  masked::_mm512_mask_storeu_epi8(uv + 2 * w, first_bytes(2 * n), from3(t, true, 1, l0, l1, l2));
  masked::_mm512_mask_storeu_epi8(uv + 2 * w + 64, first_bytes(past(2 * n, 64)), from3(t, true, 2, l1, l2, l0));
}

LC_AVX512_VBMI void semi_planar_unpack_line_vbmi(const uint8_t* y, const uint8_t* uv, uint8_t* logical, uint64_t W) {
  const SemiPlanarTables& t = semi_planar_tables();
  uint64_t w = 0;
  for (; w + 64 <= W; w += 64) {
    const __m512i y0 = _mm512_loadu_si512(y + w), c0 = _mm512_loadu_si512(uv + 2 * w),
                  c1 = _mm512_loadu_si512(uv + 2 * w + 64);
    uint8_t* out = logical + 3 * w;
    _mm512_storeu_si512(out, from3(t, false, 0, y0, c0, c1));
    _mm512_storeu_si512(out + 64, from3(t, false, 1, y0, c0, c1));
    _mm512_storeu_si512(out + 128, from3(t, false, 2, y0, c1, c0));
  }
  if (w == W) return;
  const uint64_t n = W - w, bytes = 3 * n;
  const __m512i y0 = masked::_mm512_maskz_loadu_epi8(first_bytes(n), y + w);
  const __m512i c0 = masked::_mm512_maskz_loadu_epi8(first_bytes(2 * n), uv + 2 * w);
  const __m512i c1 = masked::_mm512_maskz_loadu_epi8(first_bytes(past(2 * n, 64)), uv + 2 * w + 64);
  uint8_t* out = logical + 3 * w;
  masked::_mm512_mask_storeu_epi8(out, first_bytes(bytes), from3(t, false, 0, y0, c0, c1));
  masked::_mm512_mask_storeu_epi8(out + 64, first_bytes(past(bytes, 64)), from3(t, false, 1, y0, c0, c1));
  masked::_mm512_mask_storeu_epi8(out + 128, first_bytes(past(bytes, 128)), from3(t, false, 2, y0, c1, c0));
}

#else

bool feature_copy_avx512(const FeatureGeometry&, const uint8_t*, uint8_t*, bool) { return false; }

#endif

}  // namespace layoutcheck::nvdla_simd
