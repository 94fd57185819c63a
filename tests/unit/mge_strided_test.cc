#include <algorithm>
#include <cstring>
#include <map>

#include "layoutcheck/byte_rules.h"
#include "support.h"

namespace layoutcheck {
namespace {

using testing::expect_pass;
using testing::facts_of;
using testing::ForwardingImpl;
using testing::must_case;
using testing::must_offset;

std::string rule_of(const std::string& layout, const std::string& dtype, const std::string& shape) {
  const Status ref = reference_impl().supports(must_case(layout, dtype, shape));
  const Status opt = optimized_impl().supports(must_case(layout, dtype, shape));
  EXPECT_EQ(ref.rule(), opt.rule()) << ref.message() << " / " << opt.message();
  EXPECT_EQ(ref.code(), opt.code());
  return ref.ok() ? "ok" : ref.rule();
}

TEST(MgeStrided, rank_1_to_7) {
  for (const char* shape : {"5", "2,3", "2,3,2", "2,1,3,2", "1,2,2,2,2", "2,1,2,1,2,2", "2,2,1,2,1,2,2"}) {
    expect_pass("mge.strided", "fp16", shape);
    expect_pass("mge.strided", "int4", shape);
  }
  EXPECT_EQ(rule_of("mge.strided", "int8", "2,2,2,2,2,2,2,2"), "layout/rank");
}

TEST(MgeStrided, document_example_int32_2x5) {
  const Case c = must_case("mge.strided", "int32", "2,5");
  EXPECT_EQ(must_offset(reference_impl(), c, {1, 2}), 28u);
  EXPECT_EQ(must_offset(optimized_impl(), c, {1, 2}), 28u);
  EXPECT_EQ(facts_of(c)["strides"], "20,4");
}

TEST(MgeStrided, transpose_by_strides_reads_the_parent) {
  const Case t = must_case("mge.strided(strides=1:5)", "int32", "5,2");
  const Case x = must_case("mge.strided", "int32", "2,5");
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      EXPECT_EQ(must_offset(reference_impl(), t, {j, i}), must_offset(reference_impl(), x, {i, j}));
      EXPECT_EQ(must_offset(optimized_impl(), t, {j, i}), must_offset(reference_impl(), x, {i, j}));
    }
  }
  EXPECT_EQ(facts_of(t)["is_contiguous"], "no");
  expect_pass("mge.strided(strides=1:5)", "int32", "5,2");
  expect_pass("mge.strided(strides=1:3:12)", "int4", "3,4,5");
}

TEST(MgeStrided, sub_tensor) {
  const Case c = must_case("mge.strided(strides=20:5:1,offset=26,storage=60)", "fp32", "2,2,3");
  EXPECT_EQ(must_offset(reference_impl(), c, {0, 0, 0}), 104u);
  EXPECT_EQ(must_offset(optimized_impl(), c, {1, 1, 2}), 4u * (26 + 20 + 5 + 2));
  EXPECT_EQ(*reference_impl().size_bytes(c), 240u);
  EXPECT_EQ(*optimized_impl().size_bytes(c), 240u);
  expect_pass("mge.strided(strides=20:5:1,offset=26,storage=60)", "fp32", "2,2,3");
  EXPECT_EQ(rule_of("mge.strided(strides=20:5:1,offset=26,storage=54)", "fp32", "2,2,3"), "ok");
  EXPECT_EQ(rule_of("mge.strided(strides=20:5:1,offset=26,storage=53)", "fp32", "2,2,3"), "mge.strided/in-bounds");
}

TEST(MgeStrided, broadcast_shares_one_element) {
  const Case c = must_case("mge.strided(strides=0:1:0)", "uint8", "3,4,2");
  EXPECT_EQ(must_offset(reference_impl(), c, {2, 3, 1}), 3u);
  EXPECT_EQ(*reference_impl().size_bytes(c), 4u);
  EXPECT_EQ(facts_of(c)["broadcast_dims"], "0,2");
  expect_pass("mge.strided(strides=0:1:0)", "uint8", "3,4,2");
  expect_pass("mge.strided(strides=0:0)", "int4", "3,3");
  expect_pass("mge.strided(strides=3:0:1)", "int4", "2,5,3");
}

