// The documents' rules as data (layoutcheck/rules.h): every rejection of the
// reference names a registered rule, every rule of every layout fires in a
// bounded run, and every declared parameter reaches a non-default value, its
// minimum and its maximum.
#include <set>

#include "layoutcheck/rules.h"
#include "support.h"

namespace layoutcheck {
namespace {

// What is wrong with the rejection of a case of `layout` ("" when nothing).
std::string unnamed_rejection(const std::string& layout, const Status& s) {
  if (s.code() != StatusCode::kInvalid) return "";
  const Rule* r = find_rule(s.rule());
  if (r == nullptr) return "rejected without a registered rule id ('" + s.rule() + "'): " + s.message();
  for (const Rule* of : rules_of(layout)) {
    if (of == r) return "";
  }
  return "rejected by " + s.rule() + ", not a rule of " + layout + ": " + s.message();
}

TEST(Rules, ids_are_unique_scoped_and_cite_a_section) {
  std::set<std::string> ids;
  for (const Rule& r : rules()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_NE(r.id.find('/'), std::string::npos) << r.id;
    EXPECT_FALSE(r.section.empty()) << r.id;
    EXPECT_FALSE(r.text.empty()) << r.id;
  }
  EXPECT_NE(find_rule("nvdla.feature/line-stride-align-32"), nullptr);
  EXPECT_NE(find_rule("nvdla.weight.dc/no-post-extension"), nullptr);
}

TEST(Rules, a_rejection_without_a_rule_id_is_caught) {
  EXPECT_NE(unnamed_rejection("tpu.aligned", Status::invalid("no id")), "");
  EXPECT_NE(unnamed_rejection("tpu.aligned", Status::invalid("x").with_rule("no/such-rule")), "");
  EXPECT_NE(unnamed_rejection("tpu.aligned", Status::invalid("x").with_rule("nvdla.feature/line-stride-align-32")), "");
  EXPECT_EQ(unnamed_rejection("tpu.aligned", Status::invalid("x").with_rule("tpu.aligned/address-align-128")), "");
}

TEST(Rules, the_named_examples_break_their_rule) {
  auto c = parse_case("nvdla.feature(line_stride=48,surface_stride=64)", "int8", "1,1,1");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(reference_impl().supports(*c).rule(), "nvdla.feature/line-stride-align-32");
  c = parse_case("nvdla.weight.dc(post_extension=2)", "int8", "1,1,1,1");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(reference_impl().supports(*c).rule(), "nvdla.weight.dc/no-post-extension");
}

// The far extents: 8, 9, 16, 17 and more than 64 periods, 2^8 and 2^16 around.
TEST(Rules, strength_cases_reach_far_along_a_chunked_dimension) {
  const auto& cases = strength_cases(*find_spec("htp.crouton"), reference_impl());
  std::set<int64_t> widths;
  for (const Case& c : cases) {
    if (c.shape[0] == 1 && c.shape[1] == 1 && c.shape[3] == 1) widths.insert(c.shape[2]);
  }
  for (int64_t w : {64, 72, 128, 136, 520, 255, 256, 257}) EXPECT_EQ(widths.count(w), 1u) << w;
}

TEST(Rules, coverage_notices_a_rule_that_never_fires) {
  RunOptions o;
  o.layout_glob = "nvdla.weight.dc";
  o.cases = 3;
  auto tallies = run_checks(reference_impl(), reference_impl(), o);
  ASSERT_EQ(tallies.size(), 1u);
  size_t missed = 0;
  for (const Rule* r : rules_of("nvdla.weight.dc")) missed += tallies[0].rules_fired.count(r->id) == 0;
  EXPECT_GT(missed, 0u);
  const ParamSpec& ext = find_spec("nvdla.weight.dc")->params[1];
  EXPECT_NE(param_gaps(ext, ParamReach{}), "");
}

}  // namespace
}  // namespace layoutcheck
