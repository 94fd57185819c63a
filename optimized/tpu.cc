// Fast pack/unpack for the Sophgo TPU layouts.
//
// Why it equals the reference: a local tensor puts channel c in NPU
// (Q + c) mod X at slot (Q + c) div X, so the channels of NPU p are the
// arithmetic progression c = (p - Q) mod X, +X, +2X, ...; every (n, c) feature
// whose W stride is one element and H stride is W elements is one contiguous
// run. When the N stride covers all slots, walking NPU p by (n, slot) visits
// its features in increasing address order, so the image is written once,
// front to back: gap (zeros), feature, gap, ..., tail. Storage modes interleave
// the lanes of `lanes` consecutive batches into one stored word (with
// AVX-512 or AVX2, chosen at run time, 64 bytes of every lane per step; the
// SSE2 and scalar loops of lane_interleave.h otherwise and for the ends).
// Images of kStreamBytes and more are written with streaming stores, whole
// lines. Any other stride order takes the general path: zero the image, copy
// row by row.
// Large images split over threads (optimized/threads.h) by NPU: NPU p's
// memory and the features it holds are written by one thread only (the
// general path: the image by ranges of lines, then the features by (n, c)).
#include <algorithm>
#include <cstring>

#include "core/case_cache.h"
#include "layoutcheck/checked.h"
#include "optimized/families.h"
#include "optimized/isa.h"
#include "optimized/lane_interleave.h"
#include "optimized/threads.h"

#if defined(__x86_64__) || defined(_M_X64)
// gcc 12 warns inside avx512fintrin.h, whose _mm512_undefined_* helpers read an
// uninitialized variable on purpose (a false positive for every intrinsic using them).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#define LC_TPU_X86 1
#endif

