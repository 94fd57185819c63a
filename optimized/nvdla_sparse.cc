// NVDLA sparse weight compression, word at a time.
//
// Why it equals the reference: the mask bit of element i is bit i % 8 of byte
// i / 8 over the whole mapped surface, so eight consecutive elements make one
// mask byte; full kernel groups hold a multiple of 16 elements (16 or 32
// kernels), so group boundaries fall on mask bytes and a group's WGS is its
// popcount times the element size. Non-zero elements are appended with a
// branch-free store-then-advance: a whole vector of gathered elements is
// stored and the output advances by the popcount (vpcompressb/w with AVX-512
// VBMI2, vpcompressd on widened elements with AVX-512 alone, a byte shuffle
// from a table indexed by the mask byte with SSSE3, 32 bytes a step with
// AVX2). Decompression is the inverse: the kept elements, in order, go to the
// set bits and 0 to the others (vpexpandb/w with VBMI2, else a table byte
// shuffle per mask byte; with AVX2, int8 takes two mask bytes a 128-bit lane).
#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
// gcc 12 warns inside avx512fintrin.h, whose _mm512_undefined_* functions read an
// uninitialized variable on purpose (a false positive for every intrinsic using them).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#endif

#include "layoutcheck/checked.h"
#include "layoutcheck/nvdla.h"
#include "optimized/families.h"
#include "optimized/isa.h"

namespace layoutcheck::nvdla {
namespace {

uint64_t up128(uint64_t v) { return (v + 127) / 128 * 128; }

struct Shape4 {
  uint64_t eb = 1, per_group = 0, groups = 0, total = 0;
};

Result<Shape4> shape_of(const Case& c, size_t physical_size) {
  if (c.layout.name.compare(0, 13, "nvdla.weight.") != 0) {
    return Status::invalid("sparse compression is for NVDLA weights, not " + c.layout.name);
  }
  if (c.layout.name == "nvdla.weight.deconv") return Status::invalid("deconvolution weights are compressed set by set");
  LC_ASSIGN_OR_RETURN(uint64_t size, nvdla_optimized().size_bytes(c));
  if (size != physical_size) return Status::invalid("mapped weight buffer size " + std::to_string(physical_size) + " is not " + std::to_string(size));
  Shape4 s;
  s.eb = dtype_bits(c.dtype) / 8;
  const uint64_t kernels = s.eb == 1 ? 32 : 16;
  uint64_t per_kernel = static_cast<uint64_t>(c.shape[1]) * c.shape[2] * c.shape[3];
  if (c.layout.name == "nvdla.weight.winograd") {
    const uint64_t lanes = 32 / s.eb;
    per_kernel = (static_cast<uint64_t>(c.shape[1]) + lanes - 1) / lanes * lanes * 16;
  }
  s.per_group = kernels * per_kernel;
  s.groups = (static_cast<uint64_t>(c.shape[0]) + kernels - 1) / kernels;
  s.total = static_cast<uint64_t>(c.shape[0]) * per_kernel;
  return s;
}

#if defined(__SSE2__)
// int8: 16 elements at a time; the zero test is one compare and movemask, a
// full block is one store, an empty one nothing, a mixed one walks its set bits.
uint64_t compress_run_sse2(const uint8_t* src, uint64_t n, uint64_t first, uint8_t* mask, uint8_t* out) {
  uint64_t kept = 0, i = 0;
  const __m128i zero = _mm_setzero_si128();
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    unsigned m = ~static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero))) & 0xFFFFu;
    mask[(first + i) / 8] = static_cast<uint8_t>(m);
    mask[(first + i) / 8 + 1] = static_cast<uint8_t>(m >> 8);
    if (m == 0xFFFFu) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + kept), v);
      kept += 16;
      continue;
    }
    while (m != 0) {
      out[kept++] = src[i + static_cast<unsigned>(__builtin_ctz(m))];
      m &= m - 1;
    }
  }
  for (; i < n; ++i) {
    if (src[i] != 0) {
      mask[(first + i) / 8] |= static_cast<uint8_t>(1u << ((first + i) % 8));
      out[kept++] = src[i];
    }
  }
  return kept;
}
#endif

template <typename T>
uint64_t compress_run(const uint8_t* src, uint64_t n, uint64_t first, uint8_t* mask, uint8_t* out) {
  // first is a multiple of 8 (a group boundary): whole mask bytes.
  uint64_t kept = 0;
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    T v[8];
    std::memcpy(v, src + i * sizeof(T), sizeof(v));
    unsigned m = 0;
    for (int j = 0; j < 8; ++j) {
      const bool nz = v[j] != 0;
      m |= static_cast<unsigned>(nz) << j;
      std::memcpy(out + kept * sizeof(T), &v[j], sizeof(T));
      kept += nz;
    }
    mask[(first + i) / 8] = static_cast<uint8_t>(m);
  }
  for (; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    if (v != 0) {
      mask[(first + i) / 8] |= static_cast<uint8_t>(1u << ((first + i) % 8));
      std::memcpy(out + kept * sizeof(T), &v, sizeof(T));
      ++kept;
    }
  }
  return kept;
}

