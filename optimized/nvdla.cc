// Fast pack/unpack for the NVDLA feature and weight formats.
//
// Why it equals the reference:
// - Feature data: for one surface s and line h, the physical line is W atoms of
//   32 bytes, atom w holding channels s*C'..s*C'+C'-1 at (h, w). The logical
//   rows of those channels at line h are W contiguous elements each, so the
//   line is the transpose of a C' x W block. Full blocks go through SSE2 tile
//   transposes (16x16 bytes, or 8x8 16-bit words); edges and the partial last
//   surface go element by element. Every byte of a line that holds no element
//   (channel padding, line gap) and every surface gap is written 0.
// - Weights: group g starts at g * 32|16 * C*H*W elements; inside it, channel
//   block cc (64 wide, or what is left of C) starts after the full blocks, and
//   the run of cw channels of kernel k at (h, w) is contiguous physically and
//   strided by H*W logically: a strided gather (a memcpy when H*W == 1).
#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>

#include "optimized/masked.h"
#endif

#include <atomic>

#include "core/case_cache.h"
#include "layoutcheck/checked.h"
#include "optimized/byte_transpose.h"
#include "optimized/families.h"
#include "optimized/isa.h"
#include "optimized/nvdla_feature_simd.h"
#include "optimized/lane_interleave.h"
#include "optimized/plane_transpose.h"
#include "optimized/stream_run.h"
#include "optimized/nvdla_weight_simd.h"
#include "optimized/threads.h"

// gcc 12 warns inside avx512fintrin.h, whose _mm512_undefined_* helpers read an
// uninitialized variable on purpose (a false positive for every intrinsic using them).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// The tile transposes below keep their rows in registers only when their
// loops are unrolled, which -O2 does not do by itself.
#define LC_UNROLL _Pragma("GCC unroll 16")

namespace layoutcheck {
namespace {

std::string str(uint64_t v) { return std::to_string(v); }

constexpr uint64_t kAtom = 32;
constexpr uint64_t kMaxBytes = uint64_t{1} << 60;  // bit offsets must fit in 64 bits

uint64_t up32(uint64_t v) { return v / 32 * 32 + (v % 32 ? 32 : 0); }

struct FeaturePlan {
  uint64_t C = 0, H = 0, W = 0, eb = 1, per_atom = 32, surfaces = 0, ls = 0, ss = 0, size = 0, addr = 0;
};

struct WeightPlan {
  uint64_t K = 0, C = 0, H = 0, W = 0, eb = 1, group = 32, groups = 0, data = 0, size = 0, addr = 0;
  bool image = false;
  uint64_t ext = 1, wc = 0, lines = 0, width = 0;  // image: W*C, ceil(H/ext), ext*W*C
};

Status precision_ok(DType t) {
  if (t == DType::kInt8 || t == DType::kInt16 || t == DType::kFp16) return Status();
  return Status::invalid(std::string(dtype_name(t)) + " is not an NVDLA precision (int8, int16, fp16)");
}

Result<FeaturePlan> feature_plan(const Case& c) {
  LC_RETURN_IF_ERROR(precision_ok(c.dtype));
  FeaturePlan p;
  p.C = c.shape[0], p.H = c.shape[1], p.W = c.shape[2];
  p.eb = dtype_bits(c.dtype) / 8;
  p.per_atom = kAtom / p.eb;
  p.surfaces = (p.C + p.per_atom - 1) / p.per_atom;
  p.addr = c.layout.get_int("addr");
  if (p.addr % kAtom) return Status::invalid("feature start address " + str(p.addr) + " is not 32-byte aligned");
  uint64_t line = 0, surface = 0;
  if (!checked_mul(p.W, kAtom, &line)) return Status::invalid("feature line overflows");
  p.ls = c.layout.get_int("line_stride");
  if (p.ls == 0) p.ls = line;
  if (p.ls % kAtom || p.ls < line) return Status::invalid("feature line stride " + str(p.ls) + " unusable for W=" + str(p.W));
  if (!checked_mul(p.H, p.ls, &surface)) return Status::invalid("feature surface overflows");
  p.ss = c.layout.get_int("surface_stride");
  if (p.ss == 0) p.ss = surface;
  if (p.ss % kAtom || p.ss < surface) {
    return Status::invalid("feature surface stride " + str(p.ss) + " unusable for H=" + str(p.H));
  }
  if (!checked_mul(p.surfaces, p.ss, &p.size) || p.size > kMaxBytes) return Status::invalid("feature size overflows");
  return p;
}

Result<WeightPlan> weight_plan(const Case& c) {
  LC_RETURN_IF_ERROR(precision_ok(c.dtype));
  WeightPlan p;
  p.K = c.shape[0], p.C = c.shape[1], p.H = c.shape[2], p.W = c.shape[3];
  p.eb = dtype_bits(c.dtype) / 8;
  p.group = p.eb == 1 ? 32 : 16;
  p.groups = (p.K + p.group - 1) / p.group;
  p.addr = c.layout.get_int("addr");
  if (p.addr % 256) return Status::invalid("weight start address " + str(p.addr) + " is not 256-byte aligned");
  p.image = c.layout.name == "nvdla.weight.image";
  p.ext = c.layout.get_int("post_extension");
  if (!p.image && p.ext != 1) return Status::invalid("DC weights take no post-extension");
  if (p.image) {
    if (p.ext == 3 || p.ext > 4) return Status::invalid("post-extension is 1, 2 or 4 lines, not " + str(p.ext));
    if (!checked_mul(p.W, p.C, &p.wc)) return Status::invalid("W*C overflows");
    if ((p.ext == 2 && p.wc > 32) || (p.ext == 4 && p.wc > 16)) {
      return Status::invalid("post-extension " + str(p.ext) + " with W*C = " + str(p.wc) + " channels");
    }
    p.lines = (p.H + p.ext - 1) / p.ext;
    p.width = p.ext * p.wc;
  }
  Checked data = Checked(p.K) * p.C * p.H * p.W * p.eb;
  Checked size = Checked(data.value() / 128 + (data.value() % 128 != 0)) * 128;
  if (!data.ok() || !size.ok() || size.value() > kMaxBytes) return Status::invalid("weight size overflows");
  p.data = data.value();
  p.size = size.value();
  return p;
}

// ---- feature transposes -------------------------------------------------------

// One element of 1, 2 or 4 bytes, with a constant-size copy for each width.
inline void copy_element(uint8_t* dst, const uint8_t* src, uint64_t bytes) {
  if (bytes == 1) *dst = *src;
  else if (bytes == 2) std::memcpy(dst, src, 2);
  else std::memcpy(dst, src, 4);
}

// dst rows of `dst_pitch` bytes, src rows of `src_pitch` bytes; n x m elements
// of `eb` bytes: dst[j][i] = src[i][j].
void transpose_scalar(const uint8_t* src, uint64_t src_pitch, uint8_t* dst, uint64_t dst_pitch, uint64_t rows,
                      uint64_t cols, uint64_t eb) {
  if (eb == 1) {
    for (uint64_t i = 0; i < rows; ++i) {
      const uint8_t* s = src + i * src_pitch;
      for (uint64_t j = 0; j < cols; ++j) dst[j * dst_pitch + i] = s[j];
    }
    return;
  }
  for (uint64_t i = 0; i < rows; ++i) {
    const uint8_t* s = src + i * src_pitch;
    for (uint64_t j = 0; j < cols; ++j) copy_element(dst + j * dst_pitch + eb * i, s + eb * j, eb);
  }
}

#if defined(__SSE2__)
// 16x16 bytes: dst row j = byte j of the 16 src rows.
inline void transpose16x16_u8(const uint8_t* src, uint64_t sp, uint8_t* dst, uint64_t dp) {
  __m128i r[16];
  LC_UNROLL
  for (int i = 0; i < 16; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * sp));
  byte_transpose::transpose16x16_epi8(r);
  LC_UNROLL
  for (int j = 0; j < 16; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j * dp), r[j]);
}

// 8x8 16-bit words: dst row j = word j of the 8 src rows.
inline void transpose8x8_u16(const uint8_t* src, uint64_t sp, uint8_t* dst, uint64_t dp) {
  __m128i r[8];
  LC_UNROLL
  for (int i = 0; i < 8; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * sp));
  byte_transpose::transpose8x8_epi16(r, r);
  LC_UNROLL
  for (int j = 0; j < 8; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j * dp), r[j]);
}

// 4x4 32-bit words.
inline void transpose4x4_u32(const uint8_t* src, uint64_t sp, uint8_t* dst, uint64_t dp) {
  __m128i r[4];
  LC_UNROLL
  for (int i = 0; i < 4; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * sp));
  const __m128i a0 = _mm_unpacklo_epi32(r[0], r[1]), a1 = _mm_unpackhi_epi32(r[0], r[1]);
  const __m128i a2 = _mm_unpacklo_epi32(r[2], r[3]), a3 = _mm_unpackhi_epi32(r[2], r[3]);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_unpacklo_epi64(a0, a2));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + dp), _mm_unpackhi_epi64(a0, a2));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * dp), _mm_unpacklo_epi64(a1, a3));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 3 * dp), _mm_unpackhi_epi64(a1, a3));
}

#endif

// Transposes a rows x cols block of eb-byte elements (rows <= 32 bytes worth).
void transpose_block(const uint8_t* src, uint64_t sp, uint8_t* dst, uint64_t dp, uint64_t rows, uint64_t cols,
                     uint64_t eb) {
#if defined(__SSE2__)
  if (eb > 4) {
    transpose_scalar(src, sp, dst, dp, rows, cols, eb);
    return;
  }
  const uint64_t tile = eb == 1 ? 16 : eb == 2 ? 8 : 4;  // elements per tile side
  const uint64_t full_rows = rows / tile * tile, full_cols = cols / tile * tile;
  auto tile_at = [&](uint64_t i, uint64_t j) {
    const uint8_t* s = src + i * sp + j * eb;
    uint8_t* d = dst + j * dp + i * eb;
    if (eb == 1) transpose16x16_u8(s, sp, d, dp);
    else if (eb == 2) transpose8x8_u16(s, sp, d, dp);
    else transpose4x4_u32(s, sp, d, dp);
  };
  if (dp == kAtom || sp == kAtom) {
    // Packing into atoms: finish every atom (all row tiles) before the next
    // column tile, so each 32-byte atom is written whole. Unpacking a line of
    // atoms: one channel tile along the whole line at a time, so 16 (8)
    // logical rows are written at once rather than 32 (16); the line stays in L1.
    for (uint64_t j = 0; j < full_cols; j += tile) {
      for (uint64_t i = 0; i < full_rows; i += tile) tile_at(i, j);
    }
    if (full_cols < cols) {
      transpose_scalar(src + full_cols * eb, sp, dst + full_cols * dp, dp, full_rows, cols - full_cols, eb);
    }
    if (full_rows < rows) {
      transpose_scalar(src + full_rows * sp, sp, dst + full_rows * eb, dp, rows - full_rows, cols, eb);
    }
    return;
  }
  for (uint64_t i = 0; i < full_rows; i += tile) {
    for (uint64_t j = 0; j < full_cols; j += tile) tile_at(i, j);
    if (full_cols < cols) {
      transpose_scalar(src + i * sp + full_cols * eb, sp, dst + full_cols * dp + i * eb, dp, tile, cols - full_cols, eb);
    }
  }
  if (full_rows < rows) {
    transpose_scalar(src + full_rows * sp, sp, dst + full_rows * eb, dp, rows - full_rows, cols, eb);
  }
#else
  transpose_scalar(src, sp, dst, dp, rows, cols, eb);
#endif
}

// ---- AVX2 transposes (chosen at run time; the SSE2/scalar path stays) -------------

bool has_avx2() { return isa_at_least(Isa::kAvx2); }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LC_NVDLA_AVX2 1
// kStream: 32-byte stores non-temporal (dst 32-byte aligned, dp a multiple of 32).
template <bool kStream>
__attribute__((target("avx2"), always_inline)) inline void store_row_avx2(uint8_t* at, __m256i v) {
  if (kStream) _mm256_stream_si256(reinterpret_cast<__m256i*>(at), v);
  else _mm256_storeu_si256(reinterpret_cast<__m256i*>(at), v);
}

// Zeroes n bytes at `at` (both multiples of 32) with non-temporal stores: the
// gaps between streamed lines, whose cache lines the lines' atoms share.
__attribute__((target("avx2"))) void stream_zero_avx2(uint8_t* at, uint64_t n) {
  for (uint64_t k = 0; k < n; k += 32) _mm256_stream_si256(reinterpret_cast<__m256i*>(at + k), _mm256_setzero_si256());
}

// 32 x 32 bytes: dst row j = byte j of the 32 src rows (its own inverse).
// Rows 0-15 and 16-31 are transposed per lane; lane 0 of both holds columns
// 0-15, lane 1 columns 16-31, so a 128-bit lane swap joins each output row.
template <bool kStream>
__attribute__((target("avx2"))) void transpose32x32_u8_avx2(const uint8_t* src, uint64_t sp, uint8_t* dst,
                                                            uint64_t dp) {
  __m256i a[16], b[16];
  LC_UNROLL
  for (int i = 0; i < 16; ++i) {
    a[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i * sp));
    b[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + (i + 16) * sp));
  }
  byte_transpose::transpose16x16_epi8_x2(a);
  byte_transpose::transpose16x16_epi8_x2(b);
  LC_UNROLL
  for (int j = 0; j < 16; ++j) {
    store_row_avx2<kStream>(dst + j * dp, _mm256_permute2x128_si256(a[j], b[j], 0x20));
    store_row_avx2<kStream>(dst + (j + 16) * dp, _mm256_permute2x128_si256(a[j], b[j], 0x31));
  }
}

// Per lane: 8 rows of 8 16-bit words -> 8 columns.
__attribute__((target("avx2"), always_inline)) inline void transpose_u16_per_lane(const __m256i* r, __m256i* d) {
  __m256i a[8], b[8];
  LC_UNROLL
  for (int i = 0; i < 4; ++i) {
    a[2 * i] = _mm256_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm256_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
  }
  LC_UNROLL
  for (int i = 0; i < 2; ++i) {
    LC_UNROLL
    for (int j = 0; j < 2; ++j) {
      b[4 * i + 2 * j] = _mm256_unpacklo_epi32(a[4 * i + j], a[4 * i + j + 2]);
      b[4 * i + 2 * j + 1] = _mm256_unpackhi_epi32(a[4 * i + j], a[4 * i + j + 2]);
    }
  }
  LC_UNROLL
  for (int j = 0; j < 4; ++j) {
    d[2 * j] = _mm256_unpacklo_epi64(b[j], b[j + 4]);
    d[2 * j + 1] = _mm256_unpackhi_epi64(b[j], b[j + 4]);
  }
}

// 16 x 16 16-bit words (32-byte rows): its own inverse, like the byte version.
template <bool kStream>
__attribute__((target("avx2"))) void transpose16x16_u16_avx2(const uint8_t* src, uint64_t sp, uint8_t* dst,
                                                             uint64_t dp) {
  __m256i r[16], t[8], u[8];
  LC_UNROLL
  for (int i = 0; i < 16; ++i) r[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i * sp));
  transpose_u16_per_lane(r, t);
  transpose_u16_per_lane(r + 8, u);
  LC_UNROLL
  for (int j = 0; j < 8; ++j) {
    store_row_avx2<kStream>(dst + j * dp, _mm256_permute2x128_si256(t[j], u[j], 0x20));
    store_row_avx2<kStream>(dst + (j + 8) * dp, _mm256_permute2x128_si256(t[j], u[j], 0x31));
  }
}
#endif

#if defined(LC_NVDLA_AVX2)
// 16 x 16 32-bit elements (64-byte rows): its own inverse.
__attribute__((target("avx512f"))) void transpose16x16_u32_avx512(const uint8_t* src, uint64_t sp, uint8_t* dst,
                                                                 uint64_t dp) {
  __m512i r[16];
  LC_UNROLL
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_si512(src + i * sp);
  byte_transpose::transpose16x16_epi32(r);
  LC_UNROLL
  for (int j = 0; j < 16; ++j) _mm512_storeu_si512(dst + j * dp, r[j]);
}
#endif

