// optimized/head_store.h — the first bytes of a vector register, exactly;
// short runs of bytes.
//
// Where a kernel's last piece is shorter than its register and the bytes
// past it are another's (already written, or past the buffer), it leaves by
// stores of 16, 8, 4, 2 and 1 bytes: no read back through memory, no call.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace layoutcheck {

// The first n (< 32) bytes of x at to, by stores of 16, 8, 4, 2 and 1 bytes.
__attribute__((target("avx2"), always_inline)) inline void store_head_avx2(uint8_t* to, __m256i x, uint64_t n) {
  __m128i v = _mm256_castsi256_si128(x);
  if (n & 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to), v);
    v = _mm256_extracti128_si256(x, 1);
    to += 16;
  }
  if (n & 8) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(to), v);
    v = _mm_srli_si128(v, 8);
    to += 8;
  }
  uint64_t rest = static_cast<uint64_t>(_mm_cvtsi128_si64(v));
  if (n & 4) {
    const uint32_t w = static_cast<uint32_t>(rest);
    std::memcpy(to, &w, 4);
    rest >>= 32;
    to += 4;
  }
  if (n & 2) {
    const uint16_t w = static_cast<uint16_t>(rest);
    std::memcpy(to, &w, 2);
    rest >>= 16;
    to += 2;
  }
  if (n & 1) *to = static_cast<uint8_t>(rest);
}

// n bytes in moves of the widest size that fits, the last one ending at n
// (overlapping the one before): for runs of a size known only at run time,
// which a memcpy moves by a string move, slow for so few bytes.
__attribute__((target("avx2"), always_inline)) inline void copy_run(uint8_t* to, const uint8_t* from, uint64_t n) {
  if (n >= 32) {
    for (uint64_t i = 0; i + 32 < n; i += 32) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + i));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + i), v);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + n - 32),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + n - 32)));
  } else if (n >= 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + n - 16));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to), a);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + n - 16), b);
  } else if (n >= 8) {
    uint64_t a, b;
    std::memcpy(&a, from, 8), std::memcpy(&b, from + n - 8, 8);
    std::memcpy(to, &a, 8), std::memcpy(to + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, from, 4), std::memcpy(&b, from + n - 4, 4);
    std::memcpy(to, &a, 4), std::memcpy(to + n - 4, &b, 4);
  } else {
    for (uint64_t i = 0; i < n; ++i) to[i] = from[i];
  }
}

}  // namespace layoutcheck

#endif