TEST(MgeStrided, overlap_only_for_broadcast) {
  EXPECT_EQ(rule_of("mge.strided(strides=1:2)", "int32", "5,2"), "mge.strided/overlap-broadcast-only");
  EXPECT_EQ(rule_of("mge.strided(strides=2:3)", "int32", "3,2"), "ok");  // interleaved, no shared element
  EXPECT_EQ(rule_of("mge.strided(strides=1:1)", "int8", "2,2"), "mge.strided/overlap-broadcast-only");
  EXPECT_EQ(rule_of("mge.strided(strides=1:1)", "int8", "1,2"), "ok");  // extent 1 never moves
  expect_pass("mge.strided(strides=2:3)", "int32", "3,2");
}

TEST(MgeStrided, large_interleaved_views_are_declined) {
  const Case c = must_case("mge.strided(strides=2:3)", "int8", "1100,1000");
  EXPECT_EQ(reference_impl().supports(c).code(), StatusCode::kUnsupported);
  EXPECT_EQ(optimized_impl().supports(c).code(), StatusCode::kUnsupported);
  EXPECT_EQ(rule_of("mge.strided(strides=1000:1)", "int8", "1100,1000"), "ok");
}

TEST(MgeStrided, rules_of_the_text) {
  EXPECT_EQ(rule_of("mge.strided(strides=5:x)", "int8", "2,5"), "mge.strided/strides-text");
  EXPECT_EQ(rule_of("mge.strided(strides=5:)", "int8", "2,5"), "mge.strided/strides-text");
  EXPECT_EQ(rule_of("mge.strided(strides=99999999999999999999)", "int8", "2"), "mge.strided/strides-text");
  EXPECT_EQ(rule_of("mge.strided(strides=5:1:1)", "int8", "2,5"), "mge.strided/strides-rank");
  EXPECT_EQ(rule_of("mge.strided(strides=4611686018427387904:1)", "int8", "2,5"), "mge.strided/size-overflow");
  EXPECT_EQ(rule_of("mge.strided(offset=4611686018427387904)", "int8", "2,5"), "mge.strided/size-overflow");
  EXPECT_EQ(rule_of("mge.strided(storage=4611686018427387904)", "int32", "2,5"), "mge.strided/size-overflow");
}

TEST(MgeStrided, int4_rows_dense_or_byte) {
  const Case dense = must_case("mge.strided", "int4", "3,7");
  const Case bytes = must_case("mge.strided(row_align=byte)", "uint4", "3,7");
  EXPECT_EQ(*reference_impl().offset_bits(dense, {1, 0}), 28u);
  EXPECT_EQ(*reference_impl().offset_bits(bytes, {1, 0}), 32u);
  EXPECT_EQ(*optimized_impl().offset_bits(bytes, {2, 0}), 64u);
  EXPECT_EQ(*reference_impl().size_bytes(dense), 11u);
  EXPECT_EQ(*optimized_impl().size_bytes(bytes), 12u);
  EXPECT_EQ(facts_of(bytes)["strides"], "4,0.5");
  expect_pass("mge.strided(row_align=byte)", "uint4", "3,7");
  expect_pass("mge.strided(row_align=byte)", "int4", "2,3,5");
  EXPECT_EQ(rule_of("mge.strided(strides=7:1,row_align=byte)", "int4", "2,7"), "mge.strided/row-align-byte");
  EXPECT_EQ(rule_of("mge.strided(strides=8:1,offset=1,row_align=byte)", "int4", "2,7"), "mge.strided/row-align-byte");
  EXPECT_EQ(rule_of("mge.strided(strides=8:1,offset=2,row_align=byte)", "int4", "2,7"), "ok");
  EXPECT_EQ(rule_of("mge.strided(strides=7:1,row_align=byte)", "int8", "2,7"), "ok");
  EXPECT_EQ(must_offset(reference_impl(), must_case("mge.strided(row_align=byte)", "int8", "3,7"), {1, 0}), 7u);
}

