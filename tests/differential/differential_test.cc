// Optimized against reference over every registered layout: its boundary
// cases, then random cases of growing size, through the one checker.
#include "support.h"

#include "optimized/isa.h"

namespace layoutcheck {
namespace {

class Differential : public ::testing::TestWithParam<std::string> {};

const LayoutSpec& spec_of(const std::string& name) { return *find_spec(name); }

TEST_P(Differential, boundary_cases) {
  const LayoutSpec& spec = spec_of(GetParam());
  if (!spec.boundary_cases) GTEST_SKIP() << spec.name << " declares no boundary cases";
  // Every instruction-set level this CPU has: the portable kernels too.
  for (Isa isa : available_isas()) {
    IsaCapScope cap(isa);
    uint64_t seed = 1, valid = 0;
    for (const Case& c : spec.boundary_cases()) {
      CheckOptions o;
      o.seed = seed++;
      CheckReport r = check(c, reference_impl(), optimized_impl(), o);
      EXPECT_NE(r.verdict, Verdict::kFail) << isa_name(isa) << ": " << r.message;
      EXPECT_NE(r.verdict, Verdict::kDeclined) << isa_name(isa) << ": " << r.message;
      valid += r.verdict == Verdict::kPass;
    }
    EXPECT_GT(valid, 0u) << "no boundary case of " << spec.name << " is valid";
  }
}

TEST_P(Differential, random_cases) {
  const LayoutSpec& spec = spec_of(GetParam());
  ASSERT_TRUE(spec.random_case) << spec.name << " has no case generator";
  // 300 cases at the CPU's best level, the first 60 of them at each narrower one.
  for (Isa isa : available_isas()) {
    IsaCapScope cap(isa);
    std::mt19937_64 rng(20261121);
    uint64_t valid = 0;
    const int cases = isa == cpu_isa() ? 300 : 60;
    for (int i = 0; i < cases; ++i) {
      Case c = spec.random_case(rng, i % 3);
      CheckOptions o;
      o.seed = static_cast<uint64_t>(i);
      CheckReport r = check(c, reference_impl(), optimized_impl(), o);
      ASSERT_NE(r.verdict, Verdict::kFail) << isa_name(isa) << ": " << r.message;
      EXPECT_NE(r.verdict, Verdict::kDeclined) << isa_name(isa) << ": " << r.message;
      valid += r.verdict == Verdict::kPass;
    }
    // The generator must mostly produce valid cases, or the comparison says little.
    if (isa == cpu_isa()) {
      EXPECT_GT(valid, static_cast<uint64_t>(cases) / 2) << spec.name;
    }
  }
}

TEST_P(Differential, offset_outside_the_shape_is_rejected) {
  const LayoutSpec& spec = spec_of(GetParam());
  if (!spec.boundary_cases) GTEST_SKIP() << spec.name << " declares no boundary cases";
  uint64_t probed = 0;
  for (const Case& c : spec.boundary_cases()) {
    if (!reference_impl().size_bytes(c).ok()) continue;
    for (size_t d = 0; d < c.shape.size(); ++d) {
      for (int64_t outside : {c.shape[d], int64_t{-1}}) {
        Coord at(c.shape.size(), 0);
        at[d] = outside;
        if (reference_impl().offset_bits(c, at).ok()) continue;
        auto actual = optimized_impl().offset_bits(c, at);
        EXPECT_FALSE(actual.ok()) << to_string(c) << ": the optimized offset of a coordinate with index " << outside << " in dimension " << d << " is " << *actual << ", the reference rejects it";
        ++probed;
      }
    }
  }
  if (probed == 0) GTEST_SKIP() << spec.name << " has no coordinate the reference rejects";
}

std::vector<std::string> all_layouts() {
  std::vector<std::string> names;
  for (const auto& s : layout_specs()) names.push_back(s.name);
  return names;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string out;
  for (char ch : info.param) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, Differential, ::testing::ValuesIn(all_layouts()), test_name);

TEST(Registry, every_layout_cites_its_document) {
  for (const auto& s : layout_specs()) {
    EXPECT_FALSE(s.document.empty()) << s.name;
    EXPECT_FALSE(s.section.empty()) << s.name;
    EXPECT_FALSE(s.dims.empty()) << s.name;
    EXPECT_NE(s.name.find('.'), std::string::npos) << s.name << " is not family.name";
  }
}

}  // namespace
}  // namespace layoutcheck