// ---- decompression: masks expand the kept elements in place ------------------

// For each mask byte: the popcount, and the byte shuffle that moves its kept
// elements (packed at the front of 16 loaded bytes) to their positions, with
// 0x80 (a zero byte) where an element was dropped: 8 bytes for int8, 16 for
// 16-bit elements.
struct ExpandTables {
  uint8_t count[256];
  uint8_t u8[256][8];
  uint8_t u16[256][16];
  uint8_t after[9][16];  // int8 pairs of mask bytes: c added to the second byte's 8 entries
};

const ExpandTables& expand_tables() {
  static const ExpandTables tables = [] {
    ExpandTables t{};
    for (unsigned m = 0; m < 256; ++m) {
      uint8_t k = 0;
      for (unsigned j = 0; j < 8; ++j) {
        const bool kept = (m >> j) & 1;
        t.u8[m][j] = kept ? k : uint8_t{0x80};
        t.u16[m][2 * j] = kept ? static_cast<uint8_t>(2 * k) : uint8_t{0x80};
        t.u16[m][2 * j + 1] = kept ? static_cast<uint8_t>(2 * k + 1) : uint8_t{0x80};
        k = static_cast<uint8_t>(k + kept);
      }
      t.count[m] = k;
    }
    for (unsigned c = 0; c <= 8; ++c) std::memset(t.after[c] + 8, static_cast<int>(c), 8);
    return t;
  }();
  return tables;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LC_SPARSE_SSSE3 1
bool has_avx2() { return isa_at_least(Isa::kAvx2); }
bool has_ssse3() {
  static const bool popcnt = __builtin_cpu_supports("popcnt");
  return popcnt && isa_at_least(Isa::kSsse3);
}

// Expands mask bytes [0, whole) while the loads stay inside the `size` bytes
// of data; returns how many it did. Each 8-element step loads 16 bytes of
// kept elements and shuffles them into place (pshufb); the step offsets are
// popcounts of the mask's low bits, so the only serial work is one add per
// 32 (int8) or 16 (16-bit) elements.
// 8 elements of 1 byte (8 output bytes) or 2 bytes (16) from the kept ones at `from`.
__attribute__((target("ssse3"), always_inline)) inline void expand8_u8(const uint8_t* from, const uint8_t* ctl,
                                                                       uint8_t* o) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
  const __m128i c = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(ctl));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(o), _mm_shuffle_epi8(v, c));
}
__attribute__((target("ssse3"), always_inline)) inline void expand8_u16(const uint8_t* from, const uint8_t* ctl,
                                                                        uint8_t* o) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
  const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ctl));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_shuffle_epi8(v, c));
}

__attribute__((target("ssse3,popcnt"))) uint64_t expand_ssse3(const ExpandTables& t, const uint8_t* mask,
                                                              uint64_t whole, const uint8_t* data, uint64_t* read,
                                                              uint64_t size, uint8_t* out, uint64_t eb) {
  uint64_t b = 0, r = *read;
  if (eb == 1) {
    for (; b + 4 <= whole && r + 48 <= size; b += 4) {
      uint32_t m;
      std::memcpy(&m, mask + b, 4);
      const unsigned c0 = static_cast<unsigned>(_mm_popcnt_u32(m & 0xFFu));
      const unsigned c1 = static_cast<unsigned>(_mm_popcnt_u32(m & 0xFFFFu));
      const unsigned c2 = static_cast<unsigned>(_mm_popcnt_u32(m & 0xFFFFFFu));
      expand8_u8(data + r, t.u8[m & 0xFF], out + b * 8);
      expand8_u8(data + r + c0, t.u8[m >> 8 & 0xFF], out + b * 8 + 8);
      expand8_u8(data + r + c1, t.u8[m >> 16 & 0xFF], out + b * 8 + 16);
      expand8_u8(data + r + c2, t.u8[m >> 24], out + b * 8 + 24);
      r += static_cast<unsigned>(_mm_popcnt_u32(m));
    }
  } else {
    for (; b + 2 <= whole && r + 48 <= size; b += 2) {
      const unsigned m0 = mask[b], m1 = mask[b + 1];
      expand8_u16(data + r, t.u16[m0], out + b * 16);
      expand8_u16(data + r + 2 * static_cast<unsigned>(_mm_popcnt_u32(m0)), t.u16[m1], out + b * 16 + 16);
      r += 2 * static_cast<unsigned>(_mm_popcnt_u32(m0 | m1 << 8));
    }
  }
  *read = r;
  return b;
}

// AVX2, int8: 32 elements a step, one shuffle and one store. A 128-bit lane
// expands two mask bytes from one 16-byte load: the second byte's table
// entries are raised by the first byte's popcount (an entry of 0x80 stays
// negative, a zero), so both index the same kept elements; the upper lane
// loads from the popcount of the step's first two mask bytes.
// expand_pair_u8: the shuffle control of one lane.
__attribute__((target("sse2"), always_inline)) inline __m128i expand_pair_u8(const ExpandTables& t, unsigned m0,
                                                                              unsigned m1) {
  const __m128i lo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(t.u8[m0]));
  const __m128i both = _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(lo), reinterpret_cast<const double*>(t.u8[m1])));
  return _mm_add_epi8(both, _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.after[t.count[m0]])));
}