// Transposes a rows x cols block of eb-byte elements where one side is a
// whole atom (rows or cols == atom / eb): dst row j = element j of every src
// row. Whole squares go through registers when the CPU has them: 32 x 32
// bytes and 16 x 16 words of 32-byte atoms (AVX2), 16 x 16 32-bit elements
// of 64-byte atoms (AVX-512: SDP data of two 16-bit components).
void transpose_atoms(const uint8_t* src, uint64_t sp, uint8_t* dst, uint64_t dp, uint64_t rows, uint64_t cols,
                     uint64_t eb, bool stream = false) {
#if defined(LC_NVDLA_AVX2)
  const bool words = has_avx2() && (eb == 1 || eb == 2) && (sp == kAtom || dp == kAtom);
  const bool dwords = eb == 4 && isa_at_least(Isa::kAvx512) && (sp == 2 * kAtom || dp == 2 * kAtom);
  if (words || dwords) {
    const uint64_t square = (dwords ? 2 * kAtom : kAtom) / eb;  // elements per side
    stream = stream && !dwords && reinterpret_cast<uintptr_t>(dst) % kAtom == 0 && dp % kAtom == 0;
    auto square_at = [&](const uint8_t* s, uint8_t* d) {
      if (eb == 1 && stream) transpose32x32_u8_avx2<true>(s, sp, d, dp);
      else if (eb == 1) transpose32x32_u8_avx2<false>(s, sp, d, dp);
      else if (eb == 2 && stream) transpose16x16_u16_avx2<true>(s, sp, d, dp);
      else if (eb == 2) transpose16x16_u16_avx2<false>(s, sp, d, dp);
      else transpose16x16_u32_avx512(s, sp, d, dp);
    };
    uint64_t done = 0;
    if (rows == square) {  // channel rows -> atoms
      for (; done + square <= cols; done += square) square_at(src + done * eb, dst + done * dp);
      if (done < cols) transpose_block(src + done * eb, sp, dst + done * dp, dp, rows, cols - done, eb);
      return;
    }
    if (cols == square) {  // atoms -> channel rows
      for (; done + square <= rows; done += square) square_at(src + done * sp, dst + done * eb);
      if (done < rows) transpose_block(src + done * sp, sp, dst + done * eb, dp, rows - done, cols, eb);
      return;
    }
  }
#else
  (void)stream;  // the plain transposes store as they go
#endif
  transpose_block(src, sp, dst, dp, rows, cols, eb);
}

#if defined(LC_NVDLA_AVX2)
#define LC_NVDLA_STREAMS 1
#else
#define LC_NVDLA_STREAMS 0
#endif

// Elements per staged chunk of a line: the channel rows of one surface and up
// to this many columns sit in a buffer of at most 16 KiB, so the logical rows,
// a whole plane apart (and often on the same cache sets), are read (or
// written) with whole-line copies and the transpose runs in L1.
constexpr uint64_t kChunk = 256;
constexpr uint64_t kMaxAtom = 64;  // SDP: 16 elements of 2 components of 2 bytes

// Surfaces of lines of atoms: feature data (32-byte atoms) and per-element SDP
// data (atoms of E elements of P components). Element (c, h, w) of eb bytes is
// at c / rows * ss + h * ls + w * atom + c % rows * eb.
struct AtomLines {
  uint64_t C, H, W, eb, rows, atom, surfaces, ls, ss;
};

// Lines [begin, end) of the surfaces x H lines; pack: logical -> physical.
void atom_lines(const AtomLines& p, const uint8_t* src, uint8_t* dst, bool pack, uint64_t begin, uint64_t end) {
  const uint64_t row = p.W * p.eb, plane = p.H * row, line = p.W * p.atom, eb = p.eb, rows = p.rows;
  alignas(64) uint8_t staged[kMaxAtom * kChunk];
  // A pack of whole channel rows of 32-bit elements (SDP data of two 16-bit
  // components) with the 16 x 16 transposes of AVX-512 reads the rows straight:
  // each 64-byte piece is read once, so the stage would only add a copy
  // (measured on a Zen 4 with ew2 int16 64 x 128 x 128, medians of 7 runs:
  // 0.41 -> 0.58 of memcpy); AVX2's 8 x 8 squares likewise (the same capped
  // at AVX2, pinned, alternating, three pairs: 0.35-0.41 -> 0.50-0.55). The
  // unpack keeps the stage: 16 rows a plane apart written 64 bytes at a time
  // were slower (0.48 against 0.55).
  const bool direct_dwords = pack && eb == 4 && isa_at_least(Isa::kAvx2);
  // Tensors of kStreamingBytes or more: the atoms of the AVX2 squares packed
  // straight out with non-temporal stores, the unpacked rows leaving the stage
  // so, as the AVX-512 kernels do (the tensor's lines are not read before
  // they are written), and packing 8- and 16-bit rows, each row's chunk after
  // the next fetched into L2 as its chunk goes into the stage. Measured on a Zen 5
  // capped at AVX2, best of 7, pack / unpack, ratios to memcpy: 256 x 256 x
  // 256 int8 0.37 / 0.27 -> 0.57 / 0.63-0.67, 128 x 256 x 256 fp16 0.38 /
  // 0.34 -> 0.66-0.68 / 0.74 (0.45 / 0.67 and 0.55 / 0.74 streamed without
  // the fetches); uncapped, SDP ew2 int16 64 x 128 x 128 unpack 0.47-0.49 ->
  // 0.61-0.68. (The fetch went into L1 one chunk ahead before: measured on a
  // Zen 4 capped at AVX2, pinned, alternating, the pack's own time, 256 x 256
  // x 256 int8 1.10-1.99 -> 0.95-1.01 ms beside a memcpy of 0.87-1.0, 128 x
  // 256 x 256 fp16 0.91-1.24 -> 0.82-0.96; one chunk ahead into L2 par, two
  // into L1 0.97-1.09 for int8.)
  const bool stream = LC_NVDLA_STREAMS && has_avx2() && p.surfaces * p.ss >= nvdla_simd::kStreamingBytes;
  for (uint64_t i = begin; i < end; ++i) {
    const uint64_t s = i / p.H, h = i - s * p.H;
    const uint64_t c0 = s * rows, nc = std::min(rows, p.C - c0);
    const uint64_t phys_line = s * p.ss + h * p.ls, logical_line = c0 * plane + h * row;
    for (uint64_t w0 = 0; w0 < p.W; w0 += kChunk) {
      const uint64_t cw = std::min(kChunk, p.W - w0), pitch = cw * eb;
      if (direct_dwords && nc == rows) {
        transpose_atoms(src + logical_line + w0 * eb, plane, dst + phys_line + w0 * p.atom, p.atom, rows, cw, eb);
      } else if (pack) {
        for (uint64_t r = 0; r < nc; ++r) {
          const uint8_t* from = src + logical_line + r * plane + w0 * eb;
#if LC_NVDLA_STREAMS
          if (stream && eb <= 2) {  // the row's chunk (or line) after the next, into L2
            for (uint64_t k = 0; k < pitch; k += 64) _mm_prefetch(reinterpret_cast<const char*>(from + 2 * pitch + k), _MM_HINT_T1);  // mutate: equivalent (a prefetch: the same bytes)
          }
#endif
          std::memcpy(staged + r * pitch, from, pitch);
        }
        if (nc < rows) std::memset(staged + nc * pitch, 0, (rows - nc) * pitch);  // the atom's channel padding
        transpose_atoms(staged, pitch, dst + phys_line + w0 * p.atom, p.atom, rows, cw, eb, stream);
      } else {
        transpose_atoms(src + phys_line + w0 * p.atom, p.atom, staged, pitch, cw, rows, eb);
        for (uint64_t r = 0; r < nc; ++r) {
          uint8_t* to = dst + logical_line + r * plane + w0 * eb;
#if LC_NVDLA_STREAMS
          if (stream) {
            stream_run_avx2(to, staged + r * pitch, pitch);
            continue;
          }
#endif
          std::memcpy(to, staged + r * pitch, pitch);
        }
      }
    }
    if (!pack) continue;
    if (p.ls > line) {
      uint8_t* gap = dst + phys_line + line;
#if LC_NVDLA_STREAMS
      if (stream && (p.ls - line) % kAtom == 0 && reinterpret_cast<uintptr_t>(gap) % kAtom == 0) {
        stream_zero_avx2(gap, p.ls - line);
      } else
#endif
        std::memset(gap, 0, p.ls - line);
    }
    if (h + 1 == p.H && p.ss > p.H * p.ls) std::memset(dst + s * p.ss + p.H * p.ls, 0, p.ss - p.H * p.ls);
  }
#if LC_NVDLA_STREAMS
  if (stream) _mm_sfence();
#endif
}

// Lines without a gap between them make a surface one line of H x W atoms
// (position h * W + w, at h * ls + w * atom either way): a line of a small
// width is then no longer cut into chunks with a narrow last one, whose
// columns go through the blocks and element by element (measured on an Intel
// Xeon capped at AVX2, pinned, pack / unpack, ratios to memcpy: int8 64 x 56
// x 56 0.19 / 0.17 -> 0.47 / 0.43, fp16 100 x 30 x 30 0.18 / 0.18 -> 0.58 /
// 0.43, four batches of int8 64 x 28 x 28 0.09 / 0.08 -> 0.43 / 0.36).
void atom_copy(const AtomLines& lines, const uint8_t* src, uint8_t* dst, bool pack) {
  AtomLines p = lines;
  if (p.H > 1 && p.ls == p.W * p.atom) {
    p.W *= p.H;
    p.ls *= p.H;
    p.H = 1;
  }
  parallel_ranges(p.surfaces * p.H, p.surfaces * p.ss, [&](uint64_t begin, uint64_t end) {
    atom_lines(p, src, dst, pack, begin, end);
  });
}

AtomLines atom_lines_of(const FeaturePlan& p) { return {p.C, p.H, p.W, p.eb, p.per_atom, kAtom, p.surfaces, p.ls, p.ss}; }

void feature_pack(const FeaturePlan& p, const uint8_t* src, uint8_t* dst) {
  if (p.H == 1 && p.W == 1 && p.ss == kAtom) {
    // Surface-packed 1x1xC: the channels are one run, then the atom's padding.
    std::memcpy(dst, src, p.C * p.eb);
    std::memset(dst + p.C * p.eb, 0, p.size - p.C * p.eb);
    return;
  }
  if (p.H == 1 && p.W == 1) {
    // A 1x1xC cube: each surface holds C' consecutive channels, a plain copy.
    for (uint64_t s = 0; s < p.surfaces; ++s) {
      const uint64_t c0 = s * p.per_atom, nc = std::min(p.per_atom, p.C - c0);
      std::memcpy(dst + s * p.ss, src + c0 * p.eb, nc * p.eb);
      std::memset(dst + s * p.ss + nc * p.eb, 0, p.ss - nc * p.eb);
    }
    return;
  }
  if (nvdla_simd::feature_copy_avx512({p.C, p.H, p.W, p.eb, p.surfaces, p.ls, p.ss}, src, dst, true)) return;
  atom_copy(atom_lines_of(p), src, dst, true);
}

void feature_unpack(const FeaturePlan& p, const uint8_t* src, uint8_t* dst) {
  if (p.H == 1 && p.W == 1 && p.ss == kAtom) {
    std::memcpy(dst, src, p.C * p.eb);
    return;
  }
  if (p.H == 1 && p.W == 1) {
    for (uint64_t s = 0; s < p.surfaces; ++s) {
      const uint64_t c0 = s * p.per_atom;
      std::memcpy(dst + c0 * p.eb, src + s * p.ss, std::min(p.per_atom, p.C - c0) * p.eb);
    }
    return;
  }
  if (nvdla_simd::feature_copy_avx512({p.C, p.H, p.W, p.eb, p.surfaces, p.ls, p.ss}, src, dst, false)) return;
  atom_copy(atom_lines_of(p), src, dst, false);
}

// ---- weights -------------------------------------------------------------------

// int8 kernels of fewer than 16 positions (3x3, 1x3, ...): a kernel's cw
// channels are a dense cw x hw block, too narrow for whole 16x16 tiles. Each
// run of 16 channels (16 * hw contiguous bytes) is staged in a buffer padded
// to 16-byte rows, transposed by the 16x16 network, and the hw position rows
// of 16 channels written whole (pitch `dp`); a channel tail of fewer than 16
// goes element by element. Unpacking runs the same steps backwards.
#if defined(LC_NVDLA_AVX2)
// 32 channels at a time: channels c..c+15 in the low lanes, c+16..c+31 in the
// high lanes of one 16x16 byte transpose, so each position row of 32 channels
// is one store. Logical rows are read 16 bytes at a time (the bytes past hw
// are the next rows', never kept) while 16 bytes stay inside the `logical_end`
// bytes of the logical buffer; written ones (hw >= 8) overlap upwards, each
// row's extra bytes overwritten by the next rows, the last row written exactly.
// Returns the channels done.
__attribute__((target("avx2"))) uint64_t small_kernel_avx2(const uint8_t* logical_in, uint8_t* logical_out,
                                                           uint8_t* phys_out, const uint8_t* phys_in, uint64_t logical,
                                                           uint64_t physical, uint64_t dp, uint64_t cw, uint64_t hw,
                                                           bool to_physical, uint64_t logical_end) {
  uint64_t c = 0;
  if (!to_physical && hw < 8) return 0;  // the overlapping rows would run past the 32 channels
  for (; c + 32 <= cw; c += 32) {
    __m256i r[16];
    if (to_physical) {
      if (logical + (c + 31) * hw + 16 > logical_end) break;
      const uint8_t* src = logical_in + logical + c * hw;
      LC_UNROLL
      for (int i = 0; i < 16; ++i) {
        const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * hw));
        const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (i + 16) * hw));
        r[i] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
      }
      byte_transpose::transpose16x16_epi8_x2(r);
      LC_UNROLL
      for (int j = 0; j < 16; ++j) {
        if (static_cast<uint64_t>(j) < hw) {
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(phys_out + physical + j * dp + c), r[j]);
        }
      }
      continue;
    }
    LC_UNROLL
    for (int j = 0; j < 16; ++j) {
      r[j] = static_cast<uint64_t>(j) < hw
                 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(phys_in + physical + j * dp + c))
                 : _mm256_setzero_si256();
    }
    byte_transpose::transpose16x16_epi8_x2(r);
    uint8_t* dst = logical_out + logical + c * hw;
    LC_UNROLL
    for (int i = 0; i < 16; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i * hw), _mm256_castsi256_si128(r[i]));
    LC_UNROLL
    for (int i = 0; i < 15; ++i) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (i + 16) * hw), _mm256_extracti128_si256(r[i], 1));
    }
    alignas(16) uint8_t last[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(last), _mm256_extracti128_si256(r[15], 1));
    std::memcpy(dst + 31 * hw, last, hw);
  }
  return c;
}
#endif

void small_kernel_block(const uint8_t* logical_in, uint8_t* logical_out, uint8_t* phys_out, const uint8_t* phys_in,
                        uint64_t logical, uint64_t physical, uint64_t dp, uint64_t cw, uint64_t hw, bool to_physical,
                        uint64_t logical_end) {
  uint64_t c = 0;
#if defined(LC_NVDLA_AVX2)
  if (has_avx2()) c = small_kernel_avx2(logical_in, logical_out, phys_out, phys_in, logical, physical, dp, cw, hw,
                                        to_physical, logical_end);
#else
  (void)logical_end;
#endif
#if defined(__SSE2__)
  // Rows of hw bytes read (or written) 16 bytes at a time: the bytes past hw
  // belong to the next row, or to the zeroed slack at the end of the buffer,
  // and only land in output rows (or get overwritten by rows) that are not kept.
  alignas(16) uint8_t staged[16 * 16 + 16] = {}, out[16 * 16 + 16];
  for (; c + 16 <= cw; c += 16) {
    if (to_physical) {
      std::memcpy(staged, logical_in + logical + c * hw, 16 * hw);
      transpose16x16_u8(staged, hw, out, 16);
      for (uint64_t j = 0; j < hw; ++j) std::memcpy(phys_out + physical + j * dp + c, out + 16 * j, 16);
    } else {
      for (uint64_t j = 0; j < hw; ++j) std::memcpy(staged + 16 * j, phys_in + physical + j * dp + c, 16);
      transpose16x16_u8(staged, 16, out, hw);  // row i at i * hw; row i + 1 overwrites its tail
      std::memcpy(logical_out + logical + c * hw, out, 16 * hw);
    }
  }
#endif
  for (; c < cw; ++c) {
    for (uint64_t j = 0; j < hw; ++j) {
      if (to_physical) phys_out[physical + j * dp + c] = logical_in[logical + c * hw + j];
      else logical_out[logical + c * hw + j] = phys_in[physical + j * dp + c];
    }
  }
}

