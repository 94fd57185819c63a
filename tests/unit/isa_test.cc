// The instruction-set level of the optimized kernels: names, the cap, and
// that a capped level changes which kernel runs but never a byte.
#include "support.h"

#include "optimized/isa.h"

namespace layoutcheck {
namespace {

TEST(Isa, names_parse_back_and_nothing_else_parses) {
  for (Isa isa : {Isa::kPortable, Isa::kSsse3, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Vbmi}) {
    Isa back = Isa::kAvx512;
    ASSERT_TRUE(parse_isa(isa_name(isa), &back)) << isa_name(isa);
    EXPECT_EQ(back, isa);
  }
  Isa out = Isa::kSsse3;
  for (const char* bad : {"", "AVX2", "avx-512", "sse2", "avx2 ", "native", "avx512vbmi2", "vbmi"}) {
    EXPECT_FALSE(parse_isa(bad, &out)) << bad;
  }
  EXPECT_EQ(out, Isa::kSsse3);
}

TEST(Isa, a_cap_lowers_the_level_and_its_end_restores_it) {
  const Isa before = optimized_isa();
  EXPECT_LE(static_cast<int>(before), static_cast<int>(cpu_isa()));
  {
    IsaCapScope cap(Isa::kPortable);
    EXPECT_EQ(optimized_isa(), Isa::kPortable);
    EXPECT_FALSE(isa_at_least(Isa::kSsse3));
    {
      // A cap above the CPU's level gives the CPU's level, never more.
      IsaCapScope wide(Isa::kAvx512Vbmi);
      EXPECT_EQ(optimized_isa(), cpu_isa());
    }
    EXPECT_EQ(optimized_isa(), Isa::kPortable);
  }
  EXPECT_EQ(optimized_isa(), before);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The level names what the CPU has: AVX-512 with VBMI and VBMI2 only when all
// of F, BW, VL, DQ, VBMI and VBMI2 are there, so that a VBMI kernel's fallback
// is the one a Skylake-SP runs.
TEST(Isa, the_cpu_level_follows_the_cpu_features) {
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  const bool vbmi = avx512 && __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2");
  EXPECT_EQ(cpu_isa() >= Isa::kAvx512, avx512);
  EXPECT_EQ(cpu_isa() == Isa::kAvx512Vbmi, vbmi);
  if (vbmi) {
    IsaCapScope cap(Isa::kAvx512);
    EXPECT_TRUE(isa_at_least(Isa::kAvx512));
    EXPECT_FALSE(isa_at_least(Isa::kAvx512Vbmi));
  }
}
#endif

// A split scope sets the answer, the inner one wins, and each end restores
// the one before; no AVX-512, no split (the CPU's own answer).
TEST(Isa, a_split_scope_sets_the_answer_and_its_end_restores_it) {
  const bool cpu = splits_512bit_ops();
  if (cpu_isa() < Isa::kAvx512) {
    EXPECT_FALSE(cpu);
  }
  {
    Split512Scope on(true);
    EXPECT_TRUE(splits_512bit_ops());
    {
      Split512Scope off(false);
      EXPECT_FALSE(splits_512bit_ops());
    }
    EXPECT_TRUE(splits_512bit_ops());
  }
  EXPECT_EQ(splits_512bit_ops(), cpu);
}

TEST(Isa, available_levels_run_from_portable_to_the_cpu) {
  const std::vector<Isa> levels = available_isas();
  ASSERT_FALSE(levels.empty());
  EXPECT_EQ(levels.front(), Isa::kPortable);
  EXPECT_EQ(levels.back(), cpu_isa());
  EXPECT_EQ(levels.size(), static_cast<size_t>(cpu_isa()) + 1);
}

}  // namespace
}  // namespace layoutcheck
