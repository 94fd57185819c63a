// optimized/head_store.h — the first bytes of a vector register, exactly.
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

}  // namespace layoutcheck

#endif
