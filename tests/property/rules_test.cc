#include <algorithm>
#include <string>
#include <vector>

#include "layoutcheck/rules.h"
#include "support.h"  // gtest before rapidcheck/gtest.h

#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

namespace layoutcheck {
namespace {

std::vector<const LayoutSpec*> layouts_with_rules() {
  std::vector<const LayoutSpec*> out;
  for (const LayoutSpec& s : layout_specs()) {
    if (!rules_of(s.name).empty() && !strength_cases(s, reference_impl()).empty()) out.push_back(&s);
  }
  return out;
}

// A case derived from a rule (one that breaks only it, or one on its boundary)
// of any layout: the implementation rejects it where the reference does (by a
// document rule), and packs it to the same bytes where the reference accepts it.
void gets_the_reference_verdict(const Impl& impl) {
  static const std::vector<const LayoutSpec*> layouts = layouts_with_rules();
  RC_PRE(!layouts.empty());
  const LayoutSpec& spec = **rc::gen::elementOf(layouts);
  const std::vector<Case>& cases = strength_cases(spec, reference_impl());
  const Case& c = cases[*rc::gen::inRange<size_t>(0, cases.size())];
  const Status ref = reference_impl().supports(c), got = impl.supports(c);
  RC_LOG() << to_string(c) << "\nreference: " << ref.to_string() << "\n" << impl.name() << ": " << got.to_string();
  if (!ref.ok()) {
    RC_ASSERT(ref.code() == StatusCode::kInvalid);
    RC_ASSERT(!ref.rule().empty());
    if (is_limit_rule(ref.rule())) return;  // layoutcheck's own arithmetic limit, not a document's rule
    RC_ASSERT(got.code() == StatusCode::kInvalid);
    return;
  }
  RC_ASSERT(got.ok());
  CheckReport r = check(c, reference_impl(), impl);
  RC_LOG() << r.message;
  RC_ASSERT(r.verdict == Verdict::kPass);
}

RC_GTEST_PROP(RulesProperty, a_case_on_either_side_of_a_rule_gets_the_reference_verdict, ()) {
  gets_the_reference_verdict(optimized_impl());
}

// An implementation that accepts what the documents reject fails the property.
class AcceptsEverything : public testing::ForwardingImpl {
 public:
  AcceptsEverything() : ForwardingImpl(optimized_impl(), "accepts-everything") {}
  Status supports(const Case&) const override { return Status(); }
};

TEST(RulesProperty, an_implementation_accepting_broken_rules_fails_it) {
  const AcceptsEverything lenient;
  EXPECT_FALSE(rc::check("a lenient implementation", [&] { gets_the_reference_verdict(lenient); }));
}

}  // namespace
}  // namespace layoutcheck