// 32 elements of mask word m from the kept ones at `from`; the loads end by 32 bytes past it.
__attribute__((target("avx2,popcnt"), always_inline)) inline void expand32_u8(const ExpandTables& t, uint32_t m,
                                                                             const uint8_t* from, uint8_t* o) {
  const unsigned c01 = static_cast<unsigned>(_mm_popcnt_u32(m & 0xFFFFu));
  const __m256i v = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(from + c01),
                                        reinterpret_cast<const __m128i*>(from));
  const __m256i ctl = _mm256_set_m128i(expand_pair_u8(t, m >> 16 & 0xFFu, m >> 24),
                                       expand_pair_u8(t, m & 0xFFu, m >> 8 & 0xFFu));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), _mm256_shuffle_epi8(v, ctl));
}

__attribute__((target("avx2,popcnt"))) uint64_t expand_avx2_u8(const ExpandTables& t, const uint8_t* mask,
                                                               uint64_t whole, const uint8_t* data, uint64_t* read,
                                                               uint64_t size, uint8_t* out) {
  uint64_t b = 0, r = *read;
  for (; b + 8 <= whole && r + 64 <= size; b += 8) {
    uint64_t m;
    std::memcpy(&m, mask + b, 8);
    const uint32_t m0 = static_cast<uint32_t>(m);
    expand32_u8(t, m0, data + r, out + b * 8);
    expand32_u8(t, static_cast<uint32_t>(m >> 32), data + r + static_cast<unsigned>(_mm_popcnt_u32(m0)), out + b * 8 + 32);
    r += static_cast<uint64_t>(_mm_popcnt_u64(m));
  }
  for (; b + 4 <= whole && r + 32 <= size; b += 4) {
    uint32_t m;
    std::memcpy(&m, mask + b, 4);
    expand32_u8(t, m, data + r, out + b * 8);
    r += static_cast<unsigned>(_mm_popcnt_u32(m));
  }
  *read = r;
  return b;
}

// ---- SSSE3 compression: byte shuffles from a table indexed by the mask byte ----
//
// The inverse of the expansion: for each mask byte, the byte shuffle that
// gathers its kept elements to the front (8 bytes for int8, the low or high
// half of a 16-byte register; 16 bytes for 16-bit elements). A step stores
// the shuffled bytes whole and advances by the popcount, so the next store
// overwrites what was not kept. The output offset never passes the input one,
// so no store leaves the group's n elements.
struct CompressTables {
  uint8_t lo[256][8];   // int8, elements 0..7 of a 16-byte register
  uint8_t hi[256][8];   // int8, elements 8..15
  uint8_t u16[256][16];
};

const CompressTables& compress_tables() {
  static const CompressTables tables = [] {
    CompressTables t{};
    for (unsigned m = 0; m < 256; ++m) {
      unsigned k = 0;
      for (unsigned j = 0; j < 8; ++j) {
        if (!((m >> j) & 1)) continue;
        t.lo[m][k] = static_cast<uint8_t>(j);
        t.hi[m][k] = static_cast<uint8_t>(j + 8);
        t.u16[m][2 * k] = static_cast<uint8_t>(2 * j);
        t.u16[m][2 * k + 1] = static_cast<uint8_t>(2 * j + 1);
        ++k;
      }
    }
    return t;
  }();
  return tables;
}

// Eight 16-bit elements of x, those of mask byte m gathered to the front, stored at o (16 bytes).
__attribute__((target("ssse3"), always_inline)) inline void compress8_u16(const CompressTables& t, uint8_t* o, __m128i x,
                                                                          unsigned m) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(o),
                   _mm_shuffle_epi8(x, _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.u16[m]))));
}

// The low (table lo) or high (table hi) eight bytes of x, those of mask byte m
// gathered to the front, stored at o (8 bytes).
__attribute__((target("ssse3"), always_inline)) inline void compress8_u8(uint8_t* o, __m128i x, const uint8_t* table,
                                                                         uint64_t m) {
  _mm_storel_epi64(reinterpret_cast<__m128i*>(o),
                   _mm_shuffle_epi8(x, _mm_loadl_epi64(reinterpret_cast<const __m128i*>(table + 8 * m))));
}