namespace layoutcheck {
namespace {

std::string str(uint64_t v) { return std::to_string(v); }

struct Plan {
  bool local = true;
  bool matrix = false;
  uint64_t npus = 1, lmem = 0, start_npu = 0, base = 0;
  uint64_t lanes = 1, lane_bytes = 1, word = 1;      // word = lanes * lane_bytes
  uint64_t batches = 0;                               // logical N
  uint64_t outer = 0, channels = 0, rows = 0, cols = 0;  // stored shape
  uint64_t matrix_cols = 0;                           // logical M of a matrix
  uint64_t slots = 1;
  uint64_t sn = 0, sc = 0, sh = 0, sw = 0;            // byte strides
  uint64_t image = 0;
  bool stream = false;  // write with streaming stores (image of kStreamBytes and more)
};

constexpr uint64_t kStreamBytes = 16u << 20;

uint64_t round_up(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }

Result<Plan> make_plan(const Case& c) {
  const LayoutSpec* spec = find_spec(c.layout.name);
  if (!spec) return Status::invalid("unknown layout " + c.layout.name);
  LC_RETURN_IF_ERROR(check_shape(*spec, c.shape));
  const uint32_t bits = dtype_bits(c.dtype);
  if (bits % 8 != 0) {
    return Status::invalid(std::string(dtype_name(c.dtype)) + " (" + std::to_string(bits) +
                           "-bit) is not a TPU data type: 8-, 16- or 32-bit").with_rule("tpu/dtype");
  }
  Plan p;
  const std::string kind = c.layout.name.substr(c.layout.name.find('.') + 1);
  const std::string mode = c.layout.params.count("mode") ? c.layout.get("mode") : "1n";
  p.lane_bytes = bits / 8;
  if (mode == "4n" || mode == "2n" || mode == "2ic") {
    static const struct { const char* mode; DType a, b; uint64_t lanes; } kModes[] = {
        {"4n", DType::kInt8, DType::kUInt8, 4}, {"2n", DType::kInt16, DType::kUInt16, 2},
        {"2ic", DType::kFp32, DType::kFp32, 2}};
    for (const auto& m : kModes) {
      if (mode != m.mode) continue;
      if (c.dtype != m.a && c.dtype != m.b) {
        return Status::invalid("storage mode " + mode + " does not take " + dtype_name(c.dtype) + " data");
      }
      p.lanes = m.lanes;
    }
  }
  p.word = p.lanes * p.lane_bytes;
  p.batches = c.shape[0];

  if (kind == "continuous") {
    p.local = false;
    p.outer = c.shape[0], p.channels = c.shape[1], p.rows = c.shape[2], p.cols = c.shape[3];
    p.sw = p.word;
    p.sh = p.sw * p.cols;
    p.sc = p.sh * p.rows;
    p.sn = p.sc * p.channels;
    p.image = p.sn * p.outer;
    return p;
  }

  if (kind == "system") {
    // System memory with strides: one NPU whose "local memory" is the buffer,
    // every channel in its own slot, so the local walks below apply unchanged.
    p.outer = c.shape[0], p.channels = c.shape[1], p.rows = c.shape[2], p.cols = c.shape[3];
    p.slots = p.channels;
    // Element strides (0 where the extent is 1: "makes no sense"), checked for
    // nesting in elements, then scaled to bytes.
    std::pair<uint64_t, uint64_t> d[4] = {{0, p.outer}, {0, p.channels}, {0, p.rows}, {0, p.cols}};
    const char* keys[4] = {"n", "c", "h", "w"};
    for (int k = 0; k < 4; ++k) d[k].first = d[k].second > 1 ? static_cast<uint64_t>(c.layout.get_int(keys[k])) : 0;
    uint64_t* bytes[4] = {&p.sn, &p.sc, &p.sh, &p.sw};
    for (int k = 0; k < 4; ++k) {
      if (!checked_mul(d[k].first, p.word, bytes[k])) *bytes[k] = UINT64_MAX;
    }
    std::sort(std::begin(d), std::end(d));
    uint64_t reach = 1;
    for (const auto& [stride, extent] : d) {
      if (extent == 1) continue;
      if (stride < reach) return Status::invalid("strides make elements overlap").with_rule("tpu.system/strides-disjoint");
      if (!checked_mul(stride, extent, &reach)) reach = UINT64_MAX;
    }
    Checked end = Checked(p.outer - 1) * p.sn + Checked(p.channels - 1) * p.sc + Checked(p.rows - 1) * p.sh +
                  Checked(p.cols - 1) * p.sw + p.word;
    if (!end.ok() || end.value() > (uint64_t{1} << 62)) {
      return Status::invalid("the buffer passes 2^62 bytes").with_rule("tpu.system/size-overflow");
    }
    p.lmem = p.image = end.value();
    p.stream = p.image >= kStreamBytes;
    return p;
  }

  p.npus = c.layout.get_int("npus");
  p.lmem = c.layout.get_int("lmem");
  const uint64_t addr = c.layout.get_int("addr");
  const uint64_t eu = c.layout.get_int("eu");
  if (!checked_mul(p.npus, p.lmem, &p.image)) return Status::invalid("npus * lmem overflows");
  if (addr >= p.image) {
    return Status::invalid("address " + str(addr) + " lies past the local memory image of " + str(p.image) + " bytes");
  }
  p.start_npu = addr / p.lmem;
  p.base = addr - p.start_npu * p.lmem;

  if (kind == "matrix") {
    p.matrix = true;
    p.matrix_cols = c.shape[1];
    p.cols = c.layout.get_int("w");
    if (p.cols == 0 || p.cols > p.matrix_cols) {
      return Status::invalid("matrix w=" + str(p.cols) + " must be within [1, " + str(p.matrix_cols) + "]");
    }
    p.outer = (p.batches + p.lanes - 1) / p.lanes;
    p.channels = (p.matrix_cols + p.cols - 1) / p.cols;
    p.rows = 1;
  } else {
    p.outer = (p.batches + p.lanes - 1) / p.lanes;
    p.channels = c.shape[1], p.rows = c.shape[2], p.cols = c.shape[3];
  }
  p.slots = (p.start_npu + p.channels + p.npus - 1) / p.npus;
  const uint64_t plane = p.rows * p.cols;  // bounded by element_count

  if (kind == "aligned" || kind == "matrix") {
    if (addr % 128 != 0) return Status::invalid("aligned layouts start at a multiple of 128, not " + str(addr));
    if (eu % p.word != 0) return Status::invalid("eu=" + str(eu) + " is not a multiple of the " + str(p.word) + "-byte word");
    p.sw = p.word;
    p.sh = p.word * p.cols;
    p.sc = round_up(plane, eu / p.word) * p.word;
    p.sn = p.sc * p.slots;
  } else if (kind == "compact") {
    if (addr % 4 != 0) return Status::invalid("compact layouts start at a multiple of 4, not " + str(addr));
    p.sw = p.word;
    p.sh = p.word * p.cols;
    p.sc = p.word * plane;
    p.sn = p.sc * p.slots;
  } else {
    if (addr % p.word != 0) return Status::invalid("strided address " + str(addr) + " is not word-aligned");
    // The stride of a dimension of extent 1 never scales an index other than 0,
    // so however large it is it places nothing and cannot overflow.
    auto stride_bytes = [&](const char* key, uint64_t extent, uint64_t* out) {
      if (extent <= 1) return *out = 0, true;
      Checked s = Checked(c.layout.get_int(key)) * p.word;
      return s.ok() ? (*out = s.value(), true) : false;
    };
    if (!stride_bytes("n", p.outer, &p.sn) || !stride_bytes("c", p.slots, &p.sc) ||
        !stride_bytes("h", p.rows, &p.sh) || !stride_bytes("w", p.cols, &p.sw)) {
      return Status::invalid("strides overflow");
    }
    // Non-overlap: with the used dimensions ordered by stride, each stride must
    // reach past the extent of the previous one.
    std::pair<uint64_t, uint64_t> d[4] = {{p.sn, p.outer}, {p.sc, p.slots}, {p.sh, p.rows}, {p.sw, p.cols}};
    std::sort(std::begin(d), std::end(d));
    uint64_t reach = p.word;
    for (const auto& [stride, extent] : d) {
      if (extent == 1) continue;
      if (stride < reach) return Status::invalid("strides make elements overlap");
      if (!checked_mul(stride, extent, &reach)) return Status::invalid("strides overflow");
    }
  }
  Checked last = Checked(p.outer - 1) * p.sn + Checked(p.slots - 1) * p.sc + Checked(p.rows - 1) * p.sh +
                 Checked(p.cols - 1) * p.sw + p.word + p.base;
  if (!last.ok() || last.value() > p.lmem) {
    return Status::invalid("tensor exceeds the " + str(p.lmem) + "-byte local memory of an NPU");
  }
  p.stream = p.image >= kStreamBytes;
  return p;
}

#if LC_TPU_X86
// The storage modes with AVX-512 (chosen at run time): 64 bytes of every lane
// per step, whole 64-byte stores and loads of the stored words. The lanes lie
// a batch apart, more streams than the hardware prefetchers follow, so each
// lane is fetched kPrefetchBytes ahead. Returns the words done; the caller's
// lane_interleave.h loop finishes the rest.
#define LC_TPU_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define LC_TPU_UNROLL _Pragma("GCC unroll 4")
constexpr uint64_t kPrefetchBytes = 3u << 10;  // how far ahead of its loads a lane is fetched
constexpr uint64_t kLine = 64;                 // bytes in a cache line

LC_TPU_AVX512 inline __m512i load_lane512(const uint8_t* lane, uint64_t byte) {
  if (!lane) return _mm512_setzero_si512();
  _mm_prefetch(reinterpret_cast<const char*>(lane + byte + kPrefetchBytes), _MM_HINT_T0);
  return _mm512_loadu_si512(reinterpret_cast<const void*>(lane + byte));
}
// kNt: a non-temporal store (p on a line boundary).
template <bool kNt>
LC_TPU_AVX512 inline void store512(uint8_t* p, __m512i v) {
  if (kNt) _mm512_stream_si512(reinterpret_cast<__m512i*>(p), v);
  else _mm512_storeu_si512(reinterpret_cast<void*>(p), v);
}

// 1N with streaming: 64 bytes per store.
template <bool kNt>
LC_TPU_AVX512 uint64_t copy1_avx512(uint8_t* dst, const uint8_t* src, uint64_t count, uint64_t word) {
  const uint64_t bytes = count * word / 256 * 256;
  for (uint64_t i = 0; i < bytes; i += 256) {
    LC_TPU_UNROLL
    for (uint64_t k = 0; k < 256; k += 64) {
      store512<kNt>(dst + i + k, _mm512_loadu_si512(reinterpret_cast<const void*>(src + i + k)));
    }
  }
  return bytes / word;
}

// 4N (4 lanes of 1 byte): byte and word unpacks build 16 words in every
// 128-bit lane (lane q of x_k: words 16q + 4k .. 16q + 4k + 3), a 4x4
// transpose of 128-bit lanes puts them in order.
template <bool kNt>
LC_TPU_AVX512 uint64_t interleave4_avx512(uint8_t* dst, const uint8_t* const* src, uint64_t count) {
  uint64_t i = 0;
  for (; i + 64 <= count; i += 64) {
    const __m512i a = load_lane512(src[0], i), b = load_lane512(src[1], i);
    const __m512i c = load_lane512(src[2], i), d = load_lane512(src[3], i);
    const __m512i ab0 = _mm512_unpacklo_epi8(a, b), ab1 = _mm512_unpackhi_epi8(a, b);
    const __m512i cd0 = _mm512_unpacklo_epi8(c, d), cd1 = _mm512_unpackhi_epi8(c, d);
    const __m512i x0 = _mm512_unpacklo_epi16(ab0, cd0), x1 = _mm512_unpackhi_epi16(ab0, cd0);
    const __m512i x2 = _mm512_unpacklo_epi16(ab1, cd1), x3 = _mm512_unpackhi_epi16(ab1, cd1);
    const __m512i s0 = _mm512_shuffle_i32x4(x0, x1, 0x44), s1 = _mm512_shuffle_i32x4(x2, x3, 0x44);
    const __m512i s2 = _mm512_shuffle_i32x4(x0, x1, 0xEE), s3 = _mm512_shuffle_i32x4(x2, x3, 0xEE);
    uint8_t* out = dst + i * 4;
    store512<kNt>(out, _mm512_shuffle_i32x4(s0, s1, 0x88));
    store512<kNt>(out + 64, _mm512_shuffle_i32x4(s0, s1, 0xDD));
    store512<kNt>(out + 128, _mm512_shuffle_i32x4(s2, s3, 0x88));
    store512<kNt>(out + 192, _mm512_shuffle_i32x4(s2, s3, 0xDD));
  }
  return i;
}

// 4N unpack: a byte shuffle per 128-bit lane gathers each lane of 4 words into
// one 32-bit word (word 4q + l: lane l of words 4q .. 4q + 3 of a load); two
// rounds of two-source permutes make the lanes.
template <bool kNt>
LC_TPU_AVX512 uint64_t deinterleave4_avx512(uint8_t* const* dst, const uint8_t* src, uint64_t count) {
  const __m512i gather = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  const __m512i l01 = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
  const __m512i l23 = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
  const __m512i lows = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
  const __m512i highs = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  uint64_t i = 0;
  for (; i + 64 <= count; i += 64) {
    const uint8_t* in = src + i * 4;
    __m512i z[4];
    LC_TPU_UNROLL
    for (int k = 0; k < 4; ++k) {
      z[k] = _mm512_shuffle_epi8(_mm512_loadu_si512(reinterpret_cast<const void*>(in + 64 * k)), gather);
    }
    const __m512i a01 = _mm512_permutex2var_epi32(z[0], l01, z[1]), a23 = _mm512_permutex2var_epi32(z[0], l23, z[1]);
    const __m512i b01 = _mm512_permutex2var_epi32(z[2], l01, z[3]), b23 = _mm512_permutex2var_epi32(z[2], l23, z[3]);
    const __m512i out[4] = {_mm512_permutex2var_epi32(a01, lows, b01), _mm512_permutex2var_epi32(a01, highs, b01),
                            _mm512_permutex2var_epi32(a23, lows, b23), _mm512_permutex2var_epi32(a23, highs, b23)};
    LC_TPU_UNROLL
    for (int k = 0; k < 4; ++k) {
      if (dst[k]) store512<kNt>(dst[k] + i, out[k]);
    }
  }
  return i;
}

// 2N / 2IC (2 lanes of 2 or 4 bytes): one two-source permute per 64 bytes of
// stored words, each way.
template <uint64_t kLaneBytes, bool kNt>
LC_TPU_AVX512 uint64_t interleave2_avx512(uint8_t* dst, const uint8_t* const* src, uint64_t count) {
  constexpr uint64_t kStep = 64 / kLaneBytes;  // elements of one lane per vector
  __m512i lo, hi;
  if (kLaneBytes == 2) {
    lo = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38, 6, 37, 5, 36, 4, 35,
                          3, 34, 2, 33, 1, 32, 0);
    hi = _mm512_set_epi16(63, 31, 62, 30, 61, 29, 60, 28, 59, 27, 58, 26, 57, 25, 56, 24, 55, 23, 54, 22, 53, 21, 52,
                          20, 51, 19, 50, 18, 49, 17, 48, 16);
  } else {
    lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  }
  uint64_t i = 0;
  for (; i + kStep <= count; i += kStep) {
    const __m512i a = load_lane512(src[0], i * kLaneBytes), b = load_lane512(src[1], i * kLaneBytes);
    uint8_t* out = dst + i * 2 * kLaneBytes;
    if (kLaneBytes == 2) {
      store512<kNt>(out, _mm512_permutex2var_epi16(a, lo, b));
      store512<kNt>(out + 64, _mm512_permutex2var_epi16(a, hi, b));
    } else {
      store512<kNt>(out, _mm512_permutex2var_epi32(a, lo, b));
      store512<kNt>(out + 64, _mm512_permutex2var_epi32(a, hi, b));
    }
  }
  return i;
}

template <uint64_t kLaneBytes, bool kNt>
LC_TPU_AVX512 uint64_t deinterleave2_avx512(uint8_t* const* dst, const uint8_t* src, uint64_t count) {
  constexpr uint64_t kStep = 64 / kLaneBytes;
  __m512i even, odd;
  if (kLaneBytes == 2) {
    even = _mm512_set_epi16(62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28, 26, 24, 22, 20, 18,
                            16, 14, 12, 10, 8, 6, 4, 2, 0);
    odd = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29, 27, 25, 23, 21, 19,
                           17, 15, 13, 11, 9, 7, 5, 3, 1);
  } else {
    even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  }
  uint64_t i = 0;
  for (; i + kStep <= count; i += kStep) {
    const uint8_t* in = src + i * 2 * kLaneBytes;
    const __m512i w0 = _mm512_loadu_si512(reinterpret_cast<const void*>(in));
    const __m512i w1 = _mm512_loadu_si512(reinterpret_cast<const void*>(in + 64));
    const __m512i sel[2] = {even, odd};
    for (int l = 0; l < 2; ++l) {
      if (!dst[l]) continue;
      store512<kNt>(dst[l] + i * kLaneBytes, kLaneBytes == 2 ? _mm512_permutex2var_epi16(w0, sel[l], w1)
                                                        : _mm512_permutex2var_epi32(w0, sel[l], w1));
    }
  }
  return i;
}