// 1x1 kernels: kernel k's channels c0..c0+cw-1 are one run both logically (at
// k*C + c0) and physically (at block_base + kk*cw), so a (group, channel block)
// is gk runs read (written) at a kernel's pitch and written (read) back to back.
// A whole block's run is 64 elements of kEb bytes, a copy of constant size that
// the compiler turns into vector moves; a channel tail's run is shorter.
template <uint64_t kEb>
void dc1x1_copy(const WeightPlan& p, const uint8_t* src, uint8_t* dst, bool to_physical) {
  constexpr uint64_t eb = kEb, kRun = 64 * kEb;
  const uint64_t pitch = p.C * eb;
  for (uint64_t g = 0; g < p.groups; ++g) {
    const uint64_t k0 = g * p.group, gk = std::min(p.group, p.K - k0);
    for (uint64_t c0 = 0; c0 < p.C; c0 += 64) {
      const uint64_t run = std::min<uint64_t>(64, p.C - c0) * eb;
      uint64_t logical = k0 * pitch + c0 * eb, physical = (k0 * p.C + c0 * gk) * eb;
      for (uint64_t kk = 0; kk < gk; ++kk, logical += pitch, physical += run) {
        uint8_t* d = dst + (to_physical ? physical : logical);
        const uint8_t* s = src + (to_physical ? logical : physical);
        if (run == kRun) std::memcpy(d, s, kRun);
        else std::memcpy(d, s, run);
      }
    }
  }
}

// A rows x cols block of eb-byte elements (1, 2 or 4) of at least a tile
// (16 x 16 bytes, 8 x 8 words, 4 x 4 words) both ways, all in tiles: the last
// tile of a row or column of tiles ends at the last element, overlapping the
// one before (its elements written again, the same), where transpose_block
// takes the edges element by element. src and dst must not overlap.
void transpose_tiles_overlapped(const uint8_t* src, uint64_t sp, uint8_t* dst, uint64_t dp, uint64_t rows,
                                uint64_t cols, uint64_t eb) {
#if defined(__SSE2__)
  const uint64_t tile = eb == 1 ? 16 : eb == 2 ? 8 : 4;
  if ((eb == 1 || eb == 2 || eb == 4) && rows >= tile && cols >= tile) {
    for (uint64_t i0 = 0; i0 < rows; i0 += tile) {
      const uint64_t i = std::min(i0, rows - tile);
      for (uint64_t j0 = 0; j0 < cols; j0 += tile) {
        const uint64_t j = std::min(j0, cols - tile);
        const uint8_t* t = src + i * sp + j * eb;
        uint8_t* d = dst + j * dp + i * eb;
        if (eb == 1) transpose16x16_u8(t, sp, d, dp);
        else if (eb == 2) transpose8x8_u16(t, sp, d, dp);
        else transpose4x4_u32(t, sp, d, dp);
      }
    }
    return;
  }
#endif
  transpose_block(src, sp, dst, dp, rows, cols, eb);
}

#if defined(LC_NVDLA_AVX2)
// dc_block_tiles' tiles two at a time, channel tiles i and i + t (t = 16
// bytes, 8 words) in the two lanes of each register: packing, each position's
// row of the pair is one 32-byte store, unpacking one 32-byte load (channel
// blocks of 2t or more; on a Zen 4 capped at AVX2, pinned, alternating, of
// memcpy, pack / unpack, against one tile at a time packing and kernel by
// kernel unpacking: 256 x 256 x 5 x 5 int8 0.23 / 0.29 -> 0.36 / 0.37, 4 x 4
// 0.34 / 0.39 -> 0.57 / 0.53, 7 x 7 0.20 / 0.25 -> 0.27 / 0.32, 128 x 128 x 5
// x 5 fp16 0.34 / 0.35 -> 0.41 / 0.39-0.42).
// With `place` (kPlaced), position j's run is at place[j] rather than j * run
// (deconvolution weights: each tap's run in its set).
template <uint64_t kE, bool kPack, bool kPlaced = false>
__attribute__((target("avx2"))) void dc_block_tile_pairs(const uint8_t* from_base, uint8_t* to_base, uint64_t kernel,
                                                         uint64_t gk, uint64_t cw, uint64_t hw, const uint64_t* place) {
  constexpr uint64_t t = 16 / kE;
  const uint64_t row = hw * kE, run = gk * cw * kE;
  for (uint64_t j0 = 0; j0 < hw; j0 += t) {
    const uint64_t j = std::min(j0, hw - t);
    uint64_t at[t];  // the tile's t positions' runs
    LC_UNROLL
    for (uint64_t c = 0; c < t; ++c) at[c] = kPlaced ? place[j + c] : (j + c) * run;
    for (uint64_t kk = 0; kk < gk; ++kk) {
      for (uint64_t i0 = 0; i0 < cw; i0 += 2 * t) {
        const uint64_t i = std::min(i0, cw - 2 * t);
        const uint64_t logical = kk * kernel + i * row + j * kE, physical = (kk * cw + i) * kE;
        const uint8_t* from = from_base + (kPack ? logical : physical);
        uint8_t* to = to_base + (kPack ? physical : logical);
        __m256i v[t], w[t];
        if (kPack) {  // channel rows r and r + t, t positions each, in the two lanes
          LC_UNROLL
          for (uint64_t r = 0; r < t; ++r) {
            const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + r * row));
            const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + (r + t) * row));
            v[r] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
          }
        } else {  // position rows of 2t channels
          LC_UNROLL
          for (uint64_t c = 0; c < t; ++c) v[c] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + at[c]));
        }
        if constexpr (kE == 1) {
          byte_transpose::transpose16x16_epi8_x2(v);
          std::copy(v, v + t, w);
        } else {
          byte_transpose::transpose8x8_epi16_x2(v, w);
        }
        if (kPack) {
          LC_UNROLL
          for (uint64_t c = 0; c < t; ++c) _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + at[c]), w[c]);
        } else {
          LC_UNROLL
          for (uint64_t r = 0; r < t; ++r) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(to + r * row), _mm256_castsi256_si128(w[r]));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(to + (r + t) * row), _mm256_extracti128_si256(w[r], 1));
          }
        }
      }
    }
  }
}
#endif

// A (group, channel block) of gk kernels of cw rows of hw elements, each
// position's gk * cw elements one physical run, from `from` to `to`, in tiles
// of eb-byte elements (16 x 16 bytes, 8 x 8 words), overlapped at the edges
// as in transpose_tiles_overlapped; position tiles outermost, so that the runs
// are written (read) in order across the kernels rather than kernel by kernel
// at the runs' pitch. With AVX2 and blocks of two tiles or more,
// dc_block_tile_pairs both ways; otherwise packing only (on a Zen 4 capped at
// AVX2, pinned, alternating, of memcpy, against kernel by kernel: 256 x 256 x
// 5 x 5 int8 0.17 -> 0.23, 128 x 128 x 5 x 5 fp16 0.20 -> 0.34, 256 x 256 x 7
// x 7 int8 0.13 -> 0.20; unpacking par or slower, 128 x 128 x 5 x 5 fp16
// 0.37-0.39 -> 0.33). False where it takes none of them.
// With `place`, position j's run is at place[j] (dc_block_tile_pairs), and
// only the pairs take it.
bool dc_block_tiles(const uint8_t* from, uint8_t* to, uint64_t kernel, uint64_t gk, uint64_t cw, uint64_t hw,
                    uint64_t eb, bool to_physical, const uint64_t* place = nullptr) {
#if defined(__SSE2__)
  const uint64_t t = eb == 1 ? 16 : 8, row = hw * eb, run = gk * cw * eb;
  if ((eb != 1 && eb != 2) || cw < t || hw < t) return false;
#if defined(LC_NVDLA_AVX2)
  if (cw >= 2 * t && has_avx2()) {
    using Pairs = void (*)(const uint8_t*, uint8_t*, uint64_t, uint64_t, uint64_t, uint64_t, const uint64_t*);
    static constexpr Pairs kPairs[2][2][2] = {
        {{dc_block_tile_pairs<1, false>, dc_block_tile_pairs<2, false>},
         {dc_block_tile_pairs<1, true>, dc_block_tile_pairs<2, true>}},
        {{dc_block_tile_pairs<1, false, true>, dc_block_tile_pairs<2, false, true>},
         {dc_block_tile_pairs<1, true, true>, dc_block_tile_pairs<2, true, true>}}};
    kPairs[place != nullptr][to_physical][eb - 1](from, to, kernel, gk, cw, hw, place);
    return true;
  }
#endif
  if (!to_physical || place) return false;
  for (uint64_t j0 = 0; j0 < hw; j0 += t) {
    const uint64_t j = std::min(j0, hw - t);
    for (uint64_t kk = 0; kk < gk; ++kk) {
      for (uint64_t i0 = 0; i0 < cw; i0 += t) {
        const uint64_t i = std::min(i0, cw - t);
        const uint8_t* tile = from + kk * kernel + i * row + j * eb;
        uint8_t* out = to + j * run + (kk * cw + i) * eb;
        if (eb == 1) transpose16x16_u8(tile, row, out, run);
        else transpose8x8_u16(tile, row, out, run);
      }
    }
  }
  return true;
#else
  (void)from, (void)to, (void)kernel, (void)gk, (void)cw, (void)hw, (void)eb, (void)to_physical, (void)place;
  return false;
#endif
}

#if defined(LC_NVDLA_AVX2)
// Kernels of 3 positions (1 x 3, 3 x 1): words of 3 elements. Per 16 / kE
// channels (48 bytes of words), each position's 16 bytes gather from the
// three 16-byte pieces by byte shuffles (pack), each piece from the three
// positions (unpack).
template <uint64_t kE>
struct Lane3Shuffles {
  alignas(16) uint8_t split[3][3][16] = {};  // [position][piece]: bytes of the position's 16 bytes
  alignas(16) uint8_t join[3][3][16] = {};   // [piece][position]: bytes of the piece
  constexpr Lane3Shuffles() {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 16; ++k) {
        const int from = (k / static_cast<int>(kE) * 3 + j) * static_cast<int>(kE) + k % static_cast<int>(kE);
        for (int r = 0; r < 3; ++r) split[j][r][k] = static_cast<uint8_t>(from / 16 == r ? from % 16 : 0x80);
      }
    }
    for (int r = 0; r < 3; ++r) {
      for (int k = 0; k < 16; ++k) {
        const int g = 16 * r + k, e = g / static_cast<int>(kE), b = g % static_cast<int>(kE);
        for (int j = 0; j < 3; ++j) {
          join[r][j][k] = static_cast<uint8_t>(e % 3 == j ? e / 3 * static_cast<int>(kE) + b : 0x80);
        }
      }
    }
  }
};

__attribute__((target("avx2"), always_inline)) inline __m256i lane3_mask(const uint8_t* m) {
  return _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(m)));
}

// One step of 16 / kE words from word c.
template <uint64_t kE>
__attribute__((target("avx2"), always_inline)) inline void lane3_step16(uint8_t* words, uint8_t* const (&run)[3],
                                                                        const uint8_t (&m)[3][3][16], uint64_t c,
                                                                        bool to_physical) {
  uint8_t* w = words + 3 * kE * c;
  __m128i in[3];
#pragma GCC unroll 3
  for (int r = 0; r < 3; ++r) {
    in[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(to_physical ? w + 16 * r : run[r] + kE * c));
  }
#pragma GCC unroll 3
  for (int j = 0; j < 3; ++j) {
    __m128i v = _mm_setzero_si128();
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r) {
      v = _mm_or_si128(v, _mm_shuffle_epi8(in[r], _mm_load_si128(reinterpret_cast<const __m128i*>(m[j][r]))));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to_physical ? run[j] + kE * c : w + 16 * j), v);
  }
}

// 32 / kE words a step, the two 16-byte lanes of each register 48 bytes of
// words apart (loaded and stored as halves), then 16-byte steps, the last
// one ending at cw (overlapping the one before: the same bytes again). The
// runs come by value, not through memory the byte stores could alias.
template <uint64_t kE>
__attribute__((target("avx2"))) void lane3_copy(uint8_t* words, uint8_t* r0, uint8_t* r1, uint8_t* r2, uint64_t cw,
                                                bool to_physical) {
  static constexpr Lane3Shuffles<kE> kShuffles;
  constexpr uint64_t step = 32 / kE;
  uint8_t* const run[3] = {r0, r1, r2};
  const auto& m = to_physical ? kShuffles.split : kShuffles.join;
  uint64_t c = 0;
  if (to_physical) {
    for (; c + step <= cw; c += step) {
      const uint8_t* w = words + 3 * kE * c;
      __m256i in[3];
#pragma GCC unroll 3
      for (int r = 0; r < 3; ++r) {
        in[r] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(w + 48 + 16 * r),
                                    reinterpret_cast<const __m128i*>(w + 16 * r));
      }
#pragma GCC unroll 3
      for (int j = 0; j < 3; ++j) {
        const __m256i v = _mm256_or_si256(
            _mm256_or_si256(_mm256_shuffle_epi8(in[0], lane3_mask(m[j][0])),
                            _mm256_shuffle_epi8(in[1], lane3_mask(m[j][1]))),
            _mm256_shuffle_epi8(in[2], lane3_mask(m[j][2])));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(run[j] + kE * c), v);
      }
    }
  } else {
    for (; c + step <= cw; c += step) {
      uint8_t* w = words + 3 * kE * c;
      __m256i in[3];
#pragma GCC unroll 3
      for (int j = 0; j < 3; ++j) in[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(run[j] + kE * c));
#pragma GCC unroll 3
      for (int r = 0; r < 3; ++r) {
        const __m256i v = _mm256_or_si256(
            _mm256_or_si256(_mm256_shuffle_epi8(in[0], lane3_mask(m[r][0])),
                            _mm256_shuffle_epi8(in[1], lane3_mask(m[r][1]))),
            _mm256_shuffle_epi8(in[2], lane3_mask(m[r][2])));
        _mm256_storeu2_m128i(reinterpret_cast<__m128i*>(w + 48 + 16 * r), reinterpret_cast<__m128i*>(w + 16 * r), v);
      }
    }
  }
  if (c + step / 2 <= cw) lane3_step16<kE>(words, run, m, c, to_physical), c += step / 2;
  if (c < cw && cw >= step / 2) lane3_step16<kE>(words, run, m, cw - step / 2, to_physical), c = cw;
  for (; c < cw; ++c) {
    for (uint64_t j = 0; j < 3; ++j) {
      if (to_physical) std::memcpy(run[j] + kE * c, words + (3 * c + j) * kE, kE);
      else std::memcpy(words + (3 * c + j) * kE, run[j] + kE * c, kE);
    }
  }
}
#endif

// n bytes from `from` to `to`: overlapping 16-byte moves from 16 bytes on, a
// call to memcpy below (or without SSE2).
inline void copy_unit(uint8_t* to, const uint8_t* from, uint64_t n) {
#if defined(__SSE2__)
  if (n >= 16) {
    for (uint64_t i = 0; i + 16 < n; i += 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i)));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + n - 16),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + n - 16)));
    return;
  }
#endif
  std::memcpy(to, from, n);
}