// Whole 16-element (int8) or 8-element (16-bit) steps of [0, n); returns the
// elements done, adds the kept ones to *kept_out.
__attribute__((target("ssse3,popcnt"))) uint64_t compress_ssse3(const CompressTables& t, const uint8_t* src,
                                                                uint64_t n, uint64_t first, uint8_t* mask,
                                                                uint8_t* out, uint64_t eb, uint64_t* kept_out) {
  uint64_t kept = 0, i = 0;  // bytes kept
  const __m128i zero = _mm_setzero_si128();
  if (eb == 1) {
    for (; i + 16 <= n; i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      const unsigned m = ~static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero))) & 0xFFFFu;
      const unsigned m0 = m & 0xFFu, m1 = m >> 8;
      mask[(first + i) / 8] = static_cast<uint8_t>(m0);
      mask[(first + i) / 8 + 1] = static_cast<uint8_t>(m1);
      const __m128i c0 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(t.lo[m0]));
      const __m128i c1 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(t.hi[m1]));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + kept), _mm_shuffle_epi8(v, c0));
      kept += static_cast<unsigned>(_mm_popcnt_u32(m0));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + kept), _mm_shuffle_epi8(v, c1));
      kept += static_cast<unsigned>(_mm_popcnt_u32(m1));
    }
  } else {
    for (; i + 8 <= n; i += 8) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
      const __m128i z = _mm_cmpeq_epi16(v, zero);
      const unsigned m = ~static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(z, z))) & 0xFFu;
      mask[(first + i) / 8] = static_cast<uint8_t>(m);
      compress8_u16(t, out + kept, v, m);
      kept += 2 * static_cast<unsigned>(_mm_popcnt_u32(m));
    }
  }
  *kept_out += kept / eb;
  return i;
}

// 64 bytes in two registers.
struct Pair256 {
  __m256i lo, hi;
};

__attribute__((target("avx2"), always_inline)) inline Pair256 load_pair(const uint8_t* p) {
  return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32))};
}

// Bit i set where byte i of the pair (64 bytes) is not zero.
__attribute__((target("avx2"), always_inline)) inline uint64_t nonzero64_avx2(const Pair256& v) {
  const __m256i zero = _mm256_setzero_si256();
  const uint32_t za = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v.lo, zero)));
  const uint32_t zb = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v.hi, zero)));
  return ~(uint64_t{za} | uint64_t{zb} << 32);
}

// Bit i set where 16-bit element i of the pair (32 elements) is not zero.
__attribute__((target("avx2"), always_inline)) inline uint32_t nonzero32_u16_avx2(const Pair256& v) {
  const __m256i zero = _mm256_setzero_si256();
  // Lane k of the pack: elements 8k.. of lo, then of hi; the permute puts them in order.
  const __m256i bytes = _mm256_permute4x64_epi64(
      _mm256_packs_epi16(_mm256_cmpeq_epi16(v.lo, zero), _mm256_cmpeq_epi16(v.hi, zero)), _MM_SHUFFLE(3, 1, 2, 0));
  return ~static_cast<uint32_t>(_mm256_movemask_epi8(bytes));
}

// The set bits of m below bit `bits`.
__attribute__((target("popcnt"), always_inline)) inline uint64_t popcnt_below(uint64_t m, int bits) {
  return static_cast<uint64_t>(_mm_popcnt_u64(m & ((uint64_t{1} << bits) - 1)));
}