// The same with AVX2 (hosts without AVX-512): 64 bytes of every lane per
// step, as two 32-byte halves; the in-lane unpacks and shuffles of AVX2 and a
// closing exchange of 128-bit lanes (vperm2i128) put the words in order
// (measured on a Zen 5 capped at AVX2, 16 MiB images, best of 7, against the
// SSE2 loops: 4N int8 pack / unpack 0.86 / 0.64 of memcpy -> 1.28 / 1.48, 2N
// int16 0.88 / 0.83 -> 1.33 / 1.61, compact int8 unpack 1.25 -> 1.47). The
// unpacks store each lane's line as its two halves one after the other (a
// half of every lane in turn before: measured on a Zen 4 capped at AVX2,
// pinned, alternating, 4N int8 16 MiB unpack 0.76-0.85 -> 0.65-0.75 ms, the
// AVX-512 loop's 0.60-0.68; 2N int16 par to 5% faster).
#define LC_TPU_AVX2 __attribute__((target("avx2")))

LC_TPU_AVX2 inline __m256i load_lane256(const uint8_t* lane, uint64_t byte, bool fetch) {
  if (!lane) return _mm256_setzero_si256();
  if (fetch) _mm_prefetch(reinterpret_cast<const char*>(lane + byte + kPrefetchBytes), _MM_HINT_T0);
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lane + byte));
}
template <bool kNt>
LC_TPU_AVX2 inline void store256(uint8_t* p, __m256i v) {
  if (kNt) _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v);
  else _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
}
// Lanes 0 of a and b, and lanes 1 of a and b.
LC_TPU_AVX2 inline __m256i low_lanes(__m256i a, __m256i b) { return _mm256_permute2x128_si256(a, b, 0x20); }
LC_TPU_AVX2 inline __m256i high_lanes(__m256i a, __m256i b) { return _mm256_permute2x128_si256(a, b, 0x31); }

