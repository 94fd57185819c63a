#include <algorithm>
#include <mutex>

#include "layoutcheck/plugin.h"
#include "support.h"

namespace layoutcheck {
namespace {

TEST(Isolation, a_timeout_out_of_range_fails_with_the_value_and_no_limit_waits) {
  Case c = testing::must_case("tpu.continuous", "int8", "1,2,3,4");
  for (double t : {0.0, -1.0, kMaxTimeoutSeconds + 1}) {
    CheckReport r = check_isolated(c, reference_impl(), optimized_impl(), {}, t);
    EXPECT_EQ(r.verdict, Verdict::kFail);
    EXPECT_NE(r.message.find("is out of range"), std::string::npos) << r.message;
  }
  EXPECT_EQ(check_isolated(c, reference_impl(), optimized_impl(), {}, kNoTimeLimit).verdict, Verdict::kPass);
}

TEST(RunChecks, a_fixed_case_count_is_exact_and_repeatable) {
  RunOptions o;
  o.layout_glob = "tpu.c*";
  o.cases = 37;
  o.seconds = 0;
  o.min_cases = 0;
  o.max_cases = 5;
  o.seed = 9;
  o.jobs = 2;
  std::mutex m;
  std::vector<std::string> seen;
  o.runner = [&](const Case& c, const CheckOptions& co) {
    {
      std::lock_guard<std::mutex> lock(m);
      seen.push_back(to_string(c) + " seed " + std::to_string(co.seed));
    }
    return check(c, reference_impl(), optimized_impl(), co);
  };
  auto first = run_checks(reference_impl(), optimized_impl(), o);
  ASSERT_FALSE(first.empty());
  for (const auto& t : first) EXPECT_EQ(t.cases, 37u) << t.layout;
  auto first_seen = seen;
  seen.clear();
  o.jobs = 1;
  auto second = run_checks(reference_impl(), optimized_impl(), o);
  std::sort(first_seen.begin(), first_seen.end());
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(first_seen, seen);
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].passed, second[i].passed);
    EXPECT_EQ(first[i].invalid, second[i].invalid);
  }
}

}  // namespace
}  // namespace layoutcheck