// AVX2: the same table shuffles, 32 bytes a step. The mask comes from one
// compare of the whole step and is stored as one word; each 8-element group
// (int8: 8 bytes, a half of a 128-bit lane; 16-bit: a lane) is shuffled from
// its lane and stored at the popcount of the mask bits before it, so the
// only serial work is one add a step (measured on a Zen 5 capped at AVX2,
// 512 x 1024 x 3 x 3 half zeros: int8 0.21 -> 0.24 of memcpy against 16
// bytes a step, 256 x 1024 x 3 x 3 fp16 par at 0.25; AVX-512 hosts without
// VBMI2 keep the dword compress, par on int8 and 0.37 against 0.22 on fp16).
// The input is fetched 2 KiB ahead into L1 (a Zen 4 capped at AVX2, pinned,
// alternating, 4 MiB half zeros: int8 0.41-0.44 -> 0.38-0.40 ms a compress,
// fp16 0.35-0.36 -> 0.34-0.35; 1 KiB par, 4 KiB between). 16-bit steps take
// two registers (32 elements), one compare pack and one mask word for both:
// 0.34-0.35 -> 0.31-0.32 ms. Each step's mask is made ahead, so that the
// table loads and the store offsets do not wait on the compare and the move
// of its mask to a general register (int8 64 bytes a step): int8 0.39 ->
// 0.35 ms, fp16 0.31 -> 0.26.
__attribute__((target("avx2,popcnt"))) uint64_t compress_avx2(const CompressTables& t, const uint8_t* src, uint64_t n,
                                                             uint64_t first, uint8_t* mask, uint8_t* out, uint64_t eb,
                                                             uint64_t* kept_out) {
  uint64_t kept = 0, i = 0;  // bytes kept
  const __m256i zero = _mm256_setzero_si256();
  constexpr uint64_t kAhead = 2048;  // bytes fetched ahead into L1
  if (eb == 1) {
    // 64 bytes a step. Each step's mask is made two steps ahead and stored;
    // its bytes, the table rows, are read back from the mask surface (fewer
    // instructions than taking them out of the word, 0.36 -> 0.35 ms; two
    // steps, not one, so that a read finds its store done).
    const uint8_t* lo_rows = &t.lo[0][0];
    const uint8_t* hi_rows = &t.hi[0][0];
    if (n >= 192) {
      Pair256 v = load_pair(src), w = load_pair(src + 64);
      uint64_t m = nonzero64_avx2(v), next = nonzero64_avx2(w);
      std::memcpy(mask + first / 8, &m, 8);
      std::memcpy(mask + first / 8 + 8, &next, 8);
      for (; i + 192 <= n; i += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(src + i + kAhead), _MM_HINT_T0);
        const Pair256 u = load_pair(src + i + 128);
        const uint64_t after = nonzero64_avx2(u);
        const uint8_t* mb = mask + (first + i) / 8;  // this step's mask bytes, stored two steps ago
        std::memcpy(mask + (first + i) / 8 + 16, &after, 8);
        uint8_t* o = out + kept;
        const __m128i x0 = _mm256_castsi256_si128(v.lo), x1 = _mm256_extracti128_si256(v.lo, 1);
        const __m128i x2 = _mm256_castsi256_si128(v.hi), x3 = _mm256_extracti128_si256(v.hi, 1);
        compress8_u8(o, x0, lo_rows, mb[0]);
        compress8_u8(o + popcnt_below(m, 8), x0, hi_rows, mb[1]);
        compress8_u8(o + popcnt_below(m, 16), x1, lo_rows, mb[2]);
        compress8_u8(o + popcnt_below(m, 24), x1, hi_rows, mb[3]);
        compress8_u8(o + popcnt_below(m, 32), x2, lo_rows, mb[4]);
        compress8_u8(o + popcnt_below(m, 40), x2, hi_rows, mb[5]);
        compress8_u8(o + popcnt_below(m, 48), x3, lo_rows, mb[6]);
        compress8_u8(o + popcnt_below(m, 56), x3, hi_rows, mb[7]);
        kept += static_cast<uint64_t>(_mm_popcnt_u64(m));
        v = w, w = u;
        m = next, next = after;
      }
    }
    for (; i + 32 <= n; i += 32) {  // the last 32s, if any
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
      const uint32_t m = ~static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, zero)));
      std::memcpy(mask + (first + i) / 8, &m, 4);
      const __m128i x0 = _mm256_castsi256_si128(v), x1 = _mm256_extracti128_si256(v, 1);
      uint8_t* o = out + kept;
      compress8_u8(o, x0, lo_rows, m & 0xFFu);
      compress8_u8(o + popcnt_below(m, 8), x0, hi_rows, m >> 8 & 0xFFu);
      compress8_u8(o + popcnt_below(m, 16), x1, lo_rows, m >> 16 & 0xFFu);
      compress8_u8(o + popcnt_below(m, 24), x1, hi_rows, m >> 24);
      kept += static_cast<unsigned>(_mm_popcnt_u32(m));
    }
  } else {
    // 32 elements a step, each step's mask made two steps ahead and its bytes read back (as the int8 steps).
    if (n >= 96) {
      Pair256 v = load_pair(src), w = load_pair(src + 64);
      uint32_t m = nonzero32_u16_avx2(v), next = nonzero32_u16_avx2(w);
      std::memcpy(mask + first / 8, &m, 4);
      std::memcpy(mask + first / 8 + 4, &next, 4);
      for (; i + 96 <= n; i += 32) {
        _mm_prefetch(reinterpret_cast<const char*>(src + 2 * i + kAhead), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(src + 2 * i + kAhead + 64), _MM_HINT_T0);
        const Pair256 u = load_pair(src + 2 * i + 128);
        const uint32_t after = nonzero32_u16_avx2(u);
        const uint8_t* mb = mask + (first + i) / 8;  // this step's mask bytes, stored two steps ago
        std::memcpy(mask + (first + i) / 8 + 8, &after, 4);
        uint8_t* o = out + kept;
        compress8_u16(t, o, _mm256_castsi256_si128(v.lo), mb[0]);
        compress8_u16(t, o + 2 * popcnt_below(m, 8), _mm256_extracti128_si256(v.lo, 1), mb[1]);
        compress8_u16(t, o + 2 * popcnt_below(m, 16), _mm256_castsi256_si128(v.hi), mb[2]);
        compress8_u16(t, o + 2 * popcnt_below(m, 24), _mm256_extracti128_si256(v.hi, 1), mb[3]);
        kept += 2 * static_cast<unsigned>(_mm_popcnt_u32(m));
        v = w, w = u;
        m = next, next = after;
      }
    }
    for (; i + 16 <= n; i += 16) {  // the last 16, if any
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * i));
      const __m256i z = _mm256_cmpeq_epi16(v, zero);
      // A byte per element, in order: lane 0 of the pack holds elements 0-7, lane 1 8-15.
      const __m256i bytes = _mm256_permute4x64_epi64(_mm256_packs_epi16(z, z), _MM_SHUFFLE(3, 1, 2, 0));
      const uint32_t m = ~static_cast<uint32_t>(_mm256_movemask_epi8(bytes)) & 0xFFFFu;
      std::memcpy(mask + (first + i) / 8, &m, 2);
      const uint64_t c0 = 2 * static_cast<unsigned>(_mm_popcnt_u32(m & 0xFFu));
      compress8_u16(t, out + kept, _mm256_castsi256_si128(v), m & 0xFFu);
      compress8_u16(t, out + kept + c0, _mm256_extracti128_si256(v, 1), m >> 8);
      kept += 2 * static_cast<unsigned>(_mm_popcnt_u32(m));
    }
  }
  *kept_out += kept / eb;
  return i;
}