template <bool kNt>
LC_TPU_AVX2 uint64_t copy1_avx2(uint8_t* dst, const uint8_t* src, uint64_t count, uint64_t word) {
  const uint64_t bytes = count * word / 128 * 128;
  for (uint64_t i = 0; i < bytes; i += 128) {
    LC_TPU_UNROLL
    for (uint64_t k = 0; k < 128; k += 32) {
      store256<kNt>(dst + i + k, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + k)));
    }
  }
  return bytes / word;
}

// 4N: in each half, lane h of x0..x3 holds words 16h + 4k .. 16h + 4k + 3
// (byte, then word unpacks of the four lanes), so words 0-7 are the low
// lanes of x0 and x1.
template <bool kNt>
LC_TPU_AVX2 uint64_t interleave4_avx2(uint8_t* dst, const uint8_t* const* src, uint64_t count) {
  uint64_t i = 0;
  for (; i + 64 <= count; i += 64) {
    LC_TPU_UNROLL
    for (uint64_t h = 0; h < 64; h += 32) {
      const __m256i a = load_lane256(src[0], i + h, h == 0), b = load_lane256(src[1], i + h, h == 0);
      const __m256i c = load_lane256(src[2], i + h, h == 0), d = load_lane256(src[3], i + h, h == 0);
      const __m256i ab0 = _mm256_unpacklo_epi8(a, b), ab1 = _mm256_unpackhi_epi8(a, b);
      const __m256i cd0 = _mm256_unpacklo_epi8(c, d), cd1 = _mm256_unpackhi_epi8(c, d);
      const __m256i x0 = _mm256_unpacklo_epi16(ab0, cd0), x1 = _mm256_unpackhi_epi16(ab0, cd0);
      const __m256i x2 = _mm256_unpacklo_epi16(ab1, cd1), x3 = _mm256_unpackhi_epi16(ab1, cd1);
      uint8_t* out = dst + (i + h) * 4;
      store256<kNt>(out, low_lanes(x0, x1));
      store256<kNt>(out + 32, low_lanes(x2, x3));
      store256<kNt>(out + 64, high_lanes(x0, x1));
      store256<kNt>(out + 96, high_lanes(x2, x3));
    }
  }
  return i;
}