// Kernels of 4 positions (2 x 2, 1 x 4, 4 x 1) or 2 (2 x 1, 1 x 2):
// a kernel's channel c is a word of hw elements, position j its lane j, so
// the kernel's block of channels is the interleave of its positions' runs
// (optimized/lane_interleave.h; pitch `dp` elements apart); of 3 positions
// with AVX2, lane3_copy. False for other kernels. (On an Intel Xeon, pinned,
// of memcpy, pack / unpack, against the 16 x 16 transposes of rows read 16
// bytes at a time: 256 x 256 x 2 x 2 int8 0.11 / 0.06 -> 0.46 / 0.52, fp16
// 0.05 / 0.08 -> 0.59 / 0.65, 1 x 3 int8 0.09 / 0.05 -> 0.26 / 0.25; 256 x
// 256 x 1 x 2 int8, element by element before, 0.06 / 0.01 -> 0.28 / 0.31.)
bool lane_kernel(const uint8_t* logical_in, uint8_t* logical_out, uint8_t* phys_out, const uint8_t* phys_in,
                 uint64_t logical, uint64_t physical, uint64_t dp, uint64_t cw, uint64_t hw, uint64_t eb,
                 bool to_physical) {
#if defined(LC_NVDLA_AVX2)
  if (hw == 3 && (eb == 1 || eb == 2) && has_avx2()) {
    uint8_t* runs[3];
    for (uint64_t j = 0; j < 3; ++j) {
      runs[j] = (to_physical ? phys_out : const_cast<uint8_t*>(phys_in)) + (physical + j * dp) * eb;
    }
    uint8_t* words = to_physical ? const_cast<uint8_t*>(logical_in) + logical * eb : logical_out + logical * eb;
    if (eb == 1) lane3_copy<1>(words, runs[0], runs[1], runs[2], cw, to_physical);
    else lane3_copy<2>(words, runs[0], runs[1], runs[2], cw, to_physical);
    return true;
  }
#endif
  if (!(hw == 4 || hw == 2) || (eb != 1 && eb != 2)) return false;
  uint8_t* runs[4] = {};
  for (uint64_t j = 0; j < hw; ++j) {
    runs[j] = to_physical ? phys_out + (physical + j * dp) * eb : const_cast<uint8_t*>(phys_in) + (physical + j * dp) * eb;
  }
  if (to_physical) {
    const uint8_t* words = logical_in + logical * eb;
    if (hw == 2 && eb == 1) lanes::deinterleave<2, 1>(runs, words, cw);
    else if (hw == 2) lanes::deinterleave<2, 2>(runs, words, cw);
    else if (eb == 1) lanes::deinterleave<4, 1>(runs, words, cw);
    else lanes::deinterleave<4, 2>(runs, words, cw);
  } else {
    uint8_t* words = logical_out + logical * eb;
    if (hw == 2 && eb == 1) lanes::interleave<2, 1>(words, runs, cw);
    else if (hw == 2) lanes::interleave<2, 2>(words, runs, cw);
    else if (eb == 1) lanes::interleave<4, 1>(words, runs, cw);
    else lanes::interleave<4, 2>(words, runs, cw);
  }
  return true;
}

// copy_unit below 64 bytes, memcpy from there (its vectors as wide as the CPU's).
inline void copy_piece(uint8_t* to, const uint8_t* from, uint64_t n) {
  if (n < 64) copy_unit(to, from, n);
  else std::memcpy(to, from, n);
}

// A group's block of channels c0.. (cw of them) of 2 to 4 positions: each
// kernel's cw * hw elements gathered into a stage back to back, the block's
// gk * cw rows in order, and one lane_kernel for all of them (kernel by
// kernel, a block of a few channels was bound by each kernel's call; on an
// Intel Xeon, pinned, of memcpy, pack / unpack: 100 x 70 x 3 x 1 int8 0.03 /
// 0.03 -> 0.10 / 0.08, 256 x 256 x 1 x 3 0.30 / 0.31 -> 0.58 / 0.41, 100 x 70
// x 2 x 2 0.14 / 0.15 -> 0.31 / 0.29). False where lane_kernel does not take
// them.
bool block_lanes_staged(const uint8_t* logical_in, uint8_t* logical_out, uint8_t* phys_out, const uint8_t* phys_in,
                        uint64_t first, uint64_t khw, uint64_t gk, uint64_t cw, uint64_t hw, uint64_t eb,
                        uint64_t block_base, bool to_physical) {
  constexpr uint64_t kStage = 32 * 64 * 4 * 2;
  const uint64_t piece = cw * hw * eb;
  if (hw < 2 || hw > 4 || (eb != 1 && eb != 2) || gk * piece > kStage) return false;
  alignas(64) static thread_local uint8_t stage[kStage];
  if (to_physical) {
    for (uint64_t kk = 0; kk < gk; ++kk) copy_piece(stage + kk * piece, logical_in + (first + kk * khw) * eb, piece);
  }
  if (!lane_kernel(stage, stage, phys_out, phys_in, 0, block_base, gk * cw, gk * cw, hw, eb, to_physical)) return false;
  if (!to_physical) {
    for (uint64_t kk = 0; kk < gk; ++kk) copy_piece(logical_out + (first + kk * khw) * eb, stage + kk * piece, piece);
  }
  return true;
}

// Kernel k's channels c0..c0+cw-1 are one contiguous logical block of cw rows
// of H*W elements; physically, position pos of it is the cube at
// block_base + (pos * gk + kk) * cw. So each (kernel, channel block) is a
// cw x HW -> HW x cw transpose with destination pitch gk * cw elements.
// `to_physical`: logical -> physical; otherwise the reverse.
void weight_copy(const WeightPlan& p, const uint8_t* logical_in, uint8_t* logical_out, uint8_t* phys_out,
                 const uint8_t* phys_in, bool to_physical) {
  const uint64_t hw = p.H * p.W, khw = p.C * hw, eb = p.eb;
  if (hw == 1) {
    const uint8_t* src = to_physical ? logical_in : phys_in;
    uint8_t* dst = to_physical ? phys_out : logical_out;
    if (eb == 1) dc1x1_copy<1>(p, src, dst, to_physical);
    else dc1x1_copy<2>(p, src, dst, to_physical);  // int16, fp16: no weight type is wider
    return;
  }
  // Full 64-channel blocks of 3x3 kernels through AVX-512 or AVX2 transposes
  // in lanes when the CPU has them; kernels of one small block through byte
  // permutes.
  const DcWeightShape shape{p.K, p.C, p.H, p.W, p.eb, p.group};
  const uint8_t* in = to_physical ? logical_in : phys_in;
  uint8_t* out = to_physical ? phys_out : logical_out;
  const bool full_blocks_done = dc_weight_full_blocks(shape, in, out, to_physical);
  // One channel block: a group's gk kernels of C rows each are gk * C rows of
  // H*W elements back to back, and position pos of all of them is one run of
  // gk * C elements at the group's base + pos * gk * C: the group is one
  // transpose, in tiles where H*W has a tile's width (kernels of 16
  // positions and more; fewer take the byte permutes of each kernel first,
  // faster there: 32 x 32 x 3 x 3 int8 on a Zen 5 0.16 of memcpy against
  // 0.05, fp16 0.15 against 0.12; measured, kernel by kernel -> one
  // transpose: 64 x 3 x 7 x 7 int8 0.03 -> 0.14, fp16 0.05 -> 0.18, 32 x 64
  // x 5 x 5 int8 0.06 / 0.06 -> 0.11 / 0.18, pack / unpack). With AVX2 the
  // transpose is a plane's (optimized/plane_transpose.h: blocks of 32 rows
  // in lanes), unpacking only where the positions fill such a block: on an
  // Intel Xeon, pinned, of memcpy, 64 x 64 x 5 x 5 int8 pack 0.16 -> 0.22,
  // 7 x 7 0.11 -> 0.19, fp16 5 x 5 0.10 / 0.23 -> 0.21 / 0.28, 7 x 7 0.13 /
  // 0.17 -> 0.34 / 0.21; the 5 x 5 int8 unpack stays at 0.30 with squares).
  if (!full_blocks_done && p.C <= 64) {
    // Kernels of 2 to 4 positions: the group's gk * C rows are words of hw
    // elements whose lanes are its positions' runs (lane_kernel, the whole
    // group at once; it answers alike for every group, so a first false
    // has moved nothing). Measured on an Intel Xeon, of memcpy: 100 x 64 x 3
    // x 1 int8 0.11 -> 0.18 pack and unpack against the byte permutes; fp16
    // 0.61 / 0.74 pack / unpack, 64 x 64 x 2 x 2 fp16 0.63 / 0.74.
    bool lanes_done = true;
    for (uint64_t k0 = 0; k0 < p.K && lanes_done; k0 += p.group) {
      const uint64_t rows = std::min(p.group, p.K - k0) * p.C;
      lanes_done = lane_kernel(logical_in, logical_out, phys_out, phys_in, k0 * khw, k0 * khw, rows, rows, hw, eb,
                               to_physical);
    }
    if (lanes_done) return;
    if (hw < 16 && dc_weight_one_block_permutes(shape, in, out, to_physical)) return;
    if (hw >= (eb == 1 ? 16u : 8u)) {
      for (uint64_t k0 = 0; k0 < p.K; k0 += p.group) {
        const uint64_t gk = std::min(p.group, p.K - k0), rows = gk * p.C, base = k0 * khw * eb;
#if defined(LC_NVDLA_AVX2)
        if (has_avx2() && (eb == 1 || eb == 2) && (to_physical || hw >= 32 / eb)) {
          using Plane = void (*)(const uint8_t*, uint64_t, uint8_t*, uint64_t, uint64_t, uint64_t, uint64_t);
          const Plane plane = eb == 1 ? plane_transpose::transpose_plane_avx2<1, false>
                                      : plane_transpose::transpose_plane_avx2<2, false>;
          if (to_physical) plane(in + base, hw, out + base, rows, rows, hw, 0);
          else plane(in + base, rows, out + base, hw, hw, rows, 0);
          continue;
        }
#endif
        if (to_physical) transpose_tiles_overlapped(in + base, hw * eb, out + base, rows * eb, rows, hw, eb);
        else transpose_tiles_overlapped(in + base, rows * eb, out + base, hw * eb, hw, rows, eb);
      }
      return;
    }
  }
  for (uint64_t g = 0; g < p.groups; ++g) {
    const uint64_t k0 = g * p.group, gk = std::min(p.group, p.K - k0);
    const uint64_t group_base = k0 * khw;  // full groups before hold k0 kernels
    for (uint64_t c0 = 0; c0 < p.C; c0 += 64) {
      const uint64_t cw = std::min<uint64_t>(64, p.C - c0);
      if (full_blocks_done && cw == 64) continue;
      const uint64_t block_base = group_base + c0 * hw * gk;
      const uint64_t rows = (k0 * khw + c0 * hw) * eb;
      if (to_physical ? dc_block_tiles(logical_in + rows, phys_out + block_base * eb, khw * eb, gk, cw, hw, eb, true)
                      : dc_block_tiles(phys_in + block_base * eb, logical_out + rows, khw * eb, gk, cw, hw, eb, false)) {
        continue;
      }
      if (block_lanes_staged(logical_in, logical_out, phys_out, phys_in, k0 * khw + c0 * hw, khw, gk, cw, hw, eb,
                             block_base, to_physical)) {
        continue;
      }
      for (uint64_t kk = 0; kk < gk; ++kk) {
        const uint64_t logical = (k0 + kk) * khw + c0 * hw, physical = block_base + kk * cw;
        if (lane_kernel(logical_in, logical_out, phys_out, phys_in, logical, physical, gk * cw, cw, hw, eb,
                        to_physical)) {
          continue;
        }
        if (eb == 1 && hw < 16) {
          small_kernel_block(logical_in, logical_out, phys_out, phys_in, logical, physical, gk * cw, cw, hw,
                             to_physical, p.data);
        } else if (to_physical) {
          transpose_tiles_overlapped(logical_in + logical * eb, hw * eb, phys_out + physical * eb, gk * cw * eb, cw,
                                     hw, eb);
        } else {
          transpose_tiles_overlapped(phys_in + physical * eb, gk * cw * eb, logical_out + logical * eb, hw * eb, hw,
                                     cw, eb);
        }
      }
    }
  }
}

// Image weights: with post-extension (width <= 64, one cube per line), kernel
// k's line j is a run of w_j = min(e, H - e*j) * W*C elements at
// base + j*gk*width + kk*w_j; element (c, h, w) sits at (h mod e)*W*C + w*C + c
// in it. Without it, the kernel is the DC kernel (K, W*C, H, 1).
uint64_t image_element(const WeightPlan& p, uint64_t k, uint64_t c, uint64_t h, uint64_t w) {
  const uint64_t g = k / p.group, kk = k - g * p.group, gk = std::min(p.group, p.K - g * p.group);
  const uint64_t base = g * p.group * p.C * p.H * p.W;
  if (p.ext == 1) {
    const uint64_t ch = w * p.C + c, c0 = ch & ~uint64_t{63}, cw = std::min<uint64_t>(64, p.wc - c0);
    return base + c0 * p.H * gk + (h * gk + kk) * cw + (ch - c0);
  }
  const uint64_t j = h / p.ext, wj = std::min(p.ext, p.H - j * p.ext) * p.wc;
  return base + j * gk * p.width + kk * wj + (h - j * p.ext) * p.wc + w * p.C + c;
}

// The same placement as image_element, with the per-kernel and per-line terms
// hoisted out of the element loop. Fixed element size; the plan's fields are read into locals because the byte
// stores could alias them. The pre-extended channel ch = w * C + c is walked
// with (w, c) counters: no division per element. Buffers need not be aligned,
// so elements move through memcpy of a constant size (one load, one store).
template <typename T>
void image_copy_typed(const WeightPlan& p, const uint8_t* src, uint8_t* dst, bool to_physical) {
  constexpr uint64_t kEb = sizeof(T);
  const uint64_t K = p.K, C = p.C, H = p.H, W = p.W, group = p.group, ext = p.ext, wc = p.wc, width = p.width;
  const uint64_t hw = H * W;
  auto move = [&](uint64_t place, uint64_t logical) {
    if (to_physical) std::memcpy(dst + place * kEb, src + logical * kEb, kEb);
    else std::memcpy(dst + logical * kEb, src + place * kEb, kEb);
  };
  for (uint64_t k = 0; k < K; ++k) {
    const uint64_t g = k / group, kk = k - g * group, gk = std::min(group, K - g * group);
    const uint64_t base = g * group * C * hw;
    for (uint64_t h = 0; h < H; ++h) {
      // Element (c, w) of line h is logical line + c * hw + w; it goes to run + w * C + c.
      const uint64_t line = k * C * hw + h * W;
      if (ext == 1) {
        for (uint64_t c0 = 0; c0 < wc; c0 += 64) {
          const uint64_t cw = std::min<uint64_t>(64, wc - c0);
          const uint64_t run = base + c0 * H * gk + (h * gk + kk) * cw;
          uint64_t w = c0 / C, c = c0 - w * C;
          for (uint64_t i = 0; i < cw; ++i) {
            move(run + i, line + c * hw + w);
            if (++c == C) c = 0, ++w;
          }
        }
        continue;
      }
      const uint64_t j = h / ext, wj = std::min(ext, H - j * ext) * wc;
      const uint64_t run = base + j * gk * width + kk * wj + (h - j * ext) * wc;
      for (uint64_t w = 0; w < W; ++w) {
        for (uint64_t c = 0; c < C; ++c) move(run + w * C + c, line + c * hw + w);
      }
    }
  }
}

// One line of image weights by lanes: the line's W*C elements in (w, c) order
// are the interleave of the C logical rows of W elements (pitch hw elements),
// by optimized/lane_interleave.h for 4 channels (2 of 16-bit elements),
// lane3_copy for 3 with AVX2, a copy for 1. False for other channel counts.
template <uint64_t kEb>
bool image_line_lanes(uint8_t* words, uint8_t* rows0, uint64_t hw, uint64_t W, uint64_t C, bool to_physical) {
  uint8_t* rows[4] = {};
  if (C > 4) return false;
  for (uint64_t c = 0; c < C; ++c) rows[c] = rows0 + c * hw * kEb;
  if (C == 1) {
    if (to_physical) std::memcpy(words, rows[0], W * kEb);
    else std::memcpy(rows[0], words, W * kEb);
    return true;
  }
#if defined(LC_NVDLA_AVX2)
  if (C == 3 && has_avx2()) {
    lane3_copy<kEb>(words, rows[0], rows[1], rows[2], W, !to_physical);
    return true;
  }
#endif
  if (C == 4) {
    if (to_physical) lanes::interleave<4, kEb>(words, rows, W);
    else lanes::deinterleave<4, kEb>(rows, words, W);
    return true;
  }
  if (C == 2 && kEb == 2) {
    if (to_physical) lanes::interleave<2, 2>(words, rows, W);
    else lanes::deinterleave<2, 2>(rows, words, W);
    return true;
  }
  return false;
}

