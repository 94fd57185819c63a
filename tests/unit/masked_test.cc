// optimized/masked.h under AddressSanitizer: each masked load and store the
// kernels use moves what the intrinsic of its name moves, for any mask, and an
// element past a buffer's end is reported when its lane is set, and only then.
// Outside ASan builds masked:: names the intrinsics themselves: nothing to test.
#include "optimized/masked.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "optimized/isa.h"

namespace layoutcheck {
namespace {

#if defined(LC_MASKED_ASAN)

#define LC_TEST_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

bool have_avx512() { return cpu_isa() >= Isa::kAvx512; }

template <class T>
LC_TEST_AVX512 T random_bytes(std::mt19937_64& rng) {
  T v;
  unsigned char b[sizeof(T)];
  for (auto& x : b) x = static_cast<unsigned char>(rng());
  std::memcpy(&v, b, sizeof v);
  return v;
}

// The masks of a trial: none, all, then random ones.
template <class Mask>
Mask trial_mask(int trial, std::mt19937_64& rng) {
  if (trial == 0) return 0;
  if (trial == 1) return static_cast<Mask>(~Mask{0});
  return static_cast<Mask>(rng());
}

constexpr int kTrials = 300;

// Each store writes the same bytes as the intrinsic into a buffer of another
// pattern; each load returns the same vector.
#define LC_CHECK_STORE(name, Mask, Vec)                                            \
  LC_TEST_AVX512 void check_##name(std::mt19937_64& rng) {                         \
    for (int trial = 0; trial < kTrials; ++trial) {                                \
      unsigned char want[sizeof(Vec)], got[sizeof(Vec)];                           \
      std::memset(want, 0x5a, sizeof want);                                        \
      std::memset(got, 0x5a, sizeof got);                                          \
      const Vec v = random_bytes<Vec>(rng);                                        \
      const Mask m = trial_mask<Mask>(trial, rng);                                 \
      ::name(want, m, v);                                                          \
      masked::name(got, m, v);                                                     \
      ASSERT_EQ(0, std::memcmp(want, got, sizeof want)) << #name << " mask " << +m; \
    }                                                                              \
  }
#define LC_CHECK_LOADZ(name, Mask, Vec)                                                      \
  LC_TEST_AVX512 void check_##name(std::mt19937_64& rng) {                                   \
    for (int trial = 0; trial < kTrials; ++trial) {                                          \
      const Vec in = random_bytes<Vec>(rng);                                                 \
      const Mask m = trial_mask<Mask>(trial, rng);                                           \
      const Vec want = ::name(m, &in), got = masked::name(m, &in);                           \
      ASSERT_EQ(0, std::memcmp(&want, &got, sizeof want)) << #name << " mask " << +m;        \
    }                                                                                        \
  }
#define LC_CHECK_LOAD(name, Mask, Vec)                                                       \
  LC_TEST_AVX512 void check_##name(std::mt19937_64& rng) {                                   \
    for (int trial = 0; trial < kTrials; ++trial) {                                          \
      const Vec in = random_bytes<Vec>(rng), src = random_bytes<Vec>(rng);                   \
      const Mask m = trial_mask<Mask>(trial, rng);                                           \
      const Vec want = ::name(src, m, &in), got = masked::name(src, m, &in);                 \
      ASSERT_EQ(0, std::memcmp(&want, &got, sizeof want)) << #name << " mask " << +m;        \
    }                                                                                        \
  }