// 4N unpack: a byte shuffle per lane and a dword permute leave in qword l of
// z_k lane l of words 8k .. 8k + 7; a 4 x 4 transpose of qwords makes the lanes.
template <bool kNt>
LC_TPU_AVX2 uint64_t deinterleave4_avx2(uint8_t* const* dst, const uint8_t* src, uint64_t count) {
  const __m256i gather = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0, 4, 8, 12, 1, 5, 9,
                                          13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m256i pairs = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  uint64_t i = 0;
  for (; i + 64 <= count; i += 64) {
    __m256i out[2][4];  // half h of lane k's 64 bytes
    LC_TPU_UNROLL
    for (int h = 0; h < 2; ++h) {
      const uint8_t* in = src + (i + 32 * h) * 4;
      __m256i z[4];
      LC_TPU_UNROLL
      for (int k = 0; k < 4; ++k) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 32 * k));
        z[k] = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, gather), pairs);
      }
      const __m256i lo01 = _mm256_unpacklo_epi64(z[0], z[1]), hi01 = _mm256_unpackhi_epi64(z[0], z[1]);
      const __m256i lo23 = _mm256_unpacklo_epi64(z[2], z[3]), hi23 = _mm256_unpackhi_epi64(z[2], z[3]);
      out[h][0] = low_lanes(lo01, lo23), out[h][1] = low_lanes(hi01, hi23);
      out[h][2] = high_lanes(lo01, lo23), out[h][3] = high_lanes(hi01, hi23);
    }
    LC_TPU_UNROLL
    for (int k = 0; k < 4; ++k) {  // a lane's line, its halves one after the other
      if (!dst[k]) continue;
      store256<kNt>(dst[k] + i, out[0][k]);
      store256<kNt>(dst[k] + i + 32, out[1][k]);
    }
  }
  return i;
}

// 2N / 2IC: the unpacks of the two lanes' halves, the lanes exchanged.
template <uint64_t kLaneBytes, bool kNt>
LC_TPU_AVX2 uint64_t interleave2_avx2(uint8_t* dst, const uint8_t* const* src, uint64_t count) {
  constexpr uint64_t kStep = 64 / kLaneBytes;  // elements of one lane per step
  uint64_t i = 0;
  for (; i + kStep <= count; i += kStep) {
    LC_TPU_UNROLL
    for (uint64_t h = 0; h < 64; h += 32) {
      const __m256i a = load_lane256(src[0], i * kLaneBytes + h, h == 0);
      const __m256i b = load_lane256(src[1], i * kLaneBytes + h, h == 0);
      const __m256i lo = kLaneBytes == 2 ? _mm256_unpacklo_epi16(a, b) : _mm256_unpacklo_epi32(a, b);
      const __m256i hi = kLaneBytes == 2 ? _mm256_unpackhi_epi16(a, b) : _mm256_unpackhi_epi32(a, b);
      uint8_t* out = dst + i * 2 * kLaneBytes + 2 * h;
      store256<kNt>(out, low_lanes(lo, hi));
      store256<kNt>(out + 32, high_lanes(lo, hi));
    }
  }
  return i;
}

