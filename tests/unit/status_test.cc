// Status and Result: an ok status holds nothing, an error owns its code,
// message and rule, and every copy, move and assignment keeps each its own.
#include "layoutcheck/status.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace layoutcheck {
namespace {

TEST(Status, an_ok_status_has_no_message_or_rule) {
  const Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.rule(), "");
  EXPECT_EQ(s.to_string(), "ok");
  EXPECT_TRUE(Status::ok_status().ok());
}

TEST(Status, each_error_keeps_its_code_and_message) {
  const Status inv = Status::invalid("tpu.aligned: address 100");
  const Status uns = Status::unsupported("declined");
  const Status in = Status::internal("bug");
  EXPECT_FALSE(inv.ok());
  EXPECT_FALSE(uns.ok());
  EXPECT_FALSE(in.ok());
  EXPECT_EQ(inv.code(), StatusCode::kInvalid);
  EXPECT_EQ(uns.code(), StatusCode::kUnsupported);
  EXPECT_EQ(in.code(), StatusCode::kInternal);
  EXPECT_EQ(inv.to_string(), "invalid: tpu.aligned: address 100");
  EXPECT_EQ(uns.to_string(), "unsupported: declined");
  EXPECT_EQ(in.to_string(), "internal: bug");
}

TEST(Status, a_copy_owns_its_own_error) {
  Status a = Status::invalid("first").with_rule("tpu.aligned/address-align-128");
  Status b = a;
  EXPECT_EQ(b.code(), StatusCode::kInvalid);
  EXPECT_EQ(b.message(), "first");
  EXPECT_EQ(b.rule(), "tpu.aligned/address-align-128");
  a = Status::internal("second");  // the copy does not follow the original
  EXPECT_EQ(b.message(), "first");
  EXPECT_EQ(b.rule(), "tpu.aligned/address-align-128");
  EXPECT_EQ(a.message(), "second");
  EXPECT_EQ(a.rule(), "");
}

TEST(Status, a_move_leaves_the_source_ok_and_the_target_with_the_error) {
  Status a = Status::invalid("moved").with_rule("r");
  Status b = std::move(a);
  EXPECT_TRUE(a.ok());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_EQ(b.message(), "moved");
  EXPECT_EQ(b.rule(), "r");
  Status c = Status::unsupported("other");
  c = std::move(b);
  EXPECT_EQ(c.code(), StatusCode::kInvalid);
  EXPECT_EQ(c.message(), "moved");
}

TEST(Status, assignment_to_itself_and_of_an_ok_status_keep_values_right) {
  Status a = Status::invalid("self");
  const Status& same = a;
  a = same;
  EXPECT_EQ(a.message(), "self");
  a = Status();
  EXPECT_TRUE(a.ok());
  EXPECT_EQ(a.message(), "");
  Status b;
  b = Status::internal("after ok");
  EXPECT_EQ(b.code(), StatusCode::kInternal);
  EXPECT_EQ(b.message(), "after ok");
}

TEST(Status, a_rule_on_an_ok_status_is_kept_and_the_status_stays_ok) {
  const Status s = Status().with_rule("tpu.aligned/address-align-128");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.rule(), "tpu.aligned/address-align-128");
  EXPECT_EQ(s.to_string(), "ok");
  const Status copy = s;
  EXPECT_TRUE(copy.ok());
  EXPECT_EQ(copy.rule(), "tpu.aligned/address-align-128");
}

TEST(Result, holds_a_value_or_the_error_that_explains_why_not) {
  const Result<int> v = 7;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 7);
  EXPECT_TRUE(v.status().ok());
  const Result<int> e = Status::invalid("no value").with_rule("r");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "no value");
  EXPECT_EQ(e.status().rule(), "r");
}

Status fails_at(int step, int* reached) {
  for (int i = 0; i < 3; ++i) {
    LC_RETURN_IF_ERROR(i == step ? Status::invalid("step " + std::to_string(i)) : Status());
    *reached = i;
  }
  return Status();
}

Result<int> doubled(Result<int> in) {
  LC_ASSIGN_OR_RETURN(const int v, std::move(in));
  return 2 * v;
}

TEST(Status, the_macros_return_the_first_error_and_pass_values_on) {
  int reached = -1;
  EXPECT_EQ(fails_at(1, &reached).message(), "step 1");
  EXPECT_EQ(reached, 0);
  EXPECT_TRUE(fails_at(5, &reached).ok());
  EXPECT_EQ(reached, 2);
  EXPECT_EQ(*doubled(21), 42);
  EXPECT_EQ(doubled(Status::internal("none")).status().message(), "none");
}

}  // namespace
}  // namespace layoutcheck
