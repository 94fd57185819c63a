// A copy whose destination's whole cache lines are written with non-temporal
// stores (AVX-512, or AVX2): the way out of a stage in cache into a tensor past the
// caches, so that the tensor's lines are not read before they are written.
// The destination may start and end anywhere in a line: its partial first
// and last lines are ordinary copies. The caller fences (_mm_sfence) before
// another thread may read the destination.
#pragma once

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace layoutcheck {

__attribute__((target("avx512f"))) inline void stream_run(uint8_t* dst, const uint8_t* src, uint64_t n) {
  const uint64_t head = std::min<uint64_t>(n, (64 - reinterpret_cast<uintptr_t>(dst) % 64) % 64);
  std::memcpy(dst, src, head);
  uint64_t k = head;
  for (; k + 64 <= n; k += 64) _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + k), _mm512_loadu_si512(src + k));
  std::memcpy(dst + k, src + k, n - k);
}

// The same with AVX2 (two 32-byte halves a line).
__attribute__((target("avx2"))) inline void stream_run_avx2(uint8_t* dst, const uint8_t* src, uint64_t n) {
  const uint64_t head = std::min<uint64_t>(n, (64 - reinterpret_cast<uintptr_t>(dst) % 64) % 64);
  std::memcpy(dst, src, head);
  uint64_t k = head;
  for (; k + 64 <= n; k += 64) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + k), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + k)));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + k + 32),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + k + 32)));
  }
  std::memcpy(dst + k, src + k, n - k);
}

}  // namespace layoutcheck
#endif