// 2N / 2IC unpack: each 32 bytes of words into [lane 0 | lane 1] halves
// (a byte shuffle per 128-bit lane and a qword permute, or a dword permute),
// then the low halves of two such make lane 0.
template <uint64_t kLaneBytes, bool kNt>
LC_TPU_AVX2 uint64_t deinterleave2_avx2(uint8_t* const* dst, const uint8_t* src, uint64_t count) {
  constexpr uint64_t kStep = 64 / kLaneBytes;
  const __m256i split16 = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1, 4, 5, 8, 9, 12,
                                           13, 2, 3, 6, 7, 10, 11, 14, 15);
  const __m256i split32 = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  const auto split = [&](const uint8_t* at) LC_TPU_AVX2 {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
    return kLaneBytes == 2 ? _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, split16), _MM_SHUFFLE(3, 1, 2, 0))
                           : _mm256_permutevar8x32_epi32(v, split32);
  };
  uint64_t i = 0;
  for (; i + kStep <= count; i += kStep) {
    const uint8_t* in = src + i * 2 * kLaneBytes;
    const __m256i w0 = split(in), w1 = split(in + 32), w2 = split(in + 64), w3 = split(in + 96);
    if (dst[0]) {  // a lane's line, its halves one after the other
      store256<kNt>(dst[0] + i * kLaneBytes, low_lanes(w0, w1));
      store256<kNt>(dst[0] + i * kLaneBytes + 32, low_lanes(w2, w3));
    }
    if (dst[1]) {
      store256<kNt>(dst[1] + i * kLaneBytes, high_lanes(w0, w1));
      store256<kNt>(dst[1] + i * kLaneBytes + 32, high_lanes(w2, w3));
    }
  }
  return i;
}
#endif  // LC_TPU_X86

// The lane sources of the words from `done` on.
template <typename P>
void advance_lanes(P* const* lanes, uint64_t n, uint64_t done, uint64_t lane_bytes, P** out) {
  for (uint64_t l = 0; l < n; ++l) out[l] = lanes[l] ? lanes[l] + done * lane_bytes : nullptr;
}

// Copies `count` stored words between a physical run and the logical lane
// sources feeding it with the loops of lane_interleave.h.
template <bool kPack>
void copy_run_sse(const Plan& p, uint8_t* phys, uint8_t* const* lanes, uint64_t count) {
  if (p.lanes == 1) {
    if (kPack) std::memcpy(phys, lanes[0], count * p.word);
    else std::memcpy(lanes[0], phys, count * p.word);
  } else if (p.lanes == 4) {
    kPack ? lanes::interleave<4, 1>(phys, lanes, count) : lanes::deinterleave<4, 1>(lanes, phys, count);
  } else if (p.lane_bytes == 2) {
    kPack ? lanes::interleave<2, 2>(phys, lanes, count) : lanes::deinterleave<2, 2>(lanes, phys, count);
  } else {
    kPack ? lanes::interleave<2, 4>(phys, lanes, count) : lanes::deinterleave<2, 4>(lanes, phys, count);
  }
}

// The same; interleaved modes with AVX-512 when the level allows it, and for
// images of kStreamBytes and more (Plan::stream) every mode with streaming
// stores. The words up to the first line boundary of the side written (the
// stored words when packing, the lanes when unpacking, if they share their
// offset in a line) go first, so that every 64-byte store writes within one
// line; a streamed store needs that.
#if LC_TPU_X86
template <bool kNt>
uint64_t copy_run_avx512(bool pack, const Plan& p, uint8_t* phys, uint8_t* const* lanes, uint64_t count) {
  if (p.lanes == 1) {
    return pack ? copy1_avx512<kNt>(phys, lanes[0], count, p.word) : copy1_avx512<kNt>(lanes[0], phys, count, p.word);
  }
  if (p.lanes == 4) return pack ? interleave4_avx512<kNt>(phys, lanes, count) : deinterleave4_avx512<kNt>(lanes, phys, count);
  if (p.lane_bytes == 2) {
    return pack ? interleave2_avx512<2, kNt>(phys, lanes, count) : deinterleave2_avx512<2, kNt>(lanes, phys, count);
  }
  return pack ? interleave2_avx512<4, kNt>(phys, lanes, count) : deinterleave2_avx512<4, kNt>(lanes, phys, count);
}
#endif

#if LC_TPU_X86
template <bool kNt>
uint64_t copy_run_avx2(bool pack, const Plan& p, uint8_t* phys, uint8_t* const* lanes, uint64_t count) {
  if (p.lanes == 1) {
    return pack ? copy1_avx2<kNt>(phys, lanes[0], count, p.word) : copy1_avx2<kNt>(lanes[0], phys, count, p.word);
  }
  if (p.lanes == 4) return pack ? interleave4_avx2<kNt>(phys, lanes, count) : deinterleave4_avx2<kNt>(lanes, phys, count);
  if (p.lane_bytes == 2) {
    return pack ? interleave2_avx2<2, kNt>(phys, lanes, count) : deinterleave2_avx2<2, kNt>(lanes, phys, count);
  }
  return pack ? interleave2_avx2<4, kNt>(phys, lanes, count) : deinterleave2_avx2<4, kNt>(lanes, phys, count);
}
#endif

