// Interleaving the lanes of packed storage words (TPU 4N / 2N / 2IC modes;
// MegEngine NCHW4 of 16-bit elements: 4 lanes of 2 bytes; NVDLA weights of
// 2 and 4 positions).
//
// Word i of the physical run holds element i of each lane source, lane 0 at
// the lowest address. SSE2 unpack instructions interleave (pack) and
// de-interleave (unpack) 16 bytes per lane per step; a scalar loop finishes
// the tail. A null lane source is a dummy lane: zeros when packing, skipped
// when unpacking.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace layoutcheck::lanes {

template <uint64_t kLanes, uint64_t kLaneBytes>
inline void scalar_interleave(uint8_t* dst, const uint8_t* const* src, uint64_t begin, uint64_t end) {
  for (uint64_t i = begin; i < end; ++i) {
    for (uint64_t l = 0; l < kLanes; ++l) {
      uint8_t* out = dst + (i * kLanes + l) * kLaneBytes;
      if (src[l]) std::memcpy(out, src[l] + i * kLaneBytes, kLaneBytes);
      else std::memset(out, 0, kLaneBytes);
    }
  }
}

template <uint64_t kLanes, uint64_t kLaneBytes>
inline void scalar_deinterleave(uint8_t* const* dst, const uint8_t* src, uint64_t begin, uint64_t end) {
  for (uint64_t i = begin; i < end; ++i) {
    for (uint64_t l = 0; l < kLanes; ++l) {
      if (dst[l]) std::memcpy(dst[l] + i * kLaneBytes, src + (i * kLanes + l) * kLaneBytes, kLaneBytes);
    }
  }
}