// A kernel's C planes interleaved at once into a stage of its pixels (lines
// back to back, (h, w, c) order), its units copied from there to their
// places; unpacking, the other way. False where the lanes do not take C
// channels or the kernel does not fit the stage. Line by line a kernel of
// short lines was bound by each line's calls (on an Intel Xeon capped at
// AVX2, pinned, of memcpy, pack / unpack: 3 x 11 x 11 fp16 0.12 / 0.12 ->
// 0.29 / 0.25, 4 x 15 x 15 int8 0.03 -> 0.30 / 0.27).
template <typename T>
bool image_kernels_staged(const WeightPlan& p, const uint8_t* src, uint8_t* dst, bool to_physical) {
  constexpr uint64_t kEb = sizeof(T), kStage = 16384;
  const uint64_t K = p.K, C = p.C, H = p.H, W = p.W, group = p.group, wc = p.wc * kEb;
  const uint64_t ext = p.ext, width = (ext == 1 ? p.wc : p.width) * kEb, hw = H * W, kernel = C * hw * kEb;
  if (kernel > kStage || C > 4 || (C == 2 && kEb == 1)) return false;
#if defined(LC_NVDLA_AVX2)
  if (C == 3 && !has_avx2()) return false;
#else
  if (C == 3) return false;
#endif
  alignas(64) static thread_local uint8_t stage[kStage];
  for (uint64_t k0 = 0; k0 < K; k0 += group) {
    const uint64_t gk = std::min(group, K - k0);
    uint8_t* block = (to_physical ? dst : const_cast<uint8_t*>(src)) + k0 * kernel;
    for (uint64_t kk = 0; kk < gk; ++kk) {
      uint8_t* rows = (to_physical ? const_cast<uint8_t*>(src) : dst) + (k0 + kk) * kernel;
      if (to_physical) image_line_lanes<kEb>(stage, rows, hw, hw, C, true);
      for (uint64_t j = 0; j * ext < H; ++j) {
        const uint64_t h0 = j * ext, wj = (std::min(H, h0 + ext) - h0) * wc;
        uint8_t* unit = block + j * gk * width + kk * wj;
        if (to_physical) copy_unit(unit, stage + h0 * wc, wj);
        else copy_unit(stage + h0 * wc, unit, wj);
      }
      if (!to_physical) image_line_lanes<kEb>(stage, rows, hw, hw, C, false);
    }
  }
  return true;
}

// When a line's W*C channels fit one cube (always so with post-extension),
// kernel kk's line group j is one run of the lines j*e.. of the group, each
// W*C elements in (w, c) order: walked in physical order, the physical side
// is sequential and the logical reads are C rows of W elements per line.
// kC > 0 fixes the channel count so the (w, c) loop unrolls.
template <typename T, uint64_t kC>
void image_runs_typed(const WeightPlan& p, const uint8_t* src, uint8_t* dst, bool to_physical) {
  const uint64_t K = p.K, C = kC ? kC : p.C, H = p.H, W = p.W, group = p.group, wc = p.wc;
  const uint64_t ext = p.ext, width = ext == 1 ? wc : p.width, hw = H * W, chw = C * hw;
  if (image_kernels_staged<T>(p, src, dst, to_physical)) return;
  for (uint64_t k0 = 0; k0 < K; k0 += group) {  // mutate: equivalent (a pass at k0 == K has no kernel)
    const uint64_t gk = std::min(group, K - k0), base = k0 * chw;
    for (uint64_t j = 0; j * ext < H; ++j) {
      const uint64_t h0 = j * ext, h1 = std::min(H, h0 + ext), wj = (h1 - h0) * wc;
      for (uint64_t kk = 0; kk < gk; ++kk) {
        uint64_t phys = base + j * gk * width + kk * wj;
        const uint64_t kernel = (k0 + kk) * chw;
        for (uint64_t h = h0; h < h1; ++h) {
          const uint64_t line = kernel + h * W;
          uint8_t* words = (to_physical ? dst : const_cast<uint8_t*>(src)) + phys * sizeof(T);
          uint8_t* rows = (to_physical ? const_cast<uint8_t*>(src) : dst) + line * sizeof(T);
          if (image_line_lanes<sizeof(T)>(words, rows, hw, W, C, to_physical)) {
            phys += W * C;
            continue;
          }
          for (uint64_t w = 0; w < W; ++w) {
            for (uint64_t c = 0; c < C; ++c, ++phys) {
              const uint64_t logical = line + c * hw + w;
              if (to_physical) std::memcpy(dst + phys * sizeof(T), src + logical * sizeof(T), sizeof(T));
              else std::memcpy(dst + logical * sizeof(T), src + phys * sizeof(T), sizeof(T));
            }
          }
        }
      }
    }
  }
}

template <typename T>
void image_runs(const WeightPlan& p, const uint8_t* src, uint8_t* dst, bool to_physical) {
  switch (p.C) {
    case 1: image_runs_typed<T, 1>(p, src, dst, to_physical); break;
    case 2: image_runs_typed<T, 2>(p, src, dst, to_physical); break;
    case 3: image_runs_typed<T, 3>(p, src, dst, to_physical); break;
    case 4: image_runs_typed<T, 4>(p, src, dst, to_physical); break;
    default: image_runs_typed<T, 0>(p, src, dst, to_physical); break;
  }
}

void image_copy(const WeightPlan& p, const uint8_t* src, uint8_t* dst, bool to_physical) {
  if ((p.ext > 1 || p.wc <= 64) &&
      (image_weight_copy_avx512({p.K, p.C, p.H, p.W, p.eb, p.group, p.ext}, src, dst, to_physical) ||
       image_weight_copy_shuffles({p.K, p.C, p.H, p.W, p.eb, p.group, p.ext}, src, dst, to_physical))) {
    return;
  }
  if (p.ext > 1 || p.wc <= 64) {
    if (p.eb == 1) image_runs<uint8_t>(p, src, dst, to_physical);
    else image_runs<uint16_t>(p, src, dst, to_physical);
    return;
  }
  if (p.eb == 1) image_copy_typed<uint8_t>(p, src, dst, to_physical);
  else image_copy_typed<uint16_t>(p, src, dst, to_physical);
}

// ---- Winograd weights (converted 4x4 kernels) ------------------------------------------
//
// Kernel k's channel c is 16 logical elements (h, w); physically they are the
// 4-stride lane c mod 4 of cube (c / 4) of kernel k, and the cubes of a group
// run cube-major, kernel-minor. Channels past C (padding to 32 bytes) are 0.

struct WinogradPlan {
  uint64_t K = 0, C = 0, Cp = 0, eb = 1, group = 32, data = 0, size = 0;
};

Result<WinogradPlan> winograd_plan(const Case& c) {
  LC_RETURN_IF_ERROR(precision_ok(c.dtype));
  if (c.shape[2] != 4 || c.shape[3] != 4) return Status::invalid("Winograd kernels are 4x4 after conversion");
  WinogradPlan p;
  p.K = c.shape[0], p.C = c.shape[1];
  p.eb = dtype_bits(c.dtype) / 8;
  const uint64_t per32 = 32 / p.eb;
  p.Cp = (p.C + per32 - 1) / per32 * per32;
  p.group = p.eb == 1 ? 32 : 16;
  if (c.layout.get_int("addr") % 256) return Status::invalid("weight start address is not 256-byte aligned");
  if (c.layout.get_int("post_extension") != 1) return Status::invalid("Winograd weights take no post-extension");
  Checked data = Checked(p.K) * p.Cp * 16 * p.eb;
  if (!data.ok() || data.value() > kMaxBytes) return Status::invalid("Winograd weight size overflows");
  p.data = data.value();
  p.size = (p.data + 127) / 128 * 128;
  return p;
}

uint64_t winograd_element(const WinogradPlan& p, uint64_t k, uint64_t c, uint64_t hw) {
  const uint64_t g = k / p.group, kk = k - g * p.group, gk = std::min(p.group, p.K - g * p.group);
  return g * p.group * p.Cp * 16 + ((c >> 2) * gk + kk) * 64 + hw * 4 + (c & 3);
}

// Four consecutive channels of a kernel are 64 contiguous logical elements
// (4 quarters of 16 positions); their cube holds position i of quarter j at
// 4i + j: a 4-way interleave. Interleaving twice maps 4i + j back to 16j + i
// (a rotation of the 6 index bits by 2, applied 3 times, is the identity),
// so unpacking is the same interleave applied twice.
void interleave4(const uint8_t* src, uint8_t* dst, uint64_t eb) {
#if defined(__SSE2__)
  auto load = [src](int i) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * i)); };
  auto store = [dst](int i, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16 * i), v); };
  if (eb == 1) {
    const __m128i a = load(0), b = load(1), c = load(2), d = load(3);
    const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
    const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
    store(0, _mm_unpacklo_epi16(ab_lo, cd_lo));
    store(1, _mm_unpackhi_epi16(ab_lo, cd_lo));
    store(2, _mm_unpacklo_epi16(ab_hi, cd_hi));
    store(3, _mm_unpackhi_epi16(ab_hi, cd_hi));
    return;
  }
  LC_UNROLL
  for (int half = 0; half < 2; ++half) {  // positions 0-7, then 8-15
    const __m128i a = load(half), b = load(2 + half), c = load(4 + half), d = load(6 + half);
    const __m128i ab_lo = _mm_unpacklo_epi16(a, b), ab_hi = _mm_unpackhi_epi16(a, b);
    const __m128i cd_lo = _mm_unpacklo_epi16(c, d), cd_hi = _mm_unpackhi_epi16(c, d);
    store(4 * half + 0, _mm_unpacklo_epi32(ab_lo, cd_lo));
    store(4 * half + 1, _mm_unpackhi_epi32(ab_lo, cd_lo));
    store(4 * half + 2, _mm_unpacklo_epi32(ab_hi, cd_hi));
    store(4 * half + 3, _mm_unpackhi_epi32(ab_hi, cd_hi));
  }
#else
  for (uint64_t i = 0; i < 16; ++i) {
    for (uint64_t j = 0; j < 4; ++j) copy_element(dst + (4 * i + j) * eb, src + (16 * j + i) * eb, eb);
  }
#endif
}

#if defined(__x86_64__) || defined(_M_X64)
// A whole cube in one step with AVX-512: the interleave (pack: element 16j + i
// to 4i + j) or its inverse (unpack: 4i + j to 16j + i) is one permute of the
// cube's 64 elements: of bytes with VBMI (int8), of words across two
// registers with BW (fp16), every load and store a whole 64-byte piece
// (measured on a Zen 4, 256 x 256 fp16 kernels: unpack 0.31-0.39 of memcpy
// by two SSE interleaves, 0.56-0.74 by the permute; pack 0.54-0.70 -> 0.69-0.74).
// Index o of the result takes element pick(o) of the source.
template <bool kPack>
constexpr uint8_t cube_pick(int o) {
  return static_cast<uint8_t>(kPack ? 16 * (o % 4) + o / 4 : 4 * (o % 16) + o / 16);
}

// The 64 indices of a permute of elements of type T.
template <bool kPack, typename T>
struct CubeIndex {
  alignas(64) T v[64];
  constexpr CubeIndex() : v() {
    for (int o = 0; o < 64; ++o) v[o] = cube_pick<kPack>(o);
  }
};

template <bool kPack>
__attribute__((target("avx512f,avx512bw"))) void cube_words_avx512(const uint8_t* src, uint8_t* dst) {
  static constexpr CubeIndex<kPack, uint16_t> kIdx;
  const __m512i a = _mm512_loadu_si512(src), b = _mm512_loadu_si512(src + 64);
  _mm512_storeu_si512(dst, _mm512_permutex2var_epi16(a, _mm512_load_si512(kIdx.v), b));
  _mm512_storeu_si512(dst + 64, _mm512_permutex2var_epi16(a, _mm512_load_si512(kIdx.v + 32), b));
}

template <bool kPack>
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void cube_bytes_avx512(const uint8_t* src, uint8_t* dst) {
  static constexpr CubeIndex<kPack, uint8_t> kIdx;
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi8(_mm512_load_si512(kIdx.v), _mm512_loadu_si512(src)));
}
#endif

// One whole cube, pack (interleave4) or unpack (interleave4 twice).
using CubeFn = void (*)(const uint8_t* src, uint8_t* dst);
template <bool kPack>
CubeFn cube_kernel(uint64_t eb) {
#if defined(__x86_64__) || defined(_M_X64)
  if (eb == 2 && isa_at_least(Isa::kAvx512)) return &cube_words_avx512<kPack>;
  if (eb == 1 && isa_at_least(Isa::kAvx512Vbmi)) return &cube_bytes_avx512<kPack>;
#endif
  (void)eb;
  return nullptr;
}

// Packing walks the logical order (reads in sequence), unpacking the physical
// order (cube after cube): the strided side is the written one.
void winograd_copy(const WinogradPlan& p, const uint8_t* src, uint8_t* dst, bool to_physical) {
  const uint64_t eb = p.eb, cube = 64 * eb, cubes = p.Cp / 4, channel = 16 * eb;
  alignas(16) uint8_t part[128], tmp[128];
  const CubeFn whole = to_physical ? cube_kernel<true>(eb) : cube_kernel<false>(eb);
  for (uint64_t g = 0; g * p.group < p.K; ++g) {
    const uint64_t k0 = g * p.group, gk = std::min(p.group, p.K - k0);
    const uint64_t group_base = k0 * p.Cp * channel;
    if (to_physical) {
      for (uint64_t kk = 0; kk < gk; ++kk) {
        const uint8_t* in = src + (k0 + kk) * p.C * channel;
        for (uint64_t q = 0; q < cubes; ++q) {
          uint8_t* phys = dst + group_base + (q * gk + kk) * cube;
          const uint64_t c0 = 4 * q, nc = c0 < p.C ? std::min<uint64_t>(4, p.C - c0) : 0;
          if (nc == 4 && whole) {
            whole(in + c0 * channel, phys);
          } else if (nc == 4) {
            interleave4(in + c0 * channel, phys, eb);
          } else if (nc) {  // channels past C are 0
            std::memset(part, 0, cube);
            std::memcpy(part, in + c0 * channel, nc * channel);
            interleave4(part, phys, eb);
          } else {
            std::memset(phys, 0, cube);
          }
        }
      }
      continue;
    }
    for (uint64_t q = 0; q < cubes && 4 * q < p.C; ++q) {
      const uint64_t c0 = 4 * q, nc = std::min<uint64_t>(4, p.C - c0);
      for (uint64_t kk = 0; kk < gk; ++kk) {
        const uint8_t* phys = src + group_base + (q * gk + kk) * cube;
        uint8_t* out = dst + ((k0 + kk) * p.C + c0) * channel;
        if (nc == 4 && whole) {
          whole(phys, out);
          continue;
        }
        interleave4(phys, tmp, eb);
        if (nc == 4) {
          interleave4(tmp, out, eb);
        } else {
          interleave4(tmp, part, eb);
          std::memcpy(out, part, nc * channel);
        }
      }
    }
  }
  if (to_physical) std::memset(dst + p.data, 0, p.size - p.data);
}

// ---- pixel data -------------------------------------------------------------------
//
// The format name says it all: "___" separates the Y plane from the chroma plane
// of a semi-planar format; each letter-and-bits group is one component; a
// trailing _F on a 4-component name is fp16. A plane holds one little-endian
// word per pixel whose components run from the most significant bits down in
// name order, so byte-sized components appear in memory in reverse name order
// and the 2+10+10+10 words are bit fields. A line is a run of (x_offset + W)
// words.

struct PixelPlan {
  uint64_t H = 0, W = 0, C = 0, cb = 1, planar = 0, ypix = 1, uvpix = 0, x = 0, ls = 0, uls = 0, uvo = 0, size = 0;
  bool fields = false;            // 2+10+10+10 bit fields of a 32-bit word
  uint32_t shift[4] = {}, width[4] = {};  // fields: where each component sits
  uint32_t low_bits = 0;          // 10/12-bit values in the low bits of 16-bit containers; 0: whole container
  std::string name;
  PixelPlan without_low_bits() const {
    PixelPlan q = *this;
    q.low_bits = 0;
    return q;
  }
};