// The kept elements of mask bytes [0, whole): popcounts of 8 bytes at a time.
__attribute__((target("popcnt"))) uint64_t count_popcnt(const uint8_t* mask, uint64_t whole) {
  uint64_t kept = 0, b = 0;
  for (; b + 8 <= whole; b += 8) {
    uint64_t w;
    std::memcpy(&w, mask + b, 8);
    kept += static_cast<uint64_t>(_mm_popcnt_u64(w));
  }
  for (; b < whole; ++b) kept += static_cast<uint64_t>(_mm_popcnt_u32(mask[b]));
  return kept;
}
#endif

#if defined(LC_SPARSE_SSSE3)
// ---- AVX-512: masks from byte/word tests, compaction by dword compress ----------
//
// Without VBMI2 there is no byte or word compress, so 16 elements at a time
// are widened to 32-bit lanes, compressed (vpcompressd, register form) and
// narrowed back; the whole 16 (or 32) bytes are stored and the output
// advances by the popcount, so the next store overwrites the rest. (Expansion
// by vpexpandd measured slower than the byte shuffles below on AMD Zen 4, so
// decompression keeps those.) Mask bit j of a 64-bit (int8) or 32-bit
// (16-bit) test mask is element j, so the mask goes to WMB as it is.
bool has_avx512() { return isa_at_least(Isa::kAvx512); }

#define LC_SPARSE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,popcnt")))

// Whole 64-element (int8) or 32-element (16-bit) steps of [0, n); returns the
// elements done, adds the kept ones to *kept. `out` has 64 bytes of slack.
LC_SPARSE_AVX512 uint64_t compress_avx512(const uint8_t* src, uint64_t n, uint64_t first, uint8_t* mask, uint8_t* out,
                                          uint64_t eb, uint64_t* kept_out) {
  uint64_t kept = 0, i = 0;  // bytes kept
  if (eb == 1) {
    for (; i + 64 <= n; i += 64) {
      const __m512i v = _mm512_loadu_si512(src + i);
      const uint64_t m = _mm512_test_epi8_mask(v, v);
      std::memcpy(mask + (first + i) / 8, &m, 8);
      if (m == ~uint64_t{0}) {
        _mm512_storeu_si512(out + kept, v);
        kept += 64;
        continue;
      }
      const __m128i part[4] = {_mm512_castsi512_si128(v), _mm512_extracti32x4_epi32(v, 1),
                               _mm512_extracti32x4_epi32(v, 2), _mm512_extracti32x4_epi32(v, 3)};
      for (int q = 0; q < 4; ++q) {
        const __mmask16 mq = static_cast<__mmask16>(m >> (16 * q));
        const __m512i c = _mm512_maskz_compress_epi32(mq, _mm512_cvtepu8_epi32(part[q]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + kept), _mm512_cvtepi32_epi8(c));
        kept += static_cast<uint64_t>(_mm_popcnt_u32(mq));
      }
    }
  } else {
    for (; i + 32 <= n; i += 32) {
      const __m512i v = _mm512_loadu_si512(src + 2 * i);
      const uint32_t m = _mm512_test_epi16_mask(v, v);
      std::memcpy(mask + (first + i) / 8, &m, 4);
      if (m == ~uint32_t{0}) {
        _mm512_storeu_si512(out + kept, v);
        kept += 64;
        continue;
      }
      const __mmask16 m0 = static_cast<__mmask16>(m), m1 = static_cast<__mmask16>(m >> 16);
      const __m512i c0 = _mm512_maskz_compress_epi32(m0, _mm512_cvtepu16_epi32(_mm512_castsi512_si256(v)));
      const __m512i c1 = _mm512_maskz_compress_epi32(m1, _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(v, 1)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + kept), _mm512_cvtepi32_epi16(c0));
      kept += 2 * static_cast<uint64_t>(_mm_popcnt_u32(m0));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + kept), _mm512_cvtepi32_epi16(c1));
      kept += 2 * static_cast<uint64_t>(_mm_popcnt_u32(m1));
    }
  }
  *kept_out += kept / eb;
  return i;
}

// ---- AVX-512 VBMI2: byte and word compress/expand in registers ----------------
//
// With VBMI2 a whole 64-byte step is one test, one vpcompressb/w (register
// form: the memory-destination form is slow on AMD) and one 64-byte store;
// decompression is one 64-byte load of kept elements, one vpexpandb/w and one
// store of 64 output bytes. The only serial work is the running offset.
bool has_vbmi2() { return isa_at_least(Isa::kAvx512Vbmi); }