template <bool kPack>
void copy_run(const Plan& p, uint8_t* phys, uint8_t* const* lanes, uint64_t count) {
#if LC_TPU_X86
  const bool simd = p.lanes > 1 ? p.lane_bytes == 1 || p.lane_bytes == 2 || p.lane_bytes == 4
                                : p.stream && kLine % p.word == 0 && lanes[0] != nullptr;
  const bool avx512 = isa_at_least(Isa::kAvx512);
  if (simd && (avx512 || isa_at_least(Isa::kAvx2))) {
    uint64_t head = 0;
    bool aligned = false;
    if (kPack) {
      const uint64_t m = reinterpret_cast<uintptr_t>(phys) % kLine;
      aligned = m % p.word == 0;
      head = aligned ? (kLine - m) % kLine / p.word : 0;
    } else {
      for (uint64_t l = 0; l < p.lanes; ++l) {
        if (!lanes[l]) continue;
        const uint64_t m = reinterpret_cast<uintptr_t>(lanes[l]) % kLine;
        const uint64_t h = (kLine - m) % kLine / p.lane_bytes;
        if (m % p.lane_bytes != 0 || (aligned && h != head)) {
          aligned = false;
          head = 0;
          break;
        }
        head = h;
        aligned = true;
      }
    }
    head = std::min(head, count);
    if (head > 0) copy_run_sse<kPack>(p, phys, lanes, head);
    uint8_t* at[4] = {nullptr, nullptr, nullptr, nullptr};
    advance_lanes(lanes, p.lanes, head, p.lane_bytes, at);
    uint8_t* out = phys + head * p.word;
    const uint64_t n = count - head;
    const bool nt = p.stream && aligned;
    const uint64_t done = avx512 ? (nt ? copy_run_avx512<true>(kPack, p, out, at, n)
                                       : copy_run_avx512<false>(kPack, p, out, at, n))
                                 : (nt ? copy_run_avx2<true>(kPack, p, out, at, n)
                                       : copy_run_avx2<false>(kPack, p, out, at, n));
    if (done < n) {
      uint8_t* rest[4] = {nullptr, nullptr, nullptr, nullptr};
      advance_lanes(lanes, p.lanes, head + done, p.lane_bytes, rest);
      copy_run_sse<kPack>(p, out + done * p.word, rest, n - done);
    }
    return;
  }
#endif
  copy_run_sse<kPack>(p, phys, lanes, count);
}

// Logical sources of stored element (m, c, h, w) for each lane.
struct LaneSources {
  uint8_t* ptr[4] = {nullptr, nullptr, nullptr, nullptr};
};

LaneSources lanes_at(const Plan& p, uint8_t* logical, uint64_t m, uint64_t c, uint64_t h, uint64_t w) {
  LaneSources out;
  if (p.matrix) {
    for (uint64_t l = 0; l < p.lanes; ++l) {
      const uint64_t row = m * p.lanes + l;
      if (row < p.batches) out.ptr[l] = logical + (row * p.matrix_cols + c * p.cols + w) * p.lane_bytes;
    }
    return out;
  }
  const uint64_t plane = p.rows * p.cols;
  for (uint64_t l = 0; l < p.lanes; ++l) {
    uint64_t n = m * p.lanes + l;
    if (n < p.batches) out.ptr[l] = logical + ((n * p.channels + c) * plane + h * p.cols + w) * p.lane_bytes;
  }
  return out;
}

uint64_t feature_words(const Plan& p, uint64_t c) {
  if (p.matrix && c + 1 == p.channels) return p.matrix_cols - c * p.cols;
  return p.rows * p.cols;
}

template <bool kPack>
void walk_runs(const Plan& p, uint8_t* logical, uint8_t* phys);

// Every run, then a fence for the streaming stores.
template <bool kPack>
void walk(const Plan& p, uint8_t* logical, uint8_t* phys) {
  walk_runs<kPack>(p, logical, phys);
#if LC_TPU_X86
  if (p.stream) _mm_sfence();
#endif
}

// Runs body(begin, end) over [0, n) on the threads the image takes: directly
// with one thread, else through parallel_ranges, each thread fencing its own
// streaming stores.
template <typename Body>
void split(const Plan& p, uint64_t n, Body&& body) {
  if (std::min<uint64_t>(resolve_threads(requested_threads(), p.image), n) <= 1) {
    body(0, n);
    return;
  }
  parallel_ranges(n, p.image, [&](uint64_t begin, uint64_t end) {
    body(begin, end);
#if LC_TPU_X86
    if (p.stream) _mm_sfence();
#endif
  });
}

constexpr uint64_t kChunkBytes = 64u << 10;  // a unit of a threaded copy or fill of the whole image