Result<PixelPlan> pixel_plan(const Case& c) {
  const std::string f = c.layout.get("format");
  PixelPlan p;
  p.name = f;
  p.planar = f.find("___") != std::string::npos;
  uint64_t groups = 0, bits = 0;
  for (size_t i = 2; i < f.size(); ++i) {
    if (f[i] == '_') break;  // _F, _I, ___, _N444
    if (f[i] >= 'A' && f[i] <= 'Z') {
      uint32_t b = 0;
      while (i + 1 < f.size() && f[i + 1] >= '0' && f[i + 1] <= '9') b = b * 10 + static_cast<uint32_t>(f[++i] - '0');
      if (groups < 4) p.width[groups] = b;
      ++groups;
      if (b == 2) p.fields = true;
      bits = std::max<uint64_t>(bits, b);
    }
  }
  const uint64_t channels = p.planar ? 3 : groups;
  const bool fp = f.size() > 2 && f.compare(f.size() - 2, 2, "_F") == 0 && channels == 4;
  const DType want = fp ? DType::kFp16 : bits > 8 ? DType::kInt16 : DType::kInt8;
  p.H = c.shape[0], p.W = c.shape[1], p.C = c.shape[2];
  if (p.C != channels) return Status::invalid(f + " takes " + str(channels) + " channels, not " + str(p.C));
  const bool twin = (want == DType::kInt8 && c.dtype == DType::kUInt8) || (want == DType::kInt16 && c.dtype == DType::kUInt16);
  if (c.dtype != want && !twin) return Status::invalid(f + " is " + dtype_name(want) + " data");
  p.cb = bits > 8 ? 2 : 1;
  if (!p.fields && (bits == 10 || bits == 12)) p.low_bits = static_cast<uint32_t>(bits);
  if (p.fields) {
    // Widths 2/10 from the name; the last component holds the low bits.
    uint32_t below = 0;
    for (uint64_t ch = channels; ch-- > 0;) p.shift[ch] = below, below += p.width[ch];
    p.ypix = 4;
  } else {
    p.ypix = p.planar ? p.cb : p.cb * channels;
  }
  p.uvpix = p.planar ? 2 * p.cb : 0;
  p.x = c.layout.get_int("x_offset");
  if (p.x > 32 / p.ypix - 1) return Status::invalid(f + " x offset " + str(p.x) + " out of range");
  if (c.layout.get_int("addr") % 32) return Status::invalid("pixel start address is not 32-byte aligned");
  Checked line = (Checked(p.x) + p.W) * p.ypix;
  if (!line.ok() || line.value() > kMaxBytes) return Status::invalid("pixel line overflows");
  p.ls = c.layout.get_int("line_stride");
  if (p.ls == 0) p.ls = up32(line.value());
  if (p.ls % 32 || p.ls < line.value()) return Status::invalid("pixel line stride " + str(p.ls) + " unusable");
  Checked plane = Checked(p.H) * p.ls;
  if (!plane.ok() || plane.value() > kMaxBytes) return Status::invalid("pixel plane overflows");
  p.size = plane.value();
  const uint64_t uls = c.layout.get_int("uv_line_stride"), uvo = c.layout.get_int("uv_offset");
  if (!p.planar) {
    if (uls || uvo) return Status::invalid(f + " has no UV plane");
    return p;
  }
  const uint64_t uv_line = (p.x + p.W) * p.uvpix;  // twice the Y line, which fits
  if (uv_line > kMaxBytes) return Status::invalid("pixel UV line overflows");
  p.uls = uls ? uls : up32(uv_line);
  if (p.uls % 32 || p.uls < uv_line) return Status::invalid("pixel UV line stride " + str(p.uls) + " unusable");
  p.uvo = uvo ? uvo : p.size;
  if (p.uvo % 32 || p.uvo < p.size) return Status::invalid("pixel UV plane offset " + str(p.uvo) + " unusable");
  Checked size = Checked(p.uvo) + Checked(p.H) * p.uls;
  if (!size.ok() || size.value() > kMaxBytes) return Status::invalid("pixel size overflows");
  p.size = size.value();
  return p;
}

uint64_t pixel_place_bits(const PixelPlan& p, uint64_t h, uint64_t w, uint64_t ch) {
  if (p.fields) return (h * p.ls + (p.x + w) * 4) * 8 + p.shift[ch];
  if (p.planar && ch) return (p.uvo + h * p.uls + (p.x + w) * p.uvpix + (2 - ch) * p.cb) * 8;
  const uint64_t last = p.planar ? 0 : p.C - 1;
  return (h * p.ls + (p.x + w) * p.ypix + (last - ch) * p.cb) * 8;
}

// Reverses the components of each of n words of kComps components of kCb
// bytes. Involutive, so pack and unpack share it; fixed sizes let the compiler
// turn the loop into byte shuffles.
template <int kComps, int kCb>
void reverse_words(const uint8_t* src, uint8_t* dst, uint64_t n) {
  constexpr int kWord = kComps * kCb;
  using Word = std::conditional_t<kWord == 2, uint16_t, std::conditional_t<kWord == 4, uint32_t, uint64_t>>;
  for (uint64_t i = 0; i < n; ++i) {
    Word v;
    std::memcpy(&v, src + i * kWord, kWord);
    if constexpr (kCb == 1 && kWord == 2) v = __builtin_bswap16(v);
    else if constexpr (kCb == 1) v = __builtin_bswap32(v);
    else if constexpr (kWord == 4) v = static_cast<Word>(v >> 16 | v << 16);
    else v = v >> 48 | (v >> 16 & 0xFFFF0000ull) | (v << 16 & 0xFFFF00000000ull) | v << 48;
    std::memcpy(dst + i * kWord, &v, kWord);
  }
}

#if defined(LC_NVDLA_AVX2)
bool has_ssse3() { return isa_at_least(Isa::kSsse3); }

// The byte shuffle of 16 bytes of whole words of `comps` components of `cb`
// bytes that reverses each word's components.
__attribute__((target("ssse3"))) __m128i reverse_shuffle(uint64_t comps, uint64_t cb) {
  const uint64_t word = comps * cb;
  uint8_t m[16];
  for (uint64_t b = 0; b < 16; ++b) {
    const uint64_t w = b / word, comp = b % word / cb, byte = b % cb;  // dst comp <- src comp (comps - 1 - comp)
    m[b] = static_cast<uint8_t>(w * word + (comps - 1 - comp) * cb + byte);
  }
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(m));
}

// The same reversal, 16 bytes (whole words) per byte shuffle; returns the
// words it did.
__attribute__((target("ssse3"))) uint64_t reverse_words_ssse3(const uint8_t* src, uint8_t* dst, uint64_t n,
                                                              uint64_t comps, uint64_t cb) {
  const uint64_t word = comps * cb, per = 16 / word;
  const __m128i mask = reverse_shuffle(comps, cb);
  uint64_t i = 0;
  for (; i + per <= n; i += per) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * word));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i * word), _mm_shuffle_epi8(v, mask));
  }
  return i;
}

// The first `len` (< 64) bytes of reverse_words_avx512 below: masked loads and stores.
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void reverse_part(const uint8_t* src, uint8_t* dst,
                                                                                   uint64_t len, __m512i mask) {
  const __mmask64 k = (__mmask64{1} << len) - 1;
  masked::_mm512_mask_storeu_epi8(dst, k, _mm512_shuffle_epi8(masked::_mm512_maskz_loadu_epi8(k, src), mask));
}

// The same reversal, 64 bytes per shuffle, every store one whole aligned line
// of `dst` (a line shifted by an x offset of 3 words of 4 bytes would split
// every fourth 16-byte store across two lines). The source is read at the
// same offsets, unaligned; a word never straddles a 16-byte lane (words are
// 2, 4 or 8 bytes and the offsets multiples of them), so one in-lane shuffle
// reverses every word. `kStream`: the whole lines go out non-temporal.
// Measured on a 32 KiB L1d Zen 4 with a 32 MiB L3, T_A8B8G8R8, medians of 7
// runs, pack / unpack against the SSSE3 loop: 1080p with x_offset 3, 0.43 /
// 0.57 of memcpy -> 0.89 / 1.00 (with ordinary stores 0.48 / 0.70); 3840 x
// 2160 without offset 1.18 / 1.15 -> 1.70 / 1.57.
template <bool kStream>
__attribute__((target("avx512f,avx512bw"))) void reverse_words_avx512(const uint8_t* src, uint8_t* dst, uint64_t n,
                                                                      uint64_t comps, uint64_t cb) {
  const uint64_t total = n * comps * cb;
  const __m512i mask = _mm512_broadcast_i32x4(reverse_shuffle(comps, cb));
  const uint64_t head = std::min<uint64_t>(total, (64 - reinterpret_cast<uintptr_t>(dst) % 64) % 64);
  reverse_part(src, dst, head, mask);
  uint64_t i = head;
  for (; i + 64 <= total; i += 64) {
    const __m512i v = _mm512_shuffle_epi8(_mm512_loadu_si512(src + i), mask);
    if constexpr (kStream) _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), v);
    else _mm512_store_si512(dst + i, v);
  }
  reverse_part(src + i, dst + i, total - i, mask);
}
#endif

// `stream`: see reverse_words_avx512 (AVX-512 only; the caller fences).
void reverse_components(const uint8_t* src, uint8_t* dst, uint64_t n, uint64_t comps, uint64_t cb, bool stream) {
  if (comps == 1) {
    std::memcpy(dst, src, n * cb);
    return;
  }
#if defined(LC_NVDLA_AVX2)
  if (isa_at_least(Isa::kAvx512)) {
    if (stream) return reverse_words_avx512<true>(src, dst, n, comps, cb);
    return reverse_words_avx512<false>(src, dst, n, comps, cb);
  }
  if (has_ssse3()) {
    const uint64_t done = reverse_words_ssse3(src, dst, n, comps, cb), word = comps * cb;
    src += done * word, dst += done * word, n -= done;
  }
#endif
  (void)stream;
  if (comps == 4 && cb == 1) reverse_words<4, 1>(src, dst, n);
  else if (comps == 4) reverse_words<4, 2>(src, dst, n);
  else if (cb == 1) reverse_words<2, 1>(src, dst, n);
  else reverse_words<2, 2>(src, dst, n);
}

// One line of a semi-planar image: logical (Y, first chroma, second chroma)
// triples <-> Y words and chroma words with the second chroma in the low half.
template <typename T>
void semi_planar_pack_line(const uint8_t* logical, uint8_t* y, uint8_t* uv, uint64_t W) {
  for (uint64_t w = 0; w < W; ++w) {
    T l[3];
    std::memcpy(l, logical + w * sizeof l, sizeof l);
    const T pair[2] = {l[2], l[1]};
    std::memcpy(y + w * sizeof(T), &l[0], sizeof(T));
    std::memcpy(uv + w * sizeof pair, pair, sizeof pair);
  }
}

template <typename T>
void semi_planar_unpack_line(const uint8_t* y, const uint8_t* uv, uint8_t* logical, uint64_t W) {
  for (uint64_t w = 0; w < W; ++w) {
    T pair[2], l[3];
    std::memcpy(&l[0], y + w * sizeof(T), sizeof(T));
    std::memcpy(pair, uv + w * sizeof pair, sizeof pair);
    l[1] = pair[1], l[2] = pair[0];
    std::memcpy(logical + w * sizeof l, l, sizeof l);
  }
}

// 8-bit semi-planar lines, 16 pixels (48 logical bytes) at a time: each of
// the 3 outputs (Y, chroma of pixels 0-7, of pixels 8-15) is the OR of byte
// shuffles of the 3 inputs, and unpacking the reverse; the tables say which
// input byte lands in each output byte (0x80: none).
struct SemiPlanarShuffles {
  uint8_t pack[3][3][16];    // [output: Y, UV 0-7, UV 8-15][logical vector]
  uint8_t unpack[3][3][16];  // [logical vector][input: Y, UV 0-7, UV 8-15]
};

const SemiPlanarShuffles& semi_planar_shuffles() {
  static const SemiPlanarShuffles t = [] {
    SemiPlanarShuffles s;
    std::memset(&s, 0x80, sizeof s);
    for (unsigned i = 0; i < 16; ++i) {  // pixel i: logical bytes 3i (Y), 3i+1, 3i+2
      const unsigned y = 3 * i, first = 3 * i + 1, second = 3 * i + 2;
      s.pack[0][y / 16][i] = static_cast<uint8_t>(y % 16);
      // chroma word of pixel i: bytes 2i (second chroma), 2i+1 (first) of the UV line
      const unsigned o = 1 + i / 8, b = 2 * (i % 8);
      s.pack[o][second / 16][b] = static_cast<uint8_t>(second % 16);
      s.pack[o][first / 16][b + 1] = static_cast<uint8_t>(first % 16);
      s.unpack[y / 16][0][y % 16] = static_cast<uint8_t>(i);
      s.unpack[second / 16][o][second % 16] = static_cast<uint8_t>(b);
      s.unpack[first / 16][o][first % 16] = static_cast<uint8_t>(b + 1);
    }
    return s;
  }();
  return t;
}

#if defined(LC_NVDLA_AVX2)
__attribute__((target("ssse3"), always_inline)) inline __m128i shuffle3(const __m128i* in, const uint8_t (*m)[16]) {
  auto mask = [m](int i) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(m[i])); };
  return _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(in[0], mask(0)), _mm_shuffle_epi8(in[1], mask(1))),
                      _mm_shuffle_epi8(in[2], mask(2)));
}

// Whole blocks of 16 pixels; returns how many pixels it did.
__attribute__((target("ssse3"))) uint64_t semi_planar_u8_ssse3(const uint8_t* logical_in, uint8_t* logical_out,
                                                               uint8_t* y_out, uint8_t* uv_out, const uint8_t* y_in,
                                                               const uint8_t* uv_in, uint64_t W, bool pack) {
  const SemiPlanarShuffles& t = semi_planar_shuffles();
  uint64_t w = 0;
  for (; w + 16 <= W; w += 16) {
    __m128i in[3];
    if (pack) {
      for (int i = 0; i < 3; ++i) in[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(logical_in + 3 * w + 16 * i));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y_out + w), shuffle3(in, t.pack[0]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(uv_out + 2 * w), shuffle3(in, t.pack[1]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(uv_out + 2 * w + 16), shuffle3(in, t.pack[2]));
    } else {
      in[0] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(y_in + w));
      in[1] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(uv_in + 2 * w));
      in[2] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(uv_in + 2 * w + 16));
      for (int i = 0; i < 3; ++i) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(logical_out + 3 * w + 16 * i), shuffle3(in, t.unpack[i]));
      }
    }
  }
  return w;
}
#endif

// Bit-field words: the OR of each component over a line tells whether every
// value fits its field; only then is the line assembled. Returns false at the
// first line that does not fit (its words are then left unwritten).
bool pixel_fields_pack_line(const PixelPlan& p, const uint8_t* row, uint8_t* line) {
  uint64_t seen = 0;
  for (uint64_t w = 0; w < p.W; ++w) {
    uint64_t v;
    std::memcpy(&v, row + w * 8, 8);
    seen |= v;
  }
  const uint64_t fits = ((1ull << p.width[0]) - 1) | ((1ull << p.width[1]) - 1) << 16 |
                        ((1ull << p.width[2]) - 1) << 32 | ((1ull << p.width[3]) - 1) << 48;
  if (seen & ~fits) return false;
  const uint32_t s0 = p.shift[0], s1 = p.shift[1], s2 = p.shift[2], s3 = p.shift[3];
  for (uint64_t w = 0; w < p.W; ++w) {
    uint64_t v;
    std::memcpy(&v, row + w * 8, 8);
    const uint32_t word = static_cast<uint32_t>((v & 0xFFFF) << s0 | (v >> 16 & 0xFFFF) << s1 |
                                                (v >> 32 & 0xFFFF) << s2 | (v >> 48) << s3);
    std::memcpy(line + w * 4, &word, 4);
  }
  return true;
}