#define LC_SPARSE_VBMI2 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi2,popcnt")))

// As compress_avx512. Stores stay inside the group's n elements: the output
// offset never passes the input one.
LC_SPARSE_VBMI2 uint64_t compress_vbmi2(const uint8_t* src, uint64_t n, uint64_t first, uint8_t* mask, uint8_t* out,
                                        uint64_t eb, uint64_t* kept_out) {
  uint64_t kept = 0, i = 0;  // bytes kept
  if (eb == 1) {
    for (; i + 64 <= n; i += 64) {
      const __m512i v = _mm512_loadu_si512(src + i);
      const __mmask64 m = _mm512_test_epi8_mask(v, v);
      const uint64_t bits = _cvtmask64_u64(m);
      std::memcpy(mask + (first + i) / 8, &bits, 8);
      _mm512_storeu_si512(out + kept, _mm512_maskz_compress_epi8(m, v));
      kept += static_cast<uint64_t>(_mm_popcnt_u64(bits));
    }
  } else {
    for (; i + 32 <= n; i += 32) {
      const __m512i v = _mm512_loadu_si512(src + 2 * i);
      const __mmask32 m = _mm512_test_epi16_mask(v, v);
      const uint32_t bits = _cvtmask32_u32(m);
      std::memcpy(mask + (first + i) / 8, &bits, 4);
      _mm512_storeu_si512(out + kept, _mm512_maskz_compress_epi16(m, v));
      kept += 2 * static_cast<uint64_t>(_mm_popcnt_u32(bits));
    }
  }
  *kept_out += kept / eb;
  return i;
}

// As expand_ssse3: whole 64-output-byte steps while the 64-byte loads stay
// inside the `size` bytes of data.
LC_SPARSE_VBMI2 uint64_t expand_vbmi2(const uint8_t* mask, uint64_t whole, const uint8_t* data, uint64_t* read,
                                      uint64_t size, uint8_t* out, uint64_t eb) {
  uint64_t b = 0, r = *read;
  if (eb == 1) {
    for (; b + 8 <= whole && r + 64 <= size; b += 8) {
      uint64_t bits;
      std::memcpy(&bits, mask + b, 8);
      const __m512i v = _mm512_loadu_si512(data + r);
      _mm512_storeu_si512(out + b * 8, _mm512_maskz_expand_epi8(_cvtu64_mask64(bits), v));
      r += static_cast<uint64_t>(_mm_popcnt_u64(bits));
    }
  } else {
    for (; b + 4 <= whole && r + 64 <= size; b += 4) {
      uint32_t bits;
      std::memcpy(&bits, mask + b, 4);
      const __m512i v = _mm512_loadu_si512(data + r);
      _mm512_storeu_si512(out + b * 16, _mm512_maskz_expand_epi16(_cvtu32_mask32(bits), v));
      r += 2 * static_cast<uint64_t>(_mm_popcnt_u32(bits));
    }
  }
  *read = r;
  return b;
}

#endif

}  // namespace

Result<CompressedWeights> compress(const Case& c, const void* physical, size_t physical_size) {
  LC_ASSIGN_OR_RETURN(Shape4 s, shape_of(c, physical_size));
  CompressedWeights out;
  out.wmb.assign(up128((s.total + 7) / 8), 0);
  out.wgs.assign(up128(4 * s.groups), 0);
  // Room for every element plus the store-ahead (up to 64 bytes) of the runs,
  // reserved and not zeroed: each group below sizes the vector only to what it
  // can write, so the zeroing covers the kept bytes, not the whole input
  // (4.5 MiB int8, half zeros, Zen 4, pinned, alternating: 0.61-0.66 -> 0.71-0.75
  // of memcpy).
  out.data.reserve(up128(s.total * s.eb + 64));
  const auto* src = static_cast<const uint8_t*>(physical);
  uint64_t kept = 0;
#if defined(LC_SPARSE_SSSE3)
  const CompressTables& ct = compress_tables();
#endif
  for (uint64_t g = 0; g < s.groups; ++g) {
    const uint64_t first = g * s.per_group, n = std::min(s.per_group, s.total - first);
    out.data.resize(std::max<uint64_t>(out.data.size(), (kept + n) * s.eb + 64));
    uint8_t* dst = out.data.data() + kept * s.eb;
    uint64_t k = 0, done = 0;
#if defined(LC_SPARSE_SSSE3)
    if (has_vbmi2()) done = compress_vbmi2(src + first * s.eb, n, first, out.wmb.data(), dst, s.eb, &k);
    else if (has_avx512()) done = compress_avx512(src + first * s.eb, n, first, out.wmb.data(), dst, s.eb, &k);
    else if (has_avx2()) done = compress_avx2(ct, src + first * s.eb, n, first, out.wmb.data(), dst, s.eb, &k);
    else if (has_ssse3()) done = compress_ssse3(ct, src + first * s.eb, n, first, out.wmb.data(), dst, s.eb, &k);
#endif
    const uint8_t* from = src + (first + done) * s.eb;
    uint8_t* to = dst + k * s.eb;
#if defined(__SSE2__)
    k += s.eb == 1 ? compress_run_sse2(from, n - done, first + done, out.wmb.data(), to)
                   : compress_run<uint16_t>(from, n - done, first + done, out.wmb.data(), to);
#else
    k += s.eb == 1 ? compress_run<uint8_t>(from, n - done, first + done, out.wmb.data(), to)
                   : compress_run<uint16_t>(from, n - done, first + done, out.wmb.data(), to);
#endif
    const uint32_t bytes = static_cast<uint32_t>(k * s.eb);
    std::memcpy(out.wgs.data() + 4 * g, &bytes, 4);  // little-endian host
    kept += k;
  }
  const uint64_t used = kept * s.eb;
  out.data.resize(up128(used));
  std::memset(out.data.data() + used, 0, out.data.size() - used);
  return out;
}