#if defined(__SSE2__)
inline __m128i load_lane(const uint8_t* lane, uint64_t byte) {
  return lane ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(lane + byte)) : _mm_setzero_si128();
}
inline void store(uint8_t* p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
inline void store_lane(uint8_t* lane, uint64_t byte, __m128i v) {
  if (lane) store(lane + byte, v);
}
#endif

// dst: count words of kLanes * kLaneBytes bytes.
template <uint64_t kLanes, uint64_t kLaneBytes>
inline void interleave(uint8_t* dst, const uint8_t* const* src, uint64_t count) {
  uint64_t i = 0;
#if defined(__SSE2__)
  constexpr uint64_t kStep = 16 / kLaneBytes;  // elements of one lane per vector
  for (; i + kStep <= count; i += kStep) {
    const uint64_t byte = i * kLaneBytes;
    uint8_t* out = dst + i * kLanes * kLaneBytes;
    const __m128i a = load_lane(src[0], byte), b = load_lane(src[1], byte);
    if constexpr (kLanes == 4 && kLaneBytes == 1) {
      const __m128i c = load_lane(src[2], byte), d = load_lane(src[3], byte);
      const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
      const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
      store(out, _mm_unpacklo_epi16(ab_lo, cd_lo));
      store(out + 16, _mm_unpackhi_epi16(ab_lo, cd_lo));
      store(out + 32, _mm_unpacklo_epi16(ab_hi, cd_hi));
      store(out + 48, _mm_unpackhi_epi16(ab_hi, cd_hi));
    } else if constexpr (kLanes == 4) {  // 2-byte lanes
      const __m128i c = load_lane(src[2], byte), d = load_lane(src[3], byte);
      const __m128i ab_lo = _mm_unpacklo_epi16(a, b), ab_hi = _mm_unpackhi_epi16(a, b);
      const __m128i cd_lo = _mm_unpacklo_epi16(c, d), cd_hi = _mm_unpackhi_epi16(c, d);
      store(out, _mm_unpacklo_epi32(ab_lo, cd_lo));
      store(out + 16, _mm_unpackhi_epi32(ab_lo, cd_lo));
      store(out + 32, _mm_unpacklo_epi32(ab_hi, cd_hi));
      store(out + 48, _mm_unpackhi_epi32(ab_hi, cd_hi));
    } else if constexpr (kLaneBytes == 2) {
      store(out, _mm_unpacklo_epi16(a, b));
      store(out + 16, _mm_unpackhi_epi16(a, b));
    } else if constexpr (kLaneBytes == 1) {
      store(out, _mm_unpacklo_epi8(a, b));
      store(out + 16, _mm_unpackhi_epi8(a, b));
    } else {
      store(out, _mm_unpacklo_epi32(a, b));
      store(out + 16, _mm_unpackhi_epi32(a, b));
    }
  }
#endif
  scalar_interleave<kLanes, kLaneBytes>(dst, src, i, count);
}

template <uint64_t kLanes, uint64_t kLaneBytes>
inline void deinterleave(uint8_t* const* dst, const uint8_t* src, uint64_t count) {
  uint64_t i = 0;
#if defined(__SSE2__)
  constexpr uint64_t kStep = 16 / kLaneBytes;
  for (; i + kStep <= count; i += kStep) {
    const uint64_t byte = i * kLaneBytes;
    const uint8_t* in = src + i * kLanes * kLaneBytes;
    const __m128i w0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
    const __m128i w1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16));
    if constexpr (kLanes == 4 && kLaneBytes == 2) {
      const __m128i w2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 32));
      const __m128i w3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 48));
      // Words 0-1, 2-3, 4-5, 6-7: word unpacks twice leave lanes 0-1 of
      // words 0-3 (4-7) in u0 (v0) and lanes 2-3 in u1 (v1).
      const __m128i t0 = _mm_unpacklo_epi16(w0, w1), t1 = _mm_unpackhi_epi16(w0, w1);
      const __m128i t2 = _mm_unpacklo_epi16(w2, w3), t3 = _mm_unpackhi_epi16(w2, w3);
      const __m128i u0 = _mm_unpacklo_epi16(t0, t1), u1 = _mm_unpackhi_epi16(t0, t1);
      const __m128i v0 = _mm_unpacklo_epi16(t2, t3), v1 = _mm_unpackhi_epi16(t2, t3);
      store_lane(dst[0], byte, _mm_unpacklo_epi64(u0, v0));
      store_lane(dst[1], byte, _mm_unpackhi_epi64(u0, v0));
      store_lane(dst[2], byte, _mm_unpacklo_epi64(u1, v1));
      store_lane(dst[3], byte, _mm_unpackhi_epi64(u1, v1));
    } else if constexpr (kLanes == 4) {
      const __m128i w2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 32));
      const __m128i w3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 48));
      // Three rounds of byte unpacking transpose the 4x16 byte matrix.
      const __m128i t0 = _mm_unpacklo_epi8(w0, w1), t1 = _mm_unpackhi_epi8(w0, w1);
      const __m128i t2 = _mm_unpacklo_epi8(w2, w3), t3 = _mm_unpackhi_epi8(w2, w3);
      const __m128i u0 = _mm_unpacklo_epi8(t0, t1), u1 = _mm_unpackhi_epi8(t0, t1);
      const __m128i u2 = _mm_unpacklo_epi8(t2, t3), u3 = _mm_unpackhi_epi8(t2, t3);
      const __m128i v0 = _mm_unpacklo_epi8(u0, u1), v1 = _mm_unpackhi_epi8(u0, u1);
      const __m128i v2 = _mm_unpacklo_epi8(u2, u3), v3 = _mm_unpackhi_epi8(u2, u3);
      store_lane(dst[0], byte, _mm_unpacklo_epi64(v0, v2));
      store_lane(dst[1], byte, _mm_unpackhi_epi64(v0, v2));
      store_lane(dst[2], byte, _mm_unpacklo_epi64(v1, v3));
      store_lane(dst[3], byte, _mm_unpackhi_epi64(v1, v3));
    } else if constexpr (kLaneBytes == 1) {
      // Bytes a0 b0 a1 b1 ...: the even bytes (the words' low halves) and the
      // odd ones, each pair of registers packed back to bytes.
      const __m128i low = _mm_set1_epi16(0x00FF);
      store_lane(dst[0], byte, _mm_packus_epi16(_mm_and_si128(w0, low), _mm_and_si128(w1, low)));
      store_lane(dst[1], byte, _mm_packus_epi16(_mm_srli_epi16(w0, 8), _mm_srli_epi16(w1, 8)));
    } else {
      __m128i s0 = w0, s1 = w1;
      if constexpr (kLaneBytes == 2) {
        // a0 b0 a1 b1 | a2 b2 a3 b3 -> a0 a1 b0 b1 | a2 a3 b2 b3
        s0 = _mm_shufflehi_epi16(_mm_shufflelo_epi16(s0, 0xD8), 0xD8);
        s1 = _mm_shufflehi_epi16(_mm_shufflelo_epi16(s1, 0xD8), 0xD8);
      }
      // 32-bit units: a b a b -> a a b b
      s0 = _mm_shuffle_epi32(s0, 0xD8);
      s1 = _mm_shuffle_epi32(s1, 0xD8);
      store_lane(dst[0], byte, _mm_unpacklo_epi64(s0, s1));
      store_lane(dst[1], byte, _mm_unpackhi_epi64(s0, s1));
    }
  }
#endif
  scalar_deinterleave<kLanes, kLaneBytes>(dst, src, i, count);
}

}  // namespace layoutcheck::lanes