LC_CHECK_LOAD(_mm256_mask_loadu_epi8, __mmask32, __m256i)
LC_CHECK_STORE(_mm256_mask_storeu_epi16, __mmask16, __m256i)
LC_CHECK_STORE(_mm256_mask_storeu_epi8, __mmask32, __m256i)
LC_CHECK_LOADZ(_mm256_maskz_loadu_epi16, __mmask16, __m256i)
LC_CHECK_LOADZ(_mm256_maskz_loadu_epi32, __mmask8, __m256i)
LC_CHECK_LOADZ(_mm256_maskz_loadu_epi8, __mmask32, __m256i)
LC_CHECK_LOAD(_mm512_mask_loadu_epi8, __mmask64, __m512i)
LC_CHECK_STORE(_mm512_mask_storeu_epi16, __mmask32, __m512i)
LC_CHECK_STORE(_mm512_mask_storeu_epi32, __mmask16, __m512i)
LC_CHECK_STORE(_mm512_mask_storeu_epi64, __mmask8, __m512i)
LC_CHECK_STORE(_mm512_mask_storeu_epi8, __mmask64, __m512i)
LC_CHECK_STORE(_mm512_mask_storeu_ps, __mmask16, __m512)
LC_CHECK_LOADZ(_mm512_maskz_loadu_epi16, __mmask32, __m512i)
LC_CHECK_LOADZ(_mm512_maskz_loadu_epi32, __mmask16, __m512i)
LC_CHECK_LOADZ(_mm512_maskz_loadu_epi64, __mmask8, __m512i)
LC_CHECK_LOADZ(_mm512_maskz_loadu_epi8, __mmask64, __m512i)
LC_CHECK_LOADZ(_mm512_maskz_loadu_ps, __mmask16, __m512)
LC_CHECK_STORE(_mm_mask_storeu_epi8, __mmask16, __m128i)
LC_CHECK_LOADZ(_mm_maskz_loadu_epi8, __mmask16, __m128i)

TEST(Masked, EveryFormMovesWhatItsIntrinsicMoves) {
  if (!have_avx512()) GTEST_SKIP() << "this CPU has no AVX-512";
  std::mt19937_64 rng(20261204);
  check__mm256_mask_loadu_epi8(rng);
  check__mm256_mask_storeu_epi16(rng);
  check__mm256_mask_storeu_epi8(rng);
  check__mm256_maskz_loadu_epi16(rng);
  check__mm256_maskz_loadu_epi32(rng);
  check__mm256_maskz_loadu_epi8(rng);
  check__mm512_mask_loadu_epi8(rng);
  check__mm512_mask_storeu_epi16(rng);
  check__mm512_mask_storeu_epi32(rng);
  check__mm512_mask_storeu_epi64(rng);
  check__mm512_mask_storeu_epi8(rng);
  check__mm512_mask_storeu_ps(rng);
  check__mm512_maskz_loadu_epi16(rng);
  check__mm512_maskz_loadu_epi32(rng);
  check__mm512_maskz_loadu_epi64(rng);
  check__mm512_maskz_loadu_epi8(rng);
  check__mm512_maskz_loadu_ps(rng);
  check__mm_mask_storeu_epi8(rng);
  check__mm_maskz_loadu_epi8(rng);
}

// A heap buffer of 40 bytes, a masked access to its first `lanes` elements,
// and what the access moved: the last byte stored, the lanes loaded.
LC_TEST_AVX512 unsigned store_bytes(unsigned lanes) {
  auto* p = new unsigned char[40]();
  masked::_mm512_mask_storeu_epi8(p, (uint64_t{1} << lanes) - 1, _mm512_set1_epi8(7));
  const unsigned last = p[39];
  delete[] p;
  return last;
}
LC_TEST_AVX512 uint32_t load_words(unsigned lanes) {
  auto* p = new uint16_t[20];
  std::fill(p, p + 20, uint16_t{1});
  const __m512i v = masked::_mm512_maskz_loadu_epi16((uint32_t{1} << lanes) - 1, p);
  delete[] p;
  return _mm512_test_epi16_mask(v, v);
}
LC_TEST_AVX512 float store_floats(unsigned lanes) {
  auto* p = new float[10]();
  masked::_mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << lanes) - 1), _mm512_set1_ps(1.0f));
  const float last = p[9];
  delete[] p;
  return last;
}

TEST(MaskedDeathTest, AnElementPastTheEndIsReportedWhenItsLaneIsSet) {
  if (!have_avx512()) GTEST_SKIP() << "this CPU has no AVX-512";
  // Up to the end: no report.
  EXPECT_EQ(7u, store_bytes(40));
  EXPECT_EQ(0xFFFFFu, load_words(20));
  EXPECT_EQ(1.0f, store_floats(10));
  // One element more: ASan's report.
  EXPECT_DEATH(store_bytes(41), "heap-buffer-overflow.*WRITE of size");
  EXPECT_DEATH(load_words(21), "heap-buffer-overflow.*READ of size");
  EXPECT_DEATH(store_floats(11), "heap-buffer-overflow");
}

#else

TEST(Masked, EveryFormMovesWhatItsIntrinsicMoves) {
  GTEST_SKIP() << "built without AddressSanitizer: masked:: names the intrinsics themselves";
}

#endif

}  // namespace
}  // namespace layoutcheck