// The first value that does not fit its field, as an error.
Status pixel_fields_error(const PixelPlan& p, DType t, const uint8_t* src) {
  for (uint64_t i = 0; i < p.H * p.W; ++i) {
    for (uint64_t ch = 0; ch < 4; ++ch) {
      uint16_t v = 0;
      std::memcpy(&v, src + (i * 4 + ch) * 2, 2);
      if ((v >> p.width[ch]) == 0) continue;
      return Status::invalid(p.name + ": component " + str(ch) + " of pixel (" + str(i / p.W) + ", " + str(i % p.W) +
                             ") is " + (t == DType::kInt16 ? std::to_string(static_cast<int16_t>(v)) : std::to_string(v)) +
                             ", which does not fit its " +
                             str(p.width[ch]) + "-bit field");
    }
  }
  return Status::internal("a pixel field did not fit, but no value is too wide");
}

void pixel_fields_unpack_line(const PixelPlan& p, const uint8_t* line, uint8_t* row) {
  // Locals, not plan fields: the byte stores below could alias the plan.
  const uint32_t s0 = p.shift[0], s1 = p.shift[1], s2 = p.shift[2], s3 = p.shift[3];
  const uint32_t m0 = (1u << p.width[0]) - 1, m1 = (1u << p.width[1]) - 1, m2 = (1u << p.width[2]) - 1,
                 m3 = (1u << p.width[3]) - 1;
  const uint64_t W = p.W;
  for (uint64_t w = 0; w < W; ++w) {
    uint32_t word = 0;
    std::memcpy(&word, line + w * 4, 4);
    const uint64_t v = uint64_t{(word >> s0) & m0} | uint64_t{(word >> s1) & m1} << 16 |
                       uint64_t{(word >> s2) & m2} << 32 | uint64_t{(word >> s3) & m3} << 48;
    std::memcpy(row + w * 8, &v, 8);
  }
}

// Lines [begin, end) of a pixel image; packing zeroes each line's x offset and
// tail. Returns false if a bit-field line does not fit (packing only).
bool pixel_lines(const PixelPlan& p, const uint8_t* src, uint8_t* dst, bool to_physical, uint64_t begin,
                 uint64_t end) {
  const uint64_t row = p.W * p.C * p.cb;
  const bool stream = (to_physical ? p.size : p.H * row) >= nvdla_simd::kStreamingBytes;
  for (uint64_t h = begin; h < end; ++h) {
    const uint64_t line = h * p.ls + p.x * p.ypix;
    if (to_physical) {
      std::memset(dst + h * p.ls, 0, p.x * p.ypix);
      const uint64_t used = (p.x + p.W) * p.ypix;
      std::memset(dst + h * p.ls + used, 0, p.ls - used);
    }
    if (p.fields) {
#if defined(LC_NVDLA_AVX2)
      if (isa_at_least(Isa::kAvx512)) {
        if (!to_physical) nvdla_simd::pixel_fields_unpack_line_avx512(src + line, dst + h * row, p.W, p.shift, p.width);
        else if (!nvdla_simd::pixel_fields_pack_line_avx512(src + h * row, dst + line, p.W, p.shift, p.width)) return false;
        continue;
      }
      if (isa_at_least(Isa::kAvx2)) {
        if (!to_physical) nvdla_simd::pixel_fields_unpack_line_avx2(src + line, dst + h * row, p.W, p.shift, p.width);
        else if (!nvdla_simd::pixel_fields_pack_line_avx2(src + h * row, dst + line, p.W, p.shift, p.width)) return false;
        continue;
      }
#endif
      if (!to_physical) pixel_fields_unpack_line(p, src + line, dst + h * row);
      else if (!pixel_fields_pack_line(p, src + h * row, dst + line)) return false;
      continue;
    }
    if (!p.planar) {
      // A pixel line is the logical row, shifted by the x offset, each word's
      // components reversed.
      if (to_physical) reverse_components(src + h * row, dst + line, p.W, p.C, p.cb, stream);
      else reverse_components(src + line, dst + h * row, p.W, p.C, p.cb, stream);
      continue;
    }
    const uint64_t uv = p.uvo + h * p.uls + p.x * p.uvpix;
    if (to_physical) {
      std::memset(dst + p.uvo + h * p.uls, 0, p.x * p.uvpix);
      const uint64_t used = (p.x + p.W) * p.uvpix;
      std::memset(dst + p.uvo + h * p.uls + used, 0, p.uls - used);
    }
    uint64_t w = 0;
#if defined(LC_NVDLA_AVX2)
    if (p.cb == 1 && isa_at_least(Isa::kAvx512Vbmi)) {
      if (to_physical) nvdla_simd::semi_planar_pack_line_vbmi(src + h * row, dst + line, dst + uv, p.W);
      else nvdla_simd::semi_planar_unpack_line_vbmi(src + line, src + uv, dst + h * row, p.W);
      continue;
    }
    if (p.cb == 1 && has_ssse3()) {
      w = to_physical ? semi_planar_u8_ssse3(src + h * row, nullptr, dst + line, dst + uv, nullptr, nullptr, p.W, true)
                      : semi_planar_u8_ssse3(nullptr, dst + h * row, nullptr, nullptr, src + line, src + uv, p.W, false);
    }
#endif
    const uint64_t rest = p.W - w, pix = p.C * p.cb;
    if (to_physical && p.cb == 1) semi_planar_pack_line<uint8_t>(src + h * row + w * pix, dst + line + w, dst + uv + 2 * w, rest);
    else if (to_physical) semi_planar_pack_line<uint16_t>(src + h * row + w * pix, dst + line + 2 * w, dst + uv + 4 * w, rest);
    else if (p.cb == 1) semi_planar_unpack_line<uint8_t>(src + line + w, src + uv + 2 * w, dst + h * row + w * pix, rest);
    else semi_planar_unpack_line<uint16_t>(src + line + 2 * w, src + uv + 4 * w, dst + h * row + w * pix, rest);
  }
#if defined(LC_NVDLA_AVX2)
  if (stream) _mm_sfence();  // this thread's non-temporal stores, before it reports its lines done
#endif
  return true;
}

// 10/12-bit values in 16-bit containers: every logical value below 2^bits (the
// OR of all of them has no higher bit), and unpacking keeps the low bits.
Status pixel_low_bits_check(const PixelPlan& p, const uint8_t* src) {
  const uint64_t n = p.H * p.W * p.C;
  uint16_t any = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint16_t v;
    std::memcpy(&v, src + 2 * i, 2);
    any = static_cast<uint16_t>(any | v);
  }
  if ((any >> p.low_bits) == 0) return Status();
  for (uint64_t i = 0; i < n; ++i) {
    uint16_t v;
    std::memcpy(&v, src + 2 * i, 2);
    if (v >> p.low_bits) {
      return Status::invalid(p.name + ": value " + str(v) + " of element " + str(i) + " does not fit its " + str(p.low_bits) +
                             "-bit component");
    }
  }
  return Status::internal("a pixel value did not fit, but none is too wide");
}

Status pixel_copy(const PixelPlan& p, DType t, const uint8_t* src, uint8_t* dst, bool to_physical) {
  if (p.low_bits && to_physical) LC_RETURN_IF_ERROR(pixel_low_bits_check(p, src));
  if (p.low_bits && !to_physical) {
    LC_RETURN_IF_ERROR(pixel_copy(PixelPlan{p}.without_low_bits(), t, src, dst, false));
    const uint16_t mask = static_cast<uint16_t>((1u << p.low_bits) - 1);
    for (uint64_t i = 0; i < p.H * p.W * p.C; ++i) {
      uint16_t v;
      std::memcpy(&v, dst + 2 * i, 2);
      v = static_cast<uint16_t>(v & mask);
      std::memcpy(dst + 2 * i, &v, 2);
    }
    return Status();
  }
  if (to_physical && p.planar) std::memset(dst + p.H * p.ls, 0, p.uvo - p.H * p.ls);  // between the planes
  std::atomic<bool> fits{true};
  parallel_ranges(p.H, p.size, [&](uint64_t begin, uint64_t end) {
    if (!pixel_lines(p, src, dst, to_physical, begin, end)) fits = false;
  });
  if (!fits) return pixel_fields_error(p, t, src);
  return Status();
}

// ---- SDP data ---------------------------------------------------------------------
//
// Per channel, atom a holds channels a*E..a*E+E-1 (E elements per atom) of P
// components each, so channel c starts at c * P * component bytes: the logical
// (C, P) buffer is the physical one, then zeros. Per element, the atom at
// (surface, h, w) holds E elements of P components: a transpose of E x W
// elements of P * component bytes, like feature data.

struct SdpPlan {
  bool per_element = false;
  uint64_t C = 0, H = 1, W = 1, P = 1, bpc = 1, epa = 32, bpa = 32, surfaces = 0, ls = 0, ss = 0, size = 0;
};


Result<SdpPlan> sdp_plan(const Case& c) {
  LC_RETURN_IF_ERROR(precision_ok(c.dtype));
  SdpPlan p;
  p.per_element = c.layout.name == "nvdla.sdp.element";
  const std::string use = c.layout.get("use");
  std::string proc = c.layout.get("proc");
  if (proc == "same") proc = dtype_name(c.dtype);
  if ((proc == "fp16") != (c.dtype == DType::kFp16)) return Status::invalid("fp16 SDP data and fp16 processing go together");
  p.epa = proc == "int8" ? 32 : 16;
  const uint64_t comps = use == "bn" || use == "ew2" ? 2 : 1;
  p.P = c.shape.back();
  if (p.P != comps) return Status::invalid("SDP use " + use + " has " + str(comps) + " components, not " + str(p.P));
  p.bpc = dtype_bits(c.dtype) / 8;
  p.bpa = p.epa * p.P * p.bpc;
  p.C = c.shape[0];
  p.surfaces = (p.C + p.epa - 1) / p.epa;
  if (c.layout.get_int("addr") % 32) return Status::invalid("SDP start address is not 32-byte aligned");
  if (!p.per_element) {
    uint64_t bytes = 0;
    if (!checked_mul(p.surfaces, p.bpa, &bytes) || bytes > kMaxBytes) return Status::invalid("SDP size overflows");
    p.size = up32(bytes);
    return p;
  }
  p.H = c.shape[1], p.W = c.shape[2];
  uint64_t line = 0, surface = 0;
  if (!checked_mul(p.W, p.bpa, &line) || line > kMaxBytes) return Status::invalid("SDP line overflows");
  p.ls = c.layout.get_int("line_stride");
  if (p.ls == 0) p.ls = up32(line);
  if (p.ls % 32 || p.ls < line) return Status::invalid("SDP line stride " + str(p.ls) + " unusable");
  if (!checked_mul(p.H, p.ls, &surface)) return Status::invalid("SDP surface overflows");
  p.ss = c.layout.get_int("surface_stride");
  if (p.ss == 0) p.ss = surface;
  if (p.ss % 32 || p.ss < surface) return Status::invalid("SDP surface stride " + str(p.ss) + " unusable");
  if (!checked_mul(p.surfaces, p.ss, &p.size) || p.size > kMaxBytes) return Status::invalid("SDP size overflows");
  return p;
}

void sdp_copy(const SdpPlan& p, const uint8_t* src, uint8_t* dst, bool to_physical) {
  const uint64_t es = p.P * p.bpc, bytes = p.C * es;
  if (!p.per_element) {
    if (to_physical) {
      std::memcpy(dst, src, bytes);
      std::memset(dst + bytes, 0, p.size - bytes);
    } else {
      std::memcpy(dst, src, bytes);
    }
    return;
  }
  atom_copy({p.C, p.H, p.W, es, p.epa, p.bpa, p.surfaces, p.ls, p.ss}, src, dst, to_physical);
}

// ---- multi-batch feature data -------------------------------------------------------
//
// Batch n is the feature cube of its C*H*W logical elements at n * batch stride;
// each cube goes through the feature copies above, and the bytes from a cube's
// end to the next batch are written 0 like the feature gaps.

struct BatchPlan {
  FeaturePlan cube;
  uint64_t N = 0, bs = 0, size = 0;
};

Result<BatchPlan> batch_plan(const Case& c) {
  BatchPlan b;
  Case cube = c;
  cube.shape.erase(cube.shape.begin());
  LC_ASSIGN_OR_RETURN(b.cube, feature_plan(cube));
  b.N = c.shape[0];
  b.bs = c.layout.get_int("batch_stride");
  if (b.bs == 0) b.bs = b.cube.size;
  if (b.bs % kAtom || b.bs < b.cube.size) return Status::invalid("feature batch stride " + str(b.bs) + " unusable for a cube of " + str(b.cube.size) + " bytes");
  if (!checked_mul(b.N, b.bs, &b.size) || b.size > kMaxBytes) return Status::invalid("feature batches overflow");
  return b;
}

void batch_copy(const BatchPlan& b, const uint8_t* src, uint8_t* dst, bool to_physical) {
  const uint64_t cube_bytes = b.cube.C * b.cube.H * b.cube.W * b.cube.eb;
  for (uint64_t n = 0; n < b.N; ++n) {
    if (to_physical) {
      feature_pack(b.cube, src + n * cube_bytes, dst + n * b.bs);
      std::memset(dst + n * b.bs + b.cube.size, 0, b.bs - b.cube.size);
    } else {
      feature_unpack(b.cube, src + n * b.bs, dst + n * cube_bytes);
    }
  }
}

// ---- deconvolution weights (set split) ----------------------------------------------
//
// Set (p, q) is the DC weight of the kernels subsampled at rows p + sy*i and
// columns q + sx*j, zero where that runs past the kernel; set s starts at
// s * (its DC size rounded up to 256). Packing gathers a set into a dense
// (K, C, Hs, Ws) staging tensor and maps it with the DC copy above; unpacking
// maps it back and scatters the taps that exist.

struct DeconvPlan {
  uint64_t sx = 1, sy = 1, H = 0, W = 0, hs = 0, ws = 0, stride = 0, size = 0;
  WeightPlan set, whole;  // a set's DC weights, the whole kernels' (stride above 1)
};

Result<DeconvPlan> deconv_plan(const Case& c) {
  DeconvPlan d;
  if (c.layout.get_int("post_extension") != 1) return Status::invalid("deconvolution weights take no post-extension");
  d.sx = c.layout.get_int("stride_x"), d.sy = c.layout.get_int("stride_y");
  d.H = c.shape[2], d.W = c.shape[3];
  d.hs = (d.H + d.sy - 1) / d.sy, d.ws = (d.W + d.sx - 1) / d.sx;
  Case set = c;
  set.layout = Layout{"nvdla.weight.dc", {{"addr", c.layout.get("addr")}, {"post_extension", "1"}}};
  set.shape[2] = static_cast<int64_t>(d.hs), set.shape[3] = static_cast<int64_t>(d.ws);
  LC_ASSIGN_OR_RETURN(d.set, weight_plan(set));
  if (d.sx * d.sy > 1) {
    set.shape[2] = static_cast<int64_t>(d.H), set.shape[3] = static_cast<int64_t>(d.W);
    LC_ASSIGN_OR_RETURN(d.whole, weight_plan(set));
  }
  d.stride = (d.set.size + 255) / 256 * 256;
  Checked size = Checked(d.sx * d.sy - 1) * d.stride + d.set.size;  // strides are at most 32
  if (!size.ok() || size.value() > kMaxBytes) return Status::invalid("deconvolution weight size overflows");
  d.size = size.value();
  return d;
}

// Where a set's (group g0 of gk kernels, channel block c0) starts in the set, in bytes.
uint64_t deconv_set_block(const DeconvPlan& d, uint64_t g0, uint64_t gk, uint64_t c0) {
  return (g0 * d.set.C + c0 * gk) * d.hs * d.ws * d.set.eb;
}

uint64_t deconv_place(const DeconvPlan& d, uint64_t k, uint64_t ch, uint64_t h, uint64_t w) {
  const WeightPlan& p = d.set;
  const uint64_t hw = p.H * p.W, pos = (h / d.sy) * p.W + w / d.sx;
  const uint64_t g = k / p.group, gk = std::min(p.group, p.K - g * p.group);
  const uint64_t c0 = ch & ~uint64_t{63}, cw = std::min<uint64_t>(64, p.C - c0);
  const uint64_t element = g * p.group * p.C * hw + c0 * hw * gk + (pos * gk + k % p.group) * cw + (ch - c0);
  return ((h % d.sy) * d.sx + w % d.sx) * d.stride + element * p.eb;
}