TEST(MgeStrided, is_contiguous) {
  EXPECT_EQ(facts_of(must_case("mge.strided", "int8", "2,3,4"))["is_contiguous"], "yes");
  EXPECT_EQ(facts_of(must_case("mge.strided(strides=12:4:1,offset=7)", "int8", "2,3,4"))["is_contiguous"], "yes");
  EXPECT_EQ(facts_of(must_case("mge.strided(strides=99:4:1)", "int8", "1,3,4"))["is_contiguous"], "yes");
  EXPECT_EQ(facts_of(must_case("mge.strided(strides=13:4:1)", "int8", "2,3,4"))["is_contiguous"], "no");
  EXPECT_EQ(facts_of(must_case("mge.strided(strides=0:1)", "int8", "2,4"))["is_contiguous"], "no");
  EXPECT_EQ(facts_of(must_case("mge.strided(row_align=byte)", "int4", "2,5"))["is_contiguous"], "no");
  EXPECT_EQ(facts_of(must_case("mge.strided(row_align=byte)", "int4", "2,6"))["is_contiguous"], "yes");
}

TEST(MgeStrided, outside_bytes_are_free) {
  auto rules = reference_impl().byte_rules(must_case("mge.strided(strides=4:1,storage=8)", "int8", "2,2"));
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  ASSERT_EQ(rules->size_bytes, 8u);
  EXPECT_EQ(rules->find(0)->kind, ByteKind::kElement);
  EXPECT_EQ(rules->find(2)->kind, ByteKind::kFree);
  EXPECT_EQ(rules->find(5)->kind, ByteKind::kElement);
  EXPECT_EQ(rules->find(7)->kind, ByteKind::kFree);
}

TEST(MgeStrided, descriptors_round_trip) {
  for (const char* text : {"mge.strided", "mge.strided(strides=0:1)", "mge.strided(strides=5:1,offset=6,storage=10)",
                           "mge.strided(row_align=byte)"}) {
    auto l = parse_layout(text);
    ASSERT_TRUE(l.ok()) << l.status().message();
    EXPECT_EQ(to_string(*l), text);
  }
}

// A planted bug in the broadcast dimension is caught.
class ForgetsBroadcast : public ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_ASSIGN_OR_RETURN(uint64_t o, ForwardingImpl::offset_bits(c, at));
    return o + (at[0] > 0 ? 8 : 0);
  }
};

TEST(MgeStrided, a_broadcast_offset_bug_fails) {
  ForgetsBroadcast bad(optimized_impl());
  CheckReport r = check(must_case("mge.strided(strides=0:1,storage=4)", "int8", "3,2"), reference_impl(), bad);
  EXPECT_EQ(r.verdict, Verdict::kFail);
}

// A pack that skips the stride of the outer dimension is caught.
class DenseRows : public ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status pack(const Case&, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    std::memset(physical, 0, physical_size);
    std::memcpy(physical, logical, std::min(logical_size, physical_size));
    return Status();
  }
};

TEST(MgeStrided, a_pack_ignoring_strides_fails) {
  DenseRows bad(optimized_impl());
  EXPECT_EQ(check(must_case("mge.strided(strides=4:1)", "int8", "3,2"), reference_impl(), bad).verdict, Verdict::kFail);
  EXPECT_EQ(check(must_case("mge.strided(strides=1:3)", "int16", "3,2"), reference_impl(), bad).verdict, Verdict::kFail);
}

}  // namespace
}  // namespace layoutcheck