template <bool kPack>
void walk_runs(const Plan& p, uint8_t* logical, uint8_t* phys) {
  const bool contiguous_feature = p.sw == p.word && (p.rows == 1 || p.sh == p.cols * p.word);
  if (!p.local) {
    split(p, ceil_div(p.image, kChunkBytes), [&](uint64_t begin, uint64_t end) {
      const uint64_t from = begin * kChunkBytes, n = std::min(end * kChunkBytes, p.image) - from;
      if (kPack) std::memcpy(phys + from, logical + from, n);
      else std::memcpy(logical + from, phys + from, n);
    });
    return;
  }
  const bool ordered = p.sn >= p.slots * p.sc || p.outer == 1;
  if (contiguous_feature && (p.slots == 1 || p.sc >= p.rows * p.cols * p.word) && ordered) {
    // One front-to-back pass over each NPU's memory.
    split(p, p.npus, [&](uint64_t npu_begin, uint64_t npu_end) {
      // The first channel on each NPU, counted up rather than divided for (a
      // division an NPU was most of a small tensor's unpack).
      uint64_t first = (npu_begin + p.npus - p.start_npu % p.npus) % p.npus;
      for (uint64_t npu = npu_begin; npu < npu_end; ++npu, first = first + 1 == p.npus ? 0 : first + 1) {
        uint8_t* cursor = phys + npu * p.lmem;
        uint8_t* npu_base = cursor + p.base;
        if (!kPack && first >= p.channels) continue;  // an NPU holding none of the channels
        for (uint64_t m = 0; m < p.outer; ++m) {
          for (uint64_t c = first; c < p.channels; c += p.npus) {
            uint8_t* dst = npu_base + m * p.sn + (p.start_npu + c) / p.npus * p.sc;
            if (kPack) std::memset(cursor, 0, static_cast<size_t>(dst - cursor));
            uint64_t words = feature_words(p, c);
            LaneSources src = lanes_at(p, logical, m, c, 0, 0);
            copy_run<kPack>(p, dst, src.ptr, words);
            cursor = dst + words * p.word;
          }
        }
        if (kPack) std::memset(cursor, 0, static_cast<size_t>(phys + (npu + 1) * p.lmem - cursor));
      }
    });
    return;
  }
  // General strides: zero everything, then copy row by row.
  if (kPack) {
    split(p, ceil_div(p.image, kChunkBytes), [&](uint64_t begin, uint64_t end) {
      const uint64_t from = begin * kChunkBytes;
      std::memset(phys + from, 0, std::min(end * kChunkBytes, p.image) - from);
    });
  }
  split(p, p.outer * p.channels, [&](uint64_t begin, uint64_t end) {
    for (uint64_t f = begin; f < end; ++f) {
      const uint64_t m = f / p.channels, c = f % p.channels;
      const uint64_t chan = p.start_npu + c;
      uint8_t* feature = phys + (chan % p.npus) * p.lmem + p.base + m * p.sn + chan / p.npus * p.sc;
      for (uint64_t h = 0; h < p.rows; ++h) {
        uint8_t* row = feature + h * p.sh;
        if (p.sw == p.word) {
          LaneSources src = lanes_at(p, logical, m, c, h, 0);
          copy_run<kPack>(p, row, src.ptr, p.cols);
          continue;
        }
        for (uint64_t w = 0; w < p.cols; ++w) {
          LaneSources src = lanes_at(p, logical, m, c, h, w);
          copy_run<kPack>(p, row + w * p.sw, src.ptr, 1);
        }
      }
    }
  });
}

// The checker asks one case many questions: each derives the plan once (core/case_cache.h).
Result<std::shared_ptr<const Plan>> cached_make_plan(const Case& c) {
  thread_local CaseCache<Plan> cache;
  return cache.get(c, make_plan);
}

class TpuOptimized : public Impl {
 public:
  std::string name() const override { return "optimized"; }
  Status supports(const Case& c) const override { return cached_make_plan(c).status(); }
  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_make_plan(c));
    const Plan& p = *p_ptr;
    return p.image;
  }
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_make_plan(c));
    const Plan& p = *p_ptr;
    LC_RETURN_IF_ERROR(check_coord(c, at));
    uint64_t m = at[0], ch, h = 0, w, lane = 0;
    if (p.matrix) {
      m = at[0] / p.lanes;
      lane = at[0] - m * p.lanes;
      ch = at[1] / p.cols;
      w = at[1] - ch * p.cols;
    } else {
      m = at[0] / p.lanes;
      lane = at[0] - m * p.lanes;
      ch = at[1], h = at[2], w = at[3];
    }
    uint64_t byte = m * p.sn + h * p.sh + w * p.sw + lane * p.lane_bytes;
    if (p.local) {
      const uint64_t chan = p.start_npu + ch;
      byte += (chan % p.npus) * p.lmem + p.base + chan / p.npus * p.sc;
    } else {
      byte += ch * p.sc;
    }
    return byte * 8;
  }
  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_make_plan(c));
    const Plan& p = *p_ptr;
    LC_RETURN_IF_ERROR(check_buffers(c, p.image, logical_size, physical_size));
    walk<true>(p, const_cast<uint8_t*>(static_cast<const uint8_t*>(logical)), static_cast<uint8_t*>(physical));
    return Status();
  }
  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_make_plan(c));
    const Plan& p = *p_ptr;
    LC_RETURN_IF_ERROR(check_buffers(c, p.image, logical_size, physical_size));
    walk<false>(p, static_cast<uint8_t*>(logical), const_cast<uint8_t*>(static_cast<const uint8_t*>(physical)));
    return Status();
  }
};

}  // namespace

const Impl& tpu_optimized() {
  static const TpuOptimized impl;
  return impl;
}

}  // namespace layoutcheck