Status decompress(const Case& c, const CompressedWeights& in, void* physical, size_t physical_size) {
  LC_ASSIGN_OR_RETURN(Shape4 s, shape_of(c, physical_size));
  if (in.wmb.size() != up128((s.total + 7) / 8)) return Status::invalid("WMB surface has the wrong size");
  if (in.wgs.size() != up128(4 * s.groups)) return Status::invalid("WGS surface has the wrong size");
  for (uint64_t i = s.total; i < in.wmb.size() * 8; ++i) {
    if ((in.wmb[i / 8] >> (i % 8)) & 1) return Status::invalid("WMB padding bits are not 0");
  }
  for (uint64_t i = 4 * s.groups; i < in.wgs.size(); ++i) {
    if (in.wgs[i]) return Status::invalid("WGS padding is not 0");
  }
  auto* dst = static_cast<uint8_t*>(physical);
  std::memset(dst + s.total * s.eb, 0, physical_size - s.total * s.eb);  // past the weights
  const uint8_t* data = in.data.data();
  const ExpandTables& t = expand_tables();
  uint64_t read = 0;
  for (uint64_t g = 0; g < s.groups; ++g) {
    const uint64_t first = g * s.per_group, n = std::min(s.per_group, s.total - first);
    // Groups start on mask bytes: whole bytes by popcount, then the last bits.
    const uint8_t* mask = in.wmb.data() + first / 8;
    const uint64_t whole = n / 8;
    uint64_t kept = 0;
#if defined(LC_SPARSE_SSSE3)
    if (has_ssse3()) kept = count_popcnt(mask, whole);
    else
#endif
      for (uint64_t b = 0; b < whole; ++b) kept += t.count[mask[b]];
    if (n % 8) kept += t.count[mask[whole] & ((1u << (n % 8)) - 1)];
    uint32_t wgs;
    std::memcpy(&wgs, in.wgs.data() + 4 * g, 4);
    if (wgs != kept * s.eb) return Status::invalid("WGS of group " + std::to_string(g) + " disagrees with its mask");
    if (read + kept * s.eb > in.data.size()) return Status::invalid("compressed weight surface is too short");
    uint8_t* out = dst + first * s.eb;
    uint64_t b = 0;
#if defined(LC_SPARSE_SSSE3)
    if (has_vbmi2()) b = expand_vbmi2(mask, whole, data, &read, in.data.size(), out, s.eb);
    if (s.eb == 1 && has_avx2() && has_ssse3()) b += expand_avx2_u8(t, mask + b, whole - b, data, &read, in.data.size(), out + b * 8);
    if (has_ssse3()) b += expand_ssse3(t, mask + b, whole - b, data, &read, in.data.size(), out + b * 8 * s.eb, s.eb);
#endif
    // Eight elements per mask byte: zero them, then place the kept ones.
    for (; b < whole; ++b) {
      unsigned m = mask[b];
      uint8_t* o = out + b * 8 * s.eb;
      if (m == 0xFFu) {
        std::memcpy(o, data + read, 8 * s.eb);
        read += 8 * s.eb;
        continue;
      }
      std::memset(o, 0, 8 * s.eb);
      while (m != 0) {
        std::memcpy(o + static_cast<unsigned>(__builtin_ctz(m)) * s.eb, data + read, s.eb);
        read += s.eb;
        m &= m - 1;
      }
    }
    for (uint64_t i = whole * 8; i < n; ++i) {
      uint8_t* o = out + i * s.eb;
      if ((mask[i / 8] >> (i % 8)) & 1) {
        std::memcpy(o, data + read, s.eb);
        read += s.eb;
      } else {
        std::memset(o, 0, s.eb);
      }
    }
  }
  if (in.data.size() != up128(read)) return Status::invalid("compressed weight surface has the wrong size");
  for (uint64_t i = read; i < in.data.size(); ++i) {
    if (in.data[i]) return Status::invalid("compressed weight padding is not 0");
  }
  return Status();
}

}  // namespace layoutcheck::nvdla
