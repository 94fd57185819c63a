// optimized/masked.h — the masked vector loads and stores of the kernels.
//
// The kernels write `masked::_mm512_mask_storeu_epi8(...)` for the intrinsic
// of that name, and so for every masked load and store they use. Built
// without AddressSanitizer these are the intrinsics themselves. Under ASan
// they are functions of their own that copy the elements of the mask's lanes,
// each run of set lanes by a memcpy, which ASan checks as it checks any other:
// an element past a buffer's end is reported exactly when its lane is set, as
// ASan reports the intrinsic. The intrinsic itself ASan checks lane by
// lane inline, a branch and a check a lane, so that a kernel of 64-byte masked
// tiles compiles to thousands of blocks: under clang 14 with ASan and UBSan
// optimized/mge.cc took 218 s to build (28 s with ASan's memory checks off)
// and takes 33 s through these. A kernel calling an intrinsic directly is
// still checked, lane by lane: only its build time is at stake.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SANITIZE_ADDRESS__)
#define LC_MASKED_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LC_MASKED_ASAN 1
#endif
#endif

namespace layoutcheck::masked {

#ifndef LC_MASKED_ASAN

using ::_mm256_mask_loadu_epi8;
using ::_mm256_mask_storeu_epi16;
using ::_mm256_mask_storeu_epi8;
using ::_mm256_maskz_loadu_epi16;
using ::_mm256_maskz_loadu_epi32;
using ::_mm256_maskz_loadu_epi8;
using ::_mm512_mask_loadu_epi8;
using ::_mm512_mask_storeu_epi16;
using ::_mm512_mask_storeu_epi32;
using ::_mm512_mask_storeu_epi64;
using ::_mm512_mask_storeu_epi8;
using ::_mm512_mask_storeu_ps;
using ::_mm512_maskz_loadu_epi16;
using ::_mm512_maskz_loadu_epi32;
using ::_mm512_maskz_loadu_epi64;
using ::_mm512_maskz_loadu_epi8;
using ::_mm512_maskz_loadu_ps;
using ::_mm_mask_storeu_epi8;
using ::_mm_maskz_loadu_epi8;

#else

// Not traced for coverage: a fuzzer is to steer by the kernels' paths, not by
// the shapes of their masks (traced, fuzz_mge_differential ran at 4,075
// executions a second under its fuzz-smoke test, 8,738 untraced).
#if defined(__clang__)
#define LC_MASKED_UNTRACED __attribute__((no_sanitize("coverage")))
#else
#define LC_MASKED_UNTRACED
#endif

// Elements of `size` bytes in the lanes `lanes` of `mask` from `from` to `to`,
// each run of set lanes by one memcpy, whose two ranges ASan checks whole.
LC_MASKED_UNTRACED __attribute__((noinline)) inline void copy_lanes(void* to, const void* from, uint64_t mask,
                                                                    unsigned lanes, size_t size) {
  if (lanes < 64) mask &= (uint64_t{1} << lanes) - 1;
  auto* d = static_cast<unsigned char*>(to);
  const auto* s = static_cast<const unsigned char*>(from);
  while (mask != 0) {
    const unsigned lo = static_cast<unsigned>(__builtin_ctzll(mask));
    const uint64_t rest = ~(mask >> lo);  // its lowest set bit: the run's end
    const unsigned run = rest == 0 ? 64 - lo : static_cast<unsigned>(__builtin_ctzll(rest));
    std::memcpy(d + lo * size, s + lo * size, run * size);
    mask = lo + run >= 64 ? 0 : mask & ~(((uint64_t{1} << run) - 1) << lo);
  }
}

#define LC_MASKED_FN LC_MASKED_UNTRACED __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq"), noinline)) inline

// store: the set lanes' elements of v to p.
#define LC_MASKED_STORE(name, Mask, Vec, size)                               \
  LC_MASKED_FN void name(void* p, Mask m, Vec v) {                          \
    copy_lanes(p, &v, m, static_cast<unsigned>(sizeof(Vec) / (size)), size); \
  }
// maskz load: the set lanes' elements from p, zeros elsewhere.
#define LC_MASKED_LOADZ(name, Mask, Vec, size)                                 \
  LC_MASKED_FN Vec name(Mask m, const void* p) {                              \
    Vec v;                                                                     \
    std::memset(&v, 0, sizeof v);                                              \
    copy_lanes(&v, p, m, static_cast<unsigned>(sizeof(Vec) / (size)), size); \
    return v;                                                                  \
  }
// mask load: the set lanes' elements from p, src's elsewhere.
#define LC_MASKED_LOAD(name, Mask, Vec, size)                                  \
  LC_MASKED_FN Vec name(Vec src, Mask m, const void* p) {                     \
    copy_lanes(&src, p, m, static_cast<unsigned>(sizeof(Vec) / (size)), size); \
    return src;                                                                \
  }

LC_MASKED_LOAD(_mm256_mask_loadu_epi8, __mmask32, __m256i, 1)
LC_MASKED_STORE(_mm256_mask_storeu_epi16, __mmask16, __m256i, 2)
LC_MASKED_STORE(_mm256_mask_storeu_epi8, __mmask32, __m256i, 1)
LC_MASKED_LOADZ(_mm256_maskz_loadu_epi16, __mmask16, __m256i, 2)
LC_MASKED_LOADZ(_mm256_maskz_loadu_epi32, __mmask8, __m256i, 4)
LC_MASKED_LOADZ(_mm256_maskz_loadu_epi8, __mmask32, __m256i, 1)
LC_MASKED_LOAD(_mm512_mask_loadu_epi8, __mmask64, __m512i, 1)
LC_MASKED_STORE(_mm512_mask_storeu_epi16, __mmask32, __m512i, 2)
LC_MASKED_STORE(_mm512_mask_storeu_epi32, __mmask16, __m512i, 4)
LC_MASKED_STORE(_mm512_mask_storeu_epi64, __mmask8, __m512i, 8)
LC_MASKED_STORE(_mm512_mask_storeu_epi8, __mmask64, __m512i, 1)
LC_MASKED_STORE(_mm512_mask_storeu_ps, __mmask16, __m512, 4)
LC_MASKED_LOADZ(_mm512_maskz_loadu_epi16, __mmask32, __m512i, 2)
LC_MASKED_LOADZ(_mm512_maskz_loadu_epi32, __mmask16, __m512i, 4)
LC_MASKED_LOADZ(_mm512_maskz_loadu_epi64, __mmask8, __m512i, 8)
LC_MASKED_LOADZ(_mm512_maskz_loadu_epi8, __mmask64, __m512i, 1)
LC_MASKED_LOADZ(_mm512_maskz_loadu_ps, __mmask16, __m512, 4)
LC_MASKED_STORE(_mm_mask_storeu_epi8, __mmask16, __m128i, 1)
LC_MASKED_LOADZ(_mm_maskz_loadu_epi8, __mmask16, __m128i, 1)

#undef LC_MASKED_LOAD
#undef LC_MASKED_LOADZ
#undef LC_MASKED_STORE
#undef LC_MASKED_FN
#undef LC_MASKED_UNTRACED

#endif  // LC_MASKED_ASAN

}  // namespace layoutcheck::masked

#endif  // x86-64
