// Fast pack/unpack for the MegEngine layouts: blocked transposes.
//
// Why it equals the reference: every MegEngine layout other than NCHW and the
// row-major matrix is, group by group, a transpose of R logical rows of L
// elements into L "pixels" of R elements, stored contiguously:
//
//   NHWC    group n:      rows c = 0..C-1           (n*C + c)*HW,  L = HW
//   NCHWX   group n, b:   rows c = b*X .. b*X+X-1   (n*C + c)*HW,  L = HW
//                         (c >= C is a padding row: zeros)
//   CHWN4   group b:      rows (n, i), c = 4b + i   (n*C + c)*HW,  L = HW
//   matrix col:           rows r = 0..rows-1        r*cols,        L = cols
//
// and the groups follow each other in physical order, so the physical
// buffer is written front to back. The transposes run in SIMD tiles with
// scalar edges: AVX2 (chosen at run time) 4x8 32-bit and 8x16 16-bit tiles
// and 32x256 8-bit blocks, SSE2 4x4 32-bit, 8x8 and 4x8 16-bit, 16x16 and
// 4x16 8-bit tiles otherwise, and with
// AVX-512 (also chosen at run time) 4x16 32-bit and 4x64 8-bit tiles for
// NCHW4 (R == 4: whole lines from registers, streamed straight to memory for
// large tensors, rows fetched ahead in software since four far-apart streams
// outrun the hardware prefetchers) and 16x16 32-bit tiles (every row's cache
// line in one access) for 16 | R, and packs of 8-bit groups of 32 rows (or
// streamed, 64k rows) in 64-column tiles transposed in registers (64k rows in
// cache through a stage refilled while it is transposed), and unpacks of
// 8-bit groups of 64k rows in cache in 64 x 64 byte transposes (the packs'
// last tile partial, its rows read masked). Groups of at most 64 pixels in
// cache (late layers: 7 x 7, 3 x 3) of whole 64 (NCHW64) or 32 (NCHW32 pack)
// 8-bit rows are one block of the tensor each and go as one tile in
// registers straight from it, NHWC images of 32-bit elements in 16-row tiles
// through a stage, NCHW4 images of rows under 16 bytes block by block in
// 16-byte registers (AVX-512 VBMI: many blocks a byte permute); images of one
// pixel (1 x 1) are copies (the padding of a part block zeros); with AVX-512
// the other pixels past the whole tiles go in masked 16-row tiles; with AVX-512
// VBMI packs of 8-bit groups of 24 rows (NHWC, 24 channels) go 64 pixels a step
// in registers, each line stored once; 4-bit elements (two per byte, low nibble
// first) go as 8-bit groups of row pairs (with AVX-512, groups of 64 rows 128
// pixels a step, the pairs in registers; rows inside a byte through copies on
// bytes), groups in cache of few pixels or an odd number of rows through bytes,
// one element each, and the 8-bit transposes. Tensors of kStreamBytes and more
// are packed with streaming stores: straight from the registers where a tile
// writes whole lines (those 8-bit tiles, 32-bit groups of 16k rows taken 32
// rows a pass), else block by block through an L1 stage; groups of many rows
// are unpacked the same way, a block of pixels into stage rows that stream out
// to the logical rows.
// Tiles only move whole elements between the places the table above gives
// them; padding rows read as zeros. Large tensors split over threads
// (optimized/threads.h) by groups, or by runs of pixels of every group when
// the groups are few, handed out to the threads as they get free: each thread
// writes its own pixels (pack) or its own parts of the rows (unpack) and
// fences its own streaming stores.
#include <algorithm>
#include <cstring>
#include <vector>
#include <type_traits>
#include <utility>

#include <unistd.h>

#define LC_MGE_UNROLL _Pragma("GCC unroll 16")

#if defined(__x86_64__) || defined(_M_X64)
// gcc 12 warns inside avx512fintrin.h, whose _mm512_undefined_* helpers read an
// uninitialized variable on purpose (a false positive for every intrinsic using them).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "optimized/masked.h"
#define LC_MGE_X86 1
#endif

#include "core/case_cache.h"
#include "layoutcheck/checked.h"
#include "optimized/byte_transpose.h"
#include "optimized/families.h"
#include "optimized/group_permutes.h"
#include "optimized/isa.h"
#include "optimized/lane_interleave.h"
#include "optimized/threads.h"

namespace layoutcheck {
namespace {

constexpr uint64_t kStreamBytes = 16u << 20;   // pack and unpack larger tensors with streaming stores
constexpr uint64_t kStageBytes = 16u << 10;    // the L1 stage of a streamed pack
constexpr uint64_t kWideStageBytes = 128u << 10;  // the L2 stage of a streamed pack in 16-row tiles
constexpr uint64_t kUnstageBytes = 16u << 10;  // the L1 stage of a streamed unpack
constexpr uint64_t kLine = 64;                 // bytes in a cache line
constexpr uint64_t kDirectRows = 8;            // groups of up to this many rows unpack in place
constexpr uint64_t kPrefetchBytes = 3u << 10;  // how far ahead of its loads a streamed transpose fetches a row
constexpr uint64_t kRowFetch = 512;            // the same for the passes of a streamed 32-bit pack
// Rows a pass of a streamed 32-bit pack reads at once: each pixel's two lines
// of them written together (measured on an Intel Xeon, pinned, alternating,
// NHWC fp32 8 x 64 x 256 x 128, against passes of 16 rows, a line a pixel:
// 6.8-7.2 -> 5.5 ms a pack beside a memcpy of 6.0-6.5, 4 x 256 x 128 x 128
// 6.9-7.2 -> 5.8; capped at AVX2 7.0-7.1 -> 6.2 and 7.2 -> 6.4; the whole
// 64 rows a pass 7.1 / 6.6-6.8).
constexpr uint64_t kPassRows = 32;

enum class Kind { kIdentity, kNhwc, kNchwx, kChwn4, kColMajor };

struct Plan {
  Kind kind = Kind::kIdentity;
  uint64_t bits = 8;
  uint64_t N = 1, C = 1, HW = 1;      // 4-D layouts
  uint64_t rows = 1, cols = 1;        // matrix
  uint64_t block = 1;                 // X
  uint64_t elements = 0;              // logical
  uint64_t physical_elements = 0;
  uint64_t phys_bytes = 0;
  uint64_t logical_bytes = 0;
  bool stream = false;                // pack through a stage with non-temporal stores
};

Result<Plan> make_plan(const Case& c) {
  const LayoutSpec* spec = find_spec(c.layout.name);
  if (!spec) return Status::invalid("unknown layout " + c.layout.name);
  LC_RETURN_IF_ERROR(check_shape(*spec, c.shape));
  Plan p;
  p.bits = dtype_bits(c.dtype);
  LC_ASSIGN_OR_RETURN(p.elements, element_count(c.shape));
  LC_ASSIGN_OR_RETURN(p.logical_bytes, logical_bytes(c));
  const std::string fmt = c.layout.name.substr(4);
  Checked phys = 1;
  if (fmt == "matrix") {
    p.rows = c.shape[0], p.cols = c.shape[1];
    p.kind = c.layout.get("order") == "col" ? Kind::kColMajor : Kind::kIdentity;
    phys = p.elements;
  } else {
    p.N = c.shape[0], p.C = c.shape[1];
    p.HW = static_cast<uint64_t>(c.shape[2]) * static_cast<uint64_t>(c.shape[3]);  // bounded by elements
    if (fmt == "nchw") {
      p.kind = Kind::kIdentity;
    } else if (fmt == "nhwc") {
      p.kind = Kind::kNhwc;
    } else if (fmt == "chwn4") {
      p.kind = Kind::kChwn4;
      p.block = 4;
    } else if (fmt == "nchw4" || fmt == "nchw32" || fmt == "nchw64") {
      p.kind = Kind::kNchwx;
      p.block = fmt == "nchw4" ? 4 : fmt == "nchw32" ? 32 : 64;
    } else {
      return Status::invalid("unknown MegEngine format " + c.layout.name);
    }
    phys = Checked(p.N) * ceil_div(p.C, p.block) * p.block * p.HW;
    // Images of one pixel (1 x 1: after a global pooling, a fully connected
    // layer's input): NHWC, NCHWx of whole blocks and CHWN4 of one image of
    // whole blocks are the logical order itself.
    if (p.HW == 1 && (p.kind == Kind::kNhwc || (p.kind == Kind::kNchwx && p.C % p.block == 0) ||
                      (p.kind == Kind::kChwn4 && p.N == 1 && p.C % 4 == 0))) {
      p.kind = Kind::kIdentity;
    }
  }
  Checked bits = phys * p.bits;
  if (!bits.ok() || bits.value() > (uint64_t{1} << 62)) {
    return Status::invalid(c.layout.name + ": physical size of " + to_string(c) + " overflows");
  }
  p.physical_elements = phys.value();
  p.phys_bytes = ceil_div(bits.value(), 8);
  p.stream = p.phys_bytes >= kStreamBytes;
  return p;
}

// ---- one group: R rows of L elements <-> L pixels of R elements -------------
//
// rows[r] is the element index of row r in the logical buffer, or kPad for a
// padding row; pixels is the element index of the first pixel.
constexpr uint64_t kPad = ~uint64_t{0};

struct Group {
  const uint64_t* rows;
  uint64_t R, L, pixels;
  // The tiles of 32-bit (8-bit) elements take this many rows (at least 16
  // (32)) over the whole run of pixels before the next rows; 16-bit tiles the
  // multiple of 32 (8) at or below it.
  uint64_t group_rows = 64;
  // An unpack in cache: the 8-bit blocks take long runs of each row.
  bool long_rows = false;
};

#if LC_MGE_X86
bool have_avx512();

// Columns l0.. of every row with AVX-512 masks, in tiles of 16 rows x 64
// (8-bit) or 16 (32-bit) columns: the columns the tiles below leave (the
// last L % 64 pixels) and groups of fewer pixels than a tile, which late
// convolution layers have (7 x 7, 1 x 1: measured on a Zen 4, 1 x 2048 x 7 x 7
// int8 NCHW64 0.03 of memcpy element by element). A tile loads its rows'
// columns masked (zeros past the last column, and for padding rows), is
// transposed in registers (16x16 per 128-bit lane for bytes, 16x16 for 32-bit
// elements), and each of its pixels takes its 16 rows in one masked store
// (unpack: the other way round, masked stores into the rows). Groups of 16k
// rows only, and 16 (8-bit) or 4 (32-bit) columns or more: fewer go element by
// element, cheaper than a whole tile.
template <bool kPack>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) void masked_tiles_epi8(const Group& g, uint8_t* logical,
                                                                                     uint8_t* phys, uint64_t l0) {
  for (uint64_t l = l0; l < g.L; l += 64) {
    const uint64_t n = std::min<uint64_t>(64, g.L - l);
    const __mmask64 cols = n == 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
    for (uint64_t r0 = 0; r0 < g.R; r0 += 16) {
      const uint64_t nr = std::min<uint64_t>(16, g.R - r0);
      const __mmask16 rows = static_cast<__mmask16>((1u << nr) - 1);
      uint8_t* px = phys + g.pixels + l * g.R + r0;  // pixel l + c at c * R
      __m512i v[16];
      if (kPack) {
        LC_MGE_UNROLL
        for (uint64_t k = 0; k < 16; ++k) {
          const bool live = k < nr && g.rows[r0 + k] != kPad;
          v[k] = live ? masked::_mm512_maskz_loadu_epi8(cols, logical + g.rows[r0 + k] + l) : _mm512_setzero_si512();
        }
        byte_transpose::transpose16x16_epi8_x4(v);  // v[j], lane q: column 16q + j of the 16 rows
      } else {
        LC_MGE_UNROLL
        for (uint64_t j = 0; j < 16; ++j) v[j] = _mm512_setzero_si512();
      }
#define LC_MGE_LANE(q)                                                                                          \
  for (uint64_t j = 0; j < 16 && 16 * (q) + j < n; ++j) {                                                        \
    uint8_t* at = px + (16 * (q) + j) * g.R;                                                                    \
    if (kPack) masked::_mm_mask_storeu_epi8(at, rows, _mm512_extracti32x4_epi32(v[j], q));                               \
    else v[j] = _mm512_inserti32x4(v[j], masked::_mm_maskz_loadu_epi8(rows, at), q);                                   \
  }
      LC_MGE_LANE(0) LC_MGE_LANE(1) LC_MGE_LANE(2) LC_MGE_LANE(3)
#undef LC_MGE_LANE
      if (!kPack) {
        byte_transpose::transpose16x16_epi8_x4(v);  // v[k]: the columns of row r0 + k
        for (uint64_t k = 0; k < nr; ++k) {
          if (g.rows[r0 + k] != kPad) masked::_mm512_mask_storeu_epi8(logical + g.rows[r0 + k] + l, cols, v[k]);
        }
      }
    }
  }
}

template <bool kPack>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) void masked_tiles_epi32(const Group& g, uint8_t* logical,
                                                                                      uint8_t* phys, uint64_t l0) {
  float* lg = reinterpret_cast<float*>(logical);
  float* ph = reinterpret_cast<float*>(phys);
  for (uint64_t l = l0; l < g.L; l += 16) {
    const uint64_t n = std::min<uint64_t>(16, g.L - l);
    const __mmask16 cols = static_cast<__mmask16>((1u << n) - 1);
    for (uint64_t r0 = 0; r0 < g.R; r0 += 16) {
      const uint64_t nr = std::min<uint64_t>(16, g.R - r0);
      const __mmask16 rows = static_cast<__mmask16>((1u << nr) - 1);
      float* px = ph + g.pixels + l * g.R + r0;
      __m512i v[16];
      LC_MGE_UNROLL
      for (uint64_t k = 0; k < 16; ++k) {
        if (kPack) {
          const bool live = k < nr && g.rows[r0 + k] != kPad;
          v[k] = live ? masked::_mm512_maskz_loadu_epi32(cols, lg + g.rows[r0 + k] + l) : _mm512_setzero_si512();
        } else {
          v[k] = k < n ? masked::_mm512_maskz_loadu_epi32(rows, px + k * g.R) : _mm512_setzero_si512();
        }
      }
      byte_transpose::transpose16x16_epi32(v);
      for (uint64_t k = 0; k < (kPack ? n : nr); ++k) {
        if (kPack) masked::_mm512_mask_storeu_epi32(px + k * g.R, rows, v[k]);
        else if (g.rows[r0 + k] != kPad) masked::_mm512_mask_storeu_epi32(lg + g.rows[r0 + k] + l, cols, v[k]);
      }
    }
  }
}
#endif

// Columns l0.. of every row (what the tiles of a group leave, or a whole
// group): the masked AVX-512 tiles above for 8- and 32-bit elements where the
// CPU has them, else element by element in tiles of 8 rows x 64 columns, for
// any whole-byte size.
template <bool kPack, size_t kBytes>
void transpose_rest(const Group& g, uint8_t* logical, uint8_t* phys, uint64_t l0) {
#if LC_MGE_X86
  if ((kBytes == 1 || kBytes == 4) && g.R % 16 == 0 && g.L - l0 >= 64 / kBytes / 4 && have_avx512()) {
    if (kBytes == 1) masked_tiles_epi8<kPack>(g, logical, phys, l0);
    else masked_tiles_epi32<kPack>(g, logical, phys, l0);
    return;
  }
#endif
  constexpr uint64_t kTileL = 64, kTileR = 8;
  for (uint64_t lt = l0; lt < g.L; lt += kTileL) {
    const uint64_t le = std::min(g.L, lt + kTileL);
    for (uint64_t rt = 0; rt < g.R; rt += kTileR) {
      const uint64_t re = std::min(g.R, rt + kTileR);
      for (uint64_t r = rt; r < re; ++r) {
        uint8_t* px = phys + (g.pixels + lt * g.R + r) * kBytes;
        if (g.rows[r] == kPad) {
          if (kPack) {
            for (uint64_t l = lt; l < le; ++l, px += g.R * kBytes) std::memset(px, 0, kBytes);
          }
          continue;
        }
        uint8_t* row = logical + (g.rows[r] + lt) * kBytes;
        for (uint64_t l = lt; l < le; ++l, px += g.R * kBytes, row += kBytes) {
          if (kPack) std::memcpy(px, row, kBytes);
          else std::memcpy(row, px, kBytes);
        }
      }
    }
  }
}

// Whole-byte elements: SIMD tiles where they fit, scalar edges.
template <bool kPack, size_t kBytes>
void transpose_bytes(const Group& g, uint8_t* logical, uint8_t* phys);

#if LC_MGE_X86
// The 4x4 transpose of 32-bit lanes: rows r0..r3 <-> 4 pixels of 4 elements.
__attribute__((always_inline)) inline void transpose4x4_epi32(__m128i& a, __m128i& b, __m128i& c, __m128i& d) {
  __m128i t0 = _mm_unpacklo_epi32(a, b), t1 = _mm_unpacklo_epi32(c, d);
  __m128i t2 = _mm_unpackhi_epi32(a, b), t3 = _mm_unpackhi_epi32(c, d);
  a = _mm_unpacklo_epi64(t0, t1);
  b = _mm_unpackhi_epi64(t0, t1);
  c = _mm_unpacklo_epi64(t2, t3);
  d = _mm_unpackhi_epi64(t2, t3);
}

inline __m128i load_row(const uint8_t* logical, uint64_t row, uint64_t offset_bytes) {
  if (row == kPad) return _mm_setzero_si128();
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(logical + offset_bytes));
}

// 32-bit elements, R a multiple of 4: 4 rows x 4 columns per tile.
template <bool kPack>
uint64_t tiles_4x4_epi32(const Group& g, uint8_t* logical, uint8_t* phys) {
  const uint64_t L4 = g.L / 4 * 4;
  const uint64_t pitch = g.R * 4;  // bytes per pixel
  for (uint64_t lb = 0; lb < L4; lb += 16) {
   for (uint64_t r0 = 0; r0 < g.R; r0 += 4) {
    const uint64_t r = std::min(r0, g.R - 4);  // the last 4 rows (some of them again, the same bytes)
    const uint64_t* rows = g.rows + r;
    uint8_t* px = phys + (g.pixels + r) * 4;
    for (uint64_t l = lb; l < std::min(L4, lb + 16); l += 4) {
      if (kPack) {
        __m128i a = load_row(logical, rows[0], (rows[0] + l) * 4);
        __m128i b = load_row(logical, rows[1], (rows[1] + l) * 4);
        __m128i c = load_row(logical, rows[2], (rows[2] + l) * 4);
        __m128i d = load_row(logical, rows[3], (rows[3] + l) * 4);
        transpose4x4_epi32(a, b, c, d);
        uint8_t* out = px + l * pitch;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), a);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + pitch), b);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * pitch), c);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 3 * pitch), d);
      } else {
        const uint8_t* in = px + l * pitch;
        __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
        __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + pitch));
        __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * pitch));
        __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 3 * pitch));
        transpose4x4_epi32(a, b, c, d);
        __m128i v[4] = {a, b, c, d};
        LC_MGE_UNROLL
        for (int k = 0; k < 4; ++k) {
          if (rows[k] != kPad) _mm_storeu_si128(reinterpret_cast<__m128i*>(logical + (rows[k] + l) * 4), v[k]);
        }
      }
    }
   }
  }
  return L4;
}

// 8-bit elements, 16 rows or more: 16 rows x 16 columns per tile; with R no
// multiple of 16 the last tile of a column takes the last 16 rows (AVX2
// hosts, 1 x 24 x 56 x 56 NHWC int8 on a Zen 5 capped so: 0.03 of memcpy
// element by element, 0.09 / 0.08 pack / unpack so).
template <bool kPack>
uint64_t tiles_16x16_epi8(const Group& g, uint8_t* logical, uint8_t* phys) {
  const uint64_t L16 = g.L / 16 * 16;
  const uint64_t pitch = g.R;
  for (uint64_t l = 0; l < L16; l += 16) {
    for (uint64_t r0 = 0; r0 < g.R; r0 += 16) {
      const uint64_t r = std::min(r0, g.R - 16);  // the last 16 rows (some of them again, the same bytes)
      const uint64_t* rows = g.rows + r;
      uint8_t* px = phys + g.pixels + r + l * pitch;
      __m128i v[16];
      if (kPack) {
        LC_MGE_UNROLL
        for (int k = 0; k < 16; ++k) v[k] = load_row(logical, rows[k], rows[k] + l);
        byte_transpose::transpose16x16_epi8(v);
        LC_MGE_UNROLL
        for (int k = 0; k < 16; ++k) _mm_storeu_si128(reinterpret_cast<__m128i*>(px + k * pitch), v[k]);
      } else {
        LC_MGE_UNROLL
        for (int k = 0; k < 16; ++k) v[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(px + k * pitch));
        byte_transpose::transpose16x16_epi8(v);
        LC_MGE_UNROLL
        for (int k = 0; k < 16; ++k) {
          if (rows[k] != kPad) _mm_storeu_si128(reinterpret_cast<__m128i*>(logical + rows[k] + l), v[k]);
        }
      }
    }
  }
  return L16;
}

// 8-bit elements, R == 4 (NCHW4, CHWN4 with N = 1): 4 rows x 16 columns ->
// 64 contiguous bytes.
template <bool kPack>
uint64_t tiles_4x16_epi8(const Group& g, uint8_t* logical, uint8_t* phys) {
  const uint64_t L16 = g.L / 16 * 16;
  const uint64_t* rows = g.rows;
  uint8_t* px = phys + g.pixels;
  for (uint64_t l = 0; l < L16; l += 16) {
    __m128i* out = reinterpret_cast<__m128i*>(px + l * 4);
    if (kPack) {
      __m128i a = load_row(logical, rows[0], rows[0] + l), b = load_row(logical, rows[1], rows[1] + l);
      __m128i c = load_row(logical, rows[2], rows[2] + l), d = load_row(logical, rows[3], rows[3] + l);
      __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
      __m128i cd0 = _mm_unpacklo_epi8(c, d), cd1 = _mm_unpackhi_epi8(c, d);
      _mm_storeu_si128(out, _mm_unpacklo_epi16(ab0, cd0));
      _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(ab0, cd0));
      _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(ab1, cd1));
      _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(ab1, cd1));
    } else {
      // Pixels p0..p15 of 4 bytes: gather byte k of every pixel into row k.
      const __m128i byte_mask = _mm_set1_epi32(0xFF);
      __m128i q[4];
      LC_MGE_UNROLL
      for (int k = 0; k < 4; ++k) q[k] = _mm_loadu_si128(out + k);
      __m128i v[4];
      LC_MGE_UNROLL
      for (int k = 0; k < 4; ++k) {
        __m128i s0 = _mm_and_si128(_mm_srli_epi32(q[0], 8 * k), byte_mask);
        __m128i s1 = _mm_and_si128(_mm_srli_epi32(q[1], 8 * k), byte_mask);
        __m128i s2 = _mm_and_si128(_mm_srli_epi32(q[2], 8 * k), byte_mask);
        __m128i s3 = _mm_and_si128(_mm_srli_epi32(q[3], 8 * k), byte_mask);
        v[k] = _mm_packus_epi16(_mm_packs_epi32(s0, s1), _mm_packs_epi32(s2, s3));
      }
      LC_MGE_UNROLL
      for (int k = 0; k < 4; ++k) {
        if (rows[k] != kPad) _mm_storeu_si128(reinterpret_cast<__m128i*>(logical + rows[k] + l), v[k]);
      }
    }
  }
  return L16;
}

// 16-bit elements, 8 rows or more: 8 rows x 8 columns per tile, the last
// tile of a column taking the last 8 rows as tiles_16x16_epi8 does (hosts
// without AVX-512 took them element by element: on a Zen 5 capped at AVX2,
// 8 x 64 x 256 x 256 NHWC fp16 pack / unpack 0.13 / 0.16 of memcpy so, 0.24
// / 0.40 in these tiles; 1 x 2048 x 7 x 7 0.002 / 0.009 -> 0.09 / 0.09).
template <bool kPack>
uint64_t tiles_8x8_epi16(const Group& g, uint8_t* logical, uint8_t* phys, uint64_t l0 = 0) {
  const uint64_t L8 = g.L / 8 * 8;
  const uint64_t pitch = g.R * 2;  // bytes per pixel
  // A column of tiles (8 pixels, every row) at a time, or, where the rows lie
  // a multiple of 4 KiB apart (every row's piece of a tile in one L1 set), a
  // row of tiles over a run of 256 pixels (measured on a Zen 5 capped at
  // AVX2, pack / unpack: 1 x 64 x 32 x 64 NCHW32 fp16 0.07 / 0.02 of memcpy
  // by columns, 0.11 / 0.12 by rows; 1 x 2048 x 7 x 7 NHWC 0.09 / 0.09 by
  // columns, 0.02 / 0.06 by rows).
  const uint64_t run = g.L * 2 % 4096 == 0 ? 256 : 8;
  for (uint64_t lb = l0; lb < L8; lb += run) {
   for (uint64_t r0 = 0; r0 < g.R; r0 += 8) {
    for (uint64_t l = lb; l < std::min(L8, lb + run); l += 8) {
      const uint64_t r = std::min(r0, g.R - 8);  // the last 8 rows (some of them again, the same bytes)
      const uint64_t* rows = g.rows + r;
      uint8_t* px = phys + (g.pixels + r) * 2 + l * pitch;
      __m128i v[8];
      if (kPack) {
        LC_MGE_UNROLL
        for (int k = 0; k < 8; ++k) v[k] = load_row(logical, rows[k], (rows[k] + l) * 2);
        byte_transpose::transpose8x8_epi16(v, v);
        LC_MGE_UNROLL
        for (int k = 0; k < 8; ++k) _mm_storeu_si128(reinterpret_cast<__m128i*>(px + k * pitch), v[k]);
      } else {
        LC_MGE_UNROLL
        for (int k = 0; k < 8; ++k) v[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(px + k * pitch));
        byte_transpose::transpose8x8_epi16(v, v);
        LC_MGE_UNROLL
        for (int k = 0; k < 8; ++k) {
          if (rows[k] != kPad) _mm_storeu_si128(reinterpret_cast<__m128i*>(logical + (rows[k] + l) * 2), v[k]);
        }
      }
    }
   }
  }
  return L8;
}

// 16-bit elements, R == 4 (NCHW4, CHWN4 of one image): the four rows are
// the lanes of lane_interleave.h's 4 x 2-byte interleave (a padding row a
// null lane), 4 rows x 8 columns <-> 64 contiguous bytes a step (hosts
// without AVX-512 took them element by element: on a Zen 5 capped at AVX2,
// 8 x 64 x 256 x 256 NCHW4 fp16 pack / unpack 0.23 / 0.36 of memcpy so, 0.58
// / 0.66 in these tiles; 1 x 512 x 7 x 7 0.03 / 0.05 -> 0.13 / 0.08).
template <bool kPack>
uint64_t tiles_4x8_epi16(const Group& g, uint8_t* logical, uint8_t* phys) {
  uint8_t* lanes[4];
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) lanes[k] = g.rows[k] == kPad ? nullptr : logical + g.rows[k] * 2;
  uint8_t* px = phys + g.pixels * 2;
  if (kPack) lanes::interleave<4, 2>(px, lanes, g.L);
  else lanes::deinterleave<4, 2>(lanes, px, g.L);
  return g.L;
}

// ---- AVX2 (chosen at run time with __builtin_cpu_supports) -----------------
#define LC_MGE_AVX2 __attribute__((target("avx2")))
#define LC_MGE_AVX2_INLINE inline __attribute__((target("avx2"), always_inline))
#define LC_MGE_AVX2_LAMBDA __attribute__((target("avx2"), always_inline))

// tiles_8x8_epi16 with AVX2: 8 rows x 16 columns, the two 128-bit lanes two
// 8 x 8 tiles side by side (pixels l.. and l + 8..), in the same order
// (measured on a Zen 5 capped at AVX2, pack / unpack against 8 columns:
// 8 x 64 x 256 x 256 NHWC fp16 0.24 / 0.40 -> 0.26 / 0.54 of memcpy, NCHW32
// 0.23 / 0.39 -> 0.28 / 0.51; 1 x 64 x 32 x 64 NCHW32 0.11 / 0.12 -> 0.17 /
// 0.18; 1 x 64 x 56 x 56 NHWC 0.11 / 0.12 -> 0.17 / 0.21).
// Unpacking rows a multiple of 4 KiB apart (one L1 set), kTwo: two tiles a
// step, so that each row's line is written whole by two adjacent stores, not
// in halves with the other rows' between them (measured on a Zen 4 capped at
// AVX2, pinned, alternating, us: 1 x 64 x 32 x 64 NCHW32 16.3-17.1 ->
// 11.3-11.8, 1 x 64 x 64 x 64 NHWC 28.2-29.9 -> 21.6-22.4; a template
// argument, as the test in the loop slowed the other shapes by 10%).
template <bool kPack, bool kTwo = false>
LC_MGE_AVX2 uint64_t tiles_8x16_epi16_avx2(const Group& g, uint8_t* logical, uint8_t* phys) {
  const uint64_t L16 = g.L / 16 * 16;
  const uint64_t pitch = g.R * 2;  // bytes per pixel
  const uint64_t run = g.L * 2 % 4096 == 0 ? 256 : 16;  // as tiles_8x8_epi16
  if constexpr (!kPack && !kTwo) {
    if (run > 16) return tiles_8x16_epi16_avx2<false, true>(g, logical, phys);
  }
  // Rows a pass over the pixels: group_rows under 64, else all of them.
  const uint64_t pass = g.group_rows >= 64 ? g.R : std::max<uint64_t>(8, g.group_rows / 8 * 8);
  for (uint64_t rg = 0; rg < g.R; rg += pass) {
  const uint64_t re = std::min(g.R, rg + pass);
  for (uint64_t lb = 0; lb < L16; lb += run) {
   for (uint64_t r0 = rg; r0 < re; r0 += 8) {
    for (uint64_t l = lb; l < std::min(L16, lb + run); l += 16) {
      const uint64_t r = std::min(r0, re - 8);  // the last 8 rows (some of them again, the same bytes)
      const uint64_t* rows = g.rows + r;
      uint8_t* px = phys + (g.pixels + r) * 2 + l * pitch;
      __m256i v[8];
      if (kPack) {
        LC_MGE_UNROLL
        for (int k = 0; k < 8; ++k) {
          v[k] = rows[k] == kPad ? _mm256_setzero_si256()
                                 : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(logical + (rows[k] + l) * 2));
        }
        byte_transpose::transpose8x8_epi16_x2(v, v);
        LC_MGE_UNROLL
        for (uint64_t k = 0; k < 8; ++k) {
          _mm_storeu_si128(reinterpret_cast<__m128i*>(px + k * pitch), _mm256_castsi256_si128(v[k]));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(px + (k + 8) * pitch), _mm256_extracti128_si256(v[k], 1));
        }
      } else {
        // kTwo: the run's pixels are a multiple of 32.
        __m256i w[8];
        LC_MGE_UNROLL
        for (uint64_t k = 0; k < 8; ++k) {
          v[k] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(px + (k + 8) * pitch),
                                     reinterpret_cast<const __m128i*>(px + k * pitch));
          if constexpr (kTwo) {
            w[k] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(px + (k + 24) * pitch),
                                       reinterpret_cast<const __m128i*>(px + (k + 16) * pitch));
          }
        }
        byte_transpose::transpose8x8_epi16_x2(v, v);
        if constexpr (kTwo) byte_transpose::transpose8x8_epi16_x2(w, w);
        LC_MGE_UNROLL
        for (int k = 0; k < 8; ++k) {
          if (rows[k] == kPad) continue;
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(logical + (rows[k] + l) * 2), v[k]);
          if constexpr (kTwo) _mm256_storeu_si256(reinterpret_cast<__m256i*>(logical + (rows[k] + l + 16) * 2), w[k]);
        }
        if constexpr (kTwo) l += 16;
      }
    }
   }
  }
  }
  return L16;
}

// 16-bit elements, 32 | R, streamed: a pass of 32 rows over the run of
// pixels, 32 pixels a step. The rows are often a multiple of 4 KiB apart
// (H*W elements), all in the same cache sets, so each row's whole line of
// the step is read into an L1 stage first (a part line read at a time would
// be evicted by the others before its next part). From the stage, rows k
// and 8 + k of each 16 are the lanes of one register (8 pixels each), so the
// 8 x 8 word transposes in the lanes leave pixel k's 16 rows in register k,
// and a pixel's 32 rows (a line, at phys + g.pixels * 2 on a line) leave by
// two non-temporal 32-byte stores, one after the other: a line's two halves
// stored with seven other lines' between them left partial lines in the
// write-combining buffers (measured on an Intel Xeon capped at AVX2, pinned,
// alternating, 8 x 64 x 256 x 256 NHWC fp16: 0.37-0.39 of memcpy -> 1.15-1.22).
// Returns the pixels done.
LC_MGE_AVX2 uint64_t pack_32rows_epi16_avx2_streamed(const Group& g, const uint8_t* logical, uint8_t* phys) {
  const uint64_t L32 = g.L / 32 * 32, R = g.R;
  constexpr uint64_t kAhead = 1024;  // bytes of each row fetched ahead into L2
  alignas(64) uint8_t stage[32][64];
  for (uint64_t rg = 0; rg < R; rg += 32) {
    const uint64_t* rows = g.rows + rg;
    for (uint64_t l = 0; l < L32; l += 32) {
      for (uint64_t k = 0; k < 32; ++k) {
        __m256i lo = _mm256_setzero_si256(), hi = lo;  // a padding row: zeros
        if (rows[k] != kPad) {
          const uint8_t* in = logical + (rows[k] + l) * 2;
          _mm_prefetch(reinterpret_cast<const char*>(in + kAhead), _MM_HINT_T1);  // mutate: equivalent (a hint)
          lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
          hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 32));
        }
        _mm256_store_si256(reinterpret_cast<__m256i*>(stage[k]), lo);
        _mm256_store_si256(reinterpret_cast<__m256i*>(stage[k] + 32), hi);
      }
      for (uint64_t t = 0; t < 32; t += 8) {
        uint8_t* px = phys + (g.pixels + (l + t) * R + rg) * 2;
        __m256i v[8], w[8];
        LC_MGE_UNROLL
        for (uint64_t k = 0; k < 8; ++k) {
          v[k] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(stage[8 + k] + t * 2),
                                     reinterpret_cast<const __m128i*>(stage[k] + t * 2));
          w[k] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(stage[24 + k] + t * 2),
                                     reinterpret_cast<const __m128i*>(stage[16 + k] + t * 2));
        }
        byte_transpose::transpose8x8_epi16_x2(v, v);
        byte_transpose::transpose8x8_epi16_x2(w, w);
        LC_MGE_UNROLL
        for (uint64_t k = 0; k < 8; ++k) {
          _mm256_stream_si256(reinterpret_cast<__m256i*>(px + k * R * 2), v[k]);
          _mm256_stream_si256(reinterpret_cast<__m256i*>(px + k * R * 2 + 32), w[k]);
        }
      }
    }
  }
  return L32;
}


// 32 bytes of row k from pixel l on (zeros for a padding row), each row fetched
// kAhead bytes ahead into L2 once a line.
LC_MGE_AVX2_INLINE __m256i row32_fetched(const Group& g, const uint8_t* logical, uint64_t k, uint64_t l) {
  constexpr uint64_t kAhead = 1024;
  const uint64_t row = g.rows[k];
  if (row == kPad) return _mm256_setzero_si256();
  const uint8_t* in = logical + row + l;
  if (l % kLine == 0) _mm_prefetch(reinterpret_cast<const char*>(in + kAhead), _MM_HINT_T1);  // mutate: equivalent (a hint)
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
}

// 8-bit groups of 17 to 31 rows, packed and streamed, without AVX-512 (NHWC
// of 17 to 31 channels but 24, which pack_24rows_epi8_avx2_streamed below
// takes): 32 pixels a step, the first 16 rows and the last 16 (some
// of them again, the same bytes) each one 16 x 32 tile of the rows' 32
// bytes, transposed in the lanes into a step's pixels in an L1 stage, which
// leaves as its R whole 32-byte pieces by non-temporal stores; each row is
// fetched ahead into L2 (row32_fetched). The pixels' bytes are on a 32-byte
// boundary (phys + g.pixels). (They went through the tiles into an L2 stage
// and were copied out of it: measured on a Zen 4 capped at AVX2, pinned,
// alternating, three pairs, 16 x 24 x 256 x 256 int8 NHWC, 6.5-6.6 ms a pack
// -> 4.6-4.9 ms, where AVX-512's padded pitch takes 4.3-4.5; in the benchmark
// 0.42-0.57 of memcpy -> 0.57-0.80.) Returns the pixels done.
LC_MGE_AVX2 uint64_t pack_rows_17_31_epi8_avx2_streamed(const Group& g, const uint8_t* logical, uint8_t* phys) {
  const uint64_t R = g.R, L32 = g.L / 32 * 32;
  alignas(64) uint8_t stage[32 * 32];
  uint8_t* out = phys + g.pixels;
  for (uint64_t l = 0; l < L32; l += 32) {
    for (uint64_t r0 : {uint64_t{0}, R - 16}) {
      __m256i v[16];
      LC_MGE_UNROLL
      for (uint64_t k = 0; k < 16; ++k) v[k] = row32_fetched(g, logical, r0 + k, l);
      byte_transpose::transpose16x16_epi8_x2(v);
      LC_MGE_UNROLL
      for (uint64_t k = 0; k < 16; ++k) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(stage + k * R + r0), _mm256_castsi256_si128(v[k]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(stage + (k + 16) * R + r0), _mm256_extracti128_si256(v[k], 1));
      }
    }
    uint8_t* to = out + l * R;
    for (uint64_t i = 0; i < 32 * R; i += 32) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(to + i), _mm256_load_si256(reinterpret_cast<const __m256i*>(stage + i)));
    }
  }
  return L32;
}

// 8-bit groups of 24 rows (NHWC of 24 channels), packed and streamed, at
// every level from AVX2 up: 32 pixels a step straight from registers, each
// output line stored once (before, through the L1 stage of the groups of 17
// to 31 rows above: a pack of 16 x 24 x 256 x 256 3.0-3.3 ms on a Zen 4
// capped at AVX2, pinned, alternating -> 2.0-2.1, beside a memcpy of
// 1.6-2.4). Rows 0-15 are one 16 x 32 tile (after the transpose in the
// lanes, register k holds pixel k's first 16 bytes in lane 0 and pixel
// 16 + k's in lane 1); rows 16-23 go by three rounds of unpacks into
// registers of two pixels' last 8 bytes a lane (c[j]: pixels 2j, 2j + 1 and
// 16 + 2j, 17 + 2j). Four pixels are 96 bytes, three 32-byte stores: pixel
// 4q whole and 8 bytes of 4q + 1; the rest of 4q + 1 and the first 16 of
// 4q + 2; the last 8 of 4q + 2 and 4q + 3 whole, joined by 64-bit unpacks
// and lane permutes. The pixels' bytes are on a 32-byte boundary
// (phys + g.pixels). Returns the pixels done.
LC_MGE_AVX2 uint64_t pack_24rows_epi8_avx2_streamed(const Group& g, const uint8_t* logical, uint8_t* phys) {
  const uint64_t L32 = g.L / 32 * 32;
  uint8_t* out = phys + g.pixels;
  for (uint64_t l = 0; l < L32; l += 32) {
    __m256i a[8], c[8];
    LC_MGE_UNROLL
    for (uint64_t i = 0; i < 4; ++i) {
      const __m256i y0 = row32_fetched(g, logical, 16 + 2 * i, l), y1 = row32_fetched(g, logical, 17 + 2 * i, l);
      a[2 * i] = _mm256_unpacklo_epi8(y0, y1);
      a[2 * i + 1] = _mm256_unpackhi_epi8(y0, y1);
    }
    __m256i b[8];
    LC_MGE_UNROLL
    for (uint64_t h = 0; h < 2; ++h) {  // rows 16-19, 20-23
      b[4 * h] = _mm256_unpacklo_epi16(a[4 * h], a[4 * h + 2]);
      b[4 * h + 1] = _mm256_unpackhi_epi16(a[4 * h], a[4 * h + 2]);
      b[4 * h + 2] = _mm256_unpacklo_epi16(a[4 * h + 1], a[4 * h + 3]);
      b[4 * h + 3] = _mm256_unpackhi_epi16(a[4 * h + 1], a[4 * h + 3]);
    }
    LC_MGE_UNROLL
    for (uint64_t j = 0; j < 4; ++j) {
      c[2 * j] = _mm256_unpacklo_epi32(b[j], b[j + 4]);
      c[2 * j + 1] = _mm256_unpackhi_epi32(b[j], b[j + 4]);
    }
    __m256i v[16];
    LC_MGE_UNROLL
    for (uint64_t k = 0; k < 16; ++k) v[k] = row32_fetched(g, logical, k, l);
    byte_transpose::transpose16x16_epi8_x2(v);
    uint8_t* to = out + l * 24;
    LC_MGE_UNROLL
    for (uint64_t q = 0; q < 4; ++q) {
      const __m256i p0 = v[4 * q], p1 = v[4 * q + 1], p2 = v[4 * q + 2], p3 = v[4 * q + 3];
      const __m256i x = _mm256_unpacklo_epi64(c[2 * q], p1), y = _mm256_unpackhi_epi64(p1, c[2 * q]);
      const __m256i z = _mm256_unpacklo_epi64(c[2 * q + 1], p3), w = _mm256_unpackhi_epi64(p3, c[2 * q + 1]);
      uint8_t* lo = to + 96 * q;
      uint8_t* hi = to + 96 * q + 16 * 24;
      _mm256_stream_si256(reinterpret_cast<__m256i*>(lo), _mm256_permute2x128_si256(p0, x, 0x20));
      _mm256_stream_si256(reinterpret_cast<__m256i*>(lo + 32), _mm256_permute2x128_si256(y, p2, 0x20));
      _mm256_stream_si256(reinterpret_cast<__m256i*>(lo + 64), _mm256_permute2x128_si256(z, w, 0x20));
      _mm256_stream_si256(reinterpret_cast<__m256i*>(hi), _mm256_permute2x128_si256(p0, x, 0x31));
      _mm256_stream_si256(reinterpret_cast<__m256i*>(hi + 32), _mm256_permute2x128_si256(y, p2, 0x31));
      _mm256_stream_si256(reinterpret_cast<__m256i*>(hi + 64), _mm256_permute2x128_si256(z, w, 0x31));
    }
  }
  return L32;
}

// Groups of 2 to 8 rows without byte permutes (AVX2 hosts, and AVX-512 ones
// without VBMI, which took them element by element: NHWC of 3 channels, 16 x
// 3 x 512 x 512 uint8, 0.08 of memcpy on a Zen 5 capped so): elements of kE
// bytes, 32 bytes of each row at a time, each 128-bit lane its own 16 / kE
// pixels. Packing, lane k of the R row registers holds pixels 16k / kE.. of
// every row, and those are the 16R bytes of lane k of the R pixel registers:
// lane k of pixel register j is physical byte 16Rk + 16j.., each of its bytes
// one row's (vpshufb of that row, zeros elsewhere, the R shuffles OR'd); the
// lanes then go to their places, two a 32-byte store (vperm2i128). Unpacking
// runs it backwards: lane k of pixel register j is loaded from byte 16Rk +
// 16j, and row r is the OR of R shuffles.
template <uint64_t kR, uint64_t kE>
struct PshufbTables {
  alignas(32) uint8_t pack[kR][kR][32];    // [j][r]: lane byte i of pixel register j from row r
  alignas(32) uint8_t unpack[kR][kR][32];  // [r][j]: lane byte i of row r from pixel register j
};

template <uint64_t kR, uint64_t kE>
const PshufbTables<kR, kE>& pshufb_tables() {
  static const PshufbTables<kR, kE> tables = [] {
    PshufbTables<kR, kE> t{};
    for (uint64_t j = 0; j < kR; ++j) {
      for (uint64_t r = 0; r < kR; ++r) {
        LC_MGE_UNROLL
        for (uint64_t i = 0; i < 16; ++i) {
          // Byte b of a lane's 16R physical bytes: element b / kE, pixel b / kE / R, row b / kE % R.
          const uint64_t b = 16 * j + i, e = b / kE;
          const uint64_t in_row = e / kR * kE + b % kE;
          t.pack[j][r][i] = t.pack[j][r][i + 16] = e % kR == r ? static_cast<uint8_t>(in_row) : 0x80;
          // Row r's lane byte i (pixel i / kE): physical byte (i / kE * R + r) kE + i % kE of the lane's.
          const uint64_t from = (i / kE * kR + r) * kE + i % kE;
          t.unpack[r][j][i] = t.unpack[r][j][i + 16] = from / 16 == j ? static_cast<uint8_t>(from % 16) : 0x80;
        }
      }
    }
    return t;
  }();
  return tables;
}

// Physical bytes 32m.. of the step: chunks 2m and 2m + 1 of the order
// (lane k, register j) -> chunk kR + j.
template <uint64_t kR, uint64_t kM, bool kNt>
LC_MGE_AVX2_INLINE void store_lane_pair(uint8_t* out, const __m256i (&reg)[kR]) {
  constexpr uint64_t c0 = 2 * kM, c1 = 2 * kM + 1;
  constexpr int imm = static_cast<int>(c0 / kR | (2 + c1 / kR) << 4);
  const __m256i v = _mm256_permute2x128_si256(reg[c0 % kR], reg[c1 % kR], imm);
  if (kNt) _mm256_stream_si256(reinterpret_cast<__m256i*>(out + 32 * kM), v);
  else _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * kM), v);
}

template <uint64_t kR, bool kNt, size_t... kMs>
LC_MGE_AVX2_INLINE void store_lane_pairs(uint8_t* out, const __m256i (&reg)[kR], std::index_sequence<kMs...>) {
  (store_lane_pair<kR, kMs, kNt>(out, reg), ...);
}

template <bool kPack, uint64_t kR, uint64_t kE, bool kNt = false>
LC_MGE_AVX2 uint64_t small_rows_pshufb_avx2(const Group& g, uint8_t* logical, uint8_t* phys) {
  const PshufbTables<kR, kE>& t = pshufb_tables<kR, kE>();
  constexpr uint64_t kStep = 32 / kE;  // pixels a step
  const uint64_t steps_end = g.L / kStep * kStep;
  uint8_t* px = phys + g.pixels * kE;
  for (uint64_t l = 0; l < steps_end; l += kStep) {
    uint8_t* out = px + l * kR * kE;
    __m256i reg[kR];
    if (kPack) {
      __m256i row[kR];
      LC_MGE_UNROLL
      for (uint64_t r = 0; r < kR; ++r) {
        row[r] = g.rows[r] == kPad
                     ? _mm256_setzero_si256()
                     : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(logical + (g.rows[r] + l) * kE));
      }
      LC_MGE_UNROLL
      for (uint64_t j = 0; j < kR; ++j) {
        __m256i x = _mm256_shuffle_epi8(row[0], _mm256_load_si256(reinterpret_cast<const __m256i*>(t.pack[j][0])));
        LC_MGE_UNROLL
        for (uint64_t r = 1; r < kR; ++r) {
          x = _mm256_or_si256(x, _mm256_shuffle_epi8(row[r], _mm256_load_si256(reinterpret_cast<const __m256i*>(t.pack[j][r]))));
        }
        reg[j] = x;
      }
      store_lane_pairs<kR, kNt>(out, reg, std::make_index_sequence<kR>());
      continue;
    }
    LC_MGE_UNROLL
    for (uint64_t j = 0; j < kR; ++j) {
      const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(out + 16 * j));
      const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(out + 16 * kR + 16 * j));
      reg[j] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
    }
    LC_MGE_UNROLL
    for (uint64_t r = 0; r < kR; ++r) {
      if (g.rows[r] == kPad) continue;
      __m256i x = _mm256_shuffle_epi8(reg[0], _mm256_load_si256(reinterpret_cast<const __m256i*>(t.unpack[r][0])));
      LC_MGE_UNROLL
      for (uint64_t j = 1; j < kR; ++j) {
        x = _mm256_or_si256(x, _mm256_shuffle_epi8(reg[j], _mm256_load_si256(reinterpret_cast<const __m256i*>(t.unpack[r][j]))));
      }
      if (kNt) _mm256_stream_si256(reinterpret_cast<__m256i*>(logical + (g.rows[r] + l) * kE), x);
      else _mm256_storeu_si256(reinterpret_cast<__m256i*>(logical + (g.rows[r] + l) * kE), x);
    }
  }
  return steps_end;
}

// The row counts the shuffles take, by element size: 8-bit 2 to 8 but 4
// (tiles_4x16_epi8); 16- and 32-bit 2 to 7 but 4 (whose tiles are faster).
constexpr bool pshufb_rows(uint64_t bytes, uint64_t R) {
  return R >= 2 && R != 4 && (bytes == 1 ? R <= 8 : (bytes == 2 || bytes == 4) && R <= 7);
}

template <bool kPack, uint64_t kE, bool kNt = false>
uint64_t small_rows_pshufb(const Group& g, uint8_t* logical, uint8_t* phys) {
  switch (g.R) {
    case 2: return small_rows_pshufb_avx2<kPack, 2, kE, kNt>(g, logical, phys);
    case 3: return small_rows_pshufb_avx2<kPack, 3, kE, kNt>(g, logical, phys);
    case 5: return small_rows_pshufb_avx2<kPack, 5, kE, kNt>(g, logical, phys);
    case 6: return small_rows_pshufb_avx2<kPack, 6, kE, kNt>(g, logical, phys);
    case 7: return small_rows_pshufb_avx2<kPack, 7, kE, kNt>(g, logical, phys);
    case 8: return kE == 1 ? small_rows_pshufb_avx2<kPack, 8, kE, kNt>(g, logical, phys) : 0;
    default: return 0;  // mutate: equivalent (the pixels left go through transpose_rest: the same bytes)
  }
}

// 8-bit elements, R a multiple of 32 (NCHW32, NCHW64, CHWN4 with N % 8 == 0):
// 32 rows x 256 columns per block. Each row's cache line goes through a stack
// stage once (rows H*W apart alias in L1 otherwise); the lane-wise transpose
// puts rows r..r+15 in the low lane and r+16..r+31 in the high lane, which is
// exactly a 32-byte run of a pixel. Rows go in groups of 64 (one cache line
// of a pixel) over the whole run of pixels, so every pass reads and writes
// whole lines.
constexpr uint64_t kStageCols = 256;  // columns per block: four cache lines of every row
constexpr uint64_t kLongStageCols = 1024;  // the same, unpacking in cache (L1d of 48 KiB or more)
constexpr uint64_t kMidStageCols = 512;    // the same, unpacking in cache (a smaller L1d)
constexpr uint64_t kStreamHalfCols = 128;  // columns of a half of the AVX2 streamed pack's stage

// The last piece (n < 32 bytes) of a partial block's row, to or from a stage
// row. The partial rows went by a copy of unknown size into the aligned stage,
// which became a `rep movs` (and the zeros after it a `rep stos`), whose
// start-up cost, paid by every row of every partial block, took 80% of a pack
// of small images. Now rows of 32 bytes or more end with one 32-byte move
// over the piece before (the same bytes again), shorter ones take these
// (measured on a Zen 5 capped at AVX2, best of 7, pack / unpack, 1 x 2048 x
// 7 x 7 int8 NCHW64 0.015 / 0.055 of memcpy -> 0.14 / 0.14; NCHW32 1 x 2048 x
// 3 x 3 0.009 -> 0.016 / 0.016, its bytes gathered in memory and read back as
// one vector before: the store-to-load forwarding stalled). Packing, the stage
// row is zeros past byte n up to its next 32-byte piece, as far as the
// 16-pixel transposes read.
LC_MGE_AVX2_INLINE __m256i load_part(const uint8_t* src, uint64_t n) {
  // Whole 4-byte words by a masked load (no access past them), the last 1 to
  // 3 bytes put together and blended in: no store to read back.
  const __m256i word = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), words = _mm256_set1_epi32(static_cast<int>(n / 4));
  __m256i v = _mm256_maskload_epi32(reinterpret_cast<const int*>(src), _mm256_cmpgt_epi32(words, word));
  const uint64_t q = n / 4 * 4, r = n % 4;
  if (r != 0) {
    uint32_t t = src[q];
    if (r > 1) t |= uint32_t{src[q + 1]} << 8;
    if (r > 2) t |= uint32_t{src[q + 2]} << 16;
    v = _mm256_blendv_epi8(v, _mm256_set1_epi32(static_cast<int>(t)), _mm256_cmpeq_epi32(words, word));
  }
  return v;
}

LC_MGE_AVX2_INLINE void store_part(uint8_t* dst, __m256i v, uint64_t n) {
  alignas(32) uint8_t t[32];
  _mm256_store_si256(reinterpret_cast<__m256i*>(t), v);
  uint64_t k = 0;
  if (n & 16) std::memcpy(dst, t, 16), k = 16;
  if (n & 8) std::memcpy(dst + k, t + k, 8), k += 8;
  if (n & 4) std::memcpy(dst + k, t + k, 4), k += 4;
  if (n & 2) std::memcpy(dst + k, t + k, 2), k += 2;
  if (n & 1) dst[k] = t[k];
}

template <uint64_t kCols>
LC_MGE_AVX2_INLINE void stage_rows(uint8_t (*stage)[kCols], const uint64_t* rows, const uint8_t* logical,
                                   uint64_t l0, uint64_t cols) {
  for (int j = 0; j < 32; ++j) {
    if (rows[j] == kPad) {
      std::memset(stage[j], 0, kCols);
    } else if (cols == kCols) {
      const uint8_t* src = logical + rows[j] + l0;
      LC_MGE_UNROLL
      for (uint64_t k = 0; k < kCols; k += 32) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(stage[j] + k),
                           _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + k)));
      }
    } else {
      const uint8_t* src = logical + rows[j] + l0;
      uint64_t k = 0;
      for (; k + 32 <= cols; k += 32) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(stage[j] + k), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + k)));
      }
      if (k < cols && cols >= 32) {
        // The last 32 bytes of the part, over some of the piece before (the same bytes).
        _mm256_store_si256(reinterpret_cast<__m256i*>(stage[j] + k), _mm256_setzero_si256());
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(stage[j] + cols - 32),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + cols - 32)));
      } else if (k < cols) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(stage[j] + k), load_part(src + k, cols - k));
      }
    }
  }
}

template <uint64_t kCols>
LC_MGE_AVX2_INLINE void unstage_rows(uint8_t (*stage)[kCols], const uint64_t* rows, uint8_t* logical,
                                     uint64_t l0, uint64_t cols) {
  for (int j = 0; j < 32; ++j) {
    if (rows[j] == kPad) continue;
    uint8_t* dst = logical + rows[j] + l0;
    if (cols == kCols) {
      LC_MGE_UNROLL
      for (uint64_t k = 0; k < kCols; k += 32) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + k),
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(stage[j] + k)));
      }
    } else {
      uint64_t k = 0;
      for (; k + 32 <= cols; k += 32) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + k), _mm256_load_si256(reinterpret_cast<const __m256i*>(stage[j] + k)));
      }
      if (k < cols && cols >= 32) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + cols - 32),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(stage[j] + cols - 32)));
      } else if (k < cols) {
        store_part(dst + k, _mm256_load_si256(reinterpret_cast<const __m256i*>(stage[j] + k)), cols - k);
      }
    }
  }
}

// Columns at..at+15 of stage rows 0..15 (the low lanes) and 16..31 (the high
// lanes) into v[0..15], and back.
template <uint64_t kCols>
LC_MGE_AVX2_INLINE void stage_pieces_in(const uint8_t (*stage)[kCols], uint64_t at, __m256i v[16]) {
  LC_MGE_UNROLL
  for (int k = 0; k < 16; ++k) {
    const __m128i lo = _mm_load_si128(reinterpret_cast<const __m128i*>(stage[k] + at));
    const __m128i hi = _mm_load_si128(reinterpret_cast<const __m128i*>(stage[k + 16] + at));
    v[k] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
  }
}

template <uint64_t kCols>
LC_MGE_AVX2_INLINE void stage_pieces_out(uint8_t (*stage)[kCols], uint64_t at, const __m256i v[16]) {
  LC_MGE_UNROLL
  for (int j = 0; j < 16; ++j) {
    _mm_store_si128(reinterpret_cast<__m128i*>(stage[j] + at), _mm256_castsi256_si128(v[j]));
    _mm_store_si128(reinterpret_cast<__m128i*>(stage[j + 16] + at), _mm256_extracti128_si256(v[j], 1));
  }
}

// Stage columns c..c+15 of 32 rows -> 16 pixels of 32 bytes (pack), or back.
template <bool kPack, uint64_t kCols>
LC_MGE_AVX2_INLINE void transpose_16_pixels(uint8_t (*stage)[kCols], uint64_t c, uint8_t* out, uint64_t pitch,
                                            uint64_t n) {
  __m256i v[16];
  if (kPack) {
    stage_pieces_in(stage, c, v);
    byte_transpose::transpose16x16_epi8_x2(v);
    if (n == 16) {
      LC_MGE_UNROLL
      for (int k = 0; k < 16; ++k) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k * pitch), v[k]);
    } else {
      for (uint64_t k = 0; k < n; ++k) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k * pitch), v[k]);
    }
  } else {
    if (n == 16) {
      LC_MGE_UNROLL
      for (int k = 0; k < 16; ++k) v[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out + k * pitch));
    } else {
      LC_MGE_UNROLL
      for (uint64_t k = 0; k < 16; ++k) {
        v[k] = k < n ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out + k * pitch)) : _mm256_setzero_si256();
      }
    }
    byte_transpose::transpose16x16_epi8_x2(v);
    stage_pieces_out(stage, c, v);
  }
}

// A partial last block of fewer than `leave` columns is left to the caller;
// returns the columns done.
template <bool kPack, uint64_t kCols>
LC_MGE_AVX2_INLINE uint64_t blocks_32x256_epi8_cols(const Group& g, uint8_t* logical, uint8_t* phys, uint64_t leave) {
  alignas(64) uint8_t stage[32][kCols];
  const uint64_t pitch = g.R, L = g.L % kCols < leave ? g.L / kCols * kCols : g.L;
  for (uint64_t rg = 0; rg < g.R; rg += 64) {
    const uint64_t re = std::min<uint64_t>(g.R, rg + 64);
    for (uint64_t l0 = 0; l0 < L; l0 += kCols) {
      const uint64_t cols = std::min<uint64_t>(kCols, g.L - l0);
      for (uint64_t r0 = rg; r0 < re; r0 += 32) {
        const uint64_t* rows = g.rows + r0;
        uint8_t* px = phys + g.pixels + r0 + l0 * pitch;
        if (kPack) stage_rows(stage, rows, logical, l0, cols);
        for (uint64_t c = 0; c < cols; c += 16) {
          transpose_16_pixels<kPack, kCols>(stage, c, px + c * pitch, pitch, std::min<uint64_t>(16, cols - c));
        }
        if (!kPack) unstage_rows(stage, rows, logical, l0, cols);
      }
    }
  }
  return L;
}

// Unpacking in cache, rows take runs of kLongStageCols columns (16 lines):
// each row's stores then go to a run of sets of L1, where 256 columns put four
// lines of 32 rows into each of four sets, more than its ways. The stage of
// 32 such rows must leave a third of L1 to the lines in flight: with an L1d
// under 48 KiB (Zen 4, most Intel cores) runs are kMidStageCols (measured on
// 1 x 64 x 64 x 64 int8 NCHW32 and NCHW64 with a 32 KiB L1d: 0.22-0.28 of
// memcpy with 1024 columns, 0.32-0.39 with 512).
// Whether L1d has at least `bytes` (unknown: yes, as measured first).
bool l1d_holds(uint64_t bytes) {
  static const uint64_t l1d = [] {
#ifdef _SC_LEVEL1_DCACHE_SIZE
    const long n = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    return n > 0 ? static_cast<uint64_t>(n) : 0;
#else
    return uint64_t{0};
#endif
  }();
  return l1d == 0 || l1d >= bytes;
}

bool long_stage_fits_l1() { return l1d_holds(3 * 32 * kLongStageCols / 2); }

template <bool kPack>
LC_MGE_AVX2_INLINE uint64_t blocks_32x256_epi8(const Group& g, uint8_t* logical, uint8_t* phys, uint64_t leave) {
  if (!kPack && g.long_rows && long_stage_fits_l1()) return blocks_32x256_epi8_cols<kPack, kLongStageCols>(g, logical, phys, leave);
  if (!kPack && g.long_rows) return blocks_32x256_epi8_cols<kPack, kMidStageCols>(g, logical, phys, leave);
  return blocks_32x256_epi8_cols<kPack, kStageCols>(g, logical, phys, leave);
}

template <bool kPack>
LC_MGE_AVX2 void blocks_32x256_epi8_avx2(const Group& g, uint8_t* logical, uint8_t* phys) {
  blocks_32x256_epi8<kPack>(g, logical, phys, 0);
}

// Rows begin..end - 1 of `rows`: `cols` bytes (a multiple of 16) from
// column l0 into a half of the stage (zeros for a padding row).
template <uint64_t kC>
LC_MGE_AVX2_INLINE void fill_half_avx2(uint8_t (*half)[kC], const uint64_t* rows, const uint8_t* logical, uint64_t l0,
                                       uint64_t cols, uint64_t begin, uint64_t end) {
  for (uint64_t k = begin; k < end; ++k) {
    if (rows[k] == kPad) {
      for (uint64_t q = 0; q < cols; q += 16) _mm_store_si128(reinterpret_cast<__m128i*>(half[k] + q), _mm_setzero_si128());
      continue;
    }
    const uint8_t* src = logical + rows[k] + l0;
    if (cols == kC) {
      LC_MGE_UNROLL
      for (uint64_t q = 0; q < kC; q += 32) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(half[k] + q), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + q)));
      }
      continue;
    }
    uint64_t q = 0;
    for (; q + 32 <= cols; q += 32) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(half[k] + q), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + q)));
    }
    if (q < cols) _mm_store_si128(reinterpret_cast<__m128i*>(half[k] + q), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + q)));
  }
}

// Streamed packs of 8-bit groups of 32 or 64k rows with AVX2 (AVX-512 hosts
// take pack_rows_staged_epi8_avx512, whose pipeline this is): 64 rows (32 for
// R == 32) go through an L1 stage of two halves of kStreamHalfCols columns;
// while one half is transposed 16 pixels a step, each step fills its share of
// the rows of the next block into the other half and fetches their lines of
// the block after into L2, and every pixel's 64 bytes (a pair of pixels of 32
// rows) leave at once, whole lines with non-temporal stores. Measured on a Zen
// 4 capped at AVX2, pinned, alternating, of memcpy, 8 x 64 x 256 x 256 int8
// (16 x 64 x 256 x 256 CHWN4), against one stage filled whole before its
// transposes (each row's lines fetched four blocks ahead into L1): NCHW32
// 0.55-0.73 -> 0.80-1.04, NCHW64 0.56-0.63 -> 0.74-1.02, CHWN4 0.50-0.70 ->
// 0.74-0.91; the lines fetched into L1 instead 0.50-0.73 (all three), not at
// all 0.34-0.61; halves of 64 columns par, of 256 (the whole L1d) 0.77-0.91.
// 4-bit streamed packs come here through their pairs' stage: par.
LC_MGE_AVX2 void pack_streamed_rows_epi8_avx2(const Group& g, const uint8_t* logical, uint8_t* phys) {
  constexpr uint64_t kC = kStreamHalfCols;
  alignas(64) uint8_t stage[2][64][kC];
  alignas(32) uint8_t low[16][32];  // rows 0..31 of 16 pixels, while rows 32..63 are transposed
  const uint64_t R = g.R, span = R == 32 ? 32 : 64, L16 = g.L / 16 * 16, blocks = ceil_div(L16, kC);
  uint8_t* base = phys + g.pixels;
  const bool nt = reinterpret_cast<uintptr_t>(base) % 32 == 0;
  const auto put = [nt](uint8_t* at, __m256i v) __attribute__((target("avx2"), always_inline)) {
    if (nt) _mm256_stream_si256(reinterpret_cast<__m256i*>(at), v);
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(at), v);
  };
  // 16 pixels from column c of a half, n of them, to `out`.
  const auto pixels = [&](uint8_t (*half)[kC], uint64_t c, uint64_t n, uint8_t* out) __attribute__((target("avx2"), always_inline)) {
    __m256i v[16];
    stage_pieces_in(half, c, v);
    byte_transpose::transpose16x16_epi8_x2(v);  // v[k]: rows 0..31 of pixel c + k
    if (span == 32) {
      if (n == 16) {
        LC_MGE_UNROLL
        for (int k = 0; k < 16; ++k) put(out + k * 32, v[k]);
      } else {
        for (uint64_t k = 0; k < n; ++k) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k * 32), v[k]);
      }
      return;
    }
    LC_MGE_UNROLL
    for (int k = 0; k < 16; ++k) _mm256_store_si256(reinterpret_cast<__m256i*>(low[k]), v[k]);
    stage_pieces_in(half + 32, c, v);
    byte_transpose::transpose16x16_epi8_x2(v);  // rows 32..63
    for (uint64_t k = 0; k < n; ++k) {
      const __m256i first = _mm256_load_si256(reinterpret_cast<const __m256i*>(low[k]));
      if (n == 16) {
        put(out + k * R, first);
        put(out + k * R + 32, v[k]);
      } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k * R), first);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k * R + 32), v[k]);
      }
    }
  };
  for (uint64_t rg = 0; rg < R; rg += span) {
    const uint64_t* rows = g.rows + rg;
    if (blocks > 0) fill_half_avx2(stage[0], rows, logical, 0, std::min(kC, L16), 0, span);
    for (uint64_t b = 0; b < blocks; ++b) {
      const uint64_t l0 = b * kC, cols = std::min(kC, L16 - l0), steps = cols / 16;
      const uint64_t next = b + 1 < blocks ? std::min(kC, L16 - l0 - kC) : 0;
      const uint64_t later = b + 2 < blocks ? std::min(kC, L16 - l0 - 2 * kC) : 0;
      for (uint64_t s = 0; s < steps; ++s) {
        // This step's share of the rows: the block after the next into L2,
        // the next into the other half.
        const uint64_t k0 = s * span / steps, k1 = (s + 1) * span / steps;
        for (uint64_t k = k0; later != 0 && k < k1; ++k) {  // mutate: equivalent (a prefetch: the same bytes)
          if (rows[k] == kPad) continue;
          for (uint64_t q = 0; q < later; q += kLine) {  // mutate: equivalent (a prefetch: the same bytes)
            _mm_prefetch(reinterpret_cast<const char*>(logical + rows[k] + l0 + 2 * kC + q), _MM_HINT_T1);  // mutate: equivalent (a prefetch: the same bytes)
          }
        }
        if (next != 0) fill_half_avx2(stage[(b + 1) & 1], rows, logical, l0 + kC, next, k0, k1);
        pixels(stage[b & 1], s * 16, 16, base + rg + (l0 + s * 16) * R);
      }
    }
    if (L16 < g.L) {  // the last columns, fewer than 16
      const uint64_t cols = g.L - L16;
      stage_rows(stage[0], rows, logical, L16, cols);
      if (span == 64) stage_rows(stage[0] + 32, rows + 32, logical, L16, cols);
      pixels(stage[0], 0, cols, base + rg + L16 * R);
    }
  }
  _mm_sfence();
}

// The same instructions with AVX-512VL's 32 vector registers: the 16 rows of
// a transpose and its temporaries stay in registers. The masked tiles take
// the columns past the whole blocks of a pack, and of an unpack when fewer
// than 64 (a partial block stages each row with a call; measured on a Zen 4,
// 1 x 2048 x 7 x 7 int8 NCHW32: pack 0.03 -> 0.17 of memcpy, unpack 0.09 ->
// 0.14; 1 x 512 x 14 x 14 unpack 0.24 staged, 0.17 masked).
template <bool kPack>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"))) uint64_t blocks_32x256_epi8_avx512vl(const Group& g,
                                                                                                   uint8_t* logical,
                                                                                                   uint8_t* phys) {
  return blocks_32x256_epi8<kPack>(g, logical, phys, kPack ? kStageCols : 64);
}

// One tile: rows[0..3] at columns l..l+7 <-> 8 pixels of 4 lanes at px.
template <bool kPack>
LC_MGE_AVX2_INLINE void tile_4x8_epi32(const uint64_t* rows, uint8_t* logical, uint64_t l, uint8_t* px,
                                       uint64_t pitch, bool dense) {
  auto row_ptr = [&](uint64_t row) { return reinterpret_cast<float*>(logical + (row + l) * 4); };
  if (kPack) {
    __m256 a = rows[0] == kPad ? _mm256_setzero_ps() : _mm256_loadu_ps(row_ptr(rows[0]));
    __m256 b = rows[1] == kPad ? _mm256_setzero_ps() : _mm256_loadu_ps(row_ptr(rows[1]));
    __m256 c = rows[2] == kPad ? _mm256_setzero_ps() : _mm256_loadu_ps(row_ptr(rows[2]));
    __m256 d = rows[3] == kPad ? _mm256_setzero_ps() : _mm256_loadu_ps(row_ptr(rows[3]));
    const __m256 t0 = _mm256_unpacklo_ps(a, b), t1 = _mm256_unpackhi_ps(a, b);
    const __m256 t2 = _mm256_unpacklo_ps(c, d), t3 = _mm256_unpackhi_ps(c, d);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    // u0 = pixels 0 | 4, u1 = 1 | 5, u2 = 2 | 6, u3 = 3 | 7.
    if (dense) {
      float* out = reinterpret_cast<float*>(px);
      _mm256_storeu_ps(out, _mm256_permute2f128_ps(u0, u1, 0x20));
      _mm256_storeu_ps(out + 8, _mm256_permute2f128_ps(u2, u3, 0x20));
      _mm256_storeu_ps(out + 16, _mm256_permute2f128_ps(u0, u1, 0x31));
      _mm256_storeu_ps(out + 24, _mm256_permute2f128_ps(u2, u3, 0x31));
    } else {
      const __m256 u[4] = {u0, u1, u2, u3};
      LC_MGE_UNROLL
      for (int k = 0; k < 4; ++k) {
        _mm_storeu_ps(reinterpret_cast<float*>(px + k * pitch), _mm256_castps256_ps128(u[k]));
        _mm_storeu_ps(reinterpret_cast<float*>(px + (k + 4) * pitch), _mm256_extractf128_ps(u[k], 1));
      }
    }
  } else {
    // (Its loops unrolled: as loops they kept u[] on the stack, and 1 x 2048 x
    // 7 x 7 NHWC fp32 unpacked at 0.10-0.12 of memcpy, 0.37-0.39 unrolled, on a
    // Zen 4 capped at AVX2.)
    // Pixels k and k + 4 go into the two lanes straight from memory: an
    // insert with a memory operand does not use the shuffle port, which the
    // in-lane transpose below saturates (32-byte loads and lane permutes
    // instead cost 12 shuffles per tile rather than 8), dense pixels or not.
    __m256 u[4];
    LC_MGE_UNROLL
    for (int k = 0; k < 4; ++k) {
      const __m128 lo = _mm_loadu_ps(reinterpret_cast<const float*>(px + k * pitch));
      const __m128 hi = _mm_loadu_ps(reinterpret_cast<const float*>(px + (k + 4) * pitch));
      u[k] = _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
    }
    // u[k] = pixels k | k + 4; a 4x4 transpose per lane gives the rows.
    const __m256 t0 = _mm256_unpacklo_ps(u[0], u[1]), t1 = _mm256_unpackhi_ps(u[0], u[1]);
    const __m256 t2 = _mm256_unpacklo_ps(u[2], u[3]), t3 = _mm256_unpackhi_ps(u[2], u[3]);
    const __m256 out[4] = {_mm256_shuffle_ps(t0, t2, 0x44), _mm256_shuffle_ps(t0, t2, 0xEE),
                           _mm256_shuffle_ps(t1, t3, 0x44), _mm256_shuffle_ps(t1, t3, 0xEE)};
    LC_MGE_UNROLL
    for (int k = 0; k < 4; ++k) {
      if (rows[k] != kPad) _mm256_storeu_ps(row_ptr(rows[k]), out[k]);
    }
  }
}

// 32-bit elements, 4 rows or more: 4 rows x 8 columns per tile; rows go in
// groups of 64 (256 bytes, four cache lines of a pixel) over the whole run of
// pixels, so every pass reads and writes whole lines. With R no multiple of 4
// the last tile of a column takes the last 4 rows (see padded_rows).
template <bool kPack>
LC_MGE_AVX2 uint64_t tiles_4x8_epi32_avx2(const Group& g, uint8_t* logical, uint8_t* phys) {
  const uint64_t kGroupRows = std::max<uint64_t>(4, g.group_rows / 4 * 4);  // rows per pass over the pixels
  const uint64_t L8 = g.L / 8 * 8;
  const uint64_t pitch = g.R * 4;
  const bool dense = g.R == 4;  // pixels adjacent: 32-byte accesses
  for (uint64_t rg = 0; rg < g.R; rg += kGroupRows) {
    const uint64_t re = std::min(g.R, rg + kGroupRows);
    for (uint64_t l = 0; l < L8; l += 8) {
      for (uint64_t r0 = rg; r0 < re; r0 += 4) {
        const uint64_t r = std::min(r0, re - 4);  // the last 4 rows (some of them again, the same bytes)
        tile_4x8_epi32<kPack>(g.rows + r, logical, l, phys + (g.pixels + l * g.R + r) * 4, pitch, dense);
      }
    }
  }
  return L8;
}

// tiles_16x16_epi8 with AVX2: 16 rows x 32 columns, the two 128-bit lanes two
// 16 x 16 tiles side by side (pixels l.. and l + 16..); 8-bit groups of 16 or
// more rows that no wider tile takes (NHWC of 24 or 40 channels, CHWN4 of 5
// images), the last tile of a column taking the last 16 rows. (Measured on
// a Zen 4 capped at AVX2, pinned, alternating, pack / unpack, of memcpy,
// against the 16 x 16 tiles: NHWC int8 16 x 24 x 256 x 256 0.39-0.47 /
// 0.70-0.73 -> 0.45-0.66 / 0.85-1.03, 1 x 24 x 128 x 128 0.10 / 0.10 -> 0.20
// / 0.16; CHWN4 int8 5 x 64 x 64 x 64 0.12 / 0.09 -> 0.20 / 0.17.)
template <bool kPack>
LC_MGE_AVX2 uint64_t tiles_16x32_epi8_avx2(const Group& g, uint8_t* logical, uint8_t* phys) {
  const uint64_t L32 = g.L / 32 * 32;
  const uint64_t pitch = g.R;
  for (uint64_t l = 0; l < L32; l += 32) {
    for (uint64_t r0 = 0; r0 < g.R; r0 += 16) {
      const uint64_t r = std::min(r0, g.R - 16);  // the last 16 rows (some of them again, the same bytes)
      const uint64_t* rows = g.rows + r;
      uint8_t* px = phys + g.pixels + r + l * pitch;
      __m256i v[16];
      if (kPack) {
        LC_MGE_UNROLL
        for (int k = 0; k < 16; ++k) {
          v[k] = rows[k] == kPad ? _mm256_setzero_si256()
                                 : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(logical + rows[k] + l));
        }
        byte_transpose::transpose16x16_epi8_x2(v);
        LC_MGE_UNROLL
        for (int k = 0; k < 16; ++k) {
          _mm_storeu_si128(reinterpret_cast<__m128i*>(px + k * pitch), _mm256_castsi256_si128(v[k]));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(px + (k + 16) * pitch), _mm256_extracti128_si256(v[k], 1));
        }
      } else {
        LC_MGE_UNROLL
        for (int k = 0; k < 16; ++k) {
          v[k] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(px + (k + 16) * pitch),
                                     reinterpret_cast<const __m128i*>(px + k * pitch));
        }
        byte_transpose::transpose16x16_epi8_x2(v);
        LC_MGE_UNROLL
        for (int k = 0; k < 16; ++k) {
          if (rows[k] != kPad) _mm256_storeu_si256(reinterpret_cast<__m256i*>(logical + rows[k] + l), v[k]);
        }
      }
    }
  }
  return L32;
}

bool have_avx2() { return isa_at_least(Isa::kAvx2); }

// ---- AVX-512 (chosen at run time likewise) ----------------------------------

// The columns before the first line boundary of rows[0..R) when they all share
// their offset in a line and it is a whole number of elements (then *aligned),
// else 0: a 64-byte access across two lines costs about twice one within a
// line, so these columns go first, one by one.
inline uint64_t rows_head(const uint64_t* rows, uint64_t R, const uint8_t* logical, uint64_t elem_bytes, uint64_t L,
                          bool* aligned) {
  uint64_t head = 0;
  bool first = true;
  *aligned = false;
  for (uint64_t k = 0; k < R; ++k) {
    if (rows[k] == kPad) continue;
    const uint64_t m = reinterpret_cast<uintptr_t>(logical + rows[k] * elem_bytes) % kLine;
    if (m % elem_bytes != 0) return 0;
    const uint64_t h = (kLine - m) % kLine / elem_bytes;
    if (!first && h != head) return 0;
    head = h;
    first = false;
  }
  *aligned = !first && head <= L;
  return std::min(head, L);
}
#define LC_MGE_AVX512 __attribute__((target("avx512f")))
#define LC_MGE_AVX512_INLINE inline __attribute__((target("avx512f"), always_inline))

// The two rounds of two-source permutes of a 32-bit tile of 4 rows x 16
// columns (NCHW4): rows -> pixels pairs rows 0,1 and 2,3 (8 columns each),
// then joins the pairs into pixels, o[q] holding pixels 4q .. 4q + 3; pixels
// -> rows gathers channels 0,1 and 2,3 of 8 pixels from two registers, then
// joins the halves of 16 pixels into rows.
LC_MGE_AVX512_INLINE void pixels_4x16_ps(const __m512 v[4], __m512 o[4]) {
  const __m512i pair_lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i pair_hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const __m512i quad_lo = _mm512_setr_epi32(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
  const __m512i quad_hi = _mm512_setr_epi32(8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
  const __m512 ab0 = _mm512_permutex2var_ps(v[0], pair_lo, v[1]), ab1 = _mm512_permutex2var_ps(v[0], pair_hi, v[1]);
  const __m512 cd0 = _mm512_permutex2var_ps(v[2], pair_lo, v[3]), cd1 = _mm512_permutex2var_ps(v[2], pair_hi, v[3]);
  o[0] = _mm512_permutex2var_ps(ab0, quad_lo, cd0), o[1] = _mm512_permutex2var_ps(ab0, quad_hi, cd0);
  o[2] = _mm512_permutex2var_ps(ab1, quad_lo, cd1), o[3] = _mm512_permutex2var_ps(ab1, quad_hi, cd1);
}

LC_MGE_AVX512_INLINE void rows_4x16_ps(const __m512 z[4], __m512 v[4]) {
  const __m512i ch01 = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
  const __m512i ch23 = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
  const __m512i lows = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
  const __m512i highs = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  const __m512 a01 = _mm512_permutex2var_ps(z[0], ch01, z[1]), a23 = _mm512_permutex2var_ps(z[0], ch23, z[1]);
  const __m512 b01 = _mm512_permutex2var_ps(z[2], ch01, z[3]), b23 = _mm512_permutex2var_ps(z[2], ch23, z[3]);
  v[0] = _mm512_permutex2var_ps(a01, lows, b01), v[1] = _mm512_permutex2var_ps(a01, highs, b01);
  v[2] = _mm512_permutex2var_ps(a23, lows, b23), v[3] = _mm512_permutex2var_ps(a23, highs, b23);
}

// The elements of register q (kPixels pixels of 4 elements each) that hold the first n pixels of a tile.
template <uint64_t kPixels>
constexpr uint64_t first_pixels_bits(uint64_t n, uint64_t q) {
  const uint64_t m = n > kPixels * q ? std::min(kPixels, n - kPixels * q) : 0;
  return (uint64_t{1} << (4 * m)) - 1;
}
static_assert(first_pixels_bits<8>(32, 3) == 0xFFFFFFFF && first_pixels_bits<8>(17, 2) == 0xF);
static_assert(first_pixels_bits<4>(4, 1) == 0 && first_pixels_bits<4>(7, 1) == 0xFFF);

// The elements of o[q] (pixels 4q.. of a 32-bit tile, 4 elements each) that hold the first n pixels.
LC_MGE_AVX512_INLINE __mmask16 pixel_floats_mask(uint64_t n, uint64_t q) {
  return static_cast<__mmask16>(first_pixels_bits<4>(n, q));
}

// 32-bit elements, R == 4 (NCHW4), unpack: 16 pixels in four 64-byte loads ->
// 16 columns of each of the 4 rows. The AVX2 tile is bound by its shuffles
// (8 per 128 bytes); two rounds of two-source permutes need 8 per 256 bytes.
// Round one gathers channels 0,1 and 2,3 of 8 pixels from two loads, round two
// joins the halves of 16 pixels into rows.
LC_MGE_AVX512 uint64_t unpack_4x16_epi32_avx512(const Group& g, uint8_t* logical, const uint8_t* phys, bool stream) {
  float* row[4];
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) row[k] = g.rows[k] == kPad ? nullptr : reinterpret_cast<float*>(logical) + g.rows[k];
  // A 64-byte store across two lines costs about twice one within a line, so
  // when the rows share their offset in a line (H*W a multiple of 16), the
  // columns up to the first line boundary go first, one by one.
  // With `stream` (and the rows so aligned) the rows' lines go out with
  // non-temporal stores.
  bool aligned = false;
  const uint64_t head = rows_head(g.rows, 4, logical, 4, g.L, &aligned);
  const bool nt = stream && aligned;
  if (head > 0) transpose_rest<false, 4>(Group{g.rows, g.R, head, g.pixels}, logical, const_cast<uint8_t*>(phys), 0);
  const uint64_t L16 = head + (g.L - head) / 16 * 16;
  const float* in = reinterpret_cast<const float*>(phys) + g.pixels + head * 4;
  for (uint64_t l = head; l < L16; l += 16, in += 64) {
    const __m512 z[4] = {_mm512_loadu_ps(in), _mm512_loadu_ps(in + 16), _mm512_loadu_ps(in + 32),
                         _mm512_loadu_ps(in + 48)};
    __m512 out[4];
    rows_4x16_ps(z, out);
    LC_MGE_UNROLL
    for (int k = 0; k < 4; ++k) {
      if (!row[k]) continue;
      if (nt) _mm512_stream_ps(row[k] + l, out[k]);
      else _mm512_storeu_ps(row[k] + l, out[k]);
    }
  }
  return L16;
}

#define LC_MGE_AVX512BW __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define LC_MGE_AVX512BW_INLINE \
  inline __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"), always_inline))
// The same for a lambda (no `inline` there).
#define LC_MGE_AVX512BW_LAMBDA __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"), always_inline))

// 16-bit elements, R == 4 (NCHW4 and CHWN4 of one image, fp16 / bf16 /
// int16): 32 columns of each of the 4 rows <-> 32 pixels of 8 bytes in four
// 64-byte lines. Word permutes pair rows 0,1 and 2,3 (a0 b0 a1 b1 ...), then
// dword permutes join the pairs into pixels (pack); the unpack takes the
// same two rounds backwards. Eight two-source permutes per 256 bytes
// (8 x 64 x 256 x 256 fp16 on a Zen 5: 0.28 / 0.33 of memcpy element by
// element, 1.37 / 1.29 so; pack / unpack).
alignas(64) constexpr uint16_t kPairWordsLo[32] = {0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                                   8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
alignas(64) constexpr uint16_t kPairWordsHi[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53, 22, 54, 23, 55,
                                                   24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
alignas(64) constexpr uint16_t kEvenWords[32] = {0,  2,  4,  6,  8,  10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30,
                                                 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62};
alignas(64) constexpr uint16_t kOddWords[32] = {1,  3,  5,  7,  9,  11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31,
                                                33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63};

// Rows 0..3 of 32 pixels (v[k]: row k) -> the pixels' 4 words, pixels 8q..8q
// + 7 in o[q]: two rounds of two-source permutes.
LC_MGE_AVX512BW_INLINE void pixels_4x32_epi16(const __m512i v[4], __m512i o[4]) {
  const __m512i pair_lo = _mm512_load_si512(kPairWordsLo), pair_hi = _mm512_load_si512(kPairWordsHi);
  // Pixels 0..7 (lo) and 8..15 (hi) of a row-0/1 pair (ab) and a row-2/3 pair (cd).
  const __m512i quad_lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i quad_hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const __m512i ab0 = _mm512_permutex2var_epi16(v[0], pair_lo, v[1]);
  const __m512i ab1 = _mm512_permutex2var_epi16(v[0], pair_hi, v[1]);
  const __m512i cd0 = _mm512_permutex2var_epi16(v[2], pair_lo, v[3]);
  const __m512i cd1 = _mm512_permutex2var_epi16(v[2], pair_hi, v[3]);
  o[0] = _mm512_permutex2var_epi32(ab0, quad_lo, cd0);
  o[1] = _mm512_permutex2var_epi32(ab0, quad_hi, cd0);
  o[2] = _mm512_permutex2var_epi32(ab1, quad_lo, cd1);
  o[3] = _mm512_permutex2var_epi32(ab1, quad_hi, cd1);
}

// The other way: z[q] holding pixels 8q..8q + 7 -> row k of the 32 pixels in v[k].
LC_MGE_AVX512BW_INLINE void rows_4x32_epi16(const __m512i z[4], __m512i v[4]) {
  const __m512i even_words = _mm512_load_si512(kEvenWords), odd_words = _mm512_load_si512(kOddWords);
  // Dword 2p of a pixel line holds channels 0,1 of pixel p, dword 2p + 1 channels 2,3.
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512i ab0 = _mm512_permutex2var_epi32(z[0], even, z[1]), cd0 = _mm512_permutex2var_epi32(z[0], odd, z[1]);
  const __m512i ab1 = _mm512_permutex2var_epi32(z[2], even, z[3]), cd1 = _mm512_permutex2var_epi32(z[2], odd, z[3]);
  v[0] = _mm512_permutex2var_epi16(ab0, even_words, ab1);
  v[1] = _mm512_permutex2var_epi16(ab0, odd_words, ab1);
  v[2] = _mm512_permutex2var_epi16(cd0, even_words, cd1);
  v[3] = _mm512_permutex2var_epi16(cd0, odd_words, cd1);
}

// The words of o[q] (pixels 8q.. of a tile, 4 words each) that hold the first n pixels.
LC_MGE_AVX512BW_INLINE __mmask32 pixel_words_mask(uint64_t n, uint64_t q) {
  return static_cast<__mmask32>(first_pixels_bits<8>(n, q));
}

// Pixels l.. of a tile, all 32 or the first n (masked loads and stores).
template <bool kPartial>
LC_MGE_AVX512BW_INLINE void pack_4x32_epi16(const uint16_t* const row[4], uint64_t l, uint64_t n, uint16_t* out,
                                            bool stream, bool nt) {
  const __mmask32 cols = kPartial ? (__mmask32{1} << n) - 1 : ~__mmask32{0};
  __m512i v[4];
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) {
    if (stream && row[k]) _mm_prefetch(reinterpret_cast<const char*>(row[k] + l) + kPrefetchBytes, _MM_HINT_T0);
    if (!row[k]) v[k] = _mm512_setzero_si512();
    else if (kPartial) v[k] = masked::_mm512_maskz_loadu_epi16(cols, row[k] + l);
    else v[k] = _mm512_loadu_si512(reinterpret_cast<const void*>(row[k] + l));
  }
  __m512i o[4];
  pixels_4x32_epi16(v, o);
  LC_MGE_UNROLL
  for (uint64_t q = 0; q < 4; ++q) {
    if (kPartial) {
      masked::_mm512_mask_storeu_epi16(out + 32 * q, pixel_words_mask(n, q), o[q]);
    } else if (nt) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(out + 32 * q), o[q]);
    } else {
      _mm512_storeu_si512(reinterpret_cast<void*>(out + 32 * q), o[q]);
    }
  }
}

template <bool kPartial>
LC_MGE_AVX512BW_INLINE void unpack_4x32_epi16(uint16_t* const row[4], uint64_t l, uint64_t n, const uint16_t* in,
                                              bool nt) {
  __m512i z[4];
  LC_MGE_UNROLL
  for (uint64_t q = 0; q < 4; ++q) {
    if (kPartial) z[q] = masked::_mm512_maskz_loadu_epi16(pixel_words_mask(n, q), in + 32 * q);
    else z[q] = _mm512_loadu_si512(reinterpret_cast<const void*>(in + 32 * q));
  }
  __m512i v[4];
  rows_4x32_epi16(z, v);
  const __mmask32 cols = kPartial ? (__mmask32{1} << n) - 1 : ~__mmask32{0};
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) {
    if (!row[k]) continue;
    if (kPartial) masked::_mm512_mask_storeu_epi16(row[k] + l, cols, v[k]);
    else if (nt) _mm512_stream_si512(reinterpret_cast<__m512i*>(row[k] + l), v[k]);
    else _mm512_storeu_si512(reinterpret_cast<void*>(row[k] + l), v[k]);
  }
}

// Every column of the group: the pixels before the first line boundary of
// the side written whole (the pixel lines, packing; the rows, unpacking) and
// after the last whole tile in one masked tile each.
LC_MGE_AVX512BW void pack_4x32_epi16_avx512(const Group& g, const uint8_t* logical, uint8_t* phys, bool stream) {
  const uint16_t* row[4];
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) row[k] = g.rows[k] == kPad ? nullptr : reinterpret_cast<const uint16_t*>(logical) + g.rows[k];
  uint16_t* out = reinterpret_cast<uint16_t*>(phys) + g.pixels;
  const uint64_t m = reinterpret_cast<uintptr_t>(out) % kLine;
  const uint64_t head = m % 8 == 0 ? std::min(g.L, (kLine - m) % kLine / 8) : 0;
  const bool nt = stream && m % 8 == 0;
  if (head > 0) pack_4x32_epi16<true>(row, 0, head, out, false, false);
  const uint64_t L32 = head + (g.L - head) / 32 * 32;
  for (uint64_t l = head; l < L32; l += 32) pack_4x32_epi16<false>(row, l, 32, out + l * 4, stream, nt);
  if (L32 < g.L) pack_4x32_epi16<true>(row, L32, g.L - L32, out + L32 * 4, false, false);
}

LC_MGE_AVX512BW void unpack_4x32_epi16_avx512(const Group& g, uint8_t* logical, const uint8_t* phys, bool stream) {
  uint16_t* row[4];
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) row[k] = g.rows[k] == kPad ? nullptr : reinterpret_cast<uint16_t*>(logical) + g.rows[k];
  const uint16_t* in = reinterpret_cast<const uint16_t*>(phys) + g.pixels;
  bool aligned = false;
  const uint64_t head = rows_head(g.rows, 4, logical, 2, g.L, &aligned);
  const bool nt = stream && aligned;
  if (head > 0) unpack_4x32_epi16<true>(row, 0, head, in, false);
  const uint64_t L32 = head + (g.L - head) / 32 * 32;
  for (uint64_t l = head; l < L32; l += 32) unpack_4x32_epi16<false>(row, l, 32, in + l * 4, nt);
  if (L32 < g.L) unpack_4x32_epi16<true>(row, L32, g.L - L32, in + L32 * 4, false);
}

// 8-bit elements, R == 4 (NCHW4 int8), pack: 64 columns of each of the 4 rows
// -> 64 pixels of 4 bytes in four 64-byte stores (whole lines once the output
// is line-aligned; non-temporal with `stream`). Byte and word unpacks build
// 16 pixels in every 128-bit lane (lane q of X_k holds pixels 16q + 4k ..
// 16q + 4k + 3); a 4x4 transpose of 128-bit lanes puts them in order. The
// pixels before the first line and after the last whole tile take one masked
// tile each (rows read, pixels written only up to their end).
LC_MGE_AVX512BW_INLINE void pixels_4x64_epi8(const __m512i v[4], __m512i o[4]) {
  const __m512i ab0 = _mm512_unpacklo_epi8(v[0], v[1]), ab1 = _mm512_unpackhi_epi8(v[0], v[1]);
  const __m512i cd0 = _mm512_unpacklo_epi8(v[2], v[3]), cd1 = _mm512_unpackhi_epi8(v[2], v[3]);
  const __m512i x0 = _mm512_unpacklo_epi16(ab0, cd0), x1 = _mm512_unpackhi_epi16(ab0, cd0);
  const __m512i x2 = _mm512_unpacklo_epi16(ab1, cd1), x3 = _mm512_unpackhi_epi16(ab1, cd1);
  const __m512i s0 = _mm512_shuffle_i32x4(x0, x1, 0x44), s1 = _mm512_shuffle_i32x4(x2, x3, 0x44);
  const __m512i s2 = _mm512_shuffle_i32x4(x0, x1, 0xEE), s3 = _mm512_shuffle_i32x4(x2, x3, 0xEE);
  o[0] = _mm512_shuffle_i32x4(s0, s1, 0x88), o[1] = _mm512_shuffle_i32x4(s0, s1, 0xDD);
  o[2] = _mm512_shuffle_i32x4(s2, s3, 0x88), o[3] = _mm512_shuffle_i32x4(s2, s3, 0xDD);
}

// Bytes [64k, 64k + 64) of a run of `bytes`, as a mask of the kth 64-byte piece.
inline __attribute__((always_inline)) __mmask64 piece_mask(uint64_t bytes, uint64_t k) {
  if (bytes <= 64 * k) return 0;
  return bytes - 64 * k >= 64 ? ~__mmask64{0} : (__mmask64{1} << (bytes - 64 * k)) - 1;
}

// Pixels l .. l + n - 1 (n <= 64) of four rows, masked.
LC_MGE_AVX512BW void pack_4x64_epi8_masked(const uint8_t* const* row, uint64_t l, uint64_t n, uint8_t* out) {
  const __mmask64 cols = n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
  __m512i v[4], o[4];
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) v[k] = row[k] ? masked::_mm512_maskz_loadu_epi8(cols, row[k] + l) : _mm512_setzero_si512();
  pixels_4x64_epi8(v, o);
  LC_MGE_UNROLL
  for (uint64_t k = 0; k < 4; ++k) masked::_mm512_mask_storeu_epi8(out + 64 * k, piece_mask(4 * n, k), o[k]);
}

LC_MGE_AVX512BW void pack_4x64_epi8_avx512(const Group& g, const uint8_t* logical, uint8_t* phys, bool stream) {
  const uint8_t* row[4];
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) row[k] = g.rows[k] == kPad ? nullptr : logical + g.rows[k];
  uint8_t* out = phys + g.pixels;
  const uint64_t m = reinterpret_cast<uintptr_t>(out) % kLine;
  const uint64_t head = stream && m % 4 == 0 ? std::min(g.L, (kLine - m) % kLine / 4) : 0;
  const bool nt = stream && m % 4 == 0;
  if (head > 0) pack_4x64_epi8_masked(row, 0, head, out);
  const uint64_t L64 = head + (g.L - head) / 64 * 64;
  out += head * 4;
  for (uint64_t l = head; l < L64; l += 64, out += 256) {
    __m512i v[4], o[4];
    LC_MGE_UNROLL
    for (int k = 0; k < 4; ++k) {
      if (!row[k]) {
        v[k] = _mm512_setzero_si512();
        continue;
      }
      if (stream) _mm_prefetch(reinterpret_cast<const char*>(row[k] + l) + kPrefetchBytes, _MM_HINT_T0);
      v[k] = _mm512_loadu_si512(reinterpret_cast<const void*>(row[k] + l));
    }
    pixels_4x64_epi8(v, o);
    LC_MGE_UNROLL
    for (int k = 0; k < 4; ++k) {
      if (nt) _mm512_stream_si512(reinterpret_cast<__m512i*>(out + 64 * k), o[k]);
      else _mm512_storeu_si512(reinterpret_cast<void*>(out + 64 * k), o[k]);
    }
  }
  if (L64 < g.L) pack_4x64_epi8_masked(row, L64, g.L - L64, out);
}

// 8-bit elements, R == 4, unpack: 64 pixels in four 64-byte loads -> 64
// columns of each row. A byte shuffle per 128-bit lane gathers each channel
// of 4 pixels into one 32-bit word (word 4q + c: channel c of pixels 4q ..
// 4q + 3 of a load), which is the 32-bit unpack's arrangement; its two rounds
// of permutes finish the rows. The pixels before the rows' first line and
// after the last whole tile take one masked tile each.
LC_MGE_AVX512BW_INLINE void rows_4x64_epi8(const __m512i in[4], __m512i out[4]) {
  const __m512i gather = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  const __m512i ch01 = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
  const __m512i ch23 = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
  const __m512i lows = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
  const __m512i highs = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  __m512i z[4];
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) z[k] = _mm512_shuffle_epi8(in[k], gather);
  const __m512i a01 = _mm512_permutex2var_epi32(z[0], ch01, z[1]), a23 = _mm512_permutex2var_epi32(z[0], ch23, z[1]);
  const __m512i b01 = _mm512_permutex2var_epi32(z[2], ch01, z[3]), b23 = _mm512_permutex2var_epi32(z[2], ch23, z[3]);
  out[0] = _mm512_permutex2var_epi32(a01, lows, b01), out[1] = _mm512_permutex2var_epi32(a01, highs, b01);
  out[2] = _mm512_permutex2var_epi32(a23, lows, b23), out[3] = _mm512_permutex2var_epi32(a23, highs, b23);
}

// Pixels l .. l + n - 1 (n <= 64) of four rows, masked.
LC_MGE_AVX512BW void unpack_4x64_epi8_masked(uint8_t* const* row, uint64_t l, uint64_t n, const uint8_t* in) {
  __m512i v[4], o[4];
  LC_MGE_UNROLL
  for (uint64_t k = 0; k < 4; ++k) v[k] = masked::_mm512_maskz_loadu_epi8(piece_mask(4 * n, k), in + 64 * k);
  rows_4x64_epi8(v, o);
  const __mmask64 cols = n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) {
    if (row[k]) masked::_mm512_mask_storeu_epi8(row[k] + l, cols, o[k]);
  }
}

LC_MGE_AVX512BW void unpack_4x64_epi8_avx512(const Group& g, uint8_t* logical, const uint8_t* phys, bool stream) {
  uint8_t* row[4];
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) row[k] = g.rows[k] == kPad ? nullptr : logical + g.rows[k];
  bool aligned = false;
  const uint64_t head = stream ? rows_head(g.rows, 4, logical, 1, g.L, &aligned) : 0;
  const bool nt = stream && aligned;
  const uint8_t* in = phys + g.pixels;
  if (head > 0) unpack_4x64_epi8_masked(row, 0, head, in);
  const uint64_t L64 = head + (g.L - head) / 64 * 64;
  in += head * 4;
  for (uint64_t l = head; l < L64; l += 64, in += 256) {
    __m512i v[4], out[4];
    LC_MGE_UNROLL
    for (int k = 0; k < 4; ++k) v[k] = _mm512_loadu_si512(reinterpret_cast<const void*>(in + 64 * k));
    rows_4x64_epi8(v, out);
    LC_MGE_UNROLL
    for (int k = 0; k < 4; ++k) {
      if (!row[k]) continue;
      if (nt) _mm512_stream_si512(reinterpret_cast<__m512i*>(row[k] + l), out[k]);
      else _mm512_storeu_si512(reinterpret_cast<void*>(row[k] + l), out[k]);
    }
  }
  if (L64 < g.L) unpack_4x64_epi8_masked(row, L64, g.L - L64, in);
}

// The byte shuffle that transposes each 16 bytes as a 4 x 4 matrix (its own
// inverse): four pixels of four 8-bit channels <-> four channels' runs of four.
LC_MGE_AVX2_INLINE __m256i transpose_4x4_bytes_avx2() {
  return _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,  //
                          0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
}

// The shuffle within each 16 bytes from two pixels of four 16-bit channels to
// the four channels' pairs (kToChannels), or back.
template <bool kToChannels>
LC_MGE_AVX2_INLINE __m256i pixel_pairs_epi16_avx2() {
  if constexpr (kToChannels) {
    return _mm256_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15,  //
                            0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
  }
  return _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,  //
                          0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
}

// The unpacks of four rows (NCHW4) without AVX-512: 256 bytes of pixels -> a
// line of each row, its two 32-byte halves from two rounds over 128 bytes.
// Sixteen-byte pieces k and k + 4 of a round go into the two lanes of a
// register straight from memory (an insert with a memory operand takes no
// shuffle); a piece is a pixel of 32-bit elements, two of 16-bit ones or four
// of bytes, whose channels a byte shuffle first gathers into 32-bit words; a
// 4 x 4 word transpose per lane then gives the rows, all in registers. The rows'
// lines start on a line when they share their offset in one (the columns
// before that first, one by one); with `stream` they go out non-temporal.
template <uint64_t kE>
LC_MGE_AVX2 uint64_t unpack_4rows_avx2(const Group& g, uint8_t* logical, const uint8_t* phys, bool stream) {
  static_assert(kE == 1 || kE == 2 || kE == 4);
  uint8_t* row[4];
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) row[k] = g.rows[k] == kPad ? nullptr : logical + g.rows[k] * kE;
  bool aligned = false;
  const uint64_t head = rows_head(g.rows, 4, logical, kE, g.L, &aligned);
  const bool nt = stream && aligned;
  if (head > 0) transpose_rest<false, kE>(Group{g.rows, g.R, head, g.pixels}, logical, const_cast<uint8_t*>(phys), 0);
  constexpr uint64_t kCols = kLine / kE;  // a line of each row
  const uint64_t end = head + (g.L - head) / kCols * kCols;
  const __m256i gather = kE == 1 ? transpose_4x4_bytes_avx2() : pixel_pairs_epi16_avx2<true>();
  const uint8_t* in = phys + (g.pixels + head * 4) * kE;
  for (uint64_t l = head; l < end; l += kCols, in += 4 * kLine) {
    LC_MGE_UNROLL
    for (int half = 0; half < 2; ++half) {
      const uint8_t* p = in + 128 * half;
      __m256i u[4];
      LC_MGE_UNROLL
      for (int k = 0; k < 4; ++k) {
        u[k] = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k))),
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 64 + 16 * k)), 1);
        if constexpr (kE != 4) u[k] = _mm256_shuffle_epi8(u[k], gather);
      }
      const __m256i t0 = _mm256_unpacklo_epi32(u[0], u[1]), t1 = _mm256_unpackhi_epi32(u[0], u[1]);
      const __m256i t2 = _mm256_unpacklo_epi32(u[2], u[3]), t3 = _mm256_unpackhi_epi32(u[2], u[3]);
      const __m256i o[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                            _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3)};
      LC_MGE_UNROLL
      for (int c = 0; c < 4; ++c) {
        if (!row[c]) continue;
        auto* to = reinterpret_cast<__m256i*>(row[c] + l * kE + 32 * half);
        if (nt) _mm256_stream_si256(to, o[c]);
        else _mm256_storeu_si256(to, o[c]);
      }
    }
  }
  return end;
}

// 8 x 8 32-bit elements, a row a register: element j of v[i] ends in v[j]
// at element i (4 x 4 transposes per lane, then the lanes exchanged).
LC_MGE_AVX2_INLINE void transpose8x8_epi32_avx2(__m256 v[8]) {
  __m256 t[8], u[8];
  LC_MGE_UNROLL
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(v[k], v[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(v[k], v[k + 1]);
  }
  LC_MGE_UNROLL
  for (int k = 0; k < 8; k += 4) {
    u[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
    u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xEE);
    u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
    u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
  }
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
    v[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
  }
}

// Streamed packs of 32-bit elements, 16 | R, pixels from a line, without
// AVX-512: tiles_16x16_epi32_avx512's passes of kPassRows rows over the whole
// run of pixels, 8 pixels a tile by two 8 x 8 transposes (rows 0..7 and
// 8..15), so that each pixel's line of 16 elements leaves whole, two
// non-temporal 32-byte stores. Only the pass's rows are read at once, each
// fetched kRowFetch bytes ahead into L1. Measured on a Zen 4 capped at AVX2,
// pinned, alternating, of memcpy, against the L2 stage and its streaming
// copy: NHWC fp32 8 x 64 x 256 x 128, 7.9-8.5 -> 4.5-4.6 ms beside a memcpy
// of 4.8-5.3 (0.57-0.61 -> 1.08-1.10), in passes of 16 rows. Returns the
// pixels done.
LC_MGE_AVX2 uint64_t pack_16rows_epi32_avx2_streamed(const Group& g, const uint8_t* logical, uint8_t* phys) {
  const uint64_t L8 = g.L / 8 * 8, pitch = g.R;  // elements per pixel
  const float* lg = reinterpret_cast<const float*>(logical);
  float* ph = reinterpret_cast<float*>(phys) + g.pixels;
  for (uint64_t pass = 0; pass < g.R; pass += kPassRows) {
    const uint64_t pass_end = std::min(g.R, pass + kPassRows);
    for (uint64_t l = 0; l < L8; l += 8) {
      for (uint64_t r = pass; r < pass_end; r += 16) {
        const uint64_t* rows = g.rows + r;
        __m256 a[8], b[8];
        LC_MGE_UNROLL
        for (int k = 0; k < 8; ++k) {
          a[k] = b[k] = _mm256_setzero_ps();
          if (rows[k] != kPad) {
            _mm_prefetch(reinterpret_cast<const char*>(lg + rows[k] + l) + kRowFetch, _MM_HINT_T0);  // mutate: equivalent (a prefetch: the same bytes)
            a[k] = _mm256_loadu_ps(lg + rows[k] + l);
          }
          if (rows[8 + k] != kPad) {
            _mm_prefetch(reinterpret_cast<const char*>(lg + rows[8 + k] + l) + kRowFetch, _MM_HINT_T0);  // mutate: equivalent (a prefetch: the same bytes)
            b[k] = _mm256_loadu_ps(lg + rows[8 + k] + l);
          }
        }
        transpose8x8_epi32_avx2(a);
        transpose8x8_epi32_avx2(b);
        float* px = ph + l * pitch + r;
        LC_MGE_UNROLL
        for (int k = 0; k < 8; ++k) {
          _mm256_stream_ps(px + k * pitch, a[k]);
          _mm256_stream_ps(px + k * pitch + 8, b[k]);
        }
      }
    }
  }
  _mm_sfence();
  return L8;
}

// The packs of four rows likewise: 32 bytes of each row a round -> 128 bytes
// of pixels, two rounds a line of each row, the 4 x 4 word transpose per lane
// (and for bytes the same byte shuffle, its own inverse) giving 16-byte
// pieces k | k + 4, which lane permutes put in order. The pixels start on a
// line from the first column that puts them there (the columns before it
// one by one), and with `stream` go out non-temporal. Returns the columns
// done.
template <uint64_t kE>
LC_MGE_AVX2 uint64_t pack_4rows_avx2(const Group& g, const uint8_t* logical, uint8_t* phys, bool stream) {
  static_assert(kE == 1 || kE == 2 || kE == 4);
  const uint8_t* row[4];
  for (int k = 0; k < 4; ++k) row[k] = g.rows[k] == kPad ? nullptr : logical + g.rows[k] * kE;
  const uint64_t misalign = reinterpret_cast<uintptr_t>(phys + g.pixels * kE) % kLine;
  const bool aligned = misalign % (4 * kE) == 0;
  const uint64_t head = std::min(g.L, aligned ? (kLine - misalign) % kLine / (4 * kE) : 0);
  const bool nt = stream && aligned;
  if (head > 0) transpose_rest<true, kE>(Group{g.rows, g.R, head, g.pixels}, const_cast<uint8_t*>(logical), phys, 0);
  constexpr uint64_t kCols = kLine / kE;  // a line of each row
  const uint64_t end = head + (g.L - head) / kCols * kCols;
  const __m256i gather = kE == 1 ? transpose_4x4_bytes_avx2() : pixel_pairs_epi16_avx2<false>();
  uint8_t* out = phys + (g.pixels + head * 4) * kE;
  for (uint64_t l = head; l < end; l += kCols, out += 4 * kLine) {
    LC_MGE_UNROLL
    for (int half = 0; half < 2; ++half) {
      __m256i o[4];
      LC_MGE_UNROLL
      for (int c = 0; c < 4; ++c) {
        o[c] = row[c] ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row[c] + l * kE + 32 * half))
                      : _mm256_setzero_si256();
      }
      const __m256i t0 = _mm256_unpacklo_epi32(o[0], o[1]), t1 = _mm256_unpackhi_epi32(o[0], o[1]);
      const __m256i t2 = _mm256_unpacklo_epi32(o[2], o[3]), t3 = _mm256_unpackhi_epi32(o[2], o[3]);
      __m256i u[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2), _mm256_unpacklo_epi64(t1, t3),
                      _mm256_unpackhi_epi64(t1, t3)};  // pieces k | k + 4
      if constexpr (kE != 4) {
        LC_MGE_UNROLL
        for (int k = 0; k < 4; ++k) u[k] = _mm256_shuffle_epi8(u[k], gather);
      }
      const __m256i piece[4] = {_mm256_permute2x128_si256(u[0], u[1], 0x20), _mm256_permute2x128_si256(u[2], u[3], 0x20),
                                _mm256_permute2x128_si256(u[0], u[1], 0x31), _mm256_permute2x128_si256(u[2], u[3], 0x31)};
      LC_MGE_UNROLL
      for (int k = 0; k < 4; ++k) {
        auto* to = reinterpret_cast<__m256i*>(out + 128 * half + 32 * k);
        if (nt) _mm256_stream_si256(to, piece[k]);
        else _mm256_storeu_si256(to, piece[k]);
      }
    }
  }
  return end;
}

// A group of four rows by pack_4rows_avx2 or unpack_4rows_avx2, the columns
// they leave one by one.
template <bool kPack, uint64_t kE>
LC_MGE_AVX2 void four_rows_avx2(const Group& g, uint8_t* logical, uint8_t* phys, bool stream) {
  const uint64_t done = kPack ? pack_4rows_avx2<kE>(g, logical, phys, stream) : unpack_4rows_avx2<kE>(g, logical, phys, stream);
  if (done < g.L) transpose_rest<kPack, kE>(g, logical, phys, done);
}

// NHWC images of at most 64 pixels in cache, 16- or 32-bit, 8 | C, without
// AVX-512: small_images_epi32's design in 8-row tiles. A tile is 8 rows of
// 32 bytes read straight from the block (8 pixels of 32-bit elements, 16 of
// 16-bit ones), transposed in registers into the pixels' 8 rows. The pixels'
// lines are C elements apart (4 or 8 KiB for 2048 channels: one L1 set), so
// each pixel's run of kRun rows goes through a stage row (a line longer than
// the run, to spread the L1 sets) and out whole. Unpack: the same the other
// way, the last pixels' columns of a row stored through a scratch register.
// (The row table's tiles wrote 16-byte pieces of 8 or 16 pixels straight
// into lines of one set. Measured on a Zen 4 capped at AVX2, pinned,
// alternating, pack / unpack, of memcpy: 1 x 2048 x 7 x 7 fp16 0.14 / 0.18 ->
// 0.34 / 0.41, fp32 0.19 / 0.39-0.42 -> 0.52 / 0.45-0.48; 4 x 256 x 3 x 3 fp32
// 0.23 / 0.22 -> 0.52 / 0.50-0.53; 1 x 1024 x 3 x 3 fp32 unpack 0.19 -> 0.49.
// Fewer channels keep the tiles: 1 x 64 x 8 x 8 fp16 0.23 -> 0.14 so.)
// n bytes, a multiple of 16, by vector loads and stores (a memcpy of a size
// known only at run time became `rep movsq`, half the unpack's time for a
// stage row of 256 bytes).
LC_MGE_AVX2_INLINE void copy_run_avx2(uint8_t* dst, const uint8_t* src, uint64_t n) {
  uint64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
  }
  if (i < n) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
}

constexpr uint64_t kSmallImagesAvx2Channels = 256;
template <bool kPack, uint64_t kE>
LC_MGE_AVX2 void small_images_avx2(uint64_t C, uint64_t L, uint8_t* logical, uint8_t* phys, uint64_t begin,
                                   uint64_t end) {
  static_assert(kE == 2 || kE == 4);
  constexpr uint64_t kCols = 32 / kE;  // pixels a tile
  constexpr uint64_t kRun = 128;       // rows a pass
  constexpr uint64_t kPitch = kRun * kE + kLine;
  constexpr uint64_t kTailPixels = 2;
  alignas(64) uint8_t stage[kCols][kPitch];
  const uint64_t row_bytes = L * kE, image_bytes = C * row_bytes;
  for (uint64_t i = begin; i < end; ++i) {
    uint8_t* block = logical + i * image_bytes;
    uint8_t* px = phys + i * image_bytes;
    const uint8_t* block_end = block + image_bytes;
    for (uint64_t rb = 0; rb < C; rb += kRun) {
      const uint64_t run = std::min(kRun, C - rb);
      for (uint64_t c = 0; c < L; c += kCols) {
        const uint64_t pixels = std::min(kCols, L - c);
        if (pixels <= kTailPixels && c > 0) {
          // The last pixel or two (of 7 x 7 = 3 x 16 + 1) element by element:
          // a tile for them costs as much as one for a whole block of pixels.
          for (uint64_t j = c; j < L; ++j) {
            for (uint64_t r = rb; r < rb + run; ++r) {
              uint8_t* element = block + (r * L + j) * kE;
              uint8_t* in_pixel = px + (j * C + r) * kE;
              if (kPack) std::memcpy(in_pixel, element, kE);
              else std::memcpy(element, in_pixel, kE);
            }
          }
          break;
        }
        if (!kPack) {
          for (uint64_t j = 0; j < pixels; ++j) copy_run_avx2(stage[j], px + ((c + j) * C + rb) * kE, run * kE);
        }
        for (uint64_t r0 = 0; r0 < run; r0 += 8) {
          uint8_t* at = block + ((rb + r0) * L + c) * kE;  // row rb + r0 + k at at + k * row_bytes
          __m256i v[8];
          if (kPack) {
            LC_MGE_UNROLL
            for (int k = 0; k < 8; ++k) {
              const uint8_t* from = at + k * row_bytes;
              if (from + 32 <= block_end) {
                v[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from));
              } else {  // the block's last bytes (the columns past them go to no pixel)
                alignas(32) uint8_t tail[32] = {};
                std::memcpy(tail, from, static_cast<size_t>(block_end - from));
                v[k] = _mm256_load_si256(reinterpret_cast<const __m256i*>(tail));
              }
            }
          } else {
            LC_MGE_UNROLL
            for (int k = 0; k < 8; ++k) {
              if constexpr (kE == 4) v[k] = _mm256_load_si256(reinterpret_cast<const __m256i*>(stage[k] + r0 * 4));
              else v[k] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(stage[k + 8] + r0 * 2),
                                               reinterpret_cast<const __m128i*>(stage[k] + r0 * 2));
            }
          }
          if constexpr (kE == 4) {
            __m256* f = reinterpret_cast<__m256*>(v);
            transpose8x8_epi32_avx2(f);
          } else {
            byte_transpose::transpose8x8_epi16_x2(v, v);
          }
          LC_MGE_UNROLL
          for (int k = 0; k < 8; ++k) {
            if (kPack) {
              if constexpr (kE == 4) {
                _mm256_store_si256(reinterpret_cast<__m256i*>(stage[k] + r0 * 4), v[k]);
              } else {
                _mm_store_si128(reinterpret_cast<__m128i*>(stage[k] + r0 * 2), _mm256_castsi256_si128(v[k]));
                _mm_store_si128(reinterpret_cast<__m128i*>(stage[k + 8] + r0 * 2), _mm256_extracti128_si256(v[k], 1));
              }
            } else if (pixels == kCols) {
              _mm256_storeu_si256(reinterpret_cast<__m256i*>(at + k * row_bytes), v[k]);
            } else {
              alignas(32) uint8_t tail[32];
              _mm256_store_si256(reinterpret_cast<__m256i*>(tail), v[k]);
              std::memcpy(at + k * row_bytes, tail, pixels * kE);
            }
          }
        }
        if (kPack) {
          for (uint64_t j = 0; j < pixels; ++j) copy_run_avx2(px + ((c + j) * C + rb) * kE, stage[j], run * kE);
        }
      }
    }
  }
}

// Whole 8-bit NCHW64 or NCHW32 groups of 16 to 64 pixels (late layers: 7 x
// 7, 5 x 5, 8 x 8) without AVX-512: a group is one block of X rows L bytes
// apart and X-byte pixel lines, both runs of L * X bytes in cache, so its
// 16 x 16 byte tiles are read and written where they lie, with no row table
// and no stage (small_groups_epi8's design in 128-bit lanes). The last tile
// of a row or pixel run starts where it ends its run, over some of the tile
// before (the same bytes again). Pack: a tile's lanes are rows r..r+15 and
// r+16..r+31 of 16 columns, so a transposed register is 32 bytes of a pixel.
// Unpack: a tile's lanes are 16 rows' bytes of pixels c..c+15 and c+16..c+31,
// so a transposed register is 32 bytes of a row (groups of fewer than 32
// pixels: the pack's tiles the other way). Measured on a Zen 4, pinned,
// alternating, pack / unpack, of memcpy; capped at AVX2, against the row
// table's 32 x 256 blocks through a stage: NCHW64 1 x 2048 x 7 x 7 0.15 /
// 0.22 -> 0.50 / 0.41-0.43, 1 x 1024 x 5 x 5 0.11 / 0.11 -> 0.47 / 0.35,
// 1 x 512 x 8 x 8 0.30 / 0.28 -> 0.58 / 0.52, NCHW32 1 x 1024 x 4 x 4 0.05 /
// 0.04 -> 0.30 / 0.28. With AVX-512 it also takes groups of up to 32 pixels,
// where small_groups_epi8's 64 x 64 tiles are mostly padding: NCHW64 1 x 1024
// x 5 x 5 0.20 / 0.19 -> 0.40 / 0.35, 4 x 4 0.08 -> 0.32 / 0.25 (7 x 7 and 6
// x 6 within the spread of either). Groups [begin, end) of the plan's; ones
// with padding channels are left to `rest`.
// Group g of NCHWx blocks of X rows of L bytes, C channels in `blocks`
// blocks an image: its image's channel block, where its rows and its pixels
// start, and whether every channel of it is real (the small-tensor paths
// leave the others to `rest`).
struct NchwxGroup {
  uint64_t cb;
  uint8_t* block;
  uint8_t* px;
  bool whole;
};

inline NchwxGroup nchwx_group(uint64_t C, uint64_t X, uint64_t L, uint64_t blocks, uint64_t g, uint8_t* logical,
                              uint8_t* phys) {
  const uint64_t n = g / blocks, cb = g % blocks;
  return {cb, logical + (n * C + cb * X) * L, phys + g * L * X, (cb + 1) * X <= C};
}

constexpr uint64_t kSmallGroupsAvx2Pixels = 32;  // with AVX-512, groups of at most this many pixels
template <bool kPack, class Rest>
LC_MGE_AVX2 void small_groups_epi8_avx2(uint64_t C, uint64_t X, uint64_t L, uint8_t* logical, uint8_t* phys,
                                        uint64_t begin, uint64_t end, const Rest& rest) {
  const uint64_t blocks = ceil_div(C, X);
  const bool row_tiles = !kPack && L >= 32;  // the unpack's tiles of 32 pixels of 16 rows
  for (uint64_t g = begin; g < end; ++g) {
    const NchwxGroup at = nchwx_group(C, X, L, blocks, g, logical, phys);
    if (!at.whole) {
      rest(g);
      continue;
    }
    uint8_t* block = at.block;
    uint8_t* px = at.px;
    __m256i v[16];
    if (row_tiles) {
      for (uint64_t r = 0; r < X; r += 16) {
        for (uint64_t c0 = 0; c0 < L; c0 += 32) {
          const uint64_t c = std::min(c0, L - 32);
          LC_MGE_UNROLL
          for (uint64_t k = 0; k < 16; ++k) {
            v[k] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(px + (c + 16 + k) * X + r),
                                       reinterpret_cast<const __m128i*>(px + (c + k) * X + r));
          }
          byte_transpose::transpose16x16_epi8_x2(v);
          LC_MGE_UNROLL
          for (uint64_t k = 0; k < 16; ++k) _mm256_storeu_si256(reinterpret_cast<__m256i*>(block + (r + k) * L + c), v[k]);
        }
      }
      continue;
    }
    for (uint64_t r = 0; r < X; r += 32) {
      for (uint64_t c0 = 0; c0 < L; c0 += 16) {
        const uint64_t c = std::min(c0, L - 16);
        uint8_t* lo = block + r * L + c;  // row r + k at lo + k * L, row r + 16 + k at hi + k * L
        uint8_t* hi = lo + 16 * L;
        LC_MGE_UNROLL
        for (uint64_t k = 0; k < 16; ++k) {
          v[k] = kPack ? _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(hi + k * L),
                                             reinterpret_cast<const __m128i*>(lo + k * L))
                       : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(px + (c + k) * X + r));
        }
        byte_transpose::transpose16x16_epi8_x2(v);
        LC_MGE_UNROLL
        for (uint64_t k = 0; k < 16; ++k) {
          if (kPack) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(px + (c + k) * X + r), v[k]);
          } else {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(lo + k * L), _mm256_castsi256_si128(v[k]));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(hi + k * L), _mm256_extracti128_si256(v[k], 1));
          }
        }
      }
    }
  }
}

bool have_avx512() { return isa_at_least(Isa::kAvx512); }

// 8-bit elements, R == 32 or R a multiple of 64 (NCHW32, NCHW64, CHWN4 with
// 16 | N), AVX-512BW: tiles of 64 columns of 32 (or 64) rows. Rows H*W bytes
// apart share their L1 set, so a row's line must be used the moment it
// arrives: every row's line of the tile goes into one register, and the
// pixels leave as whole lines (non-temporal with `stream`), no stage between.
// The transpose: 16x16 byte transposes in each 128-bit lane of 16 rows
// (byte_transpose.h) give, in register j, lane q, column 16q + j of those 16
// rows; two rounds of 128-bit lane shuffles join the 16-row pieces of a pixel
// (and, for R == 32, two pixels into a line). Streamed packs of 32 rows fetch
// each row's line kTileFetch bytes ahead in software: 32 far-apart rows are
// more streams than the hardware prefetchers follow. The fetch is
// non-temporal, each line being used once, here and in tile_32x32_epi16's
// streamed 16-bit packs: measured on a Zen 5, pinned, alternating with a
// fetch into L2, of memcpy: NCHW32 int8 16 x 128 x 256 x 128 0.83-0.87 ->
// 0.99-1.07; NHWC fp16 8 x 64 x 256 x 256 0.65-0.72 -> 0.86-1.04, NCHW32 the
// same shape 0.75-0.84 -> 0.89-1.05, NCHW64 8 x 128 x 256 x 128 0.70-0.76 ->
// 0.91-1.06, CHWN4 16 x 64 x 128 x 128 0.78-0.87 -> 0.84-0.87; 128 or 512
// bytes ahead no better, a fetch into L2 512 or 1024 bytes ahead no better
// than 256. The 64-row staged packs below measured no better or worse so,
// and the AVX2 16-bit path (1 KiB ahead) slower, 0.51-0.62 -> 0.44-0.51:
// both keep their fetch into L2.
// (Streamed 64k rows go through the stage of pack_rows_staged_epi8_avx512;
// here only the last columns, fewer than 64.)
constexpr uint64_t kTileFetch = 256;  // mutate: equivalent (a prefetch distance: the same bytes at any)

// 64 x 64 bytes, t[q][k] holding line 16q + k: four 16 x 16 byte transposes
// per 128-bit lane leave in t[q][j], lane l, byte column 16l + j of lines
// 16q..16q+15; a 4 x 4 transpose of the lanes of t[0..3][j] then gives line
// 16q + j of the transpose, handed to put(16q + j, line) at once (held in
// t instead, the lines spill: measured 0.28 -> 0.22 of memcpy on 7 x 7 packs).
template <class Put>
LC_MGE_AVX512BW_INLINE void transpose64x64_epi8(__m512i t[4][16], const Put& put) {
  LC_MGE_UNROLL
  for (int q = 0; q < 4; ++q) byte_transpose::transpose16x16_epi8_x4(t[q]);
  LC_MGE_UNROLL
  for (int j = 0; j < 16; ++j) {
    __m512i o[4] = {t[0][j], t[1][j], t[2][j], t[3][j]};
    byte_transpose::transpose_lanes4x4(o);
    LC_MGE_UNROLL
    for (int q = 0; q < 4; ++q) put(static_cast<uint64_t>(16 * q + j), o[q]);
  }
}

// Lanes [a.0 b.0 a.1 b.1] (lo) and [a.2 b.2 a.3 b.3] (hi).
LC_MGE_AVX512BW_INLINE void zip_lanes(__m512i a, __m512i b, __m512i* lo, __m512i* hi) {
  *lo = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), b);
  *hi = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15), b);
}

// Rows row[0..15] (nullptr: padding, zeros) at column l, transposed per
// lane; with kPartial only the columns in `cols` are read (zeros past them).
template <bool kPartial = false>
LC_MGE_AVX512BW_INLINE void load_transpose16(const uint8_t* const* row, uint64_t l, bool fetch, __m512i v[16],
                                             __mmask64 cols = ~__mmask64{0}) {
  LC_MGE_UNROLL
  for (int k = 0; k < 16; ++k) {
    if (!row[k]) {
      v[k] = _mm512_setzero_si512();
      continue;
    }
    if (fetch) _mm_prefetch(reinterpret_cast<const char*>(row[k] + l + kTileFetch), _MM_HINT_NTA);
    v[k] = kPartial ? masked::_mm512_maskz_loadu_epi8(cols, row[k] + l) : _mm512_loadu_si512(reinterpret_cast<const void*>(row[k] + l));
  }
  byte_transpose::transpose16x16_epi8_x4(v);
}

LC_MGE_AVX512BW_INLINE void put_line(uint8_t* at, __m512i v, bool nt) {
  if (nt) _mm512_stream_si512(reinterpret_cast<__m512i*>(at), v);
  else _mm512_storeu_si512(reinterpret_cast<void*>(at), v);
}

// Pixel j's line, R bytes apart from o (not past n with kPartial).
template <bool kPartial>
LC_MGE_AVX512BW_INLINE void put_pixel(uint8_t* o, uint64_t j, uint64_t n, uint64_t R, __m512i v, bool nt) {
  if (!kPartial || j < n) put_line(o + j * R, v, nt);
}

// Pixels j and j + 1 of 32 rows, a line at o + 32 j; a last pixel alone takes
// the line's first half.
template <bool kPartial>
LC_MGE_AVX512BW_INLINE void put_pair(uint8_t* o, uint64_t j, uint64_t n, __m512i v, bool nt) {
  if (!kPartial || j + 1 < n) put_line(o + j * 32, v, nt);
  else if (j < n) masked::_mm512_mask_storeu_epi8(o + j * 32, 0xFFFFFFFFull, v);
}

// The pixels of 32 rows of bytes transposed per lane, rows 0..15 in a and
// 16..31 in b: column j of lane q is pixel kLanePixels * q + j, its 32 bytes
// at o + 32 * pixel, two pixels a line.
template <bool kPartial, uint64_t kLanePixels = 16>
LC_MGE_AVX512BW_INLINE void put_pairs32(const __m512i a[16], const __m512i b[16], uint8_t* o, uint64_t n, bool nt) {
  LC_MGE_UNROLL
  for (int j = 0; j < 16; j += 2) {
    __m512i p0, q0, p1, q1;
    zip_lanes(a[j], b[j], &p0, &q0);          // pixels j | kLanePixels + j, 2 kLanePixels + j | 3 kLanePixels + j
    zip_lanes(a[j + 1], b[j + 1], &p1, &q1);  // pixels j + 1 | kLanePixels + j + 1, ...
    put_pair<kPartial>(o, j, n, _mm512_shuffle_i64x2(p0, p1, 0x44), nt);
    put_pair<kPartial>(o, kLanePixels + j, n, _mm512_shuffle_i64x2(p0, p1, 0xEE), nt);
    put_pair<kPartial>(o, 2 * kLanePixels + j, n, _mm512_shuffle_i64x2(q0, q1, 0x44), nt);
    put_pair<kPartial>(o, 3 * kLanePixels + j, n, _mm512_shuffle_i64x2(q0, q1, 0xEE), nt);
  }
}

// One tile of pack_rows_x64_epi8_avx512: columns l .. l + n - 1 of 32
// rows (two pixels a line) or of a chunk of 64 rows (a pixel a line, R bytes
// apart) into the pixels' lines at o. kPartial: n < 64, the rows read masked
// and only the n pixels' lines (or halves of lines) written.
template <bool kPartial>
LC_MGE_AVX512BW_INLINE void pack_tile_x64(const uint8_t* const* row, uint64_t R, uint64_t l, uint64_t n, uint8_t* o,
                                          bool fetch, bool nt) {
  const __mmask64 cols = kPartial ? (__mmask64{1} << n) - 1 : ~__mmask64{0};
  __m512i a[16], b[16];
  if (R == 32) {
    load_transpose16<kPartial>(row, l, fetch, a, cols);
    load_transpose16<kPartial>(row + 16, l, fetch, b, cols);
    put_pairs32<kPartial>(a, b, o, n, nt);
    return;
  }
  alignas(64) __m512i lo[16], hi[16];
  load_transpose16<kPartial>(row, l, fetch, a, cols);
  load_transpose16<kPartial>(row + 16, l, fetch, b, cols);
  LC_MGE_UNROLL
  for (int j = 0; j < 16; ++j) zip_lanes(a[j], b[j], &lo[j], &hi[j]);  // rows 0..31 of pixels j, 16 + j | ...
  load_transpose16<kPartial>(row + 32, l, fetch, a, cols);
  load_transpose16<kPartial>(row + 48, l, fetch, b, cols);
  LC_MGE_UNROLL
  for (int j = 0; j < 16; ++j) {
    __m512i vlo, vhi;
    zip_lanes(a[j], b[j], &vlo, &vhi);  // rows 32..63
    put_pixel<kPartial>(o, j, n, R, _mm512_shuffle_i64x2(lo[j], vlo, 0x44), nt);
    put_pixel<kPartial>(o, 16 + j, n, R, _mm512_shuffle_i64x2(lo[j], vlo, 0xEE), nt);
    put_pixel<kPartial>(o, 32 + j, n, R, _mm512_shuffle_i64x2(hi[j], vhi, 0x44), nt);
    put_pixel<kPartial>(o, 48 + j, n, R, _mm512_shuffle_i64x2(hi[j], vhi, 0xEE), nt);
  }
}

// Columns l0.. of every row, the last tile partial: every pixel is done here.
// `into_stage`: phys is a stage in cache, its lines stored, not streamed,
// while the rows are still fetched ahead when `stream`.
LC_MGE_AVX512BW void pack_rows_x64_epi8_avx512(const Group& g, const uint8_t* logical, uint8_t* phys, bool stream,
                                               uint64_t l0, bool into_stage = false) {
  const uint64_t R = g.R, whole = l0 + (g.L - l0) / 64 * 64;
  uint8_t* base = phys + g.pixels;
  const bool nt = stream && !into_stage && reinterpret_cast<uintptr_t>(base) % kLine == 0;
  // Row pointers of a chunk of (up to) 64 rows, nullptr for padding; chunks
  // of 64 rows one after the other over the whole run of pixels: a chunk
  // writes whole lines of every pixel, and only 64 rows are read at once.
  const uint8_t* row[64];
  for (uint64_t rc = 0; rc < R; rc += 64) {
    for (uint64_t k = 0; k < std::min<uint64_t>(64, R - rc); ++k) {
      row[k] = g.rows[rc + k] == kPad ? nullptr : logical + g.rows[rc + k];
    }
    for (uint64_t l = l0; l < whole; l += 64) pack_tile_x64<false>(row, R, l, 64, base + l * R + rc, stream, nt);
    if (whole < g.L) pack_tile_x64<true>(row, R, whole, g.L - whole, base + whole * R + rc, false, nt);
  }
}

// 8-bit elements, R a multiple of 64, in cache (NCHW64, NHWC with 64 | C):
// chunks of 64 rows, 64 columns of them into 64 pixel lines at a time. The
// rows are H*W bytes apart and share their L1 sets, so each row's lines pass
// through a stage (64 rows x kRowsStageCols, contiguous) before the transpose
// reads them; the stage has two halves, and the lines of the next block of
// columns are loaded into one while the other is transposed, a share of them
// between every two transposes, so the loads from L2 overlap the shuffles.
// The transpose takes 16 columns: register i holds them for rows i, 16 + i,
// 32 + i and 48 + i, one per 128-bit lane (lanes 1..3 from memory by masked
// broadcasts, which need no shuffle), so the 16x16 byte transposes per lane
// (byte_transpose.h) leave in register j exactly pixel j's 64 rows: a whole
// line. A half of the stage is 64 rows of 128 columns (8 KiB), so that the
// stage takes half of a 32 KiB L1d and the pixel lines written and the rows'
// lines in flight the rest (measured on a Zen 4 with a 32 KiB L1d,
// 1 x 64 x 64 x 64 int8 NCHW64, medians of 7 runs: 0.37 of memcpy with 256
// columns, 0.48 with 128, 0.40 with 64).
//
// Streamed packs (rows in memory) go through the same stage: a row's lines
// then leave memory a block at a time, consecutive, where a 64-column tile
// straight from the rows takes one line of each of 64 streams in turn, which
// memory serves at 0.70 of memcpy at best, loads alone (measured on a Zen 5,
// 64 rows 32 KiB and 4 MiB apart, 64 MiB: 0.69-0.74 a line at a time, 0.88-0.97
// two or four lines at a time). Each row's lines of the block after the next
// are fetched into L2 in software as its lines of the next go into the stage,
// and the pixel lines leave with non-temporal stores. Blocks there are
// kStreamStageCols where L1d holds 3 halves, kRowsStageCols otherwise
// (16,128,256,128 int8 CHWN4 on a Zen 5, 48 KiB L1d: 0.63-0.73 of memcpy with
// 128 columns, 0.76-0.83 with 256; 0.59-0.67 from the rows).
constexpr uint64_t kRowsStageCols = 128;    // columns of a half of the pack stage
constexpr uint64_t kStreamStageCols = 256;  // the same, streamed, L1d of 48 KiB or more; mutate: equivalent (a stage width: the same bytes at any)

// Rows i, 16 + i, 32 + i, 48 + i of a 64-row block at byte offset c (row
// `stride` bytes apart), one per lane, for i = 0..15; then transposed per lane.
LC_MGE_AVX512BW_INLINE void load_lanes_transpose(const uint8_t* block, uint64_t stride, uint64_t c, __m512i v[16]) {
  LC_MGE_UNROLL
  for (int i = 0; i < 16; ++i) {
    const uint8_t* at = block + i * stride + c;
    __m512i x = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
    x = _mm512_mask_broadcast_i32x4(x, 0x00F0, _mm_loadu_si128(reinterpret_cast<const __m128i*>(at + 16 * stride)));
    x = _mm512_mask_broadcast_i32x4(x, 0x0F00, _mm_loadu_si128(reinterpret_cast<const __m128i*>(at + 32 * stride)));
    x = _mm512_mask_broadcast_i32x4(x, 0xF000, _mm_loadu_si128(reinterpret_cast<const __m128i*>(at + 48 * stride)));
    v[i] = x;
  }
  byte_transpose::transpose16x16_epi8_x4(v);
}

// Rows [begin, end) of the block of columns l0.. (`lines` lines a row) into a
// half of the pack stage; padding rows are zeros.
template <uint64_t kC>
LC_MGE_AVX512BW_INLINE void fill_stage(uint8_t (*half)[kC], const uint8_t* const* row, uint64_t l0,
                                       uint64_t lines, uint64_t begin, uint64_t end) {
  for (uint64_t k = begin; k < end; ++k) {
    if (!row[k]) {
      for (uint64_t q = 0; q < lines * kLine; q += kLine) {
        _mm512_store_si512(reinterpret_cast<void*>(half[k] + q), _mm512_setzero_si512());
      }
      continue;
    }
    const uint8_t* src = row[k] + l0;
    if (lines == kC / kLine) {
      LC_MGE_UNROLL
      for (uint64_t q = 0; q < kC; q += kLine) {
        _mm512_store_si512(reinterpret_cast<void*>(half[k] + q), _mm512_loadu_si512(reinterpret_cast<const void*>(src + q)));
      }
    } else {
      for (uint64_t q = 0; q < lines * kLine; q += kLine) {
        _mm512_store_si512(reinterpret_cast<void*>(half[k] + q), _mm512_loadu_si512(reinterpret_cast<const void*>(src + q)));
      }
    }
  }
}

// Rows [begin, end)'s `cols` bytes from column l into L2 (none of a padding row).
LC_MGE_AVX512BW_INLINE void fetch_rows(const uint8_t* const* row, uint64_t l, uint64_t begin, uint64_t end, uint64_t cols) {
  for (uint64_t k = begin; k < end; ++k) {
    if (!row[k]) continue;
    for (uint64_t q = 0; q < cols; q += kLine) _mm_prefetch(reinterpret_cast<const char*>(row[k] + l + q), _MM_HINT_T1);  // mutate: equivalent (a prefetch: the same bytes)
  }
}

// The whole tiles of 64 columns of every row (returns their columns); with
// `stream` the rows' lines are fetched two blocks ahead and whole pixel lines
// leave with non-temporal stores.
template <uint64_t kC>
LC_MGE_AVX512BW uint64_t pack_rows_staged_epi8_avx512(const Group& g, const uint8_t* logical, uint8_t* phys,
                                                      bool stream) {
  alignas(64) uint8_t stage[2][64][kC];
  const uint64_t R = g.R, L64 = g.L / 64 * 64, blocks = ceil_div(L64, kC);
  const bool nt = stream && reinterpret_cast<uintptr_t>(phys + g.pixels) % kLine == 0;
  const uint8_t* row[64];
  for (uint64_t rc = 0; rc < R; rc += 64) {
    for (uint64_t k = 0; k < 64; ++k) row[k] = g.rows[rc + k] == kPad ? nullptr : logical + g.rows[rc + k];
    if (blocks > 0) fill_stage(stage[0], row, 0, std::min(kC, L64) / kLine, 0, 64);
    for (uint64_t b = 0; b < blocks; ++b) {
      const uint64_t l0 = b * kC, cols = std::min(kC, L64 - l0), steps = cols / 16;
      const uint64_t next_lines = b + 1 < blocks ? std::min(kC, L64 - l0 - kC) / kLine : 0;
      const uint8_t* half = stage[b & 1][0];
      uint8_t* out = phys + g.pixels + l0 * R + rc;
      for (uint64_t s = 0; s < steps; ++s) {
        const uint64_t k0 = s * 64 / steps, k1 = (s + 1) * 64 / steps;
        if (stream && b + 2 < blocks) fetch_rows(row, l0 + 2 * kC, k0, k1, kC);  // mutate: equivalent (a prefetch: the same bytes)
        if (next_lines) fill_stage(stage[(b + 1) & 1], row, l0 + kC, next_lines, k0, k1);
        __m512i v[16];
        load_lanes_transpose(half, kC, s * 16, v);
        LC_MGE_UNROLL
        for (int j = 0; j < 16; ++j) put_line(out + (s * 16 + j) * R, v[j], nt);
      }
    }
  }
  return L64;
}

// 32-bit elements, R == 4 (NCHW4), pack: 16 columns of each of the 4 rows ->
// 16 pixels in four 64-byte stores, each one whole cache line once the output
// is line-aligned (the first pixels up to a line boundary go one by one). Two
// rounds of two-source permutes, the unpack's in reverse: round one pairs
// rows 0,1 and 2,3 (8 columns each), round two joins the pairs into pixels.
// With `stream` the lines go out with non-temporal stores.
LC_MGE_AVX512 uint64_t pack_4x16_epi32_avx512(const Group& g, const uint8_t* logical, uint8_t* phys, bool stream) {
  const float* row[4];
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) row[k] = g.rows[k] == kPad ? nullptr : reinterpret_cast<const float*>(logical) + g.rows[k];
  float* out = reinterpret_cast<float*>(phys) + g.pixels;
  const uint64_t m = reinterpret_cast<uintptr_t>(out) % kLine;
  const uint64_t head = m % 16 == 0 ? std::min(g.L, (kLine - m) % kLine / 16) : 0;
  const bool nt = stream && m % 16 == 0;
  if (head > 0) {
    transpose_rest<true, 4>(Group{g.rows, g.R, head, g.pixels}, const_cast<uint8_t*>(logical), phys, 0);
  }
  const uint64_t L16 = head + (g.L - head) / 16 * 16;
  out += head * 4;
  for (uint64_t l = head; l < L16; l += 16, out += 64) {
    __m512 v[4];
    if (stream) {
      // Four rows far apart outrun the hardware prefetchers: fetch each row
      // kPrefetchBytes ahead, into L1.
      LC_MGE_UNROLL
      for (int k = 0; k < 4; ++k) {
        if (row[k]) _mm_prefetch(reinterpret_cast<const char*>(row[k] + l) + kPrefetchBytes, _MM_HINT_T0);
      }
    }
    LC_MGE_UNROLL
    for (int k = 0; k < 4; ++k) v[k] = row[k] ? _mm512_loadu_ps(row[k] + l) : _mm512_setzero_ps();
    __m512 o[4];
    pixels_4x16_ps(v, o);
    LC_MGE_UNROLL
    for (int q = 0; q < 4; ++q) {
      if (nt) _mm512_stream_ps(out + 16 * q, o[q]);
      else _mm512_storeu_ps(out + 16 * q, o[q]);
    }
  }
  return L16;
}


// 32-bit elements, R a multiple of 16 (NHWC with 16 | C, NCHW32/64): 16 rows x
// 16 columns per tile, every row's cache line read (or written) whole in one
// access. The transpose is four rounds: element pairs, pairs of pairs, then two
// rounds of 128-bit lane shuffles. Rows go in groups of g.group_rows: 64 as in
// the AVX2 tile, 16 into the L2 stage of a streamed pack.
LC_MGE_AVX512 inline __attribute__((always_inline)) void transpose16x16_ps(__m512 r[16]) {
  __m512 t[16];
  LC_MGE_UNROLL
  for (int k = 0; k < 8; ++k) {
    t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  // r[4k + j], lane q: column 4q + j of rows 4k..4k+3.
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) {
    r[4 * k + 0] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0x44);
    r[4 * k + 1] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0xEE);
    r[4 * k + 2] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
    r[4 * k + 3] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
  }
  LC_MGE_UNROLL
  for (int j = 0; j < 4; ++j) {
    const __m512 v0 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88), w0 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xDD);
    const __m512 v1 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
    const __m512 w1 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xDD);
    t[j] = _mm512_shuffle_f32x4(v0, v1, 0x88);
    t[8 + j] = _mm512_shuffle_f32x4(v0, v1, 0xDD);
    t[4 + j] = _mm512_shuffle_f32x4(w0, w1, 0x88);
    t[12 + j] = _mm512_shuffle_f32x4(w0, w1, 0xDD);
  }
  LC_MGE_UNROLL
  for (int k = 0; k < 16; ++k) r[k] = t[k];
}

// NHWC images of at most 64 pixels, 32-bit, 16 | C, in cache (late layers:
// 7 x 7, 3 x 3): the image is one block of the tensor, its C rows L elements
// apart, read 16 rows at a time straight from the block (masked at its end;
// what the loads read past L goes to no pixel) and transposed 16 columns at
// a time, with no row table. The pixels' lines are C elements apart (8 KiB
// for 2048 channels: one L1 set), so a block of 16 pixels goes through a
// stage of kRun rows each and out in runs of whole lines; the last few
// pixels (kGatherPixels or fewer) take 16 rows a gather, straight into their
// lines, in the pass of the block of 16 before them (their elements are in
// the lines its loads just read). Runs of rows outside the blocks of pixels:
// a run's rows of the block (128 x 49 x 4 bytes, 25 KiB) are read from L2
// once, then from L1. Unpack: the same the other way (scatters), the rows'
// last columns masked. Measured on a Zen 5, 1 x 2048 x 7 x 7 fp32, medians
// of 15 runs (in-cache memcpy about 120 GB/s): through the row table 0.16 of
// memcpy (pack) and 0.18 (unpack); from the block, 16 rows at a time into
// the pixels' lines, 0.10 and 0.15; blocks of pixels outside runs of 512
// rows 0.27 and 0.25, of 256 0.21 and 0.28, with gathers for the last pixel
// in a pass of their own 0.27 and 0.27, in the block's pass 0.28-0.30 and
// 0.30; runs outside blocks, of 128 rows (pack) and 256 (unpack), with the
// stage's copy loops kept as written (optimized/CMakeLists.txt), 0.31 and
// 0.32 (256 rows: pack 0.27; 128: unpack 0.30); packing 16 rows wholly
// inside the block by unmasked loads a row apart (no mask, no spilled
// offsets) 0.33. Not better: all pixels of 16
// rows at a time through a stage of 24 KiB, 0.19; two stages, a run going
// out while the next is transposed, 0.21.
template <bool kPack>
LC_MGE_AVX512 void small_images_epi32(uint64_t C, uint64_t L, uint8_t* logical, uint8_t* phys, uint64_t begin,
                                      uint64_t end) {
  // A stage row: a pixel's run of rows, and a line to spread the L1 sets.
  constexpr uint64_t kRun = kPack ? 128 : 256, kPitch = kRun + 16;
  constexpr uint64_t kGatherPixels = 4;  // fewer last pixels go by gathers (scatters)
  alignas(64) float stage[16][kPitch];
  const uint64_t end_at = C * L;
  const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                          _mm512_set1_epi32(static_cast<int>(L)));
  for (uint64_t i = begin; i < end; ++i) {
    float* block = reinterpret_cast<float*>(logical) + i * C * L;
    float* px = reinterpret_cast<float*>(phys) + i * C * L;
    for (uint64_t rb = 0; rb < C; rb += kRun) {
      const uint64_t run = std::min(kRun, C - rb);
      for (uint64_t c = 0; c < L; c += 16) {
        const __mmask16 cols = static_cast<__mmask16>(c + 16 <= L ? 0xFFFFu : (1u << (L - c)) - 1);
        const uint64_t pixels = std::min<uint64_t>(16, L - c);
        // The last pixels past a whole block of 16, kGatherPixels or fewer, go
        // with it: their elements share lines with the block's last columns.
        const uint64_t tail = pixels == 16 && L - c - 16 <= kGatherPixels ? L - c - 16 : 0;
        if (pixels <= kGatherPixels) {
          // An image of kGatherPixels pixels or fewer: each pixel's 16 elements
          // of 16 rows in one gather (or scatter), straight from (into) its line.
          for (uint64_t r0 = rb; r0 < rb + run; r0 += 16) {
            for (uint64_t j = 0; j < pixels; ++j) {
              float* at = block + r0 * L + c + j;
              if (kPack) _mm512_storeu_ps(px + (c + j) * C + r0, _mm512_i32gather_ps(rows, at, 4));
              else _mm512_i32scatter_ps(at, rows, _mm512_loadu_ps(px + (c + j) * C + r0), 4);
            }
          }
          break;
        }
        if (!kPack) {
          for (uint64_t j = 0; j < pixels; ++j) {
            for (uint64_t e = 0; e < run; e += 16) _mm512_store_ps(stage[j] + e, _mm512_loadu_ps(px + (c + j) * C + rb + e));
          }
        }
        for (uint64_t r0 = 0; r0 < run; r0 += 16) {
          __m512 v[16];
          if (kPack && (rb + r0 + 15) * L + c + 16 <= end_at) {
            // Every row's 16 loads inside the block: no masks.
            const float* at = block + (rb + r0) * L + c;
            LC_MGE_UNROLL
            for (uint64_t k = 0; k < 16; ++k, at += L) v[k] = _mm512_loadu_ps(at);
          } else {
            LC_MGE_UNROLL
            for (uint64_t k = 0; k < 16; ++k) {
              const uint64_t at = (rb + r0 + k) * L + c;
              if (kPack) v[k] = masked::_mm512_maskz_loadu_ps(at + 16 <= end_at ? __mmask16{0xFFFF} : cols, block + at);
              else v[k] = k < pixels ? _mm512_load_ps(stage[k] + r0) : _mm512_setzero_ps();
            }
          }
          transpose16x16_ps(v);
          LC_MGE_UNROLL
          for (uint64_t k = 0; k < 16; ++k) {
            if (kPack) _mm512_store_ps(stage[k] + r0, v[k]);
            else masked::_mm512_mask_storeu_ps(block + (rb + r0 + k) * L + c, cols, v[k]);
          }
          for (uint64_t j = 16; j < 16 + tail; ++j) {
            float* at = block + (rb + r0) * L + c + j;
            float* line = px + (c + j) * C + rb + r0;
            if (kPack) _mm512_storeu_ps(line, _mm512_i32gather_ps(rows, at, 4));
            else _mm512_i32scatter_ps(at, rows, _mm512_loadu_ps(line), 4);
          }
        }
        if (kPack) {
          for (uint64_t j = 0; j < pixels; ++j) {
            for (uint64_t e = 0; e < run; e += 16) _mm512_storeu_ps(px + (c + j) * C + rb + e, _mm512_load_ps(stage[j] + e));
          }
        }
        if (tail != 0) break;
      }
    }
  }
}

// 32-bit elements, 16 rows or more, 16 x 16 tiles (with R no multiple of 16
// the last tile of a column takes the last 16 rows, see padded_rows).
template <bool kPack>
LC_MGE_AVX512 uint64_t tiles_16x16_epi32_avx512(const Group& g, uint8_t* logical, uint8_t* phys, bool nt = false) {
  const uint64_t kGroupRows = g.group_rows;
  const uint64_t L16 = g.L / 16 * 16;
  const uint64_t pitch = g.R;  // elements per pixel
  float* lg = reinterpret_cast<float*>(logical);
  float* ph = reinterpret_cast<float*>(phys) + g.pixels;
  for (uint64_t rg = 0; rg < g.R; rg += kGroupRows) {
    const uint64_t re = std::min(g.R, rg + kGroupRows);
    for (uint64_t l = 0; l < L16; l += 16) {
      for (uint64_t r0 = rg; r0 < re; r0 += 16) {
        const uint64_t r = std::min(r0, re - 16);  // the last 16 rows (some of them again, the same bytes)
        const uint64_t* rows = g.rows + r;
        float* px = ph + l * pitch + r;
        __m512 v[16];
        if (kPack) {
          LC_MGE_UNROLL
          for (int k = 0; k < 16; ++k) {
            if (rows[k] == kPad) {
              v[k] = _mm512_setzero_ps();
            } else {
              // Streamed (kPassRows rows a pass, nt): each row kRowFetch bytes ahead,
              // into L1. Else two 256-byte blocks of the stage ahead, into L2
              // (fetching into L1 takes line fill buffers the streaming stores
              // of the stage need).
              if (nt) _mm_prefetch(reinterpret_cast<const char*>(lg + rows[k] + l) + kRowFetch, _MM_HINT_T0);
              else _mm_prefetch(reinterpret_cast<const char*>(lg + rows[k] + l + 128), _MM_HINT_T1);
              v[k] = _mm512_loadu_ps(lg + rows[k] + l);
            }
          }
          transpose16x16_ps(v);
          LC_MGE_UNROLL
          for (int k = 0; k < 16; ++k) {
            if (nt) _mm512_stream_ps(px + k * pitch, v[k]);
            else _mm512_storeu_ps(px + k * pitch, v[k]);
          }
        } else {
          LC_MGE_UNROLL
          for (int k = 0; k < 16; ++k) v[k] = _mm512_loadu_ps(px + k * pitch);
          transpose16x16_ps(v);
          LC_MGE_UNROLL
          for (int k = 0; k < 16; ++k) {
            if (rows[k] != kPad) _mm512_storeu_ps(lg + rows[k] + l, v[k]);
          }
        }
      }
    }
  }
  return L16;
}
#endif  // LC_MGE_X86

#if LC_MGE_X86
// Pixels 0..63 of a block of 32 8-bit rows at px (L pixels of 32 bytes) and,
// with `two`, of the block after it: t[q][k] holds pixel 16q + k, its 32
// bytes of the first block then those of the second (zeros past L, and for
// the second without `two`), 64 rows for transpose64x64_epi8.
LC_MGE_AVX512BW_INLINE void load_pixel_halves(const uint8_t* px, uint64_t L, bool two, __m512i t[4][16],
                                              uint64_t m = 64) {
  const uint64_t end = std::min(L, m);  // pixels read: of the block, and of the tile
  LC_MGE_UNROLL
  for (int q = 0; q < 4; ++q) {
    LC_MGE_UNROLL
    for (uint64_t k = 0; k < 16; ++k) {
      const uint64_t j = 16 * q + k;
      const __m256i lo = j < end ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(px + j * 32)) : _mm256_setzero_si256();
      const __m256i hi = j < end && two ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(px + (L + j) * 32))
                                        : _mm256_setzero_si256();
      t[q][k] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    }
  }
}

// 64 pixels of exactly 64 8-bit rows (4 KiB, one pixel a line) into
// columns c .. c + 63 of the stage's 64 rows, 16 rows at a time: the pack's
// load_lanes_transpose read the other way (its rows are the pixels, its
// columns the rows), four lane loads and four rounds of shuffles per line
// where transpose64x64_epi8 takes one load and six rounds.
// With kStride 32 a pixel's rows 0..31 are its 32 bytes at px and rows
// 32..63 its 32 bytes at hi (two NCHW32 blocks).
template <uint64_t kStride, uint64_t kRun>
LC_MGE_AVX512BW_INLINE void unpack_tile_x64(const uint8_t* px, const uint8_t* hi, uint8_t (*stage)[kRun], uint64_t c) {
  LC_MGE_UNROLL
  for (uint64_t c0 = 0; c0 < 64; c0 += 16) {
    __m512i v[16];
    if (kStride == 32 && c0 >= 32) load_lanes_transpose(hi, 32, c0 - 32, v);
    else load_lanes_transpose(px, kStride, c0, v);
    LC_MGE_UNROLL
    for (int j = 0; j < 16; ++j) _mm512_store_si512(stage[c0 + j] + c, v[j]);
  }
}

// 8-bit elements, R a multiple of 64 (NCHW64, CHWN4 of 16 images, NHWC of
// 64k channels), unpack in cache: 64 pixels of 64 rows at a time, every load
// and store one whole 64-byte piece, 64 pixels' lines into 64 rows' pieces by
// transpose64x64_epi8 (or unpack_tile_x64). The rows go to a
// stage and out in runs of kRun columns (rows a power of two apart share L1
// sets: a line of each row at a time evicts itself; measured on a Zen 4 with
// a 32 KiB L1d, 1 x 64 x 64 x 64: 0.32-0.39 of memcpy by the 32-row blocks,
// 0.30 writing each row's line straight from registers, 0.39-0.46 with runs
// of 256 columns, par with 128 or 512). Rows a multiple of 4 KiB apart take
// runs of 512 columns (measured on a Zen 5 with a 48 KiB L1d, medians of 15
// runs: 1 x 64 x 64 x 64 0.21 of memcpy with 256, 0.33 with 512; rows 1 or
// 3 KiB apart 0.34-0.37 with 256, 0.31-0.32 with 512). Tiles of exactly 64
// rows (a pixel a line) go through unpack_tile_x64 (1 x 64 x 64 x 64 on the
// Zen 5: 0.27-0.29 -> 0.33-0.35; rows further apart stay with
// transpose64x64_epi8, 0.22 -> 0.20 on 1 x 512 x 14 x 14 NHWC through
// unpack_tile_x64 from a copy of the tile). A last tile of fewer than 64
// pixels reads zeros past them and ends its rows with masked stores: every
// pixel is done here. With `halves` two NCHW32 blocks are one group of 64
// rows, a pixel's two 32-byte halves `halves` bytes apart (unpack_tile_x64
// with a stride of 32).
template <uint64_t kRun>  // columns of each row written as one run
LC_MGE_AVX512BW void unpack_64x64_epi8_runs(const Group& g, uint8_t* logical, const uint8_t* phys, uint64_t halves) {
  const uint64_t pitch = halves ? 32 : g.R;
  alignas(64) static thread_local uint8_t stage[64][kRun];
  alignas(64) uint8_t last[64][64];  // a last tile of fewer than 64 pixels, zeros past them
  __m512i t[4][16];
  for (uint64_t rg = 0; rg < g.R; rg += 64) {
    const uint64_t* rows = g.rows + rg;
    for (uint64_t l0 = 0; l0 < g.L; l0 += kRun) {
      const uint64_t n = std::min(kRun, g.L - l0);
      for (uint64_t c = 0; c < n; c += 64) {
        const uint8_t* px = phys + g.pixels + (l0 + c) * pitch + rg;
        const uint64_t m = std::min<uint64_t>(64, n - c);  // pixels of the tile
        if (halves) {
          if (m < 64) {
            load_pixel_halves(px, halves / 32, true, t, m);
            LC_MGE_UNROLL
            for (uint64_t k = 0; k < 64; ++k) _mm512_store_si512(last[k], t[k / 16][k % 16]);
            unpack_tile_x64<64>(last[0], nullptr, stage, c);
          } else {
            unpack_tile_x64<32>(px, px + halves, stage, c);
          }
          continue;
        }
        if (pitch == 64) {
          if (m < 64) {
            for (uint64_t k = 0; k < 64; ++k) {
              _mm512_store_si512(last[k], k < m ? _mm512_loadu_si512(px + k * 64) : _mm512_setzero_si512());
            }
            px = last[0];
          }
          unpack_tile_x64<64>(px, nullptr, stage, c);
          continue;
        }
        LC_MGE_UNROLL
        for (int q = 0; q < 4; ++q) {
          LC_MGE_UNROLL
          for (uint64_t k = 0; k < 16; ++k) {
            t[q][k] = m == 64 || 16 * q + k < m ? _mm512_loadu_si512(px + (16 * q + k) * pitch) : _mm512_setzero_si512();
          }
        }
        transpose64x64_epi8(t, [&](uint64_t r, __m512i v) LC_MGE_AVX512BW_LAMBDA { _mm512_store_si512(stage[r] + c, v); });
      }
      for (int r = 0; r < 64; ++r) {
        if (rows[r] == kPad) continue;
        uint8_t* dst = logical + rows[r] + l0;
        uint64_t c = 0;
        for (; c + 64 <= n; c += 64) _mm512_storeu_si512(dst + c, _mm512_load_si512(stage[r] + c));
        if (c < n) masked::_mm512_mask_storeu_epi8(dst + c, (__mmask64{1} << (n - c)) - 1, _mm512_load_si512(stage[r] + c));
      }
    }
  }
}

// halves != 0: two NCHW32 blocks as one group of 64 rows, the second's
// pixels `halves` bytes after the first's.
LC_MGE_AVX512BW uint64_t unpack_64x64_epi8_avx512(const Group& g, uint8_t* logical, const uint8_t* phys,
                                                  uint64_t halves = 0) {
  const bool aliased = g.R > 1 && g.rows[0] != kPad && g.rows[1] != kPad && (g.rows[1] - g.rows[0]) % 4096 == 0;
  if (aliased) unpack_64x64_epi8_runs<512>(g, logical, phys, halves);
  else unpack_64x64_epi8_runs<256>(g, logical, phys, halves);
  return g.L;
}

// The 64 lines of a tile: t[q][k] = line(16q + k).
template <class Line>
LC_MGE_AVX512BW_INLINE void load_tile64(__m512i t[4][16], const Line& line) {
  LC_MGE_UNROLL
  for (int q = 0; q < 4; ++q) {
    LC_MGE_UNROLL
    for (uint64_t k = 0; k < 16; ++k) t[q][k] = line(16 * q + k);
  }
}

// Whole groups of 64 or 32 8-bit rows of at most 64 pixels each
// (NCHW64 and NCHW32 of late layers: 7 x 7, 3 x 3), in cache: a group is one
// block of the tensor, its rows L bytes apart, and one tile in registers; no
// row table, no stage. Pack: the rows read whole (masked at the block's end),
// transposed per lane and of lanes, the pixels' lines written whole (32 rows:
// pack_tile_x64). Unpack: the same transposes the other way, each row written
// by one masked store (measured on a Zen 5, 1 x 2048 x 7 x 7 NCHW64, in-cache
// memcpy about 120 GB/s: pack 0.12 of memcpy in 16-row masked tiles, 0.16 in
// pack_rows_x64_epi8_avx512's tiles through the row table, 0.29 here with
// each row's load mask worked out per group, 0.36 with the masks of a call
// worked out once; unpack 0.17 through the stage, 0.44 here). NCHW32
// unpacks two blocks of an image as one group of 64 rows (0.10 -> 0.40 on
// 1 x 2048 x 7 x 7). Groups [begin, end) of the plan's; ones with padding
// channels are left to `rest`.
template <bool kPack, class Rest>
LC_MGE_AVX512BW void small_groups_epi8(uint64_t C, uint64_t X, uint64_t L, uint8_t* logical, uint8_t* phys,
                                       uint64_t begin, uint64_t end, const Rest& rest) {
  const uint64_t blocks = ceil_div(C, X);
  const __mmask64 cols = L == 64 ? ~__mmask64{0} : (__mmask64{1} << L) - 1;
  __mmask64 row_cols[64];
  for (uint64_t r = 0; r < 64; ++r) row_cols[r] = r * L + 64 <= 64 * L ? ~__mmask64{0} : cols;
  for (uint64_t g = begin; g < end; ++g) {
    const NchwxGroup at = nchwx_group(C, X, L, blocks, g, logical, phys);
    if (!at.whole) {
      rest(g);
      continue;
    }
    const uint64_t cb = at.cb;
    uint8_t* block = at.block;
    uint8_t* px = at.px;
    if (kPack && X == 32) {
      const uint8_t* row[32];
      for (uint64_t k = 0; k < 32; ++k) row[k] = block + k * L;
      if (L == 64) pack_tile_x64<false>(row, 32, 0, 64, px, false, false);
      else pack_tile_x64<true>(row, 32, 0, L, px, false, false);
      continue;
    }
    // t[q][k]: row 16q + k (pack; the rows' 64-byte loads run into the next
    // row but at the block's end, and what they read past L goes to no
    // pixel) or pixel 16q + k (unpack; zeros past L): the 64 x 64 transpose
    // makes the one the other.
    __m512i t[4][16];
    if (!kPack && X == 32) {
      // Unpack of 32 rows: two blocks of the image at once when the next is
      // whole and in the range (their rows are one run of 64), a pixel's
      // line from its 32 bytes in each; a block alone leaves rows 32..63 out.
      const bool two = cb + 1 < blocks && (cb + 2) * X <= C && g + 1 < end;
      load_pixel_halves(px, L, two, t);
      const uint64_t rows = two ? 64 : 32;
      transpose64x64_epi8(t, [&](uint64_t r, __m512i v) LC_MGE_AVX512BW_LAMBDA {
        if (r < rows) masked::_mm512_mask_storeu_epi8(block + r * L, cols, v);
      });
      g += two ? 1 : 0;
      continue;
    }
    load_tile64(t, [&](uint64_t r) LC_MGE_AVX512BW_LAMBDA {
      return kPack ? masked::_mm512_maskz_loadu_epi8(row_cols[r], block + r * L)
                   : r < L ? _mm512_loadu_si512(px + r * 64) : _mm512_setzero_si512();
    });
    transpose64x64_epi8(t, [&](uint64_t r, __m512i v) LC_MGE_AVX512BW_LAMBDA {
      if (!kPack) masked::_mm512_mask_storeu_epi8(block + r * L, cols, v);
      else if (r < L) _mm512_storeu_si512(px + r * 64, v);
    });
  }
}

// NCHW4 8-bit blocks of small images in cache (late layers: 14 x 14, 7 x 7,
// 3 x 3): a block is 4 rows L bytes apart, tiles of 64 pixels by
// pack_4x64_epi8_masked (unpack: unpack_4x64_epi8_masked), with no row table
// and no line heads. Measured on a Zen 5, medians of 15 runs, pack / unpack,
// through the row table -> here: 1 x 2048 x 7 x 7 0.08 / 0.12 -> 0.29-0.31
// / 0.30-0.32 of memcpy; 1 x 512 x 8 x 8 0.09 / 0.17 -> 0.31 / 0.41;
// 1 x 512 x 14 x 14 0.23 / 0.30 -> 0.36 / 0.33; 1 x 256 x 20 x 20 0.36 /
// 0.43 -> 0.43 / 0.38; 1 x 256 x 28 x 28 0.46 / 0.53 -> 0.47 / 0.44, so
// packs of up to 1024 pixels come here and unpacks of up to 256. Groups
// [begin, end) of the plan's; ones with padding channels are left to `rest`.
template <bool kPack, class Rest>
LC_MGE_AVX512BW void small_blocks4_epi8(uint64_t C, uint64_t L, uint8_t* logical, uint8_t* phys, uint64_t begin,
                                        uint64_t end, const Rest& rest) {
  const uint64_t blocks = ceil_div(C, 4);
  for (uint64_t g = begin; g < end; ++g) {
    const uint64_t n = g / blocks, cb = g % blocks;  // image, channel block
    if ((cb + 1) * 4 > C) {
      rest(g);
      continue;
    }
    uint8_t* block = logical + (n * C + cb * 4) * L;
    uint8_t* row[4] = {block, block + L, block + 2 * L, block + 3 * L};
    uint8_t* px = phys + g * L * 4;
    for (uint64_t l = 0; l < L; l += 64) {
      if (kPack) pack_4x64_epi8_masked(row, l, std::min<uint64_t>(64, L - l), px + 4 * l);
      else unpack_4x64_epi8_masked(row, l, std::min<uint64_t>(64, L - l), px + 4 * l);
    }
  }
}

// 32-bit elements, R == 4: pixels l .. l + n - 1 (n <= 16) of four rows,
// masked unless whole (pixels_4x16_ps, rows_4x16_ps).
template <bool kPartial>
LC_MGE_AVX512BW_INLINE void pack_4x16_epi32_masked(const float* const* row, uint64_t l, uint64_t n, float* out) {
  const __mmask16 cols = static_cast<__mmask16>(n >= 16 ? 0xFFFFu : (1u << n) - 1);
  __m512 v[4];
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) {
    if (!row[k]) v[k] = _mm512_setzero_ps();
    else v[k] = kPartial ? masked::_mm512_maskz_loadu_ps(cols, row[k] + l) : _mm512_loadu_ps(row[k] + l);
  }
  __m512 o[4];
  pixels_4x16_ps(v, o);
  LC_MGE_UNROLL
  for (uint64_t q = 0; q < 4; ++q) {
    if (kPartial) masked::_mm512_mask_storeu_ps(out + 16 * q, pixel_floats_mask(n, q), o[q]);
    else _mm512_storeu_ps(out + 16 * q, o[q]);
  }
}

template <bool kPartial>
LC_MGE_AVX512BW_INLINE void unpack_4x16_epi32_masked(float* const* row, uint64_t l, uint64_t n, const float* in) {
  __m512 z[4];
  LC_MGE_UNROLL
  for (uint64_t q = 0; q < 4; ++q) {
    z[q] = kPartial ? masked::_mm512_maskz_loadu_ps(pixel_floats_mask(n, q), in + 16 * q)
                    : _mm512_loadu_ps(in + 16 * q);
  }
  __m512 v[4];
  rows_4x16_ps(z, v);
  const __mmask16 cols = static_cast<__mmask16>(n >= 16 ? 0xFFFFu : (1u << n) - 1);
  LC_MGE_UNROLL
  for (int k = 0; k < 4; ++k) {
    if (row[k] && kPartial) masked::_mm512_mask_storeu_ps(row[k] + l, cols, v[k]);
    else if (row[k]) _mm512_storeu_ps(row[k] + l, v[k]);
  }
}

// NCHW4 16- and 32-bit blocks of small images in cache (late layers: 14 x 14,
// 7 x 7, 3 x 3), as small_blocks4_epi8 takes 8-bit ones: a block is 4 rows L
// elements apart, tiles of 32 (16) pixels, the last one masked, with no row
// table and no line heads (the row-table path spends a third of its time
// choosing tiles, and packs a 32-bit block's first and last pixels element by
// element). Measured on a Zen 5, best of 7 beside an in-cache memcpy, pack /
// unpack, row table -> here: fp16 1 x 2048 x 7 x 7 0.14 / 0.14 -> 0.41 /
// 0.35 of memcpy, fp32 0.17 / 0.18 -> 0.47 / 0.33; 1 x 512 x 3 x 3 fp16 0.03 /
// 0.03 -> 0.11 / 0.11, fp32 0.03 / 0.03 -> 0.21 / 0.19; 1 x 512 x 14 x 14
// fp16 0.37 / 0.28 -> 0.55 / 0.41, fp32 0.39 / 0.36 -> 0.50 / 0.47;
// 1 x 256 x 28 x 28 fp16 0.52 / 0.46 -> 0.61 / 0.53, fp32 0.71 / 0.69 ->
// 0.74 / 0.75; 1024 pixels (32 x 32) at par, so images of up to 1024 pixels
// come here (of the blocks of every channel real, only images of whole tiles
// and packs of small blocks: the others go as one run, blocks4_run below).
constexpr uint64_t kSmallBlocks4Pixels = 1024;

// NCHW4 16- and 32-bit blocks of images whose pixels are no whole number of
// tiles (7 x 7: 49, 14 x 14: 196), every block whole (4 | C): block g's rows
// are lg + 4 g L + k L and its pixels px + 4 g L, so the pixels of blocks
// [begin, end) are one run on both sides. Tiles of kV = 64 / E pixels of that
// run, a tile's pixels from one block or two (L >= kV): each of its four rows
// read (pack) or written (unpack) as the first block's piece and the next
// block's, masked, the pixels' lines whole, on lines wherever phys is, but for
// the run's end. Measured on a Zen 5, pinned, alternating, of memcpy, against
// the byte permutes of group_permutes.h (images of up to 64 pixels) and the
// tiles of small_blocks4_wide below, pack / unpack: fp16 1 x 512 x 7 x 7
// 0.31-0.32 / 0.33 -> 0.40-0.41 / 0.53-0.54 (medians of 5), 1 x 256 x 7 x 9
// 0.29 / 0.27 -> 0.39 / 0.41, 1 x 512 x 7 x 8 0.49 / 0.50 -> 0.54 / 0.67,
// 1 x 512 x 14 x 14 0.56 / 0.41 -> 0.65 / 0.75, 1 x 128 x 28 x 28 0.51 / 0.51
// -> 0.71 / 0.78; fp32 (best of 5) 1 x 512 x 7 x 7 0.47 / 0.48 -> 0.53 /
// 0.61, 5 x 5 0.36 / 0.36 -> 0.45 / 0.54, 6 x 6 0.31 / 0.31 -> 0.53 / 0.66,
// 10 x 10 0.57 / 0.54 -> 0.57 / 0.67. Packs of blocks of fewer than
// kBlocks4RunPackBytes bytes stay with the permutes (fp16 1 x 512 x 6 x 6
// 0.37 -> 0.35, 5 x 8 0.45 -> 0.39, fp32 4 x 5 0.44 -> 0.36; fp16 5 x 9 and
// fp32 3 x 7, 360 and 336 bytes, at par).
constexpr uint64_t kBlocks4RunPackBytes = 336;
template <bool kPack, int E>
LC_MGE_AVX512BW void blocks4_run(uint64_t L, uint8_t* logical, uint8_t* phys, uint64_t begin, uint64_t end) {
  using T = std::conditional_t<E == 2, uint16_t, float>;
  constexpr uint64_t kV = 64 / E;  // pixels a tile
  T* lg = reinterpret_cast<T*>(logical);
  T* px = reinterpret_cast<T*>(phys);
  const uint64_t last = end * L;
  uint64_t g = begin, p = 0;  // the block and pixel of the tile's first pixel
  for (uint64_t P = begin * L; P < last; P += kV) {
    const uint64_t m = std::min(kV, last - P), first = std::min(m, L - p);
    const uint32_t all = m == 32 ? ~0u : (1u << m) - 1;
    const uint32_t m1 = first == 32 ? ~0u : (1u << first) - 1, m2 = all & ~m1;  // lanes of block g, of g + 1
    T* a = lg + 4 * g * L + p;  // row k of block g: a + k L
    T* b = m2 != 0 ? lg + 4 * (g + 1) * L - first : nullptr;  // of block g + 1 from lane `first`: b + k L
    T* out = px + 4 * P;
    if constexpr (E == 2) {
      if (kPack) {
        __m512i v[4], o[4];
        LC_MGE_UNROLL
        for (uint64_t k = 0; k < 4; ++k) {
          v[k] = masked::_mm512_maskz_loadu_epi16(m1, a + k * L);
          if (m2 != 0) v[k] = _mm512_or_si512(v[k], masked::_mm512_maskz_loadu_epi16(m2, b + k * L));
        }
        pixels_4x32_epi16(v, o);
        LC_MGE_UNROLL
        for (uint64_t q = 0; q < 4; ++q) {
          if (m == kV) _mm512_storeu_si512(reinterpret_cast<void*>(out + 32 * q), o[q]);
          else masked::_mm512_mask_storeu_epi16(out + 32 * q, pixel_words_mask(m, q), o[q]);
        }
      } else {
        __m512i z[4], v[4];
        LC_MGE_UNROLL
        for (uint64_t q = 0; q < 4; ++q) {
          z[q] = m == kV ? _mm512_loadu_si512(reinterpret_cast<const void*>(out + 32 * q))
                         : masked::_mm512_maskz_loadu_epi16(pixel_words_mask(m, q), out + 32 * q);
        }
        rows_4x32_epi16(z, v);
        LC_MGE_UNROLL
        for (uint64_t k = 0; k < 4; ++k) {
          masked::_mm512_mask_storeu_epi16(a + k * L, m1, v[k]);
          if (m2 != 0) masked::_mm512_mask_storeu_epi16(b + k * L, m2, v[k]);
        }
      }
    } else {
      if (kPack) {
        __m512 v[4], o[4];
        LC_MGE_UNROLL
        for (uint64_t k = 0; k < 4; ++k) {
          v[k] = masked::_mm512_maskz_loadu_ps(static_cast<__mmask16>(m1), a + k * L);
          if (m2 != 0) {
            const __m512 w = masked::_mm512_maskz_loadu_ps(static_cast<__mmask16>(m2), b + k * L);
            v[k] = _mm512_mask_mov_ps(v[k], static_cast<__mmask16>(m2), w);
          }
        }
        pixels_4x16_ps(v, o);
        LC_MGE_UNROLL
        for (uint64_t q = 0; q < 4; ++q) {
          if (m == kV) _mm512_storeu_ps(out + 16 * q, o[q]);
          else masked::_mm512_mask_storeu_ps(out + 16 * q, pixel_floats_mask(m, q), o[q]);
        }
      } else {
        __m512 z[4], v[4];
        LC_MGE_UNROLL
        for (uint64_t q = 0; q < 4; ++q) {
          z[q] = m == kV ? _mm512_loadu_ps(out + 16 * q)
                         : masked::_mm512_maskz_loadu_ps(pixel_floats_mask(m, q), out + 16 * q);
        }
        rows_4x16_ps(z, v);
        LC_MGE_UNROLL
        for (uint64_t k = 0; k < 4; ++k) {
          masked::_mm512_mask_storeu_ps(a + k * L, static_cast<__mmask16>(m1), v[k]);
          if (m2 != 0) masked::_mm512_mask_storeu_ps(b + k * L, static_cast<__mmask16>(m2), v[k]);
        }
      }
    }
    p += m;
    if (p >= L) {
      p -= L;
      ++g;
    }
  }
}

template <bool kPack, int E, class Rest>
LC_MGE_AVX512BW void small_blocks4_wide(uint64_t C, uint64_t L, uint8_t* logical, uint8_t* phys, uint64_t begin,
                                        uint64_t end, const Rest& rest) {
  using T = std::conditional_t<E == 2, uint16_t, float>;
  constexpr uint64_t kV = 64 / E;  // pixels a tile
  const uint64_t blocks = ceil_div(C, 4);
  for (uint64_t g = begin; g < end; ++g) {
    const uint64_t n = g / blocks, cb = g % blocks;  // image, channel block
    if ((cb + 1) * 4 > C) {
      rest(g);
      continue;
    }
    T* block = reinterpret_cast<T*>(logical) + (n * C + cb * 4) * L;
    T* row[4] = {block, block + L, block + 2 * L, block + 3 * L};
    T* px = reinterpret_cast<T*>(phys) + g * L * 4;
    for (uint64_t l = 0; l < L; l += kV) {
      const uint64_t m = std::min(kV, L - l);
      if constexpr (E == 2) {
        if (kPack && m == kV) pack_4x32_epi16<false>(row, l, m, px + 4 * l, false, false);
        else if (kPack) pack_4x32_epi16<true>(row, l, m, px + 4 * l, false, false);
        else if (m == kV) unpack_4x32_epi16<false>(row, l, m, px + 4 * l, false);
        else unpack_4x32_epi16<true>(row, l, m, px + 4 * l, false);
      } else {
        if (kPack && m == kV) pack_4x16_epi32_masked<false>(row, l, m, px + 4 * l);
        else if (kPack) pack_4x16_epi32_masked<true>(row, l, m, px + 4 * l);
        else if (m == kV) unpack_4x16_epi32_masked<false>(row, l, m, px + 4 * l);
        else unpack_4x16_epi32_masked<true>(row, l, m, px + 4 * l);
      }
    }
  }
}

template <bool kPack>
LC_MGE_AVX512BW void tile_16x64_epi8_masked(const Group& g, uint8_t* logical, uint8_t* phys, uint64_t l0);

// CHWN4 8-bit of 8 or 16 images (unpack: 4, 8 or 16) of at most 64 pixels
// (late layers: 7 x 7, 3 x 3): a group (4 channels of every image) is 4N
// rows, four of each image L bytes apart, and one tile in registers, its row
// pointers worked out here (no row table). 4 images: one masked tile of
// tile_16x64_epi8_masked (4 x 512 x 7 x 7 on a Zen 5, best of 7, unpack 0.09
// of memcpy element by element, 0.16 by the row table's masked tile, 0.24
// here; packs no faster here: 0.17 / 0.30 on 7 x 7 / 8 x 8, against 0.19 /
// 0.33 by the row table). Pack: pack_tile_x64, the rows read masked to L bytes.
// Unpack: pixels' lines (of 8 images: two groups' 32 bytes, as NCHW32 pairs
// its blocks) transposed by transpose64x64_epi8, each row written by one
// masked store. The rows move 4 channels (4L bytes) from a group to the
// next: no division per row (measured on a Zen 5, medians of 15 runs, pack /
// unpack, through the row table -> here: 8 x 512 x 7 x 7 0.12 / 0.09 ->
// 0.29 / 0.24 of memcpy; 16 x 256 x 7 x 7 0.15 / 0.14 -> 0.24 / 0.24;
// 8 x 256 x 8 x 8 0.11 / 0.07 -> 0.51 / 0.33; the rows worked out by
// division in each group: 0.15 / 0.13 on the first). Groups [begin, end) of
// the plan's; ones with padding channels are left to `rest`.
template <bool kPack, class Rest>
LC_MGE_AVX512BW void small_chwn4_epi8(uint64_t N, uint64_t C, uint64_t L, uint8_t* logical, uint8_t* phys,
                                      uint64_t begin, uint64_t end, const Rest& rest) {
  const uint64_t R = 4 * N, blocks = ceil_div(C, 4);
  const __mmask64 cols = L == 64 ? ~__mmask64{0} : (__mmask64{1} << L) - 1;
  uint8_t* row[64];  // group `at`'s rows, then (unpack of 8 images) group at + 1's
  uint64_t at = begin;
  for (uint64_t k = 0; k < R; ++k) row[k] = logical + ((k / 4) * C + 4 * at + k % 4) * L;
  for (uint64_t g = begin; g < end; ++g) {
    for (uint64_t k = 0; k < R; ++k) row[k] += (g - at) * 4 * L;
    at = g;
    if ((g + 1) * 4 > C) {
      rest(g);
      continue;
    }
    // Unpack of 8 images: the next group too when it is whole and in the range.
    const bool two = !kPack && R == 32 && g + 1 < blocks && (g + 2) * 4 <= C && g + 1 < end;
    const uint64_t rows = two ? 64 : R;
    if (two) {
      for (uint64_t k = 0; k < 32; ++k) row[32 + k] = row[k] + 4 * L;
    }
    uint8_t* px = phys + g * L * R;
    if (R == 16) {
      uint64_t rows16[16];
      LC_MGE_UNROLL
      for (uint64_t k = 0; k < 16; ++k) rows16[k] = static_cast<uint64_t>(row[k] - logical);
      tile_16x64_epi8_masked<kPack>(Group{rows16, 16, L, g * L * 16}, logical, phys, 0);
      continue;
    }
    if (kPack) {
      if (L == 64) pack_tile_x64<false>(row, R, 0, 64, px, false, false);
      else pack_tile_x64<true>(row, R, 0, L, px, false, false);
      continue;
    }
    __m512i t[4][16];
    if (R == 32) {
      load_pixel_halves(px, L, two, t);
    } else {
      load_tile64(t, [&](uint64_t j) LC_MGE_AVX512BW_LAMBDA {
        return j < L ? _mm512_loadu_si512(px + j * 64) : _mm512_setzero_si512();
      });
    }
    transpose64x64_epi8(t, [&](uint64_t r, __m512i v) LC_MGE_AVX512BW_LAMBDA {
      if (r < rows) masked::_mm512_mask_storeu_epi8(row[r], cols, v);
    });
    g += two ? 1 : 0;
  }
}

// NHWC images of at most 64 pixels, 8-bit, 64 | C, in cache (late layers:
// 7 x 7, 3 x 3): 64 channels of an image are 64 rows L bytes apart, one
// block, transposed in registers as small_groups_epi8's groups are; their
// pixels' 64 bytes are C apart (2 KiB for 2048 channels: two L1 sets), so
// kRun channels' tiles go through a stage, a pixel's run of kRun channels
// a stage row, and out as runs of whole lines (unpack: in, then transposed
// into the rows, each written by one masked store). Measured on a Zen 5,
// medians of 15 runs, pack / unpack: 1 x 2048 x 7 x 7 0.11 / 0.11 of memcpy
// through the row table, 0.17-0.22 / 0.17-0.24 here with runs of 128 to
// 2048 channels, best at 256 (0.20-0.22 / 0.21-0.24); 1 x 512 x 7 x 7 0.12
// / 0.14 -> 0.13-0.14 / 0.20-0.23. Packs of 16 to 63 pixels read 16 columns
// of the block's rows at a time, one row per lane (load_lanes_transpose: four
// rounds of shuffles where transpose64x64_epi8 takes six, and no columns past
// the image's), the last 16 overlapping the ones before; so from 64 channels
// on (1 x 256 x 7 x 7: 0.11 -> 0.16, 1 x 64 x 7 x 7: 0.095 -> 0.11, 1 x 2048
// x 7 x 7 0.22 either way). Packs of fewer than 16 pixels under 256
// channels or of 64 pixels stay with the row table's tiles (1 x 64 x 7 x 7
// by the 64 x 64 transposes: 0.07 against 0.11 there; 1 x 128 x 8 x 8 by
// the lane loads: 0.135 against 0.17).
template <bool kPack>
LC_MGE_AVX512BW void small_images_epi8(uint64_t C, uint64_t L, uint8_t* logical, uint8_t* phys, uint64_t begin,
                                       uint64_t end) {
  constexpr uint64_t kRun = 256, kPitch = kRun + 64;  // a stage row, and a line to spread the L1 sets
  alignas(64) static thread_local uint8_t stage[64][kPitch];
  const __mmask64 cols = L == 64 ? ~__mmask64{0} : (__mmask64{1} << L) - 1;
  for (uint64_t i = begin; i < end; ++i) {
    uint8_t* image = logical + i * C * L;
    uint8_t* px = phys + i * C * L;
    for (uint64_t c0 = 0; c0 < C; c0 += kRun) {
      const uint64_t run = std::min(kRun, C - c0);
      if (!kPack) {
        for (uint64_t j = 0; j < L; ++j) {
          for (uint64_t e = 0; e < run; e += 64) _mm512_store_si512(stage[j] + e, _mm512_loadu_si512(px + j * C + c0 + e));
        }
      }
      for (uint64_t e = 0; e < run; e += 64) {
        uint8_t* block = image + (c0 + e) * L;
        if (kPack && L >= 16) {
          for (uint64_t c = 0; c < L; c += 16) {
            const uint64_t at = std::min(c, L - 16);
            __m512i v[16];
            load_lanes_transpose(block, L, at, v);
            LC_MGE_UNROLL
            for (uint64_t j = 0; j < 16; ++j) _mm512_store_si512(stage[at + j] + e, v[j]);
          }
          continue;
        }
        // The rows' 64-byte loads run into the next row (what they read past L
        // goes to no pixel) but at the image's end.
        const bool last = c0 + e + 64 == C;
        __m512i t[4][16];
        load_tile64(t, [&](uint64_t r) LC_MGE_AVX512BW_LAMBDA {
          return kPack ? masked::_mm512_maskz_loadu_epi8(last && r * L + 64 > 64 * L ? cols : ~__mmask64{0}, block + r * L)
                       : r < L ? _mm512_load_si512(stage[r] + e) : _mm512_setzero_si512();
        });
        transpose64x64_epi8(t, [&](uint64_t r, __m512i v) LC_MGE_AVX512BW_LAMBDA {
          if (!kPack) masked::_mm512_mask_storeu_epi8(block + r * L, cols, v);
          else if (r < L) _mm512_store_si512(stage[r] + e, v);
        });
      }
      if (kPack) {
        for (uint64_t j = 0; j < L; ++j) {
          for (uint64_t e = 0; e < run; e += 64) _mm512_storeu_si512(px + j * C + c0 + e, _mm512_load_si512(stage[j] + e));
        }
      }
    }
  }
}
#endif

#if LC_MGE_X86
// The unpack of 8 rows x 32 columns of 16-bit elements: register j gathers,
// lane q, the 16 bytes of pixel 8q + j's line at `px` (one load, three masked
// broadcasts), and the word transposes per lane leave row k's 32 columns in
// register k.
LC_MGE_AVX512BW_INLINE void untile_8x32_epi16(const uint64_t* rows, uint16_t* lg, const uint16_t* px, uint64_t R,
                                              uint64_t l) {
  __m512i v[8];
  LC_MGE_UNROLL
  for (uint64_t j = 0; j < 8; ++j) {
    const auto piece = [&](uint64_t q) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(px + (8 * q + j) * R)); };
    __m512i x = _mm512_castsi128_si512(piece(0));
    x = _mm512_mask_broadcast_i32x4(x, 0x00F0, piece(1));
    x = _mm512_mask_broadcast_i32x4(x, 0x0F00, piece(2));
    x = _mm512_mask_broadcast_i32x4(x, 0xF000, piece(3));
    v[j] = x;
  }
  byte_transpose::transpose8x8_epi16_x4(v, v);
  LC_MGE_UNROLL
  for (int k = 0; k < 8; ++k) {
    if (rows[k] != kPad) _mm512_storeu_si512(reinterpret_cast<void*>(lg + rows[k] + l), v[k]);
  }
}

// Its pack: row k's 32 columns into register k, the word transposes per lane,
// and lane q of register j out as the 16 bytes of pixel 8q + j's line at `px`.
LC_MGE_AVX512BW_INLINE void tile_8x32_epi16(const uint64_t* rows, const uint16_t* lg, uint16_t* px, uint64_t R,
                                            uint64_t l) {
  __m512i v[8];
  LC_MGE_UNROLL
  for (int k = 0; k < 8; ++k) {
    v[k] = rows[k] == kPad ? _mm512_setzero_si512() : _mm512_loadu_si512(reinterpret_cast<const void*>(lg + rows[k] + l));
  }
  byte_transpose::transpose8x8_epi16_x4(v, v);
  LC_MGE_UNROLL
  for (int j = 0; j < 8; ++j) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(px + j * R), _mm512_castsi512_si128(v[j]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(px + (8 + j) * R), _mm512_extracti32x4_epi32(v[j], 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(px + (16 + j) * R), _mm512_extracti32x4_epi32(v[j], 2));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(px + (24 + j) * R), _mm512_extracti32x4_epi32(v[j], 3));
  }
}

// 16-bit elements, 8 rows or more but not 32k (NHWC, CHWN4; 32 | R:
// tiles_32x32_epi16_avx512 below, whole pixel lines; with R no multiple of 8
// the last tile of a column takes the last 8 rows, see padded_rows):
// tiles of 8 rows x 32 columns, each row's 64 bytes one load
// (pack) or store (unpack). The 8 x 8 word transposes per 128-bit lane
// (byte_transpose.h) leave in register j, lane q, rows r..r + 7 of pixel
// 8q + j: 16 bytes of its line, one store (unpack: one load, lanes 1..3 by
// masked broadcasts). Returns the columns done (whole tiles).
template <bool kPack>
LC_MGE_AVX512BW uint64_t tiles_8x32_epi16_avx512(const Group& g, uint8_t* logical, uint8_t* phys) {
  const uint64_t L32 = g.L / 32 * 32, R = g.R, pass = std::max<uint64_t>(8, g.group_rows / 8 * 8);
  uint16_t* lg = reinterpret_cast<uint16_t*>(logical);
  uint16_t* ph = reinterpret_cast<uint16_t*>(phys) + g.pixels;
  for (uint64_t rg = 0; rg < R; rg += pass) {
    const uint64_t re = std::min(R, rg + pass);
    for (uint64_t l = 0; l < L32; l += 32) {
      for (uint64_t r0 = rg; r0 < re; r0 += 8) {
        const uint64_t r = std::min(r0, re - 8);  // the last 8 rows (some of them again, the same bytes)
        if (kPack) tile_8x32_epi16(g.rows + r, lg, ph + l * R + r, R, l);
        else untile_8x32_epi16(g.rows + r, lg, ph + l * R + r, R, l);
      }
    }
  }
  return L32;
}
#endif

#if LC_MGE_X86
// 16-bit elements, R a multiple of 32 (NCHW32, NCHW64, NHWC with 32 | C,
// CHWN4 of 8k images): tiles of 32 rows x 32 columns, four of
// tiles_8x32_epi16_avx512's 8-row pieces joined by 4 x 4 transposes of their
// lanes, so that each pixel's 32 rows leave as one whole line (non-temporal
// with `nt`: a streamed pack, rows fetched as kTileFetch says). The last
// columns (fewer than 32) go in one tile read and written masked, so every
// column is done here (1 x 2048 x 7 x 7 NHWC fp16 on a Zen 5: 0.016 / 0.036
// of memcpy with them element by element, 0.13 / 0.14 so; pack / unpack).
// Whole tiles unpack as four untile_8x32_epi16 instead: the lane transposes
// cost more than reading each line in four 16-byte pieces (8 x 64 x 56 x 56
// NCHW32 fp16: 0.48 -> 0.68 of memcpy; 1 x 512 x 14 x 14 0.22 -> 0.34).
template <bool kPack, bool kPartial>
LC_MGE_AVX512BW_INLINE void tile_32x32_epi16(const uint64_t* rows, uint16_t* lg, uint16_t* px, uint64_t R, uint64_t l,
                                             uint64_t n, bool nt) {
  const __mmask32 cols = kPartial ? (__mmask32{1} << n) - 1 : ~__mmask32{0};
  __m512i v[4][8];
  if (kPack) {
    LC_MGE_UNROLL
    for (int c = 0; c < 4; ++c) {
      LC_MGE_UNROLL
      for (int k = 0; k < 8; ++k) {
        const uint64_t at = rows[8 * c + k];
        if (at == kPad) {
          v[c][k] = _mm512_setzero_si512();
          continue;
        }
        if (nt) _mm_prefetch(reinterpret_cast<const char*>(lg + at + l) + kTileFetch, _MM_HINT_NTA);
        v[c][k] = kPartial ? masked::_mm512_maskz_loadu_epi16(cols, lg + at + l)
                           : _mm512_loadu_si512(reinterpret_cast<const void*>(lg + at + l));
      }
      byte_transpose::transpose8x8_epi16_x4(v[c], v[c]);
    }
    LC_MGE_UNROLL
    for (uint64_t j = 0; j < 8; ++j) {  // lane q of v[c][j]: rows 8c.. of pixel 8q + j
      __m512i o[4] = {v[0][j], v[1][j], v[2][j], v[3][j]};
      byte_transpose::transpose_lanes4x4(o);
      LC_MGE_UNROLL
      for (uint64_t q = 0; q < 4; ++q) {
        if (!kPartial || 8 * q + j < n) put_line(reinterpret_cast<uint8_t*>(px + (8 * q + j) * R), o[q], nt);
      }
    }
    return;
  }
  LC_MGE_UNROLL
  for (uint64_t j = 0; j < 8; ++j) {
    __m512i o[4];
    LC_MGE_UNROLL
    for (uint64_t q = 0; q < 4; ++q) {
      o[q] = !kPartial || 8 * q + j < n ? _mm512_loadu_si512(reinterpret_cast<const void*>(px + (8 * q + j) * R))
                                        : _mm512_setzero_si512();
    }
    byte_transpose::transpose_lanes4x4(o);
    LC_MGE_UNROLL
    for (int c = 0; c < 4; ++c) v[c][j] = o[c];
  }
  LC_MGE_UNROLL
  for (int c = 0; c < 4; ++c) {
    byte_transpose::transpose8x8_epi16_x4(v[c], v[c]);
    LC_MGE_UNROLL
    for (int k = 0; k < 8; ++k) {
      if (rows[8 * c + k] == kPad) continue;
      if (kPartial) masked::_mm512_mask_storeu_epi16(lg + rows[8 * c + k] + l, cols, v[c][k]);
      else _mm512_storeu_si512(reinterpret_cast<void*>(lg + rows[8 * c + k] + l), v[c][k]);
    }
  }
}

// 32 rows (rows[k] real, none kPad) x 16 pixels from column l <-> 16 pixel
// lines of 32 elements, R apart (the first n of them with kPartial): half a
// tile_32x32_epi16 at the same five shuffles a line, for blocks of 16 pixels
// or fewer (a block of 17 took a tile of 32 before). Packing, register j of
// half h (pixels 8h..8h+7) holds rows j, 8 + j, 16 + j, 24 + j, one per
// 128-bit lane, so the 8 x 8 word transposes per lane leave pixel 8h + k's
// line in register k; unpacking runs it backwards.
template <bool kPack, bool kPartial>
LC_MGE_AVX512BW_INLINE void tile_32x16_epi16(const uint64_t* rows, uint16_t* lg, uint16_t* px, uint64_t R, uint64_t l,
                                             uint64_t n) {
  const __mmask16 cols = kPartial ? static_cast<__mmask16>((1u << n) - 1) : static_cast<__mmask16>(0xffff);
  __m512i a[8], b[8];
  if (kPack) {
    __m256i r[32];
    LC_MGE_UNROLL
    for (uint64_t k = 0; k < 32; ++k) {
      r[k] = kPartial ? masked::_mm256_maskz_loadu_epi16(cols, lg + rows[k] + l)
                      : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lg + rows[k] + l));
    }
    LC_MGE_UNROLL
    for (uint64_t j = 0; j < 8; ++j) {
      // x: rows j, 8 + j (each two lanes: pixels 0-7, 8-15); y: rows 16 + j, 24 + j.
      const __m512i x = _mm512_inserti64x4(_mm512_castsi256_si512(r[j]), r[8 + j], 1);
      const __m512i y = _mm512_inserti64x4(_mm512_castsi256_si512(r[16 + j]), r[24 + j], 1);
      a[j] = _mm512_shuffle_i64x2(x, y, _MM_SHUFFLE(2, 0, 2, 0));
      b[j] = _mm512_shuffle_i64x2(x, y, _MM_SHUFFLE(3, 1, 3, 1));
    }
    byte_transpose::transpose8x8_epi16_x4(a, a);
    byte_transpose::transpose8x8_epi16_x4(b, b);
    LC_MGE_UNROLL
    for (uint64_t k = 0; k < 8; ++k) {
      if (!kPartial || k < n) _mm512_storeu_si512(reinterpret_cast<void*>(px + k * R), a[k]);
      // mutate: equivalent (the stage has lines for 32 pixels; those past n are not copied out)
      if (!kPartial || 8 + k < n) _mm512_storeu_si512(reinterpret_cast<void*>(px + (8 + k) * R), b[k]);
    }
    return;
  }
  LC_MGE_UNROLL
  for (uint64_t k = 0; k < 8; ++k) {
    a[k] = !kPartial || k < n ? _mm512_loadu_si512(reinterpret_cast<const void*>(px + k * R)) : _mm512_setzero_si512();
    b[k] = !kPartial || 8 + k < n ? _mm512_loadu_si512(reinterpret_cast<const void*>(px + (8 + k) * R))
                                  : _mm512_setzero_si512();
  }
  byte_transpose::transpose8x8_epi16_x4(a, a);
  byte_transpose::transpose8x8_epi16_x4(b, b);
  // Lane q of a[j] (b[j]): row 8q + j, pixels 0-7 (8-15).
  const __m512i lo = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0), hi = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
  LC_MGE_UNROLL
  for (uint64_t j = 0; j < 8; ++j) {
    const __m512i x = _mm512_permutex2var_epi64(a[j], lo, b[j]);  // rows j, 8 + j
    const __m512i y = _mm512_permutex2var_epi64(a[j], hi, b[j]);  // rows 16 + j, 24 + j
    const __m256i out[4] = {_mm512_castsi512_si256(x), _mm512_extracti64x4_epi64(x, 1), _mm512_castsi512_si256(y),
                            _mm512_extracti64x4_epi64(y, 1)};
    LC_MGE_UNROLL
    for (uint64_t q = 0; q < 4; ++q) {
      uint16_t* to = lg + rows[8 * q + j] + l;
      if (kPartial) masked::_mm256_mask_storeu_epi16(to, cols, out[q]);
      else _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), out[q]);
    }
  }
}

// NHWC images of at most 64 pixels, 16-bit, 32 | C, in cache (late layers:
// 7 x 7, 8 x 8): the pixels' lines are C elements apart (4 KiB for 2048
// channels: one L1 set), so tile_32x32_epi16 writing 32 of them at once
// evicts its own lines (1 x 2048 x 7 x 7 fp16 on a Zen 5: 0.12 / 0.15 of
// memcpy, pack / unpack). As small_images_epi8: a block of 32 pixels, a run
// of kRun channels at a time, goes through a stage of a row per pixel (a
// line past kRun to spread the L1 sets) and out in runs of whole lines
// (unpack: in from them); the tiles read the image's rows, L elements apart,
// straight (masked past the image's last pixel). Measured on a Zen 5, best of
// 7 beside an in-cache memcpy, pack / unpack, row table -> here: 1 x 2048 x
// 7 x 7 0.12 / 0.15 -> 0.24 / 0.30; 1 x 512 x 7 x 7 0.19 / 0.21 -> 0.20 /
// 0.26; 1 x 512 x 8 x 8 0.31 / 0.31 -> 0.33 / 0.36-0.42; 1 x 64 x 7 x 7 0.17
// / 0.19 -> 0.19 / 0.22-0.24; runs of 128 to 2048 channels within noise of
// 256. A tile of 17 pixels cost one of 32: blocks of at most 16 pixels now
// take a tile of 16, packs of 17 to 31 two whole ones, and packs past 32
// pixels a last whole block ending at the last pixel; the tiles read the
// rows from one table for all (it was rebuilt for every tile): 1 x 2048 x 7
// x 7 pack 0.24 -> 0.28, 1 x 512 x 7 x 7 0.20 -> 0.24, 1 x 2048 x 3 x 3 0.11
// / 0.16 -> 0.16 / 0.25. Writing the pixel lines straight, 8 at a time
// (no stage), was slower (0.23 / 0.19).
constexpr uint64_t kSmallImages16Channels = 64;
template <bool kPack>
LC_MGE_AVX512BW void small_images_epi16(uint64_t C, uint64_t L, uint8_t* logical, uint8_t* phys, uint64_t begin,
                                        uint64_t end) {
  constexpr uint64_t kRun = 256, kPitch = kRun + 32;
  alignas(64) static thread_local uint16_t stage[32][kPitch];
  uint64_t rows[32];  // a tile's rows from its first (the same for every tile)
  for (uint64_t k = 0; k < 32; ++k) rows[k] = k * L;
  for (uint64_t i = begin; i < end; ++i) {
    uint16_t* image = reinterpret_cast<uint16_t*>(logical) + i * C * L;
    uint16_t* px = reinterpret_cast<uint16_t*>(phys) + i * C * L;
    for (uint64_t b = 0; b < L; b += 32) {
      // Blocks of 32 pixels; packing, past 32 pixels the last one ends at the
      // image's last pixel (the pixels both take go through twice, the same;
      // unpacking so was slower: 1 x 2048 x 7 x 7 0.32 -> 0.25 of memcpy).
      const uint64_t c = kPack && L > 32 ? std::min(b, L - 32) : b, n = std::min<uint64_t>(32, L - c);
      for (uint64_t c0 = 0; c0 < C; c0 += kRun) {
        const uint64_t run = std::min(kRun, C - c0);
        if (!kPack) {
          for (uint64_t j = 0; j < n; ++j) {
            for (uint64_t e = 0; e < run; e += 32) {
              _mm512_store_si512(reinterpret_cast<void*>(stage[j] + e),
                                 _mm512_loadu_si512(reinterpret_cast<const void*>(px + (c + j) * C + c0 + e)));
            }
          }
        }
        for (uint64_t e = 0; e < run; e += 32) {
          // The tile's pixels: its rows' columns c.. (pack) or its stage rows' e.. .
          uint16_t* tile_rows = image + (c0 + e) * L;
          if (n == 32) {
            tile_32x32_epi16<kPack, false>(rows, tile_rows, stage[0] + e, kPitch, c, 32, false);
            continue;
          }
          if (!kPack && n >= 16) {
            tile_32x32_epi16<false, true>(rows, tile_rows, stage[0] + e, kPitch, c, n, false);
          } else if (n >= 16) {
            // Two whole tiles of 16 pixels, the second ending at the block's
            // last pixel (the pixels both take are written twice, the same).
            tile_32x16_epi16<kPack, false>(rows, tile_rows, stage[0] + e, kPitch, c, 16);
            if (n > 16) tile_32x16_epi16<kPack, false>(rows, tile_rows, stage[n - 16] + e, kPitch, c + n - 16, 16);
          } else {
            tile_32x16_epi16<kPack, true>(rows, tile_rows, stage[0] + e, kPitch, c, n);
          }
        }
        if (kPack) {
          for (uint64_t j = b - c; j < n; ++j) {  // the lines the block before did not write
            for (uint64_t e = 0; e < run; e += 32) {
              _mm512_storeu_si512(reinterpret_cast<void*>(px + (c + j) * C + c0 + e),
                                  _mm512_load_si512(reinterpret_cast<const void*>(stage[j] + e)));
            }
          }
        }
      }
    }
  }
}

constexpr uint64_t kUnstage16Cols = 256;  // columns of the stage of a 16-bit unpack in cache

template <bool kPack>
LC_MGE_AVX512BW uint64_t tiles_32x32_epi16_avx512(const Group& g, uint8_t* logical, uint8_t* phys, bool nt = false) {
  const uint64_t L32 = g.L / 32 * 32, R = g.R, pass = std::max<uint64_t>(32, g.group_rows / 32 * 32);
  uint16_t* lg = reinterpret_cast<uint16_t*>(logical);
  uint16_t* ph = reinterpret_cast<uint16_t*>(phys) + g.pixels;
  const bool rows_share_sets = R >= 2 && g.rows[0] != kPad && g.rows[1] != kPad && (g.rows[1] - g.rows[0]) % 1024 == 0;
  if (!kPack && g.long_rows && rows_share_sets && R <= 64) {
    // Unpacking in cache rows a multiple of 2 KiB apart (H*W elements): they
    // share their L1 sets, and the lines of 32 of them at once evict each
    // other (1 x 64 x 32 x 64 NCHW32 fp16 on a Zen 5: 0.13 of memcpy). Eight
    // rows at a time over kUnstage16Cols columns instead, the pixels' 64-byte
    // pieces (16 KiB) staying in L1 for the next eight: 0.37, against 0.29
    // through the stage below. Pixel lines of more than 128 bytes spread those
    // pieces over too few sets to stay (NHWC of 128 channels: 0.26 so, 0.33
    // through the stage).
    for (uint64_t r = 0; r < R; r += 32) {
      for (uint64_t l0 = 0; l0 < L32; l0 += kUnstage16Cols) {
        const uint64_t n = std::min(kUnstage16Cols, L32 - l0);
        for (uint64_t c = r; c < r + 32; c += 8) {
          for (uint64_t l = l0; l < l0 + n; l += 32) untile_8x32_epi16(g.rows + c, lg, ph + l * R + c, R, l);
        }
      }
    }
  } else if (!kPack && g.long_rows && rows_share_sets) {
    // The same with more than 64 rows: the tiles go into a stage of 32 rows x
    // kUnstage16Cols, whose rows then leave as runs of whole lines (rows not
    // so apart lose by it: 1 x 512 x 14 x 14 0.28 -> 0.19).
    alignas(64) uint16_t stage[32][kUnstage16Cols];
    uint64_t at[32];
    for (uint64_t k = 0; k < 32; ++k) at[k] = k * kUnstage16Cols;
    for (uint64_t r = 0; r < R; r += 32) {
      for (uint64_t l0 = 0; l0 < L32; l0 += kUnstage16Cols) {
        const uint64_t n = std::min(kUnstage16Cols, L32 - l0);
        for (uint64_t t = 0; t < n; t += 32) {
          for (uint64_t c = 0; c < 32; c += 8) untile_8x32_epi16(at + c, stage[0], ph + (l0 + t) * R + r + c, R, t);
        }
        for (uint64_t k = 0; k < 32; ++k) {
          if (g.rows[r + k] == kPad) continue;
          uint16_t* out = lg + g.rows[r + k] + l0;
          for (uint64_t c = 0; c < n; c += 32) {
            _mm512_storeu_si512(reinterpret_cast<void*>(out + c), _mm512_load_si512(reinterpret_cast<const void*>(stage[k] + c)));
          }
        }
      }
    }
  } else if (kPack && !nt && rows_share_sets) {
    // Packing in cache rows a multiple of 2 KiB apart: each row's run of
    // kUnstage16Cols columns into a stage first, the tiles from there
    // (1 x 64 x 32 x 64 NCHW32 fp16 on a Zen 5: 0.25 -> 0.39 of memcpy).
    alignas(64) uint16_t stage[32][kUnstage16Cols];
    uint64_t at[32];
    for (uint64_t r = 0; r < R; r += 32) {
      for (uint64_t k = 0; k < 32; ++k) at[k] = g.rows[r + k] == kPad ? kPad : k * kUnstage16Cols;
      for (uint64_t l0 = 0; l0 < L32; l0 += kUnstage16Cols) {
        const uint64_t n = std::min(kUnstage16Cols, L32 - l0);
        for (uint64_t k = 0; k < 32; ++k) {
          if (g.rows[r + k] == kPad) continue;
          const uint16_t* in = lg + g.rows[r + k] + l0;
          for (uint64_t c = 0; c < n; c += 32) {
            _mm512_store_si512(reinterpret_cast<void*>(stage[k] + c), _mm512_loadu_si512(reinterpret_cast<const void*>(in + c)));
          }
        }
        for (uint64_t t = 0; t < n; t += 32) tile_32x32_epi16<true, false>(at, stage[0], ph + (l0 + t) * R + r, R, t, 32, false);
      }
    }
  } else {
    for (uint64_t rg = 0; rg < R; rg += pass) {
      const uint64_t re = std::min(R, rg + pass);
      for (uint64_t l = 0; l < L32; l += 32) {
        for (uint64_t r = rg; r < re; r += 32) {
          if (kPack) {
            tile_32x32_epi16<true, false>(g.rows + r, lg, ph + l * R + r, R, l, 32, nt);
            continue;
          }
          for (uint64_t c = r; c < r + 32; c += 8) untile_8x32_epi16(g.rows + c, lg, ph + l * R + c, R, l);
        }
      }
    }
  }
  if (L32 < g.L) {
    for (uint64_t r = 0; r < R; r += 32) {
      tile_32x32_epi16<kPack, true>(g.rows + r, lg, ph + L32 * R + r, R, L32, g.L - L32, false);
    }
  }
  return g.L;
}
#endif

#if LC_MGE_X86
// Groups of 2 to 15 rows (NHWC images of a few channels: RGB input, CHWN4 of
// 2 or 3 images) with AVX-512 VBMI: a block of V pixels (V elements to a
// register: 64, 32 or 16) is R registers of rows and R of pixel lines. Line
// register t, element i, is pixel (Vt + i) / R, channel (Vt + i) % R: R
// masked one-source permutes, one per row, with the same index; unpacking,
// row r's element i is element (iR + r) % V of line register (iR + r) / V.
// The last pixels (fewer than V) go the same way masked. R permutes per 64
// bytes (measured on a Zen 5 in cache, 1 x C x 128 x 256 NHWC pack, element
// by element -> so: int8 of 3 channels 0.029 -> 0.18 of memcpy, of 12 0.028
// -> 0.14; fp16 of 5 0.055 -> 0.17; fp32 of 3 0.12 -> 0.29).
bool have_avx512_vbmi() { return isa_at_least(Isa::kAvx512Vbmi); }

#define LC_MGE_AVX512VBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")))

constexpr uint64_t kSmallRows = 15;
constexpr uint64_t kPitchMaxBytes = 512;         // pixel bytes of a padded pitch, at most
constexpr uint64_t kPitchMaxRegs = kPitchMaxBytes;  // registers of a period of permutes, at most (b / gcd(64, b))
constexpr uint64_t kPitchStageBytes = 32u << 10;  // the padded stage

// Where the permutes are the fastest path. The others: 4 rows, 16-bit tiles
// of 8 rows or more, 32-bit tiles of 4 or more; 32-bit rows of more than 7
// (measured on a Zen 5, NHWC fp32 of 15 channels, 16 x 15 x 512 x 512 pack /
// unpack: 0.42 / 0.49 of memcpy element by element, 0.39 / 0.31 so); packs
// of more than 7 rows, which padded_pitch takes (R x R permutes a block: 16 x
// 13 x 512 x 512 int8 0.42 of memcpy so, 0.68 there; 1 x 13 x 56 x 56 0.06
// and 0.13).
bool small_rows_wanted(uint64_t bytes, uint64_t R, bool pack, bool streamed) {
  // 8-bit groups of 2 to 8 rows take the shuffles of small_rows_pshufb but
  // streamed unpacks (measured on a Zen 5, NHWC, permutes -> shuffles: 1 x C
  // x 224 x 224, C = 2 to 8, 0.13-0.20 -> 0.18-0.50 both ways; 32 x C x 512
  // x 512 packs 0.53-0.92 -> 0.63-1.03; its unpacks 0.79-0.95 -> 0.42-0.96).
  if (bytes == 1 && pshufb_rows(bytes, R)) return !pack && streamed;  // mutate: equivalent (a choice of speed: the same bytes)
  if (R < 2 || R > kSmallRows || R == 4 || (pack && R > 7)) return false;
  // Streamed unpacks of 8 rows of 16 or 32 bits too (16 x 8 x 512 x 512
  // NHWC: fp16 0.34 -> 0.85 of memcpy, fp32 0.45 -> 0.90; in cache the tiles
  // stay faster: 1 x 8 x 56 x 56 fp16 0.32 against 0.12).
  if (bytes != 1 && !pack && streamed && R == 8) return true;
  if (bytes == 2) return R < 8;
  if (bytes == 4) return R % 4 != 0 && R <= 7;
  return true;
}

// Per element size: the permute indices and masks of every R up to kSmallRows.
struct SmallRowsTables {
  struct PerR {
    alignas(64) uint8_t pack_idx[kSmallRows][64];    // line register t
    uint64_t pack_mask[kSmallRows][kSmallRows];      // [t][r]
    alignas(64) uint8_t unpack_idx[kSmallRows][64];  // row r
    uint64_t unpack_mask[kSmallRows][kSmallRows];    // [r][t]
  };
  PerR r[kSmallRows + 1];
};

template <int E>
const SmallRowsTables::PerR& small_rows_tables(uint64_t R) {
  static const SmallRowsTables* tables = [] {
    auto* t = new SmallRowsTables();
    constexpr uint64_t V = 64 / E;
    for (uint64_t n = 2; n <= kSmallRows; ++n) {
      SmallRowsTables::PerR& p = t->r[n];
      const auto put = [](uint8_t* idx, uint64_t i, uint64_t v) {
        for (int b = 0; b < E; ++b) idx[i * E + b] = static_cast<uint8_t>(b == 0 ? v : b == 1 ? v >> 8 : 0);
      };
      for (uint64_t a = 0; a < n; ++a) {
        for (uint64_t i = 0; i < V; ++i) {
          put(p.pack_idx[a], i, (V * a + i) / n);
          p.pack_mask[a][(V * a + i) % n] |= uint64_t{1} << i;
          put(p.unpack_idx[a], i, (i * n + a) % V);
          p.unpack_mask[a][(i * n + a) / V] |= uint64_t{1} << i;
        }
      }
    }
    return t;
  }();
  return tables->r[R];
}

template <int E>
LC_MGE_AVX512VBMI inline __m512i permute_masked(__m512i src, uint64_t k, __m512i idx, __m512i a) {
  if constexpr (E == 1) return _mm512_mask_permutexvar_epi8(src, k, idx, a);
  else if constexpr (E == 2) return _mm512_mask_permutexvar_epi16(src, static_cast<__mmask32>(k), idx, a);
  else return _mm512_mask_permutexvar_epi32(src, static_cast<__mmask16>(k), idx, a);
}

template <int E>
LC_MGE_AVX512VBMI inline __m512i load_elements(uint64_t k, const uint8_t* at) {
  if constexpr (E == 1) return masked::_mm512_maskz_loadu_epi8(k, at);
  else if constexpr (E == 2) return masked::_mm512_maskz_loadu_epi16(static_cast<__mmask32>(k), at);
  else return masked::_mm512_maskz_loadu_epi32(static_cast<__mmask16>(k), at);
}

template <int E>
LC_MGE_AVX512VBMI inline void store_elements(uint8_t* at, uint64_t k, __m512i v) {
  if constexpr (E == 1) masked::_mm512_mask_storeu_epi8(at, k, v);
  else if constexpr (E == 2) masked::_mm512_mask_storeu_epi16(at, static_cast<__mmask32>(k), v);
  else masked::_mm512_mask_storeu_epi32(at, static_cast<__mmask16>(k), v);
}

inline uint64_t low_bits(uint64_t n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

// With `stream` (kStreamBytes or more), packing fetches the rows
// kPrefetchBytes ahead and writes the lines non-temporal when the group
// starts on one; unpacking writes the rows non-temporal when all start on one.
template <bool kPack, int E>
LC_MGE_AVX512VBMI void small_rows_permutes(const Group& g, uint8_t* logical, uint8_t* phys, bool stream = false) {
  constexpr uint64_t V = 64 / E;
  const uint64_t R = g.R;
  bool nt = stream && reinterpret_cast<uintptr_t>(phys + g.pixels * E) % kLine == 0;
  if (!kPack && stream) {  // every row on a line
    nt = true;
    for (uint64_t r = 0; r < R; ++r) {
      if (g.rows[r] != kPad && reinterpret_cast<uintptr_t>(logical + g.rows[r] * E) % kLine != 0) nt = false;
    }
  }
  const SmallRowsTables::PerR& t = small_rows_tables<E>(R);
  __m512i v[kSmallRows];
  for (uint64_t l = 0; l < g.L; l += V) {
    const uint64_t n = std::min(V, g.L - l);  // pixels
    uint8_t* px = phys + (g.pixels + l * R) * E;
    if (kPack) {
      for (uint64_t r = 0; r < R; ++r) {
        if (stream && g.rows[r] != kPad) {  // mutate: equivalent (a prefetch)
          _mm_prefetch(reinterpret_cast<const char*>(logical + (g.rows[r] + l) * E) + kPrefetchBytes, _MM_HINT_T0);
        }
        v[r] = g.rows[r] == kPad ? _mm512_setzero_si512() : load_elements<E>(low_bits(n), logical + (g.rows[r] + l) * E);
      }
      for (uint64_t a = 0; a < R && V * a < n * R; ++a) {
        const __m512i idx = _mm512_load_si512(t.pack_idx[a]);
        __m512i o = _mm512_setzero_si512();
        for (uint64_t r = 0; r < R; ++r) o = permute_masked<E>(o, t.pack_mask[a][r], idx, v[r]);
        if (n == V && nt) _mm512_stream_si512(reinterpret_cast<__m512i*>(px + 64 * a), o);
        else if (n == V) _mm512_storeu_si512(reinterpret_cast<void*>(px + 64 * a), o);
        else store_elements<E>(px + 64 * a, low_bits(n * R - V * a), o);
      }
    } else {
      for (uint64_t a = 0; a < R; ++a) {
        v[a] = n == V    ? _mm512_loadu_si512(reinterpret_cast<const void*>(px + 64 * a))
               : V * a < n * R ? load_elements<E>(low_bits(n * R - V * a), px + 64 * a)
                               : _mm512_setzero_si512();
      }
      for (uint64_t r = 0; r < R; ++r) {
        if (g.rows[r] == kPad) continue;
        const __m512i idx = _mm512_load_si512(t.unpack_idx[r]);
        __m512i o = _mm512_setzero_si512();
        for (uint64_t a = 0; a < R; ++a) o = permute_masked<E>(o, t.unpack_mask[r][a], idx, v[a]);
        if (n == V && nt) _mm512_stream_si512(reinterpret_cast<__m512i*>(logical + (g.rows[r] + l) * E), o);
        else store_elements<E>(logical + (g.rows[r] + l) * E, low_bits(n), o);
      }
    }
  }
}
#endif

#if LC_MGE_X86
// 8-bit elements, R a multiple of 16 but not of 32 (CHWN4 of 4 images, NHWC
// of 16 or 48 channels, 4-bit NCHW32 as row pairs), AVX-512: tiles of 16
// rows x 64 columns, four 16 x 16 byte transposes, one per lane, leave pixel
// 16q + j's 16 bytes in register j, lane q. Packing with R == 16 those are
// whole pixels, and 4 x 4 lane transposes make whole lines of 4 pixels;
// otherwise each lane is stored by itself. Unpacking, each lane is loaded by
// itself (load_lanes_transpose; as fast as whole lines and lane transposes
// with R == 16). 96 (64) shuffles per KiB
// against 256 with the 128-bit tiles (measured on a Zen 5, pack / unpack,
// CHWN4 int8 of 4 images, 4 x 64 x 64 x 64: 0.17 / 0.10 of memcpy -> 0.84 /
// 0.40; 4 x 64 x 256 x 256: 0.34 / 0.34 -> 0.94 / 1.09; NHWC int8 of 48
// channels 1 x 48 x 64 x 64: 0.074 / 0.029 -> 0.27 / 0.11).
// R above 16 and no multiple of 16 (NHWC of 24 or 40 channels, CHWN4 of 5
// images) the same, the last tile of a column taking the last 16 rows (those
// before it again, the same bytes); they went through a stage of padded pixels
// and 32-row tiles (measured on a Zen 5, NHWC int8, pack / unpack: 1 x 24 x 56
// x 56 0.15 / 0.09 -> 0.31 / 0.40; 1 x 40 x 28 x 28 0.07 / 0.06 -> 0.23 /
// 0.30; 1 x 100 x 56 x 56 0.10 / 0.09 -> 0.30 / 0.39; 1 x 24 x 7 x 7 0.03 /
// 0.02 -> 0.07 / 0.06; streamed unpacks, through the stage of run_group, 16 x
// 24 x 256 x 256 0.32 -> 0.70).
// The last columns (fewer than 64) take one tile more, its rows' loads
// (unpack: stores) masked to them and its pixels' lines written (read) only
// up to the last pixel, zeros past it (late layers: a CHWN4 group of 4
// images of 7 x 7 pixels went element by element; 4 x 512 x 7 x 7 on a Zen
// 5, best of 7, 0.12 / 0.09 of memcpy -> 0.19 / 0.16, pack / unpack).
template <bool kPack, bool kPartial>
LC_MGE_AVX512BW_INLINE void tile_16x64_epi8(const uint64_t* rows, uint8_t* logical, uint8_t* px, uint64_t R, uint64_t l,
                                            uint64_t n) {
  const __mmask64 cols = piece_mask(n, 0);
  __m512i v[16];
  if (kPack) {
    LC_MGE_UNROLL
    for (int k = 0; k < 16; ++k) {
      if (rows[k] == kPad) v[k] = _mm512_setzero_si512();
      else if (!kPartial) v[k] = _mm512_loadu_si512(reinterpret_cast<const void*>(logical + rows[k] + l));
      else v[k] = masked::_mm512_maskz_loadu_epi8(cols, logical + rows[k] + l);
    }
    byte_transpose::transpose16x16_epi8_x4(v);
    if (R == 16) {
      // Whole pixels: lines of 4 (pixels 16q + 4t ..) by 4 x 4 lane transposes.
      LC_MGE_UNROLL
      for (uint64_t t = 0; t < 4; ++t) {
        __m512i w[4] = {v[4 * t], v[4 * t + 1], v[4 * t + 2], v[4 * t + 3]};
        byte_transpose::transpose_lanes4x4(w);
        LC_MGE_UNROLL
        for (uint64_t q = 0; q < 4; ++q) {
          const uint64_t first = 16 * q + 4 * t;
          if (!kPartial || first + 4 <= n) _mm512_storeu_si512(reinterpret_cast<void*>(px + first * 16), w[q]);
          else if (first < n) masked::_mm512_mask_storeu_epi8(px + first * 16, piece_mask(16 * (n - first), 0), w[q]);
        }
      }
      return;
    }
    LC_MGE_UNROLL
    for (uint64_t j = 0; j < 16; ++j) {  // lane q of v[j]: pixel 16q + j
      const auto put = [&](uint64_t q, __m128i line) LC_MGE_AVX512BW_LAMBDA {
        if (!kPartial || 16 * q + j < n) _mm_storeu_si128(reinterpret_cast<__m128i*>(px + (16 * q + j) * R), line);
      };
      put(0, _mm512_castsi512_si128(v[j]));
      put(1, _mm512_extracti32x4_epi32(v[j], 1));
      put(2, _mm512_extracti32x4_epi32(v[j], 2));
      put(3, _mm512_extracti32x4_epi32(v[j], 3));
    }
    return;
  }
  if (!kPartial) {
    load_lanes_transpose(px, R, 0, v);
  } else {
    LC_MGE_UNROLL
    for (uint64_t i = 0; i < 16; ++i) {  // lane q of v[i]: pixel 16q + i, zeros past n
      const auto line = [&](uint64_t q) LC_MGE_AVX512BW_LAMBDA {
        return 16 * q + i < n ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(px + (16 * q + i) * R)) : _mm_setzero_si128();
      };
      __m512i x = _mm512_castsi128_si512(line(0));
      x = _mm512_inserti32x4(x, line(1), 1);
      x = _mm512_inserti32x4(x, line(2), 2);
      v[i] = _mm512_inserti32x4(x, line(3), 3);
    }
    byte_transpose::transpose16x16_epi8_x4(v);
  }
  LC_MGE_UNROLL
  for (int k = 0; k < 16; ++k) {
    if (rows[k] == kPad) continue;
    if (!kPartial) _mm512_storeu_si512(reinterpret_cast<void*>(logical + rows[k] + l), v[k]);
    else masked::_mm512_mask_storeu_epi8(logical + rows[k] + l, cols, v[k]);
  }
}

// Columns l0.. of every row (64 or fewer), in one tile of 16 rows after another.
template <bool kPack>
LC_MGE_AVX512BW void tile_16x64_epi8_masked(const Group& g, uint8_t* logical, uint8_t* phys, uint64_t l0) {
  for (uint64_t r0 = 0; r0 < g.R; r0 += 16) {
    const uint64_t r = std::min(r0, g.R - 16);  // the last 16 rows (some of them again, the same bytes)
    tile_16x64_epi8<kPack, true>(g.rows + r, logical, phys + g.pixels + l0 * g.R + r, g.R, l0, g.L - l0);
  }
}

template <bool kPack>
LC_MGE_AVX512BW uint64_t tiles_16x64_epi8_avx512(const Group& g, uint8_t* logical, uint8_t* phys) {
  const uint64_t L64 = g.L / 64 * 64, R = g.R;
  for (uint64_t l = 0; l < L64; l += 64) {
    for (uint64_t r0 = 0; r0 < R; r0 += 16) {
      const uint64_t r = std::min(r0, R - 16);
      tile_16x64_epi8<kPack, false>(g.rows + r, logical, phys + g.pixels + l * R + r, R, l, 64);
    }
  }
  if (L64 < g.L) tile_16x64_epi8_masked<kPack>(g, logical, phys, L64);
  return g.L;
}
#endif

#if LC_MGE_X86
// Packs of rows the fastest tiles do not take: with AVX-512 VBMI they go
// through the tiles of the next row count that has them, R' (pixels of b'
// bytes where the group's have b = R x E), the rows past R padding: blocks of
// pixels are transposed into a stage of pitch b', and byte permutes close
// the gaps (each 64 bytes out one two-source permute of the 128 stage bytes
// from its first one on). The permutes repeat every 64 / gcd(64, b) pixels:
// their indices are worked out once per (b, b') and thread. Streamed, the
// fastest tiles (16 | R' for 32 bits, else 32 | R') where the permutes reach,
// also for rows that have slower tiles (see run_group); in cache, 8-bit
// groups of 9 to 15 rows (the permutes of a few rows took them: 16 x 13 x 512
// x 512 int8 0.42 of memcpy, 0.68 here; 1 x 13 x 56 x 56 0.06 and 0.13).
// Unpacks never go so, nor packs in cache of more rows than a tile of their
// element size has: those take the tiles as they are, the last tile of a
// column the last rows, some of them again (the same bytes). The padded
// pitch cost a pass more there (measured on a Zen 5, NHWC, pack / unpack:
// int8 1 x 24 x 56 x 56 0.15 / 0.09 of memcpy -> 0.31 / 0.40, fp16 1 x 20 x
// 56 x 56 0.15 / 0.09 -> 0.38 / 0.45, 1 x 13 x 56 x 56 0.14 / 0.08 -> 0.33 /
// 0.42, fp32 1 x 33 x 28 x 28 0.15 / 0.11 -> 0.34 / 0.39, 1 x 13 x 56 x 56
// 0.16 / 0.11 -> 0.27 / 0.16; streamed unpacks, whose transposes go into an
// L1 stage, int8 16 x 24 x 256 x 256 0.32 -> 0.70, fp16 16 x 20 x 256 x 256
// 0.40 -> 0.91, fp32 8 x 33 x 256 x 256 0.44 -> 0.91).
// The padded row count of a pack, or 0 for the group's own tiles.
uint64_t padded_rows(uint64_t bytes, uint64_t R, bool streamed) {
  if (!streamed && R > 16 / bytes) return 0;
  if (bytes == 1 && pshufb_rows(bytes, R)) return 0;
  const uint64_t fast = bytes == 4 ? 16 : 32;                   // rows of the fastest tiles
  const uint64_t least = bytes == 1 ? 16 : bytes == 2 ? 8 : 4;  // of any
  const bool pad = R > 7 && (R % least != 0 || (streamed && R % fast != 0 && R != 16));
  if (!pad) return 0;
  // The fastest tiles where the closing permutes reach that far: the 64
  // bytes out from a stage byte on cross at most 63 / b + 1 pixel ends, each
  // a gap of (R' - R) x E bytes, and a permute takes 128.
  const auto reaches = [&](uint64_t to) { return 63 + (63 / (R * bytes) + 1) * (to - R) * bytes < 128; };
  uint64_t to = ceil_div(R, fast) * fast;
  if (!reaches(to)) to = ceil_div(R, least) * least;
  return to != R && reaches(to) && to * bytes <= kPitchMaxBytes ? to : 0;
}

struct PitchTables {
  uint64_t b = 0, b2 = 0;  // pixel bytes: the group's, the stage's
  // Closing (pack): output register k of a period starts at stage byte
  // close_at[k] of it; its indices into that byte's 128.
  uint64_t close_regs = 0, close_pixels = 0;
  alignas(64) uint8_t close_idx[kPitchMaxRegs][64];
  uint64_t close_at[kPitchMaxRegs];
};

uint64_t gcd64(uint64_t v) {
  uint64_t d = 64;
  while (v % d != 0) d /= 2;
  return d;
}

const PitchTables& pitch_tables(uint64_t b, uint64_t b2) {
  static thread_local PitchTables t;
  if (t.b == b && t.b2 == b2) return t;
  t.b = b, t.b2 = b2;
  t.close_pixels = 64 / gcd64(b), t.close_regs = t.close_pixels * b / 64;
  for (uint64_t k = 0; k < t.close_regs; ++k) {
    const auto stage_byte = [&](uint64_t y) { return y / b * b2 + y % b; };
    t.close_at[k] = stage_byte(64 * k);
    for (uint64_t i = 0; i < 64; ++i) t.close_idx[k][i] = static_cast<uint8_t>(stage_byte(64 * k + i) - t.close_at[k]);
  }
  return t;
}

template <bool kPack, size_t kBytes>
void transpose_bytes(const Group& g, uint8_t* logical, uint8_t* phys);

template <size_t kBytes>
LC_MGE_AVX512VBMI void padded_pitch(const Group& g, uint64_t R2, uint8_t* logical, uint8_t* phys, bool nt = false) {
  const uint64_t b = g.R * kBytes, b2 = R2 * kBytes;
  const PitchTables& t = pitch_tables(b, b2);
  // The stage, and room for the last closing permute's second load.
  alignas(64) static thread_local uint8_t stage[kPitchStageBytes + 128];
  const uint64_t block = std::max<uint64_t>(64, kPitchStageBytes / b2 / 64 * 64);  // pixels: whole periods
  uint64_t rows[kPitchMaxBytes];
  for (uint64_t l0 = 0; l0 < g.L; l0 += block) {
    const uint64_t n = std::min(block, g.L - l0);
    for (uint64_t r = 0; r < R2; ++r) rows[r] = r < g.R && g.rows[r] != kPad ? g.rows[r] + l0 : kPad;
    uint8_t* out = phys + (g.pixels + l0 * g.R) * kBytes;
    const uint64_t bytes = n * b;
    // Streamed: the 8-bit tiles fetch each row kTileFetch bytes ahead as they
    // read it (into the next block at a block's end); the other transposes
    // take the next block's lines of every row, fetched at once while this one
    // is transposed (16 x 24 x 256 x 256 int8 on a Zen 5, means of 5 runs
    // alternating: 0.31 of memcpy so for the tiles too, 0.39 a tile ahead;
    // 8 x 72 x 256 x 256 0.33 either way).
    const bool tiles = kBytes == 1 && (R2 == 32 || R2 % 64 == 0);
    if (!tiles && nt && l0 + block < g.L) {  // mutate: equivalent (a prefetch: the same bytes)
      const uint64_t ahead = std::min(block, g.L - l0 - block) * kBytes;
      for (uint64_t r = 0; r < g.R; ++r) {
        if (g.rows[r] == kPad) continue;
        const uint8_t* next = logical + (g.rows[r] + l0 + block) * kBytes;
        for (uint64_t c = 0; c < ahead; c += kLine) _mm_prefetch(reinterpret_cast<const char*>(next + c), _MM_HINT_T1);
      }
    }
    if (tiles) {
      // The tiles of 32 or 64k rows.
      pack_rows_x64_epi8_avx512(Group{rows, R2, n, 0}, logical, stage, nt, 0, true);  // mutate: equivalent (the fetches and the kind of store: the same bytes)
    } else {
      transpose_bytes<true, kBytes>(Group{rows, R2, n, 0, g.group_rows, nt}, logical, stage);
    }
    for (uint64_t k = 0, base = 0; k * 64 < bytes; ++k) {
      const uint64_t kk = k % t.close_regs;
      if (k > 0 && kk == 0) base += t.close_pixels * b2;
      const uint8_t* at = stage + base + t.close_at[kk];
      const __m512i v = _mm512_permutex2var_epi8(_mm512_loadu_si512(at), _mm512_load_si512(t.close_idx[kk]),
                                                 _mm512_loadu_si512(at + 64));
      if (bytes - 64 * k < 64) masked::_mm512_mask_storeu_epi8(out + 64 * k, low_bits(bytes - 64 * k), v);
      else if (nt && reinterpret_cast<uintptr_t>(out) % kLine == 0) _mm512_stream_si512(reinterpret_cast<__m512i*>(out + 64 * k), v);
      else _mm512_storeu_si512(out + 64 * k, v);
    }
  }
}

// Packs of 24 rows of bytes (NHWC int8 with 24 channels, as early layers of
// mobile networks have): 64 pixels a step, all in registers, each row's line
// loaded once and each output line stored once (non-temporal when streamed),
// no stage between. Measured on a Zen 5, 16 x 24 x 256 x 256, pinned: the
// loads and stores alone, a line of 8 rows after another, each stored once,
// move at 0.86-0.95 of memcpy, with each line stored to an L1 stage as well
// at 0.58-0.80 (best of 7); padded_pitch's 32-row tiles and closing permutes
// through a stage ran the bench's row at 0.48-0.52, this kernel at 0.79-0.85
// (0.86-0.97 best of 7 alone). Each group of 8 rows goes through three
// rounds of two-source byte permutes (pairs of rows to 2-byte pixels, pairs of
// those to 4-byte pixels of 16, then 8 pixels of 8 bytes), and each 8 pixels'
// three 64-byte lines take their 8-byte pieces from the three groups by a
// two-source quadword permute and a masked one. No fetches in software: each
// row's line 256 bytes on fetched into L2 as it is read measured 0.68-0.82
// against 0.79-0.85 without (the bench's row, pinned, alternating). In
// cache, against the 16-row tiles (pinned, best of 7, alternating): 1 x 24 x
// 14 x 14 0.15 -> 0.17 of memcpy, 28 x 28 0.19-0.20 -> 0.24, 56 x 56 0.24 ->
// 0.31-0.33, 100 x 100 0.21 -> 0.26-0.28, 8 x 24 x 112 x 112 0.51-0.53 ->
// 0.70-0.72; the last pixels (fewer than 64) by the masked tiles there (by
// the padded pitch, 14 x 14 ran at 0.10-0.11).
struct Rows24Tables {
  alignas(64) uint8_t pairs[2][64];  // rows a, b: pixels 32h.. as [a b] byte pairs
  alignas(64) uint8_t quads[4][64];  // pair registers of rows 0-1, 2-3: pixels 16q.. as 4 bytes
  alignas(64) uint8_t eights[2][64];  // quad registers of rows 0-3, 4-7: pixels 8h.. of 16 as 8 bytes
  alignas(64) uint64_t close01[3][8];  // line s of 8 pixels: qwords of groups 0 and 1
  alignas(64) uint64_t close2[3][8];   // and of group 2, into the lanes of close2_mask
  __mmask8 close2_mask[3];
  Rows24Tables() {
    for (int h = 0; h < 2; ++h) {
      for (int i = 0; i < 64; ++i) pairs[h][i] = static_cast<uint8_t>(32 * h + i / 2 + 64 * (i % 2));
    }
    for (int q = 0; q < 4; ++q) {
      for (int i = 0; i < 64; ++i) {
        const int pixel = 16 * q + i / 4 - 32 * (q / 2), row = i % 4;
        quads[q][i] = static_cast<uint8_t>(2 * pixel + row % 2 + 64 * (row / 2));
      }
    }
    for (int h = 0; h < 2; ++h) {
      for (int i = 0; i < 64; ++i) {
        const int pixel = 8 * h + i / 8, row = i % 8;
        eights[h][i] = static_cast<uint8_t>(4 * pixel + row % 4 + 64 * (row / 4));
      }
    }
    for (int s = 0; s < 3; ++s) {
      close2_mask[s] = 0;
      for (int j = 0; j < 8; ++j) {
        const int piece = 8 * s + j, pixel = piece / 3, group = piece % 3;
        close01[s][j] = static_cast<uint64_t>(group == 1 ? 8 + pixel : pixel);
        close2[s][j] = static_cast<uint64_t>(pixel);
        if (group == 2) close2_mask[s] = static_cast<__mmask8>(close2_mask[s] | (1u << j));
      }
    }
  }
};

// Pixels 0 .. L / 64 * 64 of the group, non-temporal with `stream` where
// the lines are whole; returns how many it packed.
LC_MGE_AVX512VBMI uint64_t pack_24rows_epi8(const Group& g, const uint8_t* logical, uint8_t* phys, bool stream) {
  static const Rows24Tables t;
  const uint8_t* row[24];
  for (uint64_t r = 0; r < 24; ++r) row[r] = logical + g.rows[r];
  uint8_t* base = phys + g.pixels;
  const bool nt = stream && reinterpret_cast<uintptr_t>(base) % kLine == 0;  // then every step's 24 lines are whole
  const __m512i pairs0 = _mm512_load_si512(t.pairs[0]), pairs1 = _mm512_load_si512(t.pairs[1]);
  const __m512i eights0 = _mm512_load_si512(t.eights[0]), eights1 = _mm512_load_si512(t.eights[1]);
  const uint64_t whole = g.L / 64 * 64;
  for (uint64_t l = 0; l < whole; l += 64) {
    __m512i quad[3][2][4];  // group of 8 rows, its rows 0-3 / 4-7, pixels 16q..16q+15 as 4 bytes
    LC_MGE_UNROLL
    for (int grp = 0; grp < 3; ++grp) {
      __m512i pair[4][2];
      LC_MGE_UNROLL
      for (int p = 0; p < 4; ++p) {
        const uint8_t* a = row[8 * grp + 2 * p] + l;
        const uint8_t* b = row[8 * grp + 2 * p + 1] + l;
        const __m512i va = _mm512_loadu_si512(a), vb = _mm512_loadu_si512(b);
        pair[p][0] = _mm512_permutex2var_epi8(va, pairs0, vb);
        pair[p][1] = _mm512_permutex2var_epi8(va, pairs1, vb);
      }
      LC_MGE_UNROLL
      for (int half = 0; half < 2; ++half) {
        LC_MGE_UNROLL
        for (int q = 0; q < 4; ++q) {
          quad[grp][half][q] = _mm512_permutex2var_epi8(pair[2 * half][q / 2], _mm512_load_si512(t.quads[q]),
                                                        pair[2 * half + 1][q / 2]);
        }
      }
    }
    uint8_t* out = base + l * 24;
    LC_MGE_UNROLL
    for (int m = 0; m < 8; ++m) {  // pixels 8m..8m+7: three lines
      __m512i eight[3];
      LC_MGE_UNROLL
      for (int grp = 0; grp < 3; ++grp) {
        eight[grp] = _mm512_permutex2var_epi8(quad[grp][0][m / 2], m % 2 ? eights1 : eights0, quad[grp][1][m / 2]);
      }
      LC_MGE_UNROLL
      for (int s = 0; s < 3; ++s) {
        __m512i v = _mm512_permutex2var_epi64(eight[0], _mm512_load_si512(t.close01[s]), eight[1]);
        v = _mm512_mask_permutexvar_epi64(v, t.close2_mask[s], _mm512_load_si512(t.close2[s]), eight[2]);
        void* at = out + 192 * m + 64 * s;
        if (nt) _mm512_stream_si512(reinterpret_cast<__m512i*>(at), v);
        else _mm512_storeu_si512(at, v);
      }
    }
  }
  return whole;
}
#endif

template <bool kPack, size_t kBytes>
void transpose_bytes(const Group& g, uint8_t* logical, uint8_t* phys) {
  uint64_t done = 0;
#if LC_MGE_X86
  if (pshufb_rows(kBytes, g.R) && have_avx2()) {
    done = small_rows_pshufb<kPack, kBytes>(g, logical, phys);
    if (done < g.L) transpose_rest<kPack, kBytes>(g, logical, phys, done);
    return;
  }
  if constexpr (kPack) {
    if (const uint64_t R2 = padded_rows(kBytes, g.R, false); R2 != 0 && have_avx512_vbmi()) {
      return padded_pitch<kBytes>(g, R2, logical, phys);
    }
  }
  if (small_rows_wanted(kBytes, g.R, kPack, false) && have_avx512_vbmi()) {
    return small_rows_permutes<kPack, static_cast<int>(kBytes)>(g, logical, phys);
  }
  if (!kPack && kBytes == 1 && g.R % 64 == 0 && g.long_rows && have_avx512()) {
    done = unpack_64x64_epi8_avx512(g, logical, phys);
  } else if (kBytes == 1 && g.R % 32 == 0 && have_avx2()) {
    if (!have_avx512()) return blocks_32x256_epi8_avx2<kPack>(g, logical, phys);
    done = blocks_32x256_epi8_avx512vl<kPack>(g, logical, phys);
  } else if (kBytes == 2 && g.R % 32 == 0 && have_avx512()) {
    done = tiles_32x32_epi16_avx512<kPack>(g, logical, phys);
  } else if (kBytes == 2 && g.R >= 8 && have_avx512()) {
    done = tiles_8x32_epi16_avx512<kPack>(g, logical, phys);
  } else if (kBytes == 2 && g.R == 4 && have_avx512()) {
    if (kPack) return pack_4x32_epi16_avx512(g, logical, phys, false);
    return unpack_4x32_epi16_avx512(g, logical, phys, false);
  } else if (!kPack && kBytes == 4 && g.R == 4 && have_avx512()) done = unpack_4x16_epi32_avx512(g, logical, phys, false);
  else if (kPack && kBytes == 4 && g.R == 4 && have_avx512()) done = pack_4x16_epi32_avx512(g, logical, phys, false);
  else if (kBytes == 4 && g.R >= 16 && have_avx512()) done = tiles_16x16_epi32_avx512<kPack>(g, logical, phys);
  else if (kBytes == 4 && g.R >= 4 && have_avx2()) done = tiles_4x8_epi32_avx2<kPack>(g, logical, phys);
  else if (kBytes == 4 && g.R >= 4) done = tiles_4x4_epi32<kPack>(g, logical, phys);
  else if (kBytes == 1 && g.R >= 16 && have_avx512()) done = tiles_16x64_epi8_avx512<kPack>(g, logical, phys);
  else if (kBytes == 1 && g.R >= 16 && have_avx2()) done = tiles_16x32_epi8_avx2<kPack>(g, logical, phys);
  else if (kBytes == 1 && g.R >= 16) done = tiles_16x16_epi8<kPack>(g, logical, phys);
  else if (kBytes == 1 && g.R == 4) done = tiles_4x16_epi8<kPack>(g, logical, phys);
  else if (kBytes == 2 && g.R >= 8) {
    // Packing into pixel lines a multiple of 4 KiB apart, 16 of them open at
    // once share an L1 set: 8-column tiles (1 x 2048 x 7 x 7 NHWC 0.05 of
    // memcpy in 16, 0.09 in 8).
    if (have_avx2() && !(kPack && g.R * 2 % 4096 == 0)) done = tiles_8x16_epi16_avx2<kPack>(g, logical, phys);
    done = tiles_8x8_epi16<kPack>(g, logical, phys, done);
  } else if (kBytes == 2 && g.R == 4) done = tiles_4x8_epi16<kPack>(g, logical, phys);
#endif
  if (done < g.L) transpose_rest<kPack, kBytes>(g, logical, phys, done);
}

// 4-bit elements: element e lives in byte e/2, low nibble when e is even.
inline uint8_t get_nibble(const uint8_t* base, uint64_t e) {
  return static_cast<uint8_t>((base[e >> 1] >> ((e & 1) * 4)) & 0xF);
}

// Consecutive nibbles from element `at` on, two to a byte: each byte written
// once, whole (the half at either end merged with the nibble already there).
class NibbleWriter {
 public:
  NibbleWriter(uint8_t* base, uint64_t at) : base_(base), at_(at) {
    if (at_ & 1) low_ = base_[at_ >> 1] & 0xF;
  }
  void put(uint8_t v) {
    if (at_ & 1) base_[at_ >> 1] = static_cast<uint8_t>(low_ | v << 4);
    else low_ = v;
    ++at_;
  }
  void finish() {
    if (at_ & 1) base_[at_ >> 1] = static_cast<uint8_t>((base_[at_ >> 1] & 0xF0) | low_);
  }

 private:
  uint8_t* base_;
  uint64_t at_;
  uint8_t low_ = 0;
};

// The side written goes in its own order (packing: the pixels, R nibbles each;
// unpacking: each row's run of the tile), two nibbles a byte store (1 x 63 x
// 16 x 16 int4 NHWC on a Zen 5: a store and a load per nibble before).
template <bool kPack>
void transpose_nibbles(const Group& g, uint8_t* logical, uint8_t* phys) {
  constexpr uint64_t kTileL = 64;
  for (uint64_t lt = 0; lt < g.L; lt += kTileL) {
    const uint64_t le = std::min(g.L, lt + kTileL);
    if (kPack) {
      NibbleWriter out(phys, g.pixels + lt * g.R);
      for (uint64_t l = lt; l < le; ++l) {
        for (uint64_t r = 0; r < g.R; ++r) {
          const uint64_t row = g.rows[r];
          out.put(row == kPad ? 0 : get_nibble(logical, row + l));
        }
      }
      out.finish();
      continue;
    }
    for (uint64_t r = 0; r < g.R; ++r) {
      const uint64_t row = g.rows[r];
      if (row == kPad) continue;
      NibbleWriter out(logical, row + lt);
      for (uint64_t l = lt; l < le; ++l) out.put(get_nibble(phys, g.pixels + l * g.R + r));
      out.finish();
    }
  }
}

template <bool kPack>
void run_group_direct(const Plan& p, const Group& g, uint8_t* logical, uint8_t* phys) {
  switch (p.bits) {
    case 4: transpose_nibbles<kPack>(g, logical, phys); break;
    case 8: transpose_bytes<kPack, 1>(g, logical, phys); break;
    case 16: transpose_bytes<kPack, 2>(g, logical, phys); break;
    default: transpose_bytes<kPack, 4>(g, logical, phys); break;  // 32 bits: no dtype is wider
  }
}

// Packing a tensor larger than the caches (Plan::stream, kStreamBytes): the
// same transposes write blocks of pixels into an L1-sized stage, which goes to
// memory with non-temporal stores (the physical buffer is written front to
// back, so every line is written whole and never read).

#if LC_MGE_X86
void stream_copy(uint8_t* dst, const uint8_t* src, uint64_t n) {
  const uint64_t head = std::min<uint64_t>(n, (16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16);
  std::memcpy(dst, src, head);
  uint64_t i = head;
  for (; i + 16 <= n; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
  }
  std::memcpy(dst + i, src + i, n - i);
}

// The same, a line per store.
LC_MGE_AVX512 void stream_copy_avx512(uint8_t* dst, const uint8_t* src, uint64_t n) {
  const uint64_t head = std::min<uint64_t>(n, (kLine - reinterpret_cast<uintptr_t>(dst) % kLine) % kLine);
  std::memcpy(dst, src, head);
  uint64_t i = head;
  for (; i + 4 * kLine <= n; i += 4 * kLine) {
    LC_MGE_UNROLL
    for (uint64_t k = 0; k < 4 * kLine; k += kLine) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + k),
                          _mm512_loadu_si512(reinterpret_cast<const void*>(src + i + k)));
    }
  }
  for (; i + kLine <= n; i += kLine) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), _mm512_loadu_si512(reinterpret_cast<const void*>(src + i)));
  }
  std::memcpy(dst + i, src + i, n - i);
}

// Copies n bytes, the whole lines of dst with non-temporal stores and any
// partial line at either end with ordinary ones.
void stream_lines(uint8_t* dst, const uint8_t* src, uint64_t n) {
  const uint64_t head = std::min<uint64_t>(n, (kLine - reinterpret_cast<uintptr_t>(dst) % kLine) % kLine);
  std::memcpy(dst, src, head);
  uint64_t i = head;
  for (; i + kLine <= n; i += kLine) {
    LC_MGE_UNROLL
    for (uint64_t k = 0; k < kLine; k += 16) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + k),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + k)));
    }
  }
  std::memcpy(dst + i, src + i, n - i);
}
#endif

template <bool kPack>
bool nibble_pairs(const Plan& p, const Group& g, uint8_t* logical, uint8_t* phys);
template <bool kPack>
bool nibble_bytes(const Plan& p, const Group& g, uint8_t* logical, uint8_t* phys);
template <bool kPack>
void walk_units(const Plan& p, uint8_t* logical, uint8_t* phys, uint64_t slices, uint64_t begin, uint64_t end);

#if LC_MGE_X86
// Streamed packs of the groups of a few rows the shuffles take (pshufb_rows:
// NHWC of 2, 3, 5 to 8 channels, RGB images): the shuffles' 32-byte stores
// go straight to memory, non-temporal, from the first pixel whose bytes
// start on 32 (the pixels before it, 31 at most, element by element).
// 8-bit ones went through a stage in L2 and out by a streaming copy, 16- and
// 32-bit ones by the permutes of small_rows_permutes with AVX-512 VBMI
// (measured on a Zen 5, NHWC packs, best of 7, alternating runs, of memcpy:
// uint8 32 x 3 x 512 x 512 0.62-0.65 -> 1.18-1.24, int8 32 x 2 0.87 ->
// 1.17-1.23, 16 x 5 0.67-0.73 -> 0.95-1.02, 16 x 6 0.65-0.68 -> 0.93-0.95,
// 16 x 7 0.64-0.66 -> 0.80-0.82, 16 x 8 0.60 -> 0.70; fp16 16 x 2 0.69-0.74 ->
// 1.27-1.33, 16 x 3 0.74-0.76 -> 1.35-1.40, 16 x 5 0.74-0.83 -> 1.13-1.17, 16
// x 7 0.60 -> 0.74-0.76; fp32 8 x 3 0.72-0.76 -> 1.40, 8 x 5 0.76-0.83 ->
// 1.12-1.14).
// Unpacks likewise store the rows' 32-byte pieces non-temporal from the
// first pixel on 32 bytes, when every row has the same offset in 32 bytes;
// they went by the VBMI permutes of small_rows_permutes, straight from the
// registers too (measured on a Zen 5, NHWC unpacks, best of 7, alternating
// runs, of memcpy: uint8 32 x 3 x 512 x 512 0.77-0.81 -> 1.23, int8 16 x 7
// 0.64-0.71 -> 0.89-0.92, fp16 16 x 3 0.83-0.85 -> 1.26-1.28, 16 x 5 0.83 ->
// 1.01-1.03, fp32 8 x 3 0.74-0.86 -> 1.28-1.37). False, having written
// nothing, when no pixel starts on 32 bytes (pack) or the rows' offsets
// differ (unpack).
template <bool kPack, uint64_t kE>
LC_MGE_AVX2 bool small_rows_straight(const Group& g, uint8_t* logical, uint8_t* phys) {
  uint64_t head = 0;
  if constexpr (kPack) {
    while (head < 32 && head < g.L && reinterpret_cast<uintptr_t>(phys + (g.pixels + head * g.R) * kE) % 32 != 0) ++head;
    if (head == 32) return false;
  } else {
    uint64_t misalign = 64;
    for (uint64_t r = 0; r < g.R; ++r) {
      if (g.rows[r] == kPad) continue;
      const uint64_t m = reinterpret_cast<uintptr_t>(logical + g.rows[r] * kE) % 32;
      if (misalign == 64) misalign = m;
      else if (m != misalign) return false;
    }
    if (misalign == 64 || misalign % kE != 0) return false;
    head = std::min<uint64_t>(g.L, (32 - misalign) % 32 / kE);
  }
  // The pixels before `head` element by element, the others by the shuffles.
  if (head > 0) transpose_rest<kPack, kE>(Group{g.rows, g.R, head, g.pixels}, logical, phys, 0);
  uint64_t rows[8];  // pshufb_rows: 8 at most
  for (uint64_t r = 0; r < g.R; ++r) rows[r] = g.rows[r] == kPad ? kPad : g.rows[r] + head;
  Group body = g;
  body.rows = rows;
  body.L = g.L - head;
  body.pixels = g.pixels + head * g.R;
  const uint64_t done = small_rows_pshufb<kPack, kE, true>(body, logical, phys);
  _mm_sfence();
  if (done < body.L) transpose_rest<kPack, kE>(body, logical, phys, done);
  return true;
}
#endif

template <bool kPack>
void run_group(const Plan& p, const Group& g, uint8_t* logical, uint8_t* phys) {
  if (p.bits == 4 && nibble_bytes<kPack>(p, g, logical, phys)) return;
  if (p.bits == 4 && nibble_pairs<kPack>(p, g, logical, phys)) return;
#if LC_MGE_X86
  const uint64_t pixel_bytes = g.R * p.bits / 8;
  if (kPack && p.bits == 8 && g.R % 64 == 0 && have_avx512()) {
    // 64k rows: through a two-part stage of whole lines, transposed
    // in registers; the last columns (fewer than 64) in one tile straight
    // from the rows. (Unpacking the same way is no faster than the 32-row
    // blocks below: its stores into 64 rows H*W bytes apart bound it.)
    const uint64_t done = g.L < 64                                   ? 0
                          : !p.stream                                ? pack_rows_staged_epi8_avx512<kRowsStageCols>(g, logical, phys, false)
                          : l1d_holds(3 * 64 * kStreamStageCols) ? pack_rows_staged_epi8_avx512<kStreamStageCols>(g, logical, phys, true)
                                                                     : pack_rows_staged_epi8_avx512<kRowsStageCols>(g, logical, phys, true);
    if (done < g.L) pack_rows_x64_epi8_avx512(g, logical, phys, false, done);
    return;
  }
  if (kPack && p.bits == 8 && g.R == 32 && have_avx512()) {
    // 32 rows: tiles of 64 columns in registers, whole lines out. (64k rows:
    // the stage above, whose loads overlap the shuffles and take a row's lines
    // a block at a time; unpacking goes through stages too: stores into 32 or
    // more lines of one L1 set per tile, the rows', evict each other before
    // they commit.)
    pack_rows_x64_epi8_avx512(g, logical, phys, p.stream, 0);
    return;
  }
  if (g.R == 4 && (p.bits == 8 || ((p.bits == 16 || p.bits == 32) && p.stream)) && have_avx512()) {
    // Four rows: whole lines straight from registers, no stage.
    if (p.bits == 8) {
      if (kPack) pack_4x64_epi8_avx512(g, logical, phys, p.stream);
      else unpack_4x64_epi8_avx512(g, logical, phys, p.stream);
    } else if (p.bits == 16) {
      if (kPack) pack_4x32_epi16_avx512(g, logical, phys, true);
      else unpack_4x32_epi16_avx512(g, logical, phys, true);
    } else {
      const uint64_t done = kPack ? pack_4x16_epi32_avx512(g, logical, phys, true)
                                  : unpack_4x16_epi32_avx512(g, logical, phys, true);
      if (done < g.L) transpose_rest<kPack, 4>(g, logical, phys, done);
    }
    return;
  }
  if (g.R == 4 && (p.bits == 8 || p.bits == 16 || p.bits == 32) && have_avx2() && !have_avx512()) {
    // Four rows without AVX-512: whole lines straight from registers, both
    // ways (measured on a Zen 4 capped at AVX2, pinned, alternating, against
    // the stages and tiles_4x8_epi32_avx2, of memcpy, pack / unpack: NCHW4
    // fp32 8 x 64 x 256 x 128 0.62-0.94 / 0.58 -> 1.66-1.96 / 1.39-1.59, 1 x
    // 64 x 32 x 32 0.67 / 0.15 -> 0.89-0.90 / 0.87-0.91; int8 16 x 128 x 256
    // x 128 0.66-0.89 / 0.34-0.37 -> 1.42-1.64 / 1.30-1.60, 1 x 64 x 64 x 64
    // pack 0.59 -> 0.88-0.95; fp16 8 x 64 x 256 x 256 0.78-0.81 / 0.70-0.71 ->
    // 1.45-1.50 / 1.31-1.40, 1 x 64 x 32 x 64 0.72-0.73 / 0.68-0.71 ->
    // 0.92-0.94 / 0.87-0.92).
    switch (p.bits) {
      case 8: four_rows_avx2<kPack, 1>(g, logical, phys, p.stream); break;
      case 16: four_rows_avx2<kPack, 2>(g, logical, phys, p.stream); break;
      default: four_rows_avx2<kPack, 4>(g, logical, phys, p.stream); break;
    }
    return;
  }
  if (kPack && p.stream && p.bits == 32 && g.R % 16 == 0 &&
      reinterpret_cast<uintptr_t>(phys + g.pixels * 4) % kLine == 0 && have_avx512()) {
    // 32-bit elements, 16 | R: a pass of kPassRows rows over the whole run
    // of pixels writes whole lines (16 or 32 elements of every pixel), so the
    // lines stream straight out and only the pass's rows are read at once.
    Group d = g;
    d.group_rows = kPassRows;
    const uint64_t done = tiles_16x16_epi32_avx512<true>(d, logical, phys, true);
    if (done < g.L) transpose_rest<kPack, 4>(g, logical, phys, done);
    return;
  }
  if (kPack && p.stream && p.bits == 32 && g.R % 16 == 0 &&
      reinterpret_cast<uintptr_t>(phys + g.pixels * 4) % kLine == 0 && have_avx2() && !have_avx512()) {
    const uint64_t done = pack_16rows_epi32_avx2_streamed(g, logical, phys);
    if (done < g.L) transpose_rest<kPack, 4>(g, logical, phys, done);
    return;
  }
  if (kPack && p.stream && p.bits == 16 && g.R % 32 == 0 &&
      reinterpret_cast<uintptr_t>(phys + g.pixels * 2) % kLine == 0 && have_avx512() && !splits_512bit_ops()) {
    // 16-bit elements, 32 | R: a pass of 32 rows over the whole run of pixels
    // writes whole lines (32 elements of every pixel), streamed straight out,
    // the rows fetched ahead (measured on a Zen 5, 8 x 64 x 256 x 256 fp16,
    // against the L1 stage below: NHWC 0.47 -> 0.71 of memcpy, NCHW32 0.60
    // -> 0.73, NCHW64 0.45 -> 0.70, CHWN4 0.55 -> 0.71).
    Group d = g;
    d.group_rows = 32;
    tiles_32x32_epi16_avx512<true>(d, logical, phys, true);  // every column, the last ones masked
    return;
  }
  if (kPack && p.stream && p.bits == 16 && g.R % 32 == 0 &&
      reinterpret_cast<uintptr_t>(phys + g.pixels * 2) % kLine == 0 && have_avx2()) {
    // The same without AVX-512 (measured on a Zen 5 capped at AVX2, best of
    // 7, against the L1 stage below: NHWC 8 x 64 x 256 x 256 fp16 0.21 ->
    // 0.57 of memcpy, NCHW32 0.33 -> 0.60, NCHW64 8 x 128 x 256 x 128 0.25
    // -> 0.48, CHWN4 16 x 64 x 128 x 128 0.37 -> 0.51; each row's lines
    // fetched 256, 512, 1024, 2048, 4096 bytes ahead, into L1 or L2: 1024
    // into L2 the best, 15% less time than none), and with AVX-512 where
    // 512-bit operations split in two (a Zen 4, pinned, alternating, the
    // pack's time in ms against the 32 x 32 tiles above: NHWC 8 x 64 x 256 x
    // 256 fp16 7.0-7.5 -> 4.7-4.9, NCHW32 5.5-5.8 -> 4.5-4.6, NCHW64 8 x 128
    // x 256 x 128 5.6-5.8 -> 4.8-5.1, CHWN4 16 x 64 x 256 x 128 5.9 -> 5.5,
    // NHWC 4 x 128 x 256 x 256 bf16 5.7-6.0 -> 4.8-5.4).
    const uint64_t done = pack_32rows_epi16_avx2_streamed(g, logical, phys);
    if (done < g.L) transpose_rest<kPack, 2>(g, logical, phys, done);
    return;
  }
  if (kPack && p.stream && p.bits == 8 && g.R == 24 && reinterpret_cast<uintptr_t>(phys + g.pixels) % 32 == 0 &&
      have_avx2()) {
    // Also where AVX-512 VBMI is there: measured on a Zen 4, pinned,
    // alternating, 16 x 24 x 256 x 256 int8 NHWC, 2.0-2.2 ms a pack against
    // 3.0-3.9 by pack_24rows_epi8 below (its in-cache packs and those 16 bytes
    // into a line stay there).
    const uint64_t done = pack_24rows_epi8_avx2_streamed(g, logical, phys);
    if (done < g.L) transpose_rest<kPack, 1>(g, logical, phys, done);
    return;
  }
  if (kPack && p.bits == 8 && g.R == 24 && g.L >= 64 && have_avx512_vbmi() &&
      std::none_of(g.rows, g.rows + 24, [](uint64_t r) { return r == kPad; })) {
    // 24 rows of bytes in registers, a line stored once (see
    // pack_24rows_epi8); the last pixels, fewer than 64, by the masked tiles
    // in cache, streamed as the other padded rows below.
    const uint64_t done = pack_24rows_epi8(g, logical, phys, p.stream);
    if (done < g.L && !p.stream) tile_16x64_epi8_masked<true>(g, logical, phys, done);
    if (done < g.L && p.stream) {
      uint64_t rows[24];
      for (uint64_t r = 0; r < 24; ++r) rows[r] = g.rows[r] + done;
      padded_pitch<1>(Group{rows, 24, g.L - done, g.pixels + done * 24}, padded_rows(1, 24, true), logical, phys, true);
    }
    return;
  }
  if (kPack && p.stream && p.bits % 8 == 0 && padded_rows(p.bits / 8, g.R, true) != 0 && have_avx512_vbmi()) {
    // Rows the fastest tiles do not take: closed up from a padded stage
    // straight to memory, each row's next block fetched ahead (measured on a
    // Zen 5, 16 x C x 512 x 512 NHWC, best of 7, against the L1 stage and the
    // tiles of the rows as they are: int8 C = 12 0.41 -> 0.58 of memcpy, 24
    // 0.17 -> 0.56, 40 0.16 -> 0.51, 72 0.13 -> 0.43; fp16 C = 13 0.42 -> 0.53,
    // 20 0.29 -> 0.52, 24 0.29 -> 0.51, 40 0.30 -> 0.51; fp32 C = 12 0.36 ->
    // 0.66, 13 0.43 -> 0.67, 24 0.29 -> 0.63, 72 0.21 -> 0.52; the 8-bit tiles
    // of 32 rows into the stage 0.32 -> 0.53 on C = 24 against the 16-row
    // ones, the fetch ahead 0.60 -> 0.68; stages of 16, 64 and 128 KiB no
    // better than 32).
    const uint64_t R2 = padded_rows(p.bits / 8, g.R, true);
    switch (p.bits) {
      case 8: padded_pitch<1>(g, R2, logical, phys, true); break;
      case 16: padded_pitch<2>(g, R2, logical, phys, true); break;
      default: padded_pitch<4>(g, R2, logical, phys, true); break;
    }
    return;
  }
  if (p.stream && (p.bits == 8 || p.bits == 16 || p.bits == 32) && pshufb_rows(p.bits / 8, g.R) && have_avx2()) {
    const bool done = p.bits == 8    ? small_rows_straight<kPack, 1>(g, logical, phys)
                      : p.bits == 16 ? small_rows_straight<kPack, 2>(g, logical, phys)
                                     : small_rows_straight<kPack, 4>(g, logical, phys);
    if (done) return;
  }
  if (p.stream && p.bits % 8 == 0 && small_rows_wanted(p.bits / 8, g.R, kPack, true) && have_avx512_vbmi()) {
    // A few rows: lines straight from the registers, no stage, both ways
    // (measured on a Zen 5, 16 x C x 512 x 512 NHWC, against the stages:
    // packs of fp16 of 3 channels 0.35 -> 0.86 of memcpy, fp32 of 5 0.50 ->
    // 0.97, int8 of 12 0.28 -> 0.39; unpacks of fp16 of 3 0.62 -> 1.08, of
    // 12 0.40 -> 0.56, int8 of 12 0.40 -> 0.55). The rows the shuffles take
    // go by small_rows_straight above, faster still, where they can.
    switch (p.bits) {
      case 8: small_rows_permutes<kPack, 1>(g, logical, phys, true); break;
      case 16: small_rows_permutes<kPack, 2>(g, logical, phys, true); break;
      default: small_rows_permutes<kPack, 4>(g, logical, phys, true); break;
    }
    return;
  }
  if (kPack && p.stream && p.bits == 8 && (g.R == 32 || g.R % 64 == 0) && !have_avx512() && have_avx2()) {
    pack_streamed_rows_epi8_avx2(g, logical, phys);
    return;
  }
  if (kPack && p.stream && p.bits == 8 && g.R > 16 && g.R < 32 && reinterpret_cast<uintptr_t>(phys + g.pixels) % 32 == 0 &&
      !have_avx512() && have_avx2()) {
    const uint64_t done = pack_rows_17_31_epi8_avx2_streamed(g, logical, phys);
    if (done < g.L) transpose_rest<kPack, 1>(g, logical, phys, done);
    return;
  }
  if (kPack && p.stream && p.bits % 8 == 0 && pixel_bytes * 16 <= kStageBytes) {  // mutate: equivalent (both paths pack the same bytes)
    // 32-bit elements in AVX-512 tiles of 16 rows: a stage in L2, filled 16
    // rows at a time over its whole run of pixels, reads fewer rows at once
    // (whose runs then stay long enough for the hardware prefetchers). With
    // AVX2 the same, 8 rows a pass in tiles of 4 (they went 64 rows a pass
    // through the L1 stage: measured on a Zen 5 capped at AVX2, best of 7,
    // NHWC fp32 8 x 64 x 256 x 256 0.27 -> 0.40-0.44 of memcpy, 16 x 32 x 256
    // x 256 0.31 -> 0.47-0.49; 16 rows a pass 0.40, 4 rows 0.40, 32 rows 0.35).
    // 16-bit elements likewise, 8 rows a pass in the 8 x 16 tiles (NHWC fp16
    // 8 x 48 x 256 x 256: 0.20 -> 0.29-0.31).
    const bool wide = (p.bits == 32 && g.R % 16 == 0 && have_avx2()) ||
                      (p.bits == 16 && g.R % 8 == 0 && have_avx2() && !have_avx512());
    const uint64_t pass = have_avx512() ? 16 : 8;
    alignas(64) static thread_local uint8_t stage[kWideStageBytes];
    const uint64_t block = (wide ? kWideStageBytes : kStageBytes) / pixel_bytes / 16 * 16;
    std::vector<uint64_t> rows(g.R);
    for (uint64_t l0 = 0; l0 < g.L; l0 += block) {
      const uint64_t n = std::min(block, g.L - l0);
      for (uint64_t r = 0; r < g.R; ++r) rows[r] = g.rows[r] == kPad ? kPad : g.rows[r] + l0;
      run_group_direct<true>(p, Group{rows.data(), g.R, n, 0, wide ? pass : p.bits == 16 ? 32u : 64u, true}, logical, stage);
      uint8_t* out = phys + (g.pixels + l0 * g.R) * (p.bits / 8);
      if (have_avx512()) stream_copy_avx512(out, stage, n * pixel_bytes);
      else stream_copy(out, stage, n * pixel_bytes);
    }
    return;
  }
  // Unpacking one: the R rows of a group are far apart (H*W elements), so
  // transposing straight into them keeps R partial lines open at addresses
  // that share their cache set, and they are evicted and re-read before they
  // fill. Instead a block of pixels is transposed into stage rows, L1-resident
  // and packed next to each other, and every stage row goes to its logical row
  // as a run of whole lines with non-temporal stores (a line a store with
  // AVX-512: measured on a Zen 4, pinned, alternating, against four 16-byte
  // stores a line: 16 x 128 x 256 x 128 CHWN4 int8 0.68-0.79 -> 0.76-0.89 of
  // memcpy, 16 x 24 x 256 x 256 NHWC int8 0.82 -> 0.98-1.01). Blocks start on
  // a line of the logical rows (which needs every row at the same offset in a
  // line), so no line is streamed in two parts.
  if (!kPack && p.stream && p.bits % 8 == 0 && g.R > kDirectRows && g.R * kLine <= kUnstageBytes) {
    const uint64_t elem_bytes = p.bits / 8;
    const uint64_t line_elems = kLine / elem_bytes;
    uint64_t misalign = kLine;  // of every row, or kLine if they differ
    for (uint64_t r = 0; r < g.R; ++r) {
      if (g.rows[r] == kPad) continue;
      const uint64_t m = reinterpret_cast<uintptr_t>(logical + g.rows[r] * elem_bytes) % kLine;
      if (misalign == kLine) misalign = m;
      else if (m != misalign) misalign = kLine + 1;
    }
    if (misalign < kLine && misalign % elem_bytes == 0) {
      alignas(64) static thread_local uint8_t stage[kUnstageBytes];
      const bool avx512 = have_avx512();
      const uint64_t block = kUnstageBytes / pixel_bytes / line_elems * line_elems;
      std::vector<uint64_t> rows(g.R);
      for (uint64_t r = 0; r < g.R; ++r) rows[r] = g.rows[r] == kPad ? kPad : r * block;
      uint64_t n = (kLine - misalign) % kLine / elem_bytes;  // up to the first line boundary
      for (uint64_t l0 = 0; l0 < g.L; l0 += n, n = block) {
        n = std::min(n == 0 ? block : n, g.L - l0);
        run_group_direct<false>(p, Group{rows.data(), g.R, n, g.pixels + l0 * g.R}, stage, phys);
        // The next block's pixels are fetched (into L2: fetching into L1 takes
        // line fill buffers the streaming stores need) while this one streams
        // out, a share of its lines with every row.
        const uint8_t* next = phys + (g.pixels + (l0 + n) * g.R) * elem_bytes;
        const uint64_t next_lines = std::min(block, g.L - l0 - n) * pixel_bytes / kLine;
        for (uint64_t r = 0; r < g.R; ++r) {
          for (uint64_t i = r * next_lines / g.R; i < (r + 1) * next_lines / g.R; ++i) {
            _mm_prefetch(reinterpret_cast<const char*>(next + i * kLine), _MM_HINT_T1);
          }
          if (g.rows[r] == kPad) continue;
          uint8_t* to = logical + (g.rows[r] + l0) * elem_bytes;
          if (avx512) stream_copy_avx512(to, stage + rows[r] * elem_bytes, n * elem_bytes);
          else stream_lines(to, stage + rows[r] * elem_bytes, n * elem_bytes);
        }
      }
      return;
    }
  }
#endif
  if (!kPack && !p.stream) {
    Group in_cache = g;
    in_cache.long_rows = true;
    run_group_direct<kPack>(p, in_cache, logical, phys);
    return;
  }
  run_group_direct<kPack>(p, g, logical, phys);
}

// ---- 4-bit groups as 8-bit ones ---------------------------------------------
//
// Element e of a 4-bit buffer is the low nibble of byte e/2 when e is even.
// When every row of a group starts on a byte (an even element index), there
// are an even number of rows and the pixels start on a byte, rows 2k and
// 2k + 1 side by side are one row of bytes (byte l: element l of row 2k low,
// of row 2k + 1 high), and pixel l's R/2 bytes are byte l of each such row in
// turn: the group is an 8-bit group of R/2 rows. Blocks of pixels go through
// those rows in an L1 stage and the 8-bit transposes (measured on a Zen 5,
// 8 x 64 x 256 x 256 int4, pack / unpack: NCHW64 0.018 / 0.017 of memcpy
// nibble by nibble, 0.79 / 0.71 so; NHWC 0.98 / 0.79; NCHW32, 16 row
// pairs, 0.69 / 1.00 in the 16 x 64 tiles). With AVX-512, groups of 32 row
// pairs (64 rows) skip that stage: their pairs are made in registers and go
// straight into the transposes (pack_nibble_pairs_x128 and the unpack).

// Bytes 0..n-1 of a row pair from its rows' ceil(n/2) bytes (nullptr: padding, zeros).
inline void pair_nibbles_scalar(const uint8_t* a, const uint8_t* b, uint8_t* out, uint64_t from, uint64_t n) {
  for (uint64_t l = from; l < n; ++l) {
    const unsigned shift = (l & 1) * 4;
    const unsigned lo = a ? (a[l >> 1] >> shift) & 0xF : 0, hi = b ? (b[l >> 1] >> shift) & 0xF : 0;
    out[l] = static_cast<uint8_t>(lo | hi << 4);
  }
}

// Rows 2k and 2k + 1 back from bytes 0..n-1 of their pair (nullptr: padding, not written).
inline void split_nibbles_scalar(const uint8_t* in, uint8_t* a, uint8_t* b, uint64_t from, uint64_t n) {
  for (uint64_t l = from; l < n; ++l) {
    const unsigned shift = (l & 1) * 4;
    if (a) a[l >> 1] = static_cast<uint8_t>((a[l >> 1] & ~(0xFu << shift)) | (in[l] & 0xFu) << shift);
    if (b) b[l >> 1] = static_cast<uint8_t>((b[l >> 1] & ~(0xFu << shift)) | (in[l] >> 4) << shift);
  }
}

#if LC_MGE_X86
// Rows a and b (4-bit, nullptr: padding, zeros) of 128 pixels from byte `at`
// as their row pair's bytes, in lane q: pixels 32q..32q+15 in *lo, 32q+16..
// 32q+31 in *hi (the byte unpacks' order, which the transpose's lanes keep).
LC_MGE_AVX512BW_INLINE void pair_lines(const uint8_t* a, const uint8_t* b, uint64_t at, uint64_t fetch, __m512i* lo,
                                       __m512i* hi) {
  const __m512i low = _mm512_set1_epi8(0x0F);
  // mutate: equivalent (prefetches: the same bytes)
  if (fetch && a) _mm_prefetch(reinterpret_cast<const char*>(a + at + fetch), _MM_HINT_T1);
  if (fetch && b) _mm_prefetch(reinterpret_cast<const char*>(b + at + fetch), _MM_HINT_T1);
  const __m512i x = a ? _mm512_loadu_si512(reinterpret_cast<const void*>(a + at)) : _mm512_setzero_si512();
  const __m512i y = b ? _mm512_loadu_si512(reinterpret_cast<const void*>(b + at)) : _mm512_setzero_si512();
  // even: x's low nibbles under y's; odd: x's high nibbles under y's.
  const __m512i even = _mm512_ternarylogic_epi64(low, x, _mm512_slli_epi16(y, 4), 0xCA);
  const __m512i odd = _mm512_ternarylogic_epi64(low, _mm512_srli_epi16(x, 4), y, 0xCA);
  *lo = _mm512_unpacklo_epi8(even, odd);
  *hi = _mm512_unpackhi_epi8(even, odd);
}

// pair_nibbles_scalar 128 bytes at a time: pair_lines, then the lanes put in
// order.
// With `fetch`, the rows' bytes that far ahead are fetched into L2 meanwhile
// (a group's rows lie a channel plane apart, in the same L1 sets: fetched
// into L1 a block ahead they evicted each other; measured on a Zen 4, 16 x
// 128 x 256 x 128 NCHW64 int4 pack, pinned, alternating, against that: into
// L2 a block ahead 0.59-0.79, two blocks ahead 0.69-0.93 of memcpy against
// 0.53-0.62; none 0.45-0.49; AVX2 0.50-0.55 -> 0.75-0.81).
LC_MGE_AVX512BW uint64_t pair_nibbles_avx512(const uint8_t* a, const uint8_t* b, uint8_t* out, uint64_t n,
                                             uint64_t fetch) {
  const __m512i first = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), second = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  uint64_t l = 0;
  for (; l + 128 <= n; l += 128) {
    __m512i lo, hi;
    pair_lines(a, b, l / 2, fetch, &lo, &hi);
    _mm512_storeu_si512(reinterpret_cast<void*>(out + l), _mm512_permutex2var_epi64(lo, first, hi));
    _mm512_storeu_si512(reinterpret_cast<void*>(out + l + 64), _mm512_permutex2var_epi64(lo, second, hi));
  }
  return l;
}

// With `nt`, rows on a cache line are written with non-temporal stores.
LC_MGE_AVX512BW uint64_t split_nibbles_avx512(const uint8_t* in, uint8_t* a, uint8_t* b, uint64_t n, bool nt) {
  const bool nt_a = nt && a && reinterpret_cast<uintptr_t>(a) % kLine == 0;
  const bool nt_b = nt && b && reinterpret_cast<uintptr_t>(b) % kLine == 0;
  const __m512i low = _mm512_set1_epi8(0x0F);
  // Per lane: the even bytes into the low quadword, the odd ones into the high.
  const __m512i apart = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
  const __m512i evens = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), odds = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
  uint64_t l = 0;
  for (; l + 128 <= n; l += 128) {
    const __m512i s0 = _mm512_shuffle_epi8(_mm512_loadu_si512(reinterpret_cast<const void*>(in + l)), apart);
    const __m512i s1 = _mm512_shuffle_epi8(_mm512_loadu_si512(reinterpret_cast<const void*>(in + l + 64)), apart);
    const __m512i even = _mm512_permutex2var_epi64(s0, evens, s1), odd = _mm512_permutex2var_epi64(s0, odds, s1);
    const __m512i x = _mm512_ternarylogic_epi64(low, even, _mm512_slli_epi16(odd, 4), 0xCA);
    const __m512i y = _mm512_ternarylogic_epi64(low, _mm512_srli_epi16(even, 4), odd, 0xCA);
    if (nt_a) _mm512_stream_si512(reinterpret_cast<__m512i*>(a + l / 2), x);
    else if (a) _mm512_storeu_si512(reinterpret_cast<void*>(a + l / 2), x);
    if (nt_b) _mm512_stream_si512(reinterpret_cast<__m512i*>(b + l / 2), y);
    else if (b) _mm512_storeu_si512(reinterpret_cast<void*>(b + l / 2), y);
  }
  return l;
}

// The same with AVX2, 64 bytes at a time (hosts without AVX-512 went nibble
// by nibble: measured on a Zen 5 capped at AVX2, best of 7, 16 x 128 x 256 x
// 128 int4 NCHW64, pack / unpack: 0.045 / 0.028 of memcpy -> 0.42 / 0.60).
LC_MGE_AVX2 uint64_t pair_nibbles_avx2(const uint8_t* a, const uint8_t* b, uint8_t* out, uint64_t n, uint64_t fetch) {
  const __m256i low = _mm256_set1_epi8(0x0F), high = _mm256_set1_epi8(static_cast<char>(0xF0));
  uint64_t l = 0;
  for (; l + 64 <= n; l += 64) {
    // mutate: equivalent (prefetches: the same bytes)
    if (fetch && a) _mm_prefetch(reinterpret_cast<const char*>(a + l / 2 + fetch), _MM_HINT_T1);
    if (fetch && b) _mm_prefetch(reinterpret_cast<const char*>(b + l / 2 + fetch), _MM_HINT_T1);
    const __m256i x = a ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + l / 2)) : _mm256_setzero_si256();
    const __m256i y = b ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + l / 2)) : _mm256_setzero_si256();
    const __m256i even = _mm256_or_si256(_mm256_and_si256(x, low), _mm256_and_si256(_mm256_slli_epi16(y, 4), high));
    const __m256i odd = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(x, 4), low), _mm256_and_si256(y, high));
    const __m256i lo = _mm256_unpacklo_epi8(even, odd), hi = _mm256_unpackhi_epi8(even, odd);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + l), _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + l + 32), _mm256_permute2x128_si256(lo, hi, 0x31));
  }
  return l;
}

// With `nt`, rows on a 32-byte boundary are written with non-temporal stores.
LC_MGE_AVX2 uint64_t split_nibbles_avx2(const uint8_t* in, uint8_t* a, uint8_t* b, uint64_t n, bool nt) {
  const bool nt_a = nt && a && reinterpret_cast<uintptr_t>(a) % 32 == 0;
  const bool nt_b = nt && b && reinterpret_cast<uintptr_t>(b) % 32 == 0;
  const __m256i low = _mm256_set1_epi8(0x0F), high = _mm256_set1_epi8(static_cast<char>(0xF0));
  // Per lane: the even bytes into the low quadword, the odd ones into the high.
  const __m256i apart = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0, 2, 4, 6, 8, 10, 12, 14,
                                         1, 3, 5, 7, 9, 11, 13, 15);
  const auto put = [](uint8_t* to, __m256i v, bool stream) __attribute__((target("avx2"), always_inline)) {
    if (stream) _mm256_stream_si256(reinterpret_cast<__m256i*>(to), v);
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), v);
  };
  uint64_t l = 0;
  for (; l + 64 <= n; l += 64) {
    // Quadwords [evens, evens] of bytes 0..31 and of 32..63, then [odds, odds].
    const __m256i s0 = _mm256_permute4x64_epi64(
        _mm256_shuffle_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + l)), apart), 0xD8);
    const __m256i s1 = _mm256_permute4x64_epi64(
        _mm256_shuffle_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + l + 32)), apart), 0xD8);
    const __m256i even = _mm256_permute2x128_si256(s0, s1, 0x20), odd = _mm256_permute2x128_si256(s0, s1, 0x31);
    if (a) put(a + l / 2, _mm256_or_si256(_mm256_and_si256(even, low), _mm256_and_si256(_mm256_slli_epi16(odd, 4), high)), nt_a);
    if (b) put(b + l / 2, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(even, 4), low), _mm256_and_si256(odd, high)), nt_b);
  }
  return l;
}

// The rest of a row pair past the steps above (its last n - done < 64
// bytes) by one more AVX2 step on copies: the rows' bytes into zeroed
// scratch, the pair's bytes out of it (they went nibble by nibble: 1 x 256 x
// 14 x 14 int4 NCHW64, 196 pixels, 68 of them past the steps, on an Intel
// Xeon, pinned, of memcpy, pack / unpack 0.012 / 0.010 -> 0.041 / 0.033: a
// tensor of 25 KiB, its groups' set-up beside an L1 memcpy).
LC_MGE_AVX2 uint64_t pair_nibbles_rest_avx2(const uint8_t* a, const uint8_t* b, uint8_t* out, uint64_t done,
                                            uint64_t n) {
  for (; done < n;) {
    const uint64_t m = std::min<uint64_t>(64, n - done), bytes = (m + 1) / 2;
    alignas(32) uint8_t ta[32] = {}, tb[32] = {}, pair[64];
    if (a) std::memcpy(ta, a + done / 2, bytes);
    if (b) std::memcpy(tb, b + done / 2, bytes);
    pair_nibbles_avx2(a ? ta : nullptr, b ? tb : nullptr, pair, 64, 0);
    std::memcpy(out + done, pair, m);
    done += m;
  }
  return done;
}

// The same for splitting: a row's last byte, half of it past the pair's n
// nibbles when n is odd, keeps its other nibble.
LC_MGE_AVX2 uint64_t split_nibbles_rest_avx2(const uint8_t* in, uint8_t* a, uint8_t* b, uint64_t done, uint64_t n) {
  for (; done < n;) {
    const uint64_t m = std::min<uint64_t>(64, n - done), whole = m / 2;
    alignas(32) uint8_t pair[64] = {}, ta[32], tb[32];
    std::memcpy(pair, in + done, m);
    split_nibbles_avx2(pair, a ? ta : nullptr, b ? tb : nullptr, 64, false);
    for (uint8_t* row : {a, b}) {
      if (!row) continue;
      const uint8_t* from = row == a ? ta : tb;
      std::memcpy(row + done / 2, from, whole);
      if (m % 2 == 0) continue;
      uint8_t& last = row[done / 2 + whole];
      const unsigned kept = last & 0xF0;  // mutate: equivalent (the row's next nibble: a later block or row writes it)
      last = static_cast<uint8_t>(kept | (from[whole] & 0x0F));
    }
    done += m;
  }
  return done;
}

// realign_nibbles and scatter_nibbles (below) with AVX2, 32 bytes a step.
LC_MGE_AVX2 uint64_t realign_nibbles_avx2(const uint8_t* x, uint64_t last, uint8_t* to) {
  const __m256i low = _mm256_set1_epi8(0x0F), high = _mm256_set1_epi8(static_cast<char>(0xF0));
  uint64_t i = 0;
  for (; i + 32 <= last; i += 32) {  // bytes x[i .. i + 32]
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i + 1));
    const __m256i t = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), low),
                                      _mm256_and_si256(_mm256_slli_epi16(b, 4), high));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + i), t);
  }
  return i;
}


LC_MGE_AVX2 uint64_t scatter_nibbles_avx2(const uint8_t* t, uint8_t* x, uint64_t n) {
  const __m256i low = _mm256_set1_epi8(0x0F), high = _mm256_set1_epi8(static_cast<char>(0xF0));
  uint64_t i = 1;
  for (; 2 * (i + 31) < n; i += 32) {  // bytes x[i .. i + 31], whole
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t + i - 1));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t + i));
    const __m256i v = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), low),
                                      _mm256_and_si256(_mm256_slli_epi16(b, 4), high));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + i), v);
  }
  return i;
}

// expand_nibbles and compress_nibbles (below) with AVX2 from a byte boundary:
// 32 bytes of nibbles <-> 64 bytes. Return the bytes of nibbles done.
LC_MGE_AVX2 uint64_t expand_nibbles_avx2(const uint8_t* x, uint64_t bytes, uint8_t* to) {
  const __m256i low = _mm256_set1_epi8(0x0F);
  uint64_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i lo = _mm256_and_si256(v, low), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
    const __m256i a = _mm256_unpacklo_epi8(lo, hi), b = _mm256_unpackhi_epi8(lo, hi);  // lanes: bytes 0-7 | 16-23, 8-15 | 24-31
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + 2 * i), _mm256_permute2x128_si256(a, b, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + 2 * i + 32), _mm256_permute2x128_si256(a, b, 0x31));
  }
  return i;
}

LC_MGE_AVX2 uint64_t compress_nibbles_avx2(const uint8_t* in, uint64_t bytes, uint8_t* x) {
  const __m256i low = _mm256_set1_epi8(0x0F), weights = _mm256_set1_epi16(0x1001);  // byte 2j + 16 x byte 2j + 1
  uint64_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * i + 32));
    const __m256i wa = _mm256_maddubs_epi16(_mm256_and_si256(a, low), weights);
    const __m256i wb = _mm256_maddubs_epi16(_mm256_and_si256(b, low), weights);
    const __m256i v = _mm256_permute4x64_epi64(_mm256_packus_epi16(wa, wb), _MM_SHUFFLE(3, 1, 2, 0));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + i), v);
  }
  return i;
}


// Without AVX-512, groups of 32k row pairs make their pairs straight in the
// 8-bit blocks' stage, 32 pairs of kCols pixels at a time, and the 16-pixel
// transposes read it (unpacking: write it, and the pairs are split straight
// out of it), so the pairs take no stage of their own. Each 16-pixel piece
// of a stage row holds its 8 even pixels before its 8 odd ones, and the
// pieces of each 64 pixels lie in the order 0, 2, 1, 3: a row pair's 32
// bytes of each parity (the two rows' nibbles ANDed and shifted together)
// become two stage lines by a 64-bit unpack within lanes, and back, with no
// byte shuffle or move across lanes; the transposes take the pixels in that
// order. Measured on a Zen 4 capped at AVX2, pinned, alternating, 1 x 128 x
// 64 x 64 int4 NCHW64, of memcpy: pack 0.23 -> 0.45 (pairs made in the stage
// in pixel order 0.33), unpack 0.23 -> 0.40 (in pixel order 0.29-0.31); 16
// x 128 x 256 x 128 unpack (streamed, non-temporal stores into lines)
// 0.61-0.72 -> 0.76-0.97 in pixel order. Not for streamed packs, whose
// pixels go out in whole lines by pack_streamed_rows_epi8_avx2 (the pairs of
// those through this stage: 0.69-0.82 -> 0.58-0.64). Whole blocks; returns
// the pixels done.
LC_MGE_AVX2_INLINE uint64_t nibble_piece_at(uint64_t c) {
  return (c & ~uint64_t{63}) | (c >> 4 & 1) << 5 | (c >> 5 & 1) << 4;
}

template <bool kPack, uint64_t kCols>
LC_MGE_AVX2 uint64_t nibble_blocks_avx2(const Group& g, uint8_t* logical, uint8_t* phys, bool stream) {
  alignas(64) uint8_t stage[32][kCols];
  const __m256i low = _mm256_set1_epi8(0x0F), high = _mm256_set1_epi8(static_cast<char>(0xF0));
  const uint64_t H = g.R / 2, L = g.L / kCols * kCols;
  uint8_t* base = phys + g.pixels / 2;
  const auto row_at = [&](uint64_t r, uint64_t l0) -> uint8_t* {
    return g.rows[r] == kPad ? nullptr : logical + (g.rows[r] + l0) / 2;
  };
  const auto put = [](uint8_t* to, __m256i v, bool nt) __attribute__((target("avx2"), always_inline)) {
    if (nt) _mm256_stream_si256(reinterpret_cast<__m256i*>(to), v);
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), v);
  };
  for (uint64_t kg = 0; kg < H; kg += 64) {  // 64 pairs' pixels (64 bytes) out together
    const uint64_t ke = std::min<uint64_t>(H, kg + 64);
    for (uint64_t l0 = 0; l0 < L; l0 += kCols) {
      for (uint64_t k0 = kg; k0 < ke; k0 += 32) {
        uint8_t* px = base + k0 + l0 * H;
        if (kPack) {
          for (uint64_t j = 0; j < 32; ++j) {
            const uint8_t *a = row_at(2 * (k0 + j), l0), *b = row_at(2 * (k0 + j) + 1, l0);
            for (uint64_t l = 0; l < kCols; l += 64) {
              const __m256i x = a ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + l / 2)) : _mm256_setzero_si256();
              const __m256i y = b ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + l / 2)) : _mm256_setzero_si256();
              const __m256i even = _mm256_or_si256(_mm256_and_si256(x, low), _mm256_and_si256(_mm256_slli_epi16(y, 4), high));
              const __m256i odd = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(x, 4), low), _mm256_and_si256(y, high));
              _mm256_store_si256(reinterpret_cast<__m256i*>(stage[j] + l), _mm256_unpacklo_epi64(even, odd));
              _mm256_store_si256(reinterpret_cast<__m256i*>(stage[j] + l + 32), _mm256_unpackhi_epi64(even, odd));
            }
          }
        }
        for (uint64_t c = 0; c < kCols; c += 16) {
          const uint64_t at = nibble_piece_at(c);
          __m256i v[16];  // pixels c, c + 2, ..., c + 14, c + 1, c + 3, ..., c + 15
          if (kPack) {
            stage_pieces_in(stage, at, v);
            byte_transpose::transpose16x16_epi8_x2(v);
            LC_MGE_UNROLL
            for (int k = 0; k < 8; ++k) {
              _mm256_storeu_si256(reinterpret_cast<__m256i*>(px + (c + 2 * k) * H), v[k]);
              _mm256_storeu_si256(reinterpret_cast<__m256i*>(px + (c + 2 * k + 1) * H), v[8 + k]);
            }
          } else {
            LC_MGE_UNROLL
            for (int k = 0; k < 8; ++k) {
              v[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(px + (c + 2 * k) * H));
              v[8 + k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(px + (c + 2 * k + 1) * H));
            }
            byte_transpose::transpose16x16_epi8_x2(v);
            stage_pieces_out(stage, at, v);
          }
        }
        if (kPack) continue;
        for (uint64_t j = 0; j < 32; ++j) {
          uint8_t *a = row_at(2 * (k0 + j), l0), *b = row_at(2 * (k0 + j) + 1, l0);
          const bool nt_a = stream && reinterpret_cast<uintptr_t>(a) % 32 == 0;
          const bool nt_b = stream && reinterpret_cast<uintptr_t>(b) % 32 == 0;
          if (!a && !b) continue;
          for (uint64_t l = 0; l < kCols; l += 64) {
            const __m256i v0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(stage[j] + l));
            const __m256i v1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(stage[j] + l + 32));
            const __m256i even = _mm256_unpacklo_epi64(v0, v1), odd = _mm256_unpackhi_epi64(v0, v1);
            if (a) put(a + l / 2, _mm256_or_si256(_mm256_and_si256(even, low), _mm256_and_si256(_mm256_slli_epi16(odd, 4), high)), nt_a);
            if (b) put(b + l / 2, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(even, 4), low), _mm256_and_si256(odd, high)), nt_b);
          }
        }
      }
    }
  }
  return L;
}

// 4-bit elements, 64 rows paired into bytes (nibble_pairs' condition), pack,
// AVX-512BW: 128 pixels a step, so that each row gives one whole line and the
// 32 row pairs' bytes go through registers into the 32-row transpose of
// pack_tile_x64, with no stage for the pixels of lanes' low halves and a
// 2 KiB one for the others (the 32 pairs' 128 pixels are 64 registers).
// One step: the 128 pixels from byte `at` of row[0..63] (nullptr: padding)
// into the pixels' 32-byte pieces at o, the rows' lines `fetch` bytes on
// fetched into L2 meanwhile when it is not 0.
LC_MGE_AVX512BW_INLINE void pack_nibble_tile(const uint8_t* const* row, uint64_t at, uint64_t fetch, uint8_t* o,
                                             bool nt) {
  alignas(64) __m512i held[32];
  __m512i a[16], b[16];
  LC_MGE_UNROLL
  for (int k = 0; k < 16; ++k) pair_lines(row[2 * k], row[2 * k + 1], at, fetch, &a[k], &held[k]);
  byte_transpose::transpose16x16_epi8_x4(a);
  LC_MGE_UNROLL
  for (int k = 0; k < 16; ++k) pair_lines(row[32 + 2 * k], row[33 + 2 * k], at, fetch, &b[k], &held[16 + k]);
  byte_transpose::transpose16x16_epi8_x4(b);
  put_pairs32<false, 32>(a, b, o, 128, nt);
  LC_MGE_UNROLL
  for (int k = 0; k < 16; ++k) a[k] = held[k];
  byte_transpose::transpose16x16_epi8_x4(a);
  LC_MGE_UNROLL
  for (int k = 0; k < 16; ++k) b[k] = held[16 + k];
  byte_transpose::transpose16x16_epi8_x4(b);
  put_pairs32<false, 32>(a, b, o + 16 * 32, 128, nt);
}

// Straight from the rows: rows a channel plane apart share their L1 sets, so
// each line is used whole the moment it arrives; with `stream` the rows'
// lines are fetched `fetch` bytes ahead into L2 and the pixel lines stream
// out. Returns the pixels done.
LC_MGE_AVX512BW uint64_t pack_nibble_pairs_x128(const Group& g, const uint8_t* logical, uint8_t* phys, bool stream,
                                                uint64_t fetch) {
  const uint8_t* row[64];
  for (uint64_t r = 0; r < 64; ++r) row[r] = g.rows[r] == kPad ? nullptr : logical + g.rows[r] / 2;
  uint8_t* base = phys + g.pixels / 2;
  const bool nt = stream && reinterpret_cast<uintptr_t>(base) % kLine == 0;
  const uint64_t whole = g.L / 128 * 128;
  for (uint64_t l = 0; l < whole; l += 128) pack_nibble_tile(row, l / 2, stream ? fetch : 0, base + l * 32, nt);
  return whole;
}

// In cache, through a two-part stage of kB bytes a row (2 kB pixels): the
// next block's lines are copied into one half, a share of the rows with each
// step, while the steps read the other, so the loads from L2 overlap the
// shuffles (pack_rows_staged_epi8_avx512's way).
template <uint64_t kB>
LC_MGE_AVX512BW uint64_t pack_nibble_pairs_staged(const Group& g, const uint8_t* logical, uint8_t* phys) {
  alignas(64) uint8_t stage[2][64][kB];
  const uint8_t* row[64];
  const uint8_t* staged[2][64];
  for (uint64_t r = 0; r < 64; ++r) {
    row[r] = g.rows[r] == kPad ? nullptr : logical + g.rows[r] / 2;
    staged[0][r] = row[r] ? stage[0][r] : nullptr;
    staged[1][r] = row[r] ? stage[1][r] : nullptr;
  }
  uint8_t* base = phys + g.pixels / 2;
  const uint64_t whole = g.L / 128 * 128, blocks = ceil_div(whole, 2 * kB);
  const auto fill = [&](uint64_t h, uint64_t l0, uint64_t r0, uint64_t r1) LC_MGE_AVX512BW_LAMBDA {
    const uint64_t bytes = std::min(2 * kB, whole - l0) / 2;
    for (uint64_t r = r0; r < r1; ++r) {
      if (!row[r]) continue;
      for (uint64_t q = 0; q < bytes; q += kLine) {
        _mm512_store_si512(reinterpret_cast<void*>(stage[h][r] + q),
                           _mm512_loadu_si512(reinterpret_cast<const void*>(row[r] + l0 / 2 + q)));
      }
    }
  };
  if (blocks > 0) fill(0, 0, 0, 64);
  for (uint64_t b = 0; b < blocks; ++b) {
    const uint64_t l0 = b * 2 * kB, steps = std::min(2 * kB, whole - l0) / 128;
    for (uint64_t t = 0; t < steps; ++t) {
      if (b + 1 < blocks) fill((b + 1) & 1, l0 + 2 * kB, t * 64 / steps, (t + 1) * 64 / steps);
      pack_nibble_tile(staged[b & 1], t * 64, 0, base + (l0 + t * 128) * 32, false);
    }
  }
  return whole;
}

// The unpack's way back: a row pair's bytes of one lane half each (lo:
// pixels 32q..32q+15 in lane q, the 8 even ones before the 8 odd ones; hi:
// 32q+16..32q+31 alike) as the pair's two rows' 128 pixels, 64 bytes each,
// at a and b.
LC_MGE_AVX512BW_INLINE void split_lines(__m512i lo, __m512i hi, uint8_t* a, uint8_t* b) {
  const __m512i low = _mm512_set1_epi8(0x0F);
  const __m512i even = _mm512_unpacklo_epi64(lo, hi), odd = _mm512_unpackhi_epi64(lo, hi);
  _mm512_store_si512(reinterpret_cast<void*>(a), _mm512_ternarylogic_epi64(low, even, _mm512_slli_epi16(odd, 4), 0xCA));
  _mm512_store_si512(reinterpret_cast<void*>(b), _mm512_ternarylogic_epi64(low, _mm512_srli_epi16(even, 4), odd, 0xCA));
}

// The 32 row pairs' bytes of one lane half of 128 pixels (put_pairs32's
// lines read back): pairs 0..15 into a, 16..31 into b, transposed per lane.
// The even pixels' rows go into the transposes first, so that each lane
// leaves them with its 8 even pixels before its 8 odd ones, split_lines'
// order, with no byte shuffle of its own (64 fewer shuffles a step of 128
// pixels, of 512; 1 x 128 x 64 x 64 on a Zen 5, pinned, alternating, five
// pairs: 0.23-0.32 of memcpy -> 0.26-0.34, 16 x 128 x 256 x 128 within the
// host's spread, 0.76-0.94 against 0.80-0.90).
LC_MGE_AVX512BW_INLINE void load_pairs32(const uint8_t* px, __m512i a[16], __m512i b[16]) {
  LC_MGE_UNROLL
  for (int j = 0; j < 16; j += 2) {
    __m512i v[4];
    LC_MGE_UNROLL
    for (int q = 0; q < 4; ++q) v[q] = _mm512_loadu_si512(reinterpret_cast<const void*>(px + (32 * q + j) * 32));
    byte_transpose::transpose_lanes4x4(v);
    a[j / 2] = v[0];  // pixel j
    b[j / 2] = v[1];
    a[8 + j / 2] = v[2];  // pixel j + 1
    b[8 + j / 2] = v[3];
  }
  byte_transpose::transpose16x16_epi8_x4(a);
  byte_transpose::transpose16x16_epi8_x4(b);
}

// pack_nibble_pairs_x128 the other way, 128 pixels a step, the pairs of the
// lanes' low halves held in a 2 KiB stage until the high halves are read. The
// 64 rows' lines go to a stage of kRun bytes a row and leave it in runs
// (rows a channel plane apart share their L1 sets: a line of each row at a
// time evicts itself). In cache only: streamed unpacks take the AVX2 blocks
// (see nibble_pairs).
template <uint64_t kRun>
LC_MGE_AVX512BW uint64_t unpack_nibble_pairs_x128(const Group& g, uint8_t* logical, const uint8_t* phys) {
  alignas(64) __m512i held[32];
  alignas(64) static thread_local uint8_t stage[64][kRun];
  uint8_t* row[64];
  for (uint64_t r = 0; r < 64; ++r) row[r] = g.rows[r] == kPad ? nullptr : logical + g.rows[r] / 2;
  const uint8_t* base = phys + g.pixels / 2;
  const uint64_t whole = g.L / 128 * 128;
  for (uint64_t l0 = 0; l0 < whole; l0 += 2 * kRun) {
    const uint64_t n = std::min(2 * kRun, whole - l0);  // pixels of the run
    for (uint64_t c = 0; c < n; c += 128) {
      const uint8_t* px = base + (l0 + c) * 32;
      __m512i a[16], b[16];
      load_pairs32(px, a, b);
      LC_MGE_UNROLL
      for (int k = 0; k < 16; ++k) {
        held[k] = a[k];
        held[16 + k] = b[k];
      }
      load_pairs32(px + 16 * 32, a, b);
      LC_MGE_UNROLL
      for (int k = 0; k < 16; ++k) split_lines(held[k], a[k], stage[2 * k] + c / 2, stage[2 * k + 1] + c / 2);
      LC_MGE_UNROLL
      for (int k = 0; k < 16; ++k) split_lines(held[16 + k], b[k], stage[32 + 2 * k] + c / 2, stage[33 + 2 * k] + c / 2);
    }
    for (uint64_t r = 0; r < 64; ++r) {
      if (!row[r]) continue;
      for (uint64_t q = 0; q < n / 2; q += kLine) put_line(row[r] + l0 / 2 + q, _mm512_load_si512(stage[r] + q), false);
    }
  }
  return whole;
}
#endif

// Rows at odd nibble offsets (NCHW64 of an odd H*W: every other channel's
// plane starts inside a byte) pair through scratch copies on byte
// boundaries: realign_nibbles copies nibbles [from, from + n) of `base` to
// ceil(n / 2) bytes at `to`, the first nibble low; scatter_nibbles writes
// them back, the nibbles around the run kept. (They went nibble by nibble:
// int4 NCHW64 on an Intel Xeon, pinned, of memcpy, pack / unpack, 2 x 128 x
// 27 x 27 0.008 / 0.009 -> 0.14 / 0.13, 1 x 512 x 7 x 7 0.002 -> 0.005.)
void realign_nibbles(const uint8_t* base, uint64_t from, uint64_t n, uint8_t* to) {
  const uint8_t* x = base + from / 2;
  const uint64_t bytes = (n + 1) / 2;
  if (from % 2 == 0) {
    std::memcpy(to, x, bytes);
    return;
  }
  // Byte i takes the high nibble of x[i] and the low one of x[i + 1], which is in the run while 2i + 1 < n.
  uint64_t i = 0;
#if LC_MGE_X86
  if (have_avx2()) i = realign_nibbles_avx2(x, n / 2, to);
#endif
  for (; i < bytes; ++i) to[i] = static_cast<uint8_t>(x[i] >> 4 | (2 * i + 1 < n ? x[i + 1] << 4 : 0));
}

void scatter_nibbles(const uint8_t* t, uint8_t* base, uint64_t from, uint64_t n) {
  uint8_t* x = base + from / 2;
  if (n == 0) return;
  if (from % 2 == 0) {
    std::memcpy(x, t, n / 2);
    if (n % 2) x[n / 2] = static_cast<uint8_t>((x[n / 2] & 0xF0) | (t[n / 2] & 0x0F));
    return;
  }
  // Nibble j of the run is nibble from + j: x[0]'s high one, then x[i] holds nibbles 2i - 1 and 2i.
  x[0] = static_cast<uint8_t>((x[0] & 0x0F) | t[0] << 4);
  uint64_t i = 1;
#if LC_MGE_X86
  if (have_avx2()) i = scatter_nibbles_avx2(t, x, n);
#endif
  for (; 2 * i < n; ++i) x[i] = static_cast<uint8_t>(t[i - 1] >> 4 | t[i] << 4);
  if (2 * i - 1 >= n) return;
  const unsigned kept = x[i] & 0xF0;  // mutate: equivalent (n is even in a row's blocks before its last only)
  x[i] = static_cast<uint8_t>(kept | t[i - 1] >> 4);
}

// Whether a row of a 4-bit group starts at an odd nibble, inside a byte.
bool row_inside_a_byte(const Group& g) {
  for (uint64_t r = 0; r < g.R; ++r) {
    if (g.rows[r] != kPad && g.rows[r] % 2 != 0) return true;
  }
  return false;
}

// Nibbles [from, from + n) of `base` as n bytes at `to`, each the nibble's
// value (expand_nibbles), and back (compress_nibbles: the low nibble of each
// byte; the nibbles around the run kept).
void expand_nibbles(const uint8_t* base, uint64_t from, uint64_t n, uint8_t* to) {
  if (n == 0) return;
  const uint8_t* x = base + from / 2;
  if (from % 2 != 0) {
    *to++ = static_cast<uint8_t>(*x++ >> 4);
    --n;
  }
  uint64_t i = 0;  // bytes of x done
#if LC_MGE_X86
  if (have_avx2()) i = expand_nibbles_avx2(x, n / 2, to);
#endif
  for (; i < n / 2; ++i) {
    to[2 * i] = x[i] & 0x0F;
    to[2 * i + 1] = static_cast<uint8_t>(x[i] >> 4);
  }
  if (n % 2 != 0) to[n - 1] = x[n / 2] & 0x0F;
}

void compress_nibbles(const uint8_t* in, uint64_t n, uint8_t* base, uint64_t from) {
  if (n == 0) return;
  uint8_t* x = base + from / 2;
  if (from % 2 != 0) {
    *x = static_cast<uint8_t>((*x & 0x0F) | in[0] << 4);
    ++x, ++in, --n;
  }
  uint64_t i = 0;
#if LC_MGE_X86
  if (have_avx2()) i = compress_nibbles_avx2(in, n / 2, x);
#endif
  for (; i < n / 2; ++i) x[i] = static_cast<uint8_t>((in[2 * i] & 0x0F) | in[2 * i + 1] << 4);
  if (n % 2 != 0) x[n / 2] = static_cast<uint8_t>((x[n / 2] & 0xF0) | (in[n - 1] & 0x0F));
}

// Groups of 4-bit elements in cache that the row pairs below take slowly
// (rows inside a byte, an odd number of rows, or few pixels: a pair's calls
// cost more than its bytes): blocks of pixels through bytes, one element a
// byte. Packing, each row's run of the block is expanded into a stage of
// rows, the 8-bit transposes turn it into one of pixels, and that is
// compressed into the group's run of physical nibbles (one run: a block's
// pixels follow each other); unpacking the other way. Consecutive rows whose
// runs follow each other (whole rows of an image) expand as one run.
// The elements of a block in each stage; the most pixels of a group taken
// so whose rows start on bytes, and with a row inside a byte.
constexpr uint64_t kNibbleBytesStage = 32u << 10;  // mutate: equivalent (a block size)
constexpr uint64_t kNibbleBytesPixels = 64;        // mutate: equivalent (a choice of path)
constexpr uint64_t kNibbleBytesOddPixels = 128;    // mutate: equivalent (a choice of path)

template <bool kPack>
bool nibble_bytes(const Plan& p, const Group& g, uint8_t* logical, uint8_t* phys) {
  if (p.stream || g.R * 16 > kNibbleBytesStage) return false;  // mutate: equivalent (a choice of path)
  const bool odd = row_inside_a_byte(g);
  if (g.R % 2 == 0 && g.pixels % 2 == 0 && g.L > (odd ? kNibbleBytesOddPixels : kNibbleBytesPixels)) {  // mutate: equivalent (a choice of path)
    return false;  // the row pairs take it
  }
  const uint64_t n_max = std::min(g.L, kNibbleBytesStage / g.R);
  static thread_local std::vector<uint8_t> rows_stage, pixels_stage;
  if (rows_stage.size() < g.R * n_max) rows_stage.resize(g.R * n_max), pixels_stage.resize(g.R * n_max);  // mutate: equivalent (a resize to the same size)
  uint8_t* rs = rows_stage.data();
  uint8_t* ps = pixels_stage.data();
  for (uint64_t l0 = 0; l0 < g.L; l0 += n_max) {  // mutate: equivalent (a last block of no pixels moves nothing)
    const uint64_t n = std::min(n_max, g.L - l0);
    // The stages as an NHWC image of bytes, R channels of n pixels.
    Plan bytes;
    bytes.kind = Kind::kNhwc;
    bytes.C = g.R, bytes.HW = n;
    bytes.elements = bytes.physical_elements = bytes.phys_bytes = bytes.logical_bytes = g.R * n;
    const uint64_t at = g.pixels + l0 * g.R;  // the block's first physical nibble
    if (!kPack) {
      expand_nibbles(phys, at, n * g.R, ps);
      walk_units<false>(bytes, rs, ps, 1, 0, 1);
    }
    for (uint64_t r = 0; r < g.R;) {
      uint64_t e = r + 1;  // rows r .. e - 1: one run
      if (g.rows[r] == kPad) {
        if (kPack) std::memset(rs + r * n, 0, n);
        r = e;
        continue;
      }
      const auto follows = [&](uint64_t k) { return g.rows[k] == g.rows[k - 1] + g.L; };  // mutate: equivalent (no rows merged: run by run, the same bytes)
      while (n == g.L && e < g.R && follows(e)) ++e;
      if (kPack) expand_nibbles(logical, g.rows[r] + l0, (e - r) * n, rs + r * n);
      else compress_nibbles(rs + r * n, (e - r) * n, logical, g.rows[r] + l0);
      r = e;
    }
    if (kPack) {
      walk_units<true>(bytes, rs, ps, 1, 0, 1);
      compress_nibbles(ps, n * g.R, phys, at);
    }
  }
  return true;
}

constexpr uint64_t kPairStageBytes = 32u << 10;  // the L1 stage of the row pairs of a 4-bit group

template <bool kPack>
bool nibble_pairs(const Plan& p, const Group& g, uint8_t* logical, uint8_t* phys) {
  if (g.R % 2 != 0 || g.pixels % 2 != 0) return false;
  const bool odd = row_inside_a_byte(g);  // the rows through realign_nibbles and scatter_nibbles
  const uint64_t H = g.R / 2;
  const uint64_t block = std::max<uint64_t>(128, kPairStageBytes / H / 128 * 128);  // pixels, whole 128-byte runs
  static thread_local std::vector<uint8_t> stage_buffer;
  static thread_local std::vector<uint64_t> pair_rows;
  if (stage_buffer.size() < H * block) stage_buffer.resize(H * block);
  pair_rows.resize(H);
  uint8_t* stage = stage_buffer.data();
  for (uint64_t k = 0; k < H; ++k) pair_rows[k] = g.rows[2 * k] == kPad && g.rows[2 * k + 1] == kPad ? kPad : k * block;
  Plan bytes = p;
  bytes.bits = 8;
  bytes.stream = kPack && p.stream;  // the stage is read back at once when unpacking
  static thread_local std::vector<uint8_t> realigned;
  if (odd && realigned.size() < block + 64) realigned.resize(block + 64);
  const auto row_at = [&](uint64_t r, uint64_t l0) { return g.rows[r] == kPad ? nullptr : logical + (g.rows[r] + l0) / 2; };
  uint64_t start = 0;
#if LC_MGE_X86
  const bool streamed_unpack = !kPack && p.stream;
  if (H == 32 && have_avx512() && !streamed_unpack && !odd) {
    // 64 rows (NCHW64, NHWC of 64 channels): 128 pixels a step in registers,
    // every line of the rows read or written whole. Rows a multiple of 4 KiB
    // apart (in one L1 set) go through stages in cache. Measured on a Zen 5
    // (48 KiB L1d), pinned, alternating, against the row pairs' stage and the
    // 8-bit transposes below, of memcpy: 16 x 128 x 256 x 128 pack 0.51-0.56
    // -> 0.60-0.74 (each row's line fetched 256 bytes ahead: none 0.54, 512
    // 0.66-0.70, 1024 0.65-0.66, 2048 0.60-0.63); 1 x 128 x 64 x 64 pack
    // 0.24 -> 0.35 (staged 0.31), unpack 0.17 -> 0.30-0.33 (runs of 512:
    // 0.27-0.30); 1 x 64 x 64 x 128 (rows 4 KiB apart) pack 0.25 -> 0.31
    // staged (straight 0.24-0.25, a stage of 128 bytes a row 0.26, 64 0.19),
    // unpack 0.17 -> 0.31 (runs of 256: 0.20). Streamed unpacks take the AVX2 blocks below instead, their
    // lines stored non-temporal from a stage of 32 pairs (16 x 128 x 256 x 128,
    // of memcpy, against these registers' runs streamed out with the next
    // run's pixels fetched: an Intel Xeon 0.31-0.35 -> 0.84-0.88, a Zen 4 0.63
    // -> 0.97 in the runs of commit d18ae55 uncapped and e6246f8 capped at
    // AVX2; a Zen 5 had 0.78 with these registers, its AVX2 blocks not
    // measured).
    const bool aliased = g.rows[0] != kPad && g.rows[1] != kPad && (g.rows[1] - g.rows[0]) / 2 % 4096 == 0;
    if (kPack) {
      start = p.stream || !aliased                ? pack_nibble_pairs_x128(g, logical, phys, p.stream, kTileFetch)
              : l1d_holds(3 * 64 * 256)           ? pack_nibble_pairs_staged<256>(g, logical, phys)
                                                  : pack_nibble_pairs_staged<128>(g, logical, phys);
    } else {
      start = aliased ? unpack_nibble_pairs_x128<512>(g, logical, phys) : unpack_nibble_pairs_x128<256>(g, logical, phys);
    }
  }
  if (H % 32 == 0 && have_avx2() && !odd && (kPack ? !p.stream && !have_avx512() : streamed_unpack || !have_avx512())) {
    start = kPack || p.stream    ? nibble_blocks_avx2<kPack, kStageCols>(g, logical, phys, p.stream)
            : long_stage_fits_l1() ? nibble_blocks_avx2<kPack, kLongStageCols>(g, logical, phys, false)
                                   : nibble_blocks_avx2<kPack, kMidStageCols>(g, logical, phys, false);
  }
#endif
  for (uint64_t l0 = start; l0 < g.L; l0 += block) {
    const uint64_t n = std::min(block, g.L - l0);
    const Group pairs{pair_rows.data(), H, n, (g.pixels + l0 * g.R) / 2};
    if (kPack) {
      for (uint64_t k = 0; k < H; ++k) {
        if (pair_rows[k] == kPad) continue;
        const uint8_t *a = row_at(2 * k, l0), *b = row_at(2 * k + 1, l0);
        if (odd) {  // both rows on bytes, from copies
          uint8_t* ra = realigned.data();
          uint8_t* rb = ra + (block + 64) / 2;
          if (a) realign_nibbles(logical, g.rows[2 * k] + l0, n, ra), a = ra;
          if (b) realign_nibbles(logical, g.rows[2 * k + 1] + l0, n, rb), b = rb;
        }
        uint64_t done = 0;
#if LC_MGE_X86
        // Two blocks ahead (each row gives n / 2 bytes a block).
        if (have_avx512()) done = pair_nibbles_avx512(a, b, stage + pair_rows[k], n, p.stream ? block : 0);
        else if (have_avx2()) done = pair_nibbles_avx2(a, b, stage + pair_rows[k], n, p.stream ? block : 0);
        if (have_avx2()) done = pair_nibbles_rest_avx2(a, b, stage + pair_rows[k], done, n);
#endif
        pair_nibbles_scalar(a, b, stage + pair_rows[k], done, n);
      }
      run_group<true>(bytes, pairs, stage, phys);
    } else {
      run_group<false>(bytes, pairs, stage, phys);
      // The next block's pixels are fetched into L2 while this one's rows go
      // out, a share of their lines with every row pair.
#if LC_MGE_X86
      const uint8_t* next = phys + (g.pixels + (l0 + n) * g.R) / 2;
      const uint64_t next_lines = p.stream ? std::min(block, g.L - l0 - n) * H / kLine : 0;
#endif
      for (uint64_t k = 0; k < H; ++k) {
#if LC_MGE_X86
        for (uint64_t i = k * next_lines / H; i < (k + 1) * next_lines / H; ++i) {
          _mm_prefetch(reinterpret_cast<const char*>(next + i * kLine), _MM_HINT_T1);  // mutate: equivalent (a prefetch)
        }
#endif
        if (pair_rows[k] == kPad) continue;
        uint8_t *a = row_at(2 * k, l0), *b = row_at(2 * k + 1, l0);
        uint8_t* ra = realigned.data();
        uint8_t* rb = ra + (block + 64) / 2;
        if (odd) a = a ? ra : nullptr, b = b ? rb : nullptr;  // split into copies, scattered below
        uint64_t done = 0;
#if LC_MGE_X86
        if (have_avx512()) done = split_nibbles_avx512(stage + pair_rows[k], a, b, n, p.stream);
        else if (have_avx2()) done = split_nibbles_avx2(stage + pair_rows[k], a, b, n, p.stream);
        if (have_avx2()) done = split_nibbles_rest_avx2(stage + pair_rows[k], a, b, done, n);
#endif
        split_nibbles_scalar(stage + pair_rows[k], a, b, done, n);
        if (odd && a) scatter_nibbles(ra, logical, g.rows[2 * k] + l0, n);
        if (odd && b) scatter_nibbles(rb, logical, g.rows[2 * k + 1] + l0, n);
      }
    }
  }
  return true;
}

#if LC_MGE_X86
// NCHW4 images of fewer than 16 / E pixels (16 bytes a channel row), every
// channel real, without AVX-512 VBMI: each block of 4 channels is 4 rows of
// L < 16 / E elements one after the other on the logical side and L pixels
// of 4 elements on the physical side. A block goes in 16-byte registers: its
// four rows (each read 16 bytes on, into the next row) as a 4 x 4 transpose
// of dwords and a shuffle in each register to the pixels' order, stored
// 16 bytes at a time (the last store's bytes past the block are the next
// block's, written after it); unpacking the shuffle and transpose the other
// way, each row stored 16 bytes on. Two blocks go a 256-bit register; blocks
// whose loads or stores would pass the range's end go through scratch. (They
// went element by element: on an Intel Xeon capped at AVX2, pinned, of
// memcpy, pack / unpack, 1 x 1024 x 3 x 3 int8 0.004 -> 0.11 / 0.12, 1 x 1024
// x 1 x 3 fp32 0.10 / 0.14 in 128-bit registers -> 0.17 / 0.18.)
template <bool kPack, uint64_t kE>
LC_MGE_AVX2 void tiny_blocks4_avx2(uint64_t L, uint8_t* logical, uint8_t* phys, uint64_t begin, uint64_t end) {
  const uint64_t row = L * kE, block = 4 * row;
  // Pack: dword k of the four rows is pixels (4 / kE)k.. of each; bytes to
  // pixel order. Unpack: the pixels' bytes to four dwords of one channel each.
  const __m128i order = kE == 1   ? _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15)
                        : kE == 2 ? (kPack ? _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15)
                                           : _mm_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15))
                                  : _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m256i order2 = _mm256_broadcastsi128_si256(order);
  // Blocks `from` and from + `second` (0: the same one again) -> `to`, and
  // with `two` to + block: one a lane, the first one's stores first.
  const auto pair = [&](const uint8_t* from, uint64_t second, uint8_t* to, bool two) LC_MGE_AVX2_LAMBDA {
    __m256i v[4];
    LC_MGE_UNROLL
    for (uint64_t k = 0; k < 4; ++k) {
      const uint64_t o = kPack ? k * row : 16 * k;
      v[k] = _mm256_set_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from + second + o)),
                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + o)));
    }
    if (!kPack && kE != 4) {
      LC_MGE_UNROLL
      for (uint64_t k = 0; k < 4; ++k) v[k] = _mm256_shuffle_epi8(v[k], order2);
    }
    byte_transpose::transpose4x4_epi32_x2(v);
    if (kPack && kE != 4) {
      LC_MGE_UNROLL
      for (uint64_t k = 0; k < 4; ++k) v[k] = _mm256_shuffle_epi8(v[k], order2);
    }
    for (uint64_t lane = 0; lane < (two ? 2u : 1u); ++lane) {
      uint8_t* b = to + lane * block;
      LC_MGE_UNROLL
      for (uint64_t k = 0; k < 4; ++k) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(b + (kPack ? 16 * k : k * row)),
                         lane ? _mm256_extracti128_si256(v[k], 1) : _mm256_castsi256_si128(v[k]));
      }
    }
  };
  // Bytes a block reads and writes from its start: 64 (the last row's 16
  // bytes end before).
  constexpr uint64_t reach = 64;
  const uint64_t total = end * block;
  uint64_t i = begin;
  for (; i + 1 < end && (i + 1) * block + reach <= total; i += 2) {
    pair((kPack ? logical : phys) + i * block, block, (kPack ? phys : logical) + i * block, true);
  }
  // The rest (a block without a pair, those near the end) through scratch.
  alignas(16) uint8_t in[reach], out[reach];
  for (; i < end; ++i) {
    const uint64_t at = i * block;
    std::memcpy(in, (kPack ? logical : phys) + at, block);
    pair(in, 0, out, false);
    std::memcpy((kPack ? phys : logical) + at, out, block);
  }
}
#endif

// The groups of a plan in physical order: how many, and group `i` with its
// rows written into `rows` (room for max_group_rows(p)).
uint64_t group_count(const Plan& p) {
  switch (p.kind) {
    case Kind::kNhwc: return p.N;
    case Kind::kNchwx: return p.N * ceil_div(p.C, p.block);
    case Kind::kChwn4: return ceil_div(p.C, 4);
    default: return 1;
  }
}

uint64_t max_group_rows(const Plan& p) {
  switch (p.kind) {
    case Kind::kNhwc: return p.C;
    case Kind::kNchwx: return p.block;
    case Kind::kChwn4: return p.N * 4;
    default: return p.rows;
  }
}

Group group_at(const Plan& p, uint64_t i, uint64_t* rows) {
  switch (p.kind) {
    case Kind::kNhwc: {
      uint64_t at = i * p.C * p.HW;
      for (uint64_t c = 0; c < p.C; ++c, at += p.HW) rows[c] = at;
      return Group{rows, p.C, p.HW, i * p.C * p.HW};
    }
    case Kind::kNchwx: {
      const uint64_t X = p.block, blocks = ceil_div(p.C, X), n = i / blocks, b = i % blocks;
      const uint64_t live = std::min(X, p.C - b * X);  // channels b*X.. that exist
      uint64_t at = (n * p.C + b * X) * p.HW;
      for (uint64_t k = 0; k < live; ++k, at += p.HW) rows[k] = at;
      for (uint64_t k = live; k < X; ++k) rows[k] = kPad;
      return Group{rows, X, p.HW, i * p.HW * X};
    }
    case Kind::kChwn4:
      for (uint64_t n = 0; n < p.N; ++n) {
        LC_MGE_UNROLL
        for (uint64_t k = 0; k < 4; ++k) {
          const uint64_t c = i * 4 + k;
          rows[n * 4 + k] = c < p.C ? (n * p.C + c) * p.HW : kPad;
        }
      }
      return Group{rows, p.N * 4, p.HW, i * p.HW * p.N * 4};
    default:
      for (uint64_t r = 0; r < p.rows; ++r) rows[r] = r * p.cols;
      return Group{rows, p.rows, p.cols, 0};
  }
}

// Threads (optimized/threads.h) take units of work: `slices` runs of pixels
// of every group, in physical order, each a whole number of kSlicePixels
// pixels (the last one the rest), so that units write disjoint bytes and every
// unit starts at the same offset in a cache line as its group (the SIMD paths
// pick their heads and streaming stores from it; 4-bit rows of an even
// length: every unit whole bytes). 4-bit tensors of odd rows run on one
// thread: two neighbouring elements share a byte.
constexpr uint64_t kSlicePixels = 64;
constexpr uint64_t kPermuteGroupPixels = 64;  // NCHWx images of at most this many pixels by byte permutes
constexpr uint64_t kThreadChunkBytes = 512u << 10;  // physical bytes a thread takes at once, about

template <bool kPack>
void walk_units(const Plan& p, uint8_t* logical, uint8_t* phys, uint64_t slices, uint64_t begin, uint64_t end) {
  // The row table, made only by the paths that read one (a small tensor's
  // call is otherwise spent zeroing it: 16 KiB for 2048 channels).
  std::vector<uint64_t> rows, sliced;
#if LC_MGE_X86
  // A group the small-tensor paths below leave (padding channels): through the row table.
  const auto rest = [&](uint64_t i) {
    rows.resize(max_group_rows(p));
    run_group<kPack>(p, group_at(p, i, rows.data()), logical, phys);
  };
  const uint64_t tile = p.bits == 16 ? 32 : 16;  // pixels a 16- or 32-bit tile: 64 bytes of each row
  if (slices == 1 && p.kind == Kind::kNchwx && (p.bits == 16 || p.bits == 32) && p.block == 4 && p.C % 4 == 0 &&
      p.HW >= tile && p.HW % tile != 0 && p.HW <= kSmallBlocks4Pixels &&
      (!kPack || p.HW * p.bits / 2 >= kBlocks4RunPackBytes) && !p.stream && have_avx512()) {
    if (p.bits == 16) blocks4_run<kPack, 2>(p.HW, logical, phys, begin, end);
    else blocks4_run<kPack, 4>(p.HW, logical, phys, begin, end);
    return;
  }
  if (slices == 1 && p.kind == Kind::kNchwx && p.bits % 8 == 0 && p.C % p.block == 0 && !p.stream &&
      p.HW <= kPermuteGroupPixels && group_permutes::fits(p.block, p.HW, p.bits / 8) && have_avx512_vbmi()) {
    // NCHWx blocks of tiny images, every channel real: each block (x rows of
    // H*W) and its pixels are one run on both sides, so several blocks at a
    // time go by byte permutes (group_permutes.h; measured on a Zen 5, best
    // of 7, pack / unpack, against the tiles: NCHW32 int8 1 x 1024 x 3 x 3
    // 0.06 / 0.07 of memcpy -> 0.35 / 0.37, 4 x 4 0.09 / 0.11 -> 0.30 / 0.30;
    // NCHW4 1 x 1024 x 3 x 3 int8 0.06 / 0.05 -> 0.39 / 0.41, fp16 0.11 /
    // 0.11 -> 0.32 / 0.34, fp32 0.19 -> 0.28 / 0.31; 1 x 256 x 5 x 5 int8
    // 0.12 -> 0.24; 1 x 1024 x 7 x 7 int8 0.24 / 0.27 -> 0.39 / 0.38, fp16 1 x
    // 512 x 7 x 7 0.38 / 0.28 -> 0.35 / 0.34; 11 x 11 at par; blocks of 576
    // bytes, NCHW64 int8 and NCHW32 fp16 1 x 1024 x 3 x 3, 0.08 / 0.07 ->
    // 0.20 / 0.22). Blocks of more than 640 bytes (NCHW32 int8 5 x 5, fp32
    // NCHW4 7 x 7) keep the tiles.
    const group_permutes::Tables& t = group_permutes::tables(p.block, p.HW, p.bits / 8, kPack);
    const uint64_t at = begin * t.group_bytes;
    if (kPack) group_permutes::run(t, logical + at, phys + at, end - begin);
    else group_permutes::run(t, phys + at, logical + at, end - begin);
    return;
  }
  if (slices == 1 && p.kind == Kind::kNchwx && p.bits % 8 == 0 && p.C % p.block == 0 && !p.stream &&
      p.HW <= kPermuteGroupPixels && group_permutes::planes_fit(p.block, p.HW, p.bits / 8) && have_avx2() &&
      !(p.bits == 16 && p.HW >= 32 && have_avx512())) {
    // The same without VBMI, NCHW4 blocks of 16 bytes a channel or more, by
    // 4 x 4 dword transposes and shuffles in the lanes (measured on a Zen 5,
    // best of 7, pack / unpack, against the tiles: capped at AVX2, 1 x 512 x
    // 7 x 7 fp16 0.10 / 0.10 of memcpy -> 0.29 / 0.30, 1 x 1024 x 7 x 7 int8
    // 0.05 / 0.03 -> 0.28 / 0.29, 1 x 1024 x 3 x 3 fp32 0.03 -> 0.22 / 0.21,
    // fp16 0.02 -> 0.20, 1 x 256 x 5 x 5 int8 0.02 -> 0.22 / 0.24; capped at
    // AVX-512 without VBMI, 7 x 7 int8 0.20 / 0.23 -> 0.27 / 0.29, 3 x 3 fp16
    // 0.09 -> 0.20, but 7 x 7 fp16 0.35 / 0.34 -> 0.28 / 0.30: its 16-bit
    // tiles stay).
    const group_permutes::PlaneTables& t = group_permutes::plane_tables(p.block, p.bits / 8, kPack);
    const uint64_t at = begin * p.block * p.HW * (p.bits / 8);
    if (kPack) group_permutes::run_planes(t, logical + at, phys + at, p.HW, end - begin);
    else group_permutes::run_planes(t, phys + at, logical + at, p.HW, end - begin);
    return;
  }
  if (slices == 1 && p.kind == Kind::kNchwx && p.block == 4 && p.C % 4 == 0 && p.bits % 8 == 0 &&
      p.HW * p.bits < 128 && have_avx2()) {  // mutate: equivalent (rows of 16 bytes go either way)
    switch (p.bits) {
      case 8: tiny_blocks4_avx2<kPack, 1>(p.HW, logical, phys, begin, end); break;
      case 16: tiny_blocks4_avx2<kPack, 2>(p.HW, logical, phys, begin, end); break;
      default: tiny_blocks4_avx2<kPack, 4>(p.HW, logical, phys, begin, end); break;
    }
    return;
  }
  if (slices == 1 && p.kind == Kind::kNhwc && p.bits == 32 && p.C % 16 == 0 && p.HW <= 64 && !p.stream &&
      have_avx512()) {
    small_images_epi32<kPack>(p.C, p.HW, logical, phys, begin, end);
    return;
  }
  if (slices == 1 && p.kind == Kind::kNhwc && (p.bits == 16 || p.bits == 32) && p.C % 8 == 0 &&
      p.C >= kSmallImagesAvx2Channels && p.HW <= 64 && !p.stream && have_avx2() && !have_avx512()) {
    if (p.bits == 16) small_images_avx2<kPack, 2>(p.C, p.HW, logical, phys, begin, end);
    else small_images_avx2<kPack, 4>(p.C, p.HW, logical, phys, begin, end);
    return;
  }
  if (slices == 1 && p.kind == Kind::kNhwc && p.bits == 16 && p.C % 32 == 0 && p.C >= kSmallImages16Channels &&
      p.HW <= 64 && !p.stream && have_avx512()) {
    small_images_epi16<kPack>(p.C, p.HW, logical, phys, begin, end);
    return;
  }
  if (slices == 1 && p.kind == Kind::kNhwc && p.bits == 8 && p.C % 64 == 0 && !p.stream &&
      (kPack ? p.HW < 64 && p.C >= (p.HW >= 16 ? 64u : 256u) : p.HW <= 64) && have_avx512()) {
    small_images_epi8<kPack>(p.C, p.HW, logical, phys, begin, end);
    return;
  }
  if (slices == 1 && p.kind == Kind::kChwn4 && p.bits == 8 && ((p.N == 4 && !kPack) || p.N == 8 || p.N == 16) &&
      p.HW <= 64 && !p.stream && have_avx512()) {
    small_chwn4_epi8<kPack>(p.N, p.C, p.HW, logical, phys, begin, end, rest);
    return;
  }
  if (slices == 1 && p.kind == Kind::kNchwx && p.bits == 8 && p.block == 4 && p.HW <= (kPack ? 1024u : 256u) &&
      !p.stream && have_avx512()) {
    small_blocks4_epi8<kPack>(p.C, p.HW, logical, phys, begin, end, rest);
    return;
  }
  if (slices == 1 && p.kind == Kind::kNchwx && (p.bits == 16 || p.bits == 32) && p.block == 4 &&
      p.HW <= kSmallBlocks4Pixels && !p.stream && have_avx512()) {
    if (p.bits == 16) small_blocks4_wide<kPack, 2>(p.C, p.HW, logical, phys, begin, end, rest);
    else small_blocks4_wide<kPack, 4>(p.C, p.HW, logical, phys, begin, end, rest);
    return;
  }
  if (slices == 1 && !kPack && p.kind == Kind::kNchwx && p.bits == 8 && p.block == 32 && p.HW > 64 && !p.stream &&
      have_avx512()) {
    // NCHW32 unpacks in cache: two blocks of an image as one group of 64 rows
    // (measured on a Zen 5, medians of 15 runs, 32-row blocks -> pairs:
    // 1 x 64 x 64 x 64 0.31 -> 0.35 of memcpy, 1 x 64 x 128 x 128 0.41 -> 0.55,
    // 1 x 256 x 56 x 56 0.22 -> 0.39, 1 x 128 x 14 x 14 0.15 -> 0.23).
    const uint64_t blocks = ceil_div(p.C, 32);
    uint64_t both[64];
    for (uint64_t i = begin; i < end; ++i) {
      const uint64_t cb = i % blocks;
      if (cb + 1 < blocks && i + 1 < end) {  // the next block of the image (padding rows skipped)
        Group two = group_at(p, i, both);
        group_at(p, i + 1, both + 32);
        two.R = 64;
        unpack_64x64_epi8_avx512(two, logical, phys, p.HW * 32);
        ++i;
      } else {
        rest(i);
      }
    }
    return;
  }
  if (slices == 1 && p.kind == Kind::kNchwx && p.bits == 8 && (p.block == 64 || p.block == 32) &&
      p.HW >= 16 && p.HW <= 64 && !p.stream && have_avx2() && (p.HW <= kSmallGroupsAvx2Pixels || !have_avx512())) {
    small_groups_epi8_avx2<kPack>(p.C, p.block, p.HW, logical, phys, begin, end, rest);
    return;
  }
  if (slices == 1 && p.kind == Kind::kNchwx && p.bits == 8 && (p.block == 64 || p.block == 32) &&
      p.HW <= 64 && !p.stream && have_avx512()) {
    small_groups_epi8<kPack>(p.C, p.block, p.HW, logical, phys, begin, end, rest);
    return;
  }
#endif
  rows.resize(max_group_rows(p));
  if (slices == 1) {
    for (uint64_t i = begin; i < end; ++i) run_group<kPack>(p, group_at(p, i, rows.data()), logical, phys);
    return;
  }
  sliced.resize(rows.size());
  uint64_t built = ~uint64_t{0};
  Group g{};
  for (uint64_t u = begin; u < end; ++u) {
    const uint64_t i = u / slices, s = u % slices;
    if (i != built) {
      g = group_at(p, i, rows.data());
      built = i;
    }
    const uint64_t chunk = ceil_div(ceil_div(g.L, slices), kSlicePixels) * kSlicePixels;
    const uint64_t l0 = s * chunk;
    if (l0 >= g.L) continue;
    const uint64_t n = std::min(chunk, g.L - l0);
    for (uint64_t r = 0; r < g.R; ++r) sliced[r] = g.rows[r] == kPad ? kPad : g.rows[r] + l0;
    run_group<kPack>(p, Group{sliced.data(), g.R, n, g.pixels + l0 * g.R}, logical, phys);
  }
}

// Copies n bytes on the threads of the plan, in ranges of whole 64 KiB.
void copy_bytes(const Plan& p, uint8_t* dst, const uint8_t* src, uint64_t n) {
  constexpr uint64_t kChunk = 64u << 10;
  if (resolve_threads(requested_threads(), p.phys_bytes) <= 1 || n <= kChunk) {
    std::memcpy(dst, src, n);
    return;
  }
  parallel_ranges(ceil_div(n, kChunk), p.phys_bytes, [&](uint64_t begin, uint64_t end) {
    std::memcpy(dst + begin * kChunk, src + begin * kChunk, std::min(end * kChunk, n) - begin * kChunk);
  });
}

template <bool kPack>
void walk(const Plan& p, uint8_t* logical, uint8_t* phys) {
  if (p.kind == Kind::kIdentity) {
    const uint64_t bytes = p.phys_bytes;
    if (kPack) copy_bytes(p, phys, logical, bytes);
    else copy_bytes(p, logical, phys, bytes);
    // The spare nibble of an odd 4-bit tensor is 0 on both sides.
    if (p.bits == 4 && p.elements % 2 == 1) (kPack ? phys : logical)[bytes - 1] &= 0x0F;
    return;
  }
  if (p.kind == Kind::kNchwx && p.HW == 1 && p.bits % 8 == 0) {
    // Images of one pixel, the last block of channels part padding: each
    // image's channels in order, the padding zeros.
    const uint64_t e = p.bits / 8, row = p.C * e, pitch = ceil_div(p.C, p.block) * p.block * e;
    parallel_ranges(p.N, p.phys_bytes, [&](uint64_t begin, uint64_t end) {
      for (uint64_t n = begin; n < end; ++n) {
        if (kPack) {
          std::memcpy(phys + n * pitch, logical + n * row, row);
          std::memset(phys + n * pitch + row, 0, pitch - row);
        } else {
          std::memcpy(logical + n * row, phys + n * pitch, row);
        }
      }
    });
    return;
  }
  if (!kPack && p.bits == 4 && p.elements % 2 == 1) logical[p.elements / 2] = 0;
  if (kPack && p.bits == 4 && p.physical_elements % 2 == 1) phys[p.physical_elements / 2] = 0;
  const uint64_t groups = group_count(p);
  // 4-bit rows of an odd length share bytes with their neighbours: one thread.
  const uint64_t L = p.kind == Kind::kColMajor ? p.cols : p.HW;
  const uint64_t threads = p.bits == 4 && L % 2 != 0 ? 1 : resolve_threads(requested_threads(), p.phys_bytes);
  if (threads <= 1) {
    walk_units<kPack>(p, logical, phys, 1, 0, groups);
  } else {
    // Whole groups when they are many, else slices of them: 8 units a thread
    // or more, handed out as the threads get free (a thread whose core is busy
    // with other work takes fewer), in runs of kThreadChunkBytes or so.
    uint64_t slices = 1;
    if (groups < 8 * threads) {
      slices = std::min(ceil_div(8 * threads, groups), std::max<uint64_t>(1, ceil_div(L, kSlicePixels)));
    }
    const uint64_t units = groups * slices;
    const uint64_t chunk = std::max<uint64_t>(1, kThreadChunkBytes / std::max<uint64_t>(1, p.phys_bytes / units));
    parallel_chunks(units, chunk, p.phys_bytes, [&](uint64_t begin, uint64_t end) {
      walk_units<kPack>(p, logical, phys, slices, begin, end);
#if LC_MGE_X86
      if (p.stream) _mm_sfence();
#endif
    });
  }
#if LC_MGE_X86
  if (p.stream) _mm_sfence();
#endif
}

// The checker asks one case many questions: each derives the plan once (core/case_cache.h).
Result<std::shared_ptr<const Plan>> cached_make_plan(const Case& c) {
  thread_local CaseCache<Plan> cache;
  return cache.get(c, make_plan);
}

class MgeOptimized : public Impl {
 public:
  std::string name() const override { return "optimized"; }
  Status supports(const Case& c) const override { return cached_make_plan(c).status(); }
  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_make_plan(c));
    const Plan& p = *p_ptr;
    return p.phys_bytes;
  }
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_make_plan(c));
    const Plan& p = *p_ptr;
    LC_RETURN_IF_ERROR(check_coord(c, at));
    uint64_t element = 0;
    if (p.kind == Kind::kIdentity) {
      element = index_of_coord(c.shape, at);
    } else if (p.kind == Kind::kColMajor) {
      element = static_cast<uint64_t>(at[1]) * p.rows + static_cast<uint64_t>(at[0]);
    } else {
      const uint64_t n = at[0], ch = at[1];
      const uint64_t pixel = static_cast<uint64_t>(at[2]) * static_cast<uint64_t>(c.shape[3]) + at[3];
      if (p.kind == Kind::kNhwc) {
        element = (n * p.HW + pixel) * p.C + ch;
      } else if (p.kind == Kind::kNchwx) {
        const uint64_t X = p.block;
        element = ((n * ceil_div(p.C, X) + ch / X) * p.HW + pixel) * X + ch % X;
      } else {
        element = ((ch / 4) * p.HW + pixel) * p.N * 4 + n * 4 + ch % 4;
      }
    }
    return element * p.bits;
  }
  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_make_plan(c));
    const Plan& p = *p_ptr;
    LC_RETURN_IF_ERROR(check_buffers(c, p.logical_bytes, p.phys_bytes, logical_size, physical_size));
    walk<true>(p, const_cast<uint8_t*>(static_cast<const uint8_t*>(logical)), static_cast<uint8_t*>(physical));
    return Status();
  }
  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_make_plan(c));
    const Plan& p = *p_ptr;
    LC_RETURN_IF_ERROR(check_buffers(c, p.logical_bytes, p.phys_bytes, logical_size, physical_size));
    walk<false>(p, static_cast<uint8_t*>(logical), const_cast<uint8_t*>(static_cast<const uint8_t*>(physical)));
    return Status();
  }
};

}  // namespace

const Impl& mge_optimized() {
  static const MgeOptimized impl;
  return impl;
}

}  // namespace layoutcheck
