#include "layoutcheck/byte_rules.h"
#include "support.h"

namespace layoutcheck {
namespace {

using testing::expect_pass;
using testing::facts_of;
using testing::must_case;
using testing::must_offset;

std::string rule_of(const std::string& layout, const std::string& dtype, const std::string& shape) {
  const Case c = must_case(layout, dtype, shape);
  const Status ref = reference_impl().supports(c), opt = optimized_impl().supports(c);
  EXPECT_EQ(ref.rule(), opt.rule()) << ref.message() << " / " << opt.message();
  return ref.ok() ? "ok" : ref.rule();
}

TEST(TpuSystem, continuous_strides_equal_the_continuous_layout) {
  const Case sys = must_case("tpu.system(n=60,c=20,h=5,w=1)", "fp32", "2,3,4,5");
  const Case cont = must_case("tpu.continuous", "fp32", "2,3,4,5");
  for (uint64_t i = 0; i < 120; ++i) {
    const Coord at = coord_of_index(sys.shape, i);
    EXPECT_EQ(must_offset(optimized_impl(), sys, at), must_offset(reference_impl(), cont, at));
  }
  EXPECT_EQ(*reference_impl().size_bytes(sys), *reference_impl().size_bytes(cont));
  expect_pass("tpu.system(n=60,c=20,h=5,w=1)", "fp32", "2,3,4,5");
}

TEST(TpuSystem, c_stride_steps_one_channel) {
  const Case c = must_case("tpu.system(n=60,c=1,h=15,w=3)", "int8", "2,3,4,5");
  EXPECT_EQ(must_offset(reference_impl(), c, {0, 1, 0, 0}), 1u);
  EXPECT_EQ(must_offset(optimized_impl(), c, {1, 2, 3, 4}), 119u);
  expect_pass("tpu.system(n=60,c=1,h=15,w=3)", "int8", "2,3,4,5");
}

TEST(TpuSystem, gaps_are_free_bytes) {
  const Case c = must_case("tpu.system(n=100,c=32,h=8,w=1)", "fp16", "2,3,4,5");
  EXPECT_EQ(*optimized_impl().size_bytes(c), 386u);
  auto rules = reference_impl().byte_rules(c);
  ASSERT_TRUE(rules.ok());
  EXPECT_EQ(rules->find(0)->kind, ByteKind::kElement);
  EXPECT_EQ(rules->find(10)->kind, ByteKind::kFree);
  expect_pass("tpu.system(n=100,c=32,h=8,w=1)", "fp16", "2,3,4,5");
  expect_pass("tpu.system(n=1,c=300,h=40,w=3)", "int16", "3,2,4,5");
}

TEST(TpuSystem, strides_at_extent_one_make_no_sense) {
  EXPECT_EQ(rule_of("tpu.system(n=7,w=1)", "uint32", "3,1,1,7"), "ok");
  EXPECT_EQ(rule_of("tpu.system(n=7,c=9223372036854775807,w=1)", "uint32", "3,1,1,7"), "ok");
  EXPECT_EQ(rule_of("tpu.system", "int8", "1,1,1,1"), "ok");
}

TEST(TpuSystem, rules) {
  EXPECT_EQ(rule_of("tpu.system(n=60,c=20,h=4,w=1)", "fp32", "2,3,4,5"), "tpu.system/strides-disjoint");
  EXPECT_EQ(rule_of("tpu.system(n=60,c=20,h=5,w=0)", "fp32", "2,3,4,5"), "tpu.system/strides-disjoint");
  EXPECT_EQ(rule_of("tpu.system(n=4611686018427387904,c=1)", "fp32", "2,2,1,1"), "tpu.system/size-overflow");
  EXPECT_EQ(rule_of("tpu.system(n=4611686018427387904,c=4611686018427387904)", "fp32", "2,2,1,1"),
            "tpu.system/strides-disjoint");
  EXPECT_EQ(reference_impl().supports(must_case("tpu.system(w=1)", "int4", "1,1,1,2")).rule(), "tpu/dtype");
  EXPECT_FALSE(optimized_impl().supports(must_case("tpu.system(w=1)", "int4", "1,1,1,2")).ok());
}

TEST(TpuSystem, facts) {
  auto f = facts_of(must_case("tpu.system(n=60,c=1,h=15,w=3)", "int8", "2,3,4,5"));
  EXPECT_EQ(f["c_stride"], "1");
  EXPECT_EQ(f["w_stride"], "3");
  EXPECT_EQ(f.count("channels_per_npu"), 0u);
}

class SwapsHW : public testing::ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    return ForwardingImpl::offset_bits(c, {at[0], at[1], at[3] % c.shape[2], at[2] % c.shape[3]});
  }
};

TEST(TpuSystem, a_swapped_stride_fails) {
  SwapsHW bad(optimized_impl());
  EXPECT_EQ(check(must_case("tpu.system(n=60,c=20,h=5,w=1)", "fp32", "2,3,4,5"), reference_impl(), bad).verdict,
            Verdict::kFail);
}

}  // namespace
}  // namespace layoutcheck