// Stride 1 in both directions is one set, the DC weights of the whole
// kernels. Otherwise a set's DC weights are those of the whole kernels with
// their positions chosen: in both a group's channel block holds each position's
// gk x cw elements together, so the whole kernels go through their DC copy
// (to or from a scratch) and each position's run of gk * cw elements moves
// between the scratch and its set (zero where the set's tap is past the
// kernel): runs of whole kernels' bytes, where the taps one by one were
// 0.007 of memcpy (256 x 256 x 4 x 4 int8, stride 2, on a Zen 4 capped at
// AVX2: 0.33 / 0.33 pack / unpack).
// Where the DC copy's paired tiles take every channel block, they place each
// tap's run in its set themselves (deconv_placed), one pass; otherwise the
// whole kernels' DC weights go through a scratch.
bool deconv_placed(const DeconvPlan& d, const uint8_t* src, uint8_t* dst, bool to_physical);

void deconv_copy(const DeconvPlan& d, const uint8_t* src, uint8_t* dst, bool to_physical) {
  const WeightPlan& p = d.set;
  const uint64_t sets = d.sx * d.sy;
  if (sets == 1) {
    if (to_physical) weight_copy(p, src, nullptr, dst, nullptr, true);
    else weight_copy(p, nullptr, dst, nullptr, src, false);
    if (to_physical) std::memset(dst + p.data, 0, p.size - p.data);
    return;
  }
  if (deconv_placed(d, src, dst, to_physical)) return;
  const WeightPlan& f = d.whole;
  std::unique_ptr<uint8_t[]> whole(new uint8_t[f.size]);  // the DC copy may touch its padding
  if (to_physical) weight_copy(f, src, nullptr, whole.get(), nullptr, true);
  const uint64_t eb = p.eb, hw = d.H * d.W;
  for (uint64_t s = 0; s < sets; ++s) {
    uint8_t* set = (to_physical ? dst : const_cast<uint8_t*>(src)) + s * d.stride;
    for (uint64_t g0 = 0; g0 < p.K; g0 += p.group) {
      const uint64_t gk = std::min(p.group, p.K - g0);
      for (uint64_t c0 = 0; c0 < p.C; c0 += 64) {
        const uint64_t run = gk * std::min<uint64_t>(64, p.C - c0) * eb;
        uint8_t* in_set = set + deconv_set_block(d, g0, gk, c0);
        uint8_t* in_whole = whole.get() + (g0 * p.C * hw + c0 * hw * gk) * eb;
        for (uint64_t h = s / d.sx; h < d.hs * d.sy; h += d.sy) {
          for (uint64_t w = s % d.sx; w < d.ws * d.sx; w += d.sx, in_set += run) {
            uint8_t* tap = in_whole + (h * d.W + w) * run;
            if (h < d.H && w < d.W) std::memcpy(to_physical ? in_set : tap, to_physical ? tap : in_set, run);
            else if (to_physical) std::memset(in_set, 0, run);
          }
        }
      }
    }
    if (to_physical) std::memset(set + p.data, 0, (s + 1 == sets ? p.size : d.stride) - p.data);
  }
  if (!to_physical) weight_copy(f, nullptr, dst, nullptr, whole.get(), false);
}

// Tap (h, w) of the whole kernels is tap (h / sy, w / sx) of set
// (h mod sy) * sx + w mod sx; in a (group, channel block) its run of gk x cw
// elements lies at the set's start, the block's start in a set and the tap's
// place in the block. The pairs move each position's run between the kernels
// and that place; packing then zeroes the sets' taps past the kernel and each
// set's bytes past its data. False (nothing written) where the pairs do not
// take every block: under 2 x 16 bytes of channels in a block, kernels of
// fewer than 16 bytes' positions, or no AVX2. (256 x 256 x 4 x 4 int8, stride
// 2, in the benchmark on an Intel Xeon, pack / unpack, of memcpy, against the
// scratch: 0.29 / 0.28 -> 0.61 / 0.56; capped at AVX2 0.27 / 0.28 -> 0.62 / 0.56.)
bool deconv_placed(const DeconvPlan& d, const uint8_t* src, uint8_t* dst, bool to_physical) {
  const WeightPlan& p = d.set;
  const uint64_t eb = p.eb, hw = d.H * d.W, khw = p.C * hw, t = eb == 1 ? 16 : 8;
  const uint64_t tail = p.C % 64;
  if (!has_avx2() || (eb != 1 && eb != 2) || hw < t || p.C < 2 * t || (tail != 0 && tail < 2 * t)) return false;
  static thread_local std::vector<uint64_t> place;
  place.resize(hw);
  for (uint64_t g0 = 0; g0 < p.K; g0 += p.group) {
    const uint64_t gk = std::min(p.group, p.K - g0);
    for (uint64_t c0 = 0; c0 < p.C; c0 += 64) {
      const uint64_t cw = std::min<uint64_t>(64, p.C - c0), run = gk * cw * eb;
      const uint64_t in_set = deconv_set_block(d, g0, gk, c0), rows = (g0 * khw + c0 * hw) * eb;
      for (uint64_t h = 0; h < d.H; ++h) {
        for (uint64_t w = 0; w < d.W; ++w) {
          place[h * d.W + w] = ((h % d.sy) * d.sx + w % d.sx) * d.stride + in_set + ((h / d.sy) * d.ws + w / d.sx) * run;
        }
      }
      const bool done = to_physical ? dc_block_tiles(src + rows, dst, khw * eb, gk, cw, hw, eb, true, place.data())
                                    : dc_block_tiles(src, dst + rows, khw * eb, gk, cw, hw, eb, false, place.data());
      if (!done) return false;  // only the first block: every block is alike
    }
  }
  if (!to_physical) return true;
  const uint64_t sets = d.sx * d.sy;
  for (uint64_t s = 0; s < sets; ++s) {
    uint8_t* set = dst + s * d.stride;
    const uint64_t h0 = s / d.sx, w0 = s % d.sx;
    if (h0 + (d.hs - 1) * d.sy >= d.H || w0 + (d.ws - 1) * d.sx >= d.W) {  // taps past the kernel
      for (uint64_t g0 = 0; g0 < p.K; g0 += p.group) {
        const uint64_t gk = std::min(p.group, p.K - g0);
        for (uint64_t c0 = 0; c0 < p.C; c0 += 64) {
          const uint64_t run = gk * std::min<uint64_t>(64, p.C - c0) * eb;
          uint8_t* block = set + deconv_set_block(d, g0, gk, c0);
          for (uint64_t i = 0; i < d.hs; ++i) {
            for (uint64_t j = 0; j < d.ws; ++j) {
              if (h0 + i * d.sy >= d.H || w0 + j * d.sx >= d.W) std::memset(block + (i * d.ws + j) * run, 0, run);
            }
          }
        }
      }
    }
    std::memset(set + p.data, 0, (s + 1 == sets ? p.size : d.stride) - p.data);
  }
  return true;
}

// ---- the Impl ---------------------------------------------------------------------

// Which of the family's layouts a case is, its shape checked: each entry point asks once.
enum class Kind { kFeature, kBatch, kWeight, kWinograd, kDeconv, kPixel, kSdp };

Result<Kind> kind_of(const Case& c) {
  const std::string& n = c.layout.name;
  Kind kind;
  if (n == "nvdla.feature") kind = Kind::kFeature;
  else if (n == "nvdla.weight.dc" || n == "nvdla.weight.image") kind = Kind::kWeight;
  else if (n == "nvdla.sdp.channel" || n == "nvdla.sdp.element") kind = Kind::kSdp;
  else if (n == "nvdla.pixel") kind = Kind::kPixel;
  else if (n == "nvdla.weight.winograd") kind = Kind::kWinograd;
  else if (n == "nvdla.weight.deconv") kind = Kind::kDeconv;
  else if (n == "nvdla.feature.batch") kind = Kind::kBatch;
  else return Status::invalid("unknown layout " + n);
  const LayoutSpec* spec = find_spec(n);
  if (!spec) return Status::invalid("unknown layout " + n);
  LC_RETURN_IF_ERROR(check_shape(*spec, c.shape));
  return kind;
}

// The checker asks one case many questions: each derives the plan once (core/case_cache.h).
Result<std::shared_ptr<const FeaturePlan>> cached_feature_plan(const Case& c) {
  thread_local CaseCache<FeaturePlan> cache;
  return cache.get(c, feature_plan);
}
Result<std::shared_ptr<const WeightPlan>> cached_weight_plan(const Case& c) {
  thread_local CaseCache<WeightPlan> cache;
  return cache.get(c, weight_plan);
}
Result<std::shared_ptr<const WinogradPlan>> cached_winograd_plan(const Case& c) {
  thread_local CaseCache<WinogradPlan> cache;
  return cache.get(c, winograd_plan);
}
Result<std::shared_ptr<const BatchPlan>> cached_batch_plan(const Case& c) {
  thread_local CaseCache<BatchPlan> cache;
  return cache.get(c, batch_plan);
}
Result<std::shared_ptr<const DeconvPlan>> cached_deconv_plan(const Case& c) {
  thread_local CaseCache<DeconvPlan> cache;
  return cache.get(c, deconv_plan);
}
Result<std::shared_ptr<const PixelPlan>> cached_pixel_plan(const Case& c) {
  thread_local CaseCache<PixelPlan> cache;
  return cache.get(c, pixel_plan);
}
Result<std::shared_ptr<const SdpPlan>> cached_sdp_plan(const Case& c) {
  thread_local CaseCache<SdpPlan> cache;
  return cache.get(c, sdp_plan);
}

class NvdlaOptimized : public Impl {
 public:
  std::string name() const override { return "optimized"; }

  Status supports(const Case& c) const override { return size_bytes(c).status(); }

  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(Kind kind, kind_of(c));
    switch (kind) {
      case Kind::kFeature: return size_of(cached_feature_plan(c));
      case Kind::kBatch: return size_of(cached_batch_plan(c));
      case Kind::kWeight: return size_of(cached_weight_plan(c));
      case Kind::kWinograd: return size_of(cached_winograd_plan(c));
      case Kind::kDeconv: return size_of(cached_deconv_plan(c));
      case Kind::kPixel: return size_of(cached_pixel_plan(c));
      case Kind::kSdp: return size_of(cached_sdp_plan(c));
    }
    return Status::internal("unknown NVDLA layout kind");
  }

  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_ASSIGN_OR_RETURN(Kind kind, kind_of(c));
    LC_RETURN_IF_ERROR(check_coord(c, at));
    switch (kind) {
      case Kind::kFeature: {
        LC_ASSIGN_OR_RETURN(auto p_ptr, cached_feature_plan(c));
        const FeaturePlan& p = *p_ptr;
        const uint64_t ch = at[0];
        return (ch / p.per_atom * p.ss + at[1] * p.ls + at[2] * kAtom + ch % p.per_atom * p.eb) * 8;
      }
      case Kind::kPixel: {
        LC_ASSIGN_OR_RETURN(auto p_ptr, cached_pixel_plan(c));
        return pixel_place_bits(*p_ptr, at[0], at[1], at[2]);
      }
      case Kind::kWinograd: {
        LC_ASSIGN_OR_RETURN(auto p_ptr, cached_winograd_plan(c));
        const WinogradPlan& p = *p_ptr;
        return winograd_element(p, at[0], at[1], at[2] * 4 + at[3]) * p.eb * 8;
      }
      case Kind::kDeconv: {
        LC_ASSIGN_OR_RETURN(auto d_ptr, cached_deconv_plan(c));
        return deconv_place(*d_ptr, at[0], at[1], at[2], at[3]) * 8;
      }
      case Kind::kBatch: {
        LC_ASSIGN_OR_RETURN(auto b_ptr, cached_batch_plan(c));
        const FeaturePlan& p = b_ptr->cube;
        const uint64_t ch = at[1];
        return (at[0] * b_ptr->bs + ch / p.per_atom * p.ss + at[2] * p.ls + at[3] * kAtom + ch % p.per_atom * p.eb) * 8;
      }
      case Kind::kSdp: {
        LC_ASSIGN_OR_RETURN(auto p_ptr, cached_sdp_plan(c));
        const SdpPlan& p = *p_ptr;
        const uint64_t ch = at[0], comp = at.back();
        if (!p.per_element) return (ch * p.P + comp) * p.bpc * 8;
        return (ch / p.epa * p.ss + at[1] * p.ls + at[2] * p.bpa + (ch % p.epa * p.P + comp) * p.bpc) * 8;
      }
      case Kind::kWeight: {
        LC_ASSIGN_OR_RETURN(auto p_ptr, cached_weight_plan(c));
        const WeightPlan& p = *p_ptr;
        if (p.image) return image_element(p, at[0], at[1], at[2], at[3]) * p.eb * 8;
        const uint64_t k = at[0], ch = at[1], pos = at[2] * p.W + at[3], hw = p.H * p.W;
        const uint64_t g = k / p.group, gk = std::min(p.group, p.K - g * p.group);
        const uint64_t c0 = ch / 64 * 64, cw = std::min<uint64_t>(64, p.C - c0);
        const uint64_t element = g * p.group * p.C * hw + c0 * hw * gk + (pos * gk + k % p.group) * cw + (ch - c0);
        return element * p.eb * 8;
      }
    }
    return Status::internal("unknown NVDLA layout kind");
  }

  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    return convert(c, static_cast<const uint8_t*>(logical), static_cast<uint8_t*>(physical), logical_size,
                   physical_size, true);
  }

  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    return convert(c, static_cast<const uint8_t*>(physical), static_cast<uint8_t*>(logical), logical_size,
                   physical_size, false);
  }

 private:
  template <typename Plan>
  static Result<uint64_t> size_of(const Result<std::shared_ptr<const Plan>>& plan) {
    if (!plan.ok()) return plan.status();
    return (*plan)->size;
  }

  // The plan, its size checking the buffers, then copy(plan).
  template <typename Plan, typename Copy>
  static Status with_plan(const Result<std::shared_ptr<const Plan>>& plan, const Case& c, size_t logical_size,
                          size_t physical_size, Copy&& copy) {
    if (!plan.ok()) return plan.status();
    LC_RETURN_IF_ERROR(check_buffers(c, (*plan)->size, logical_size, physical_size));
    return copy(**plan);
  }

  // One plan lookup a call (src logical when packing).
  static Status convert(const Case& c, const uint8_t* src, uint8_t* dst, size_t logical_size, size_t physical_size,
                        bool pack) {
    LC_ASSIGN_OR_RETURN(Kind kind, kind_of(c));
    const size_t ls = logical_size, ps = physical_size;
    switch (kind) {
      case Kind::kFeature:
        return with_plan(cached_feature_plan(c), c, ls, ps, [&](const FeaturePlan& p) {
          if (pack) feature_pack(p, src, dst);
          else feature_unpack(p, src, dst);
          return Status();
        });
      case Kind::kBatch:
        return with_plan(cached_batch_plan(c), c, ls, ps, [&](const BatchPlan& p) {
          batch_copy(p, src, dst, pack);
          return Status();
        });
      case Kind::kWeight:
        return with_plan(cached_weight_plan(c), c, ls, ps, [&](const WeightPlan& p) {
          if (p.image) image_copy(p, src, dst, pack);
          else if (pack) weight_copy(p, src, nullptr, dst, nullptr, true);
          else weight_copy(p, nullptr, dst, nullptr, src, false);
          if (pack) std::memset(dst + p.data, 0, p.size - p.data);
          return Status();
        });
      case Kind::kWinograd:
        return with_plan(cached_winograd_plan(c), c, ls, ps, [&](const WinogradPlan& p) {
          winograd_copy(p, src, dst, pack);
          return Status();
        });
      case Kind::kDeconv:
        return with_plan(cached_deconv_plan(c), c, ls, ps, [&](const DeconvPlan& p) {
          deconv_copy(p, src, dst, pack);
          return Status();
        });
      case Kind::kPixel:
        return with_plan(cached_pixel_plan(c), c, ls, ps,
                         [&](const PixelPlan& p) { return pixel_copy(p, c.dtype, src, dst, pack); });
      case Kind::kSdp:
        return with_plan(cached_sdp_plan(c), c, ls, ps, [&](const SdpPlan& p) {
          sdp_copy(p, src, dst, pack);
          return Status();
        });
    }
    return Status::internal("unknown NVDLA layout kind");
  }
};

}  // namespace

const Impl& nvdla_optimized() {
  static const NvdlaOptimized impl;
  return impl;
}

}  // namespace layoutcheck
