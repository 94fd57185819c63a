// The documents' rules over every layout (layoutcheck/rules.h): every
// rejection of the reference names a rule of its layout, and a bounded run
// fires every rule and draws every parameter. Slow: the strength cases of every
// layout are derived (the TLA reference enumerates its layouts).
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

TEST(Rules, every_rejection_of_the_reference_names_a_rule_of_its_layout) {
  for (const LayoutSpec& spec : layout_specs()) {
    std::vector<Case> cases = strength_cases(spec, reference_impl());
    if (spec.boundary_cases) {
      for (const Case& c : spec.boundary_cases()) cases.push_back(c);
    }
    std::mt19937_64 rng(7);
    for (int i = 0; spec.random_case && i < 200; ++i) {
      Case c = spec.random_case(rng, i % 3);
      cases.push_back(i % 4 == 3 ? stretch_case(spec, rng, c) : c);
    }
    for (const Case& c : cases) {
      const std::string wrong = unnamed_rejection(spec.name, reference_impl().supports(c));
      EXPECT_EQ(wrong, "") << to_string(c);
    }
  }
}

// What a run left unreached: "layout: rule" for a rule no case fired,
// "layout.param: gaps" for a parameter short of a non-default value, its min
// or its max.
std::vector<std::string> coverage_gaps(const std::vector<LayoutTally>& tallies) {
  std::vector<std::string> gaps;
  for (const auto& t : tallies) {
    for (const Rule* r : rules_of(t.layout)) {
      if (t.rules_fired.count(r->id) == 0) gaps.push_back(t.layout + ": " + r->id);
    }
    const LayoutSpec& spec = *find_spec(t.layout);
    for (const ParamSpec& p : spec.params) {
      auto it = t.params.find(p.key);
      const std::string g = param_gaps(p, it == t.params.end() ? ParamReach{} : it->second);
      if (!g.empty()) gaps.push_back(t.layout + "." + p.key + ": " + g);
    }
  }
  return gaps;
}

RunOptions bounded_run(const std::string& glob) {
  RunOptions o;
  o.layout_glob = glob;
  o.cases = 400;
  o.jobs = 2;
  o.check.max_offset_checks = 64;
  return o;
}

// A run of a fixed number of cases per layout fires every rule of every
// layout and moves every parameter to a non-default value, its min and its max.
TEST(Rules, a_bounded_run_fires_every_rule_and_draws_every_parameter) {
  auto tallies = run_checks(reference_impl(), reference_impl(), bounded_run("*"));
  ASSERT_EQ(tallies.size(), layout_specs().size());
  EXPECT_EQ(coverage_gaps(tallies), std::vector<std::string>{});
}

// The same run with the cases of one rule kept from the implementation: the
// gap is reported, and nothing else.
TEST(Rules, a_run_without_the_cases_of_one_rule_reports_the_gap) {
  RunOptions o = bounded_run("nvdla.feature");
  o.runner = [](const Case& c, const CheckOptions& co) {
    const std::string rule = reference_impl().supports(c).rule();
    if (rule == "nvdla.feature/line-stride-align-32") {
      CheckReport declined;
      declined.verdict = Verdict::kDeclined;
      return declined;
    }
    return check(c, reference_impl(), reference_impl(), co);
  };
  auto tallies = run_checks(reference_impl(), reference_impl(), o);
  ASSERT_EQ(tallies.size(), 1u);
  EXPECT_EQ(coverage_gaps(tallies), std::vector<std::string>{"nvdla.feature: nvdla.feature/line-stride-align-32"});
}

}  // namespace
}  // namespace layoutcheck
