#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "optimized/isa.h"
#include "optimized/threads.h"
#include "support.h"

namespace layoutcheck {
namespace {

constexpr size_t kLineBytes = 64;

using testing::facts_of;
using testing::expect_pass;
using testing::expect_pass_at_every_isa;
using testing::expect_same_bytes_at_every_thread_count;
using testing::must_case;
using testing::must_offset;

std::vector<uint8_t> pack_with(const Impl& impl, const Case& c, const std::vector<uint8_t>& logical) {
  auto size = impl.size_bytes(c);
  EXPECT_TRUE(size.ok()) << size.status().message();
  std::vector<uint8_t> phys(size.ok() ? *size : 0, 0xEE);
  Status s = impl.pack(c, logical.data(), logical.size(), phys.data(), phys.size());
  EXPECT_TRUE(s.ok()) << s.message();
  return phys;
}

TEST(MgeBoundary, nchw4_c_lt_block) { expect_pass("mge.nchw4", "int8", "2,3,3,5"); }
TEST(MgeBoundary, nchw4_c_eq_block) { expect_pass("mge.nchw4", "fp32", "2,4,3,5"); }
TEST(MgeBoundary, nchw4_c_gt_block) { expect_pass("mge.nchw4", "fp32", "2,5,3,7"); }
TEST(MgeBoundary, nchw4_c_div_block) { expect_pass("mge.nchw4", "int8", "2,12,4,9"); }
TEST(MgeBoundary, nchw32_c_lt_block) { expect_pass("mge.nchw32", "int8", "2,31,2,9"); }
TEST(MgeBoundary, nchw32_c_eq_block) { expect_pass("mge.nchw32", "int8", "1,32,4,8"); }
TEST(MgeBoundary, nchw32_c_gt_block) { expect_pass("mge.nchw32", "int8", "2,33,5,5"); }
TEST(MgeBoundary, nchw32_c_div_block) { expect_pass("mge.nchw32", "fp32", "2,64,3,7"); }
TEST(MgeBoundary, nchw64_c_lt_block) { expect_pass("mge.nchw64", "int4", "2,63,3,3"); }
TEST(MgeBoundary, nchw64_c_eq_block) { expect_pass("mge.nchw64", "uint4", "1,64,3,5"); }
TEST(MgeBoundary, nchw64_c_gt_block) { expect_pass("mge.nchw64", "int4", "3,65,1,3"); }
TEST(MgeBoundary, nchw64_c_div_block) { expect_pass("mge.nchw64", "int8", "2,128,4,5"); }
TEST(MgeBoundary, chwn4_c_lt_block) { expect_pass("mge.chwn4", "int8", "3,3,2,9"); }
TEST(MgeBoundary, chwn4_c_eq_block) { expect_pass("mge.chwn4", "fp32", "1,4,4,5"); }
TEST(MgeBoundary, chwn4_c_gt_block) { expect_pass("mge.chwn4", "int4", "5,5,3,3"); }
TEST(MgeBoundary, chwn4_c_div_block) { expect_pass("mge.chwn4", "fp16", "4,8,4,5"); }
TEST(MgeBoundary, nhwc_odd_int4) { expect_pass("mge.nhwc", "int4", "1,3,1,5"); }
TEST(MgeBoundary, matrix_col_major) { expect_pass("mge.matrix(order=col)", "bf16", "17,33"); }
TEST(MgeBoundary, nchw64_whole_and_partial_blocks) { expect_pass("mge.nchw64", "int8", "2,70,16,40"); }
TEST(MgeBoundary, nchw32_whole_and_partial_blocks) { expect_pass("mge.nchw32", "uint8", "1,96,8,97"); }
TEST(MgeBoundary, nhwc_c64_whole_blocks) { expect_pass("mge.nhwc", "int8", "2,64,16,32"); }
TEST(MgeBoundary, nhwc_fp32_c20_long_rows) { expect_pass("mge.nhwc", "fp32", "2,20,9,61"); }
// 32-bit elements with 16 | R take 16x16 tiles where AVX-512 is there: padding
// rows, a column tail, and whole tiles only.
TEST(MgeBoundary, nchw32_fp32_padding_rows_16x16) { expect_pass("mge.nchw32", "fp32", "2,40,3,37"); }
TEST(MgeBoundary, nhwc_fp32_c48_16x16) { expect_pass("mge.nhwc", "fp32", "1,48,5,35"); }
TEST(MgeBoundary, nchw64_fp32_whole_tiles_16x16) { expect_pass("mge.nchw64", "fp32", "1,64,4,8"); }

TEST(MgeText, descriptors_round_trip) {
  for (const char* text : {"mge.nchw", "mge.nhwc", "mge.nchw4", "mge.nchw32", "mge.nchw64", "mge.chwn4",
                           "mge.matrix", "mge.matrix(order=col)"}) {
    auto l = parse_layout(text);
    ASSERT_TRUE(l.ok()) << l.status().message();
    EXPECT_EQ(to_string(*l), text);
    EXPECT_EQ(*parse_layout(to_string(*l)), *l);
  }
  EXPECT_EQ(to_string(*parse_layout("mge.matrix(order=row)")), "mge.matrix");
}

TEST(MgeErrors, name_rule_and_values) {
  struct Bad { const char* layout; const char* dtype; const char* shape; std::vector<const char*> needles; };
  for (const Bad& b : std::vector<Bad>{
           {"mge.nchw4", "int8", "2,3,4", {"rank 3", "N,C,H,W"}},
           {"mge.nchw32", "int8", "1,0,3,3", {"C = 0", "positive"}},
           {"mge.chwn4", "fp32", "1,5,-2,3", {"H = -2"}},
           {"mge.matrix", "int8", "1,2,3", {"rank 3", "rows,cols"}},
           {"mge.nchw64", "fp32", "1,1,1099511627776,65536", {"overflows"}},
       }) {
    Case c = must_case(b.layout, b.dtype, b.shape);
    for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
      Status s = impl->supports(c);
      ASSERT_EQ(s.code(), StatusCode::kInvalid) << b.layout << " " << b.shape;
      if (impl == &reference_impl()) {
        for (const char* n : b.needles) EXPECT_NE(s.message().find(n), std::string::npos) << s.message() << " lacks " << n;
      }
    }
  }
  auto bad_order = parse_layout("mge.matrix(order=diagonal)");
  ASSERT_FALSE(bad_order.ok());
  EXPECT_NE(bad_order.status().message().find("row, col"), std::string::npos) << bad_order.status().message();
}

TEST(MgeErrors, coordinates_outside_the_shape) {
  Case c = must_case("mge.nchw4", "int8", "2,5,3,3");
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    EXPECT_EQ(impl->offset_bits(c, {0, 5, 0, 0}).status().code(), StatusCode::kInvalid);
    EXPECT_EQ(impl->offset_bits(c, {0, 0, 0}).status().code(), StatusCode::kInvalid);
    EXPECT_EQ(impl->offset_bits(c, {-1, 0, 0, 0}).status().code(), StatusCode::kInvalid);
  }
}

TEST(MgeErrors, buffer_sizes_are_checked) {
  Case c = must_case("mge.nchw4", "int8", "1,5,1,1");
  std::vector<uint8_t> logical(5), phys(8);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    EXPECT_EQ(impl->pack(c, logical.data(), 4, phys.data(), phys.size()).code(), StatusCode::kInvalid);
    EXPECT_EQ(impl->pack(c, logical.data(), logical.size(), phys.data(), 7).code(), StatusCode::kInvalid);
    EXPECT_EQ(impl->unpack(c, phys.data(), 9, logical.data(), logical.size()).code(), StatusCode::kInvalid);
  }
}

TEST(MgePack, nchw4_tail_bytes) {
  Case c = must_case("mge.nchw4", "int8", "1,6,1,2");
  std::vector<uint8_t> logical(12);
  std::iota(logical.begin(), logical.end(), uint8_t{1});  // (c, w) -> 1 + 2c + w
  const std::vector<uint8_t> want = {1, 3, 5, 7, 2, 4, 6, 8, 9, 11, 0, 0, 10, 12, 0, 0};
  EXPECT_EQ(pack_with(reference_impl(), c, logical), want);
  EXPECT_EQ(pack_with(optimized_impl(), c, logical), want);
}

TEST(MgePack, chwn4_bytes) {
  Case c = must_case("mge.chwn4", "int8", "2,5,1,1");
  const std::vector<uint8_t> logical = {10, 11, 12, 13, 14, 20, 21, 22, 23, 24};  // (n, c) -> 10(n+1) + c
  const std::vector<uint8_t> want = {10, 11, 12, 13, 20, 21, 22, 23, 14, 0, 0, 0, 24, 0, 0, 0};
  EXPECT_EQ(pack_with(reference_impl(), c, logical), want);
  EXPECT_EQ(pack_with(optimized_impl(), c, logical), want);
}

TEST(MgePack, nchw64_int4_low_nibble_first) {
  // Channels 0 and 1 of one pixel: 0x3 and 0x5 share byte 0, channel 0 in the low nibble.
  Case c = must_case("mge.nchw64", "uint4", "1,2,1,1");
  std::vector<uint8_t> want(32, 0);
  want[0] = 0x53;
  EXPECT_EQ(pack_with(reference_impl(), c, {0x53}), want);
  EXPECT_EQ(pack_with(optimized_impl(), c, {0x53}), want);
  // Two pixels of one channel: 32 bytes apart, each the low nibble of its byte.
  Case w2 = must_case("mge.nchw64", "uint4", "1,1,1,2");
  std::vector<uint8_t> want2(64, 0);
  want2[0] = 0x01, want2[32] = 0x02;
  EXPECT_EQ(pack_with(reference_impl(), w2, {0x21}), want2);
  EXPECT_EQ(pack_with(optimized_impl(), w2, {0x21}), want2);
}

TEST(MgePack, odd_int4_spare_nibble_is_zero) {
  Case c = must_case("mge.nchw", "int4", "1,1,1,3");
  const std::vector<uint8_t> want = {0x21, 0x03};
  EXPECT_EQ(pack_with(reference_impl(), c, {0x21, 0xF3}), want);
  EXPECT_EQ(pack_with(optimized_impl(), c, {0x21, 0xF3}), want);
}

TEST(MgeDescribe, strides_of_the_worked_examples) {
  auto f = facts_of(must_case("mge.matrix", "int32", "2,5"));
  EXPECT_EQ(f["strides"], "20,4");
  EXPECT_EQ(f["size_bytes"], "40");
  EXPECT_EQ(must_offset(reference_impl(), must_case("mge.matrix", "int32", "2,5"), {1, 2}), 28u);
  f = facts_of(must_case("mge.matrix(order=col)", "int32", "2,5"));
  EXPECT_EQ(f["strides"], "8,4");
  f = facts_of(must_case("mge.nchw32", "int8", "2,33,3,3"));
  EXPECT_EQ(f["physical_shape"], "2,2,3,3,32");
  EXPECT_EQ(f["strides"], "576,288,96,32,1");
  EXPECT_EQ(f["padded_channels"], "31");
  f = facts_of(must_case("mge.chwn4", "fp16", "3,5,2,2"));
  EXPECT_EQ(f["physical_dims"], "C/4,H,W,N,4");
  EXPECT_EQ(f["strides"], "96,48,24,8,2");
}

// The checker catches the bugs a MegEngine implementation is likely to have.
class SwappedNibbles : public testing::ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    Status s = inner_.pack(c, l, ls, p, ps);
    auto* bytes = static_cast<uint8_t*>(p);
    for (size_t i = 0; i < ps; ++i) bytes[i] = static_cast<uint8_t>((bytes[i] << 4) | (bytes[i] >> 4));
    return s;
  }
};

class DirtyPadding : public testing::ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    std::vector<uint8_t> tmp(ps);
    Status s = inner_.pack(c, l, ls, tmp.data(), ps);
    auto* bytes = static_cast<uint8_t*>(p);
    for (size_t i = 0; i < ps; ++i) {
      if (tmp[i] != 0) bytes[i] = tmp[i];  // zeros never written
    }
    return s;
  }
};

TEST(MgeMutants, are_caught) {
  SwappedNibbles swapped(optimized_impl());
  CheckReport r = check(must_case("mge.nchw64", "int4", "1,70,2,3"), reference_impl(), swapped);
  EXPECT_EQ(r.verdict, Verdict::kFail);
  DirtyPadding dirty(optimized_impl());
  r = check(must_case("mge.nchw32", "int8", "2,33,2,3"), reference_impl(), dirty);
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("never written"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace layoutcheck

namespace layoutcheck {
namespace {

// Tensors of 16 MiB and more are packed through a stage with streaming stores,
// and unpacked through one when a group has many rows; rows that do not share
// their offset in a cache line (the odd H*W of the last two) are unpacked in
// place. With AVX-512, NCHW4 groups (4 rows) go straight from registers, the
// rows' lines streamed when they share their offset in a line; those cases run
// at every instruction-set level.
TEST(MgeLarge, streamed_pack) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nchw32", "int8", "4,33,256,257"},
           {"mge.nhwc", "fp16", "4,35,256,240"},
           {"mge.chwn4", "int8", "8,33,256,257"},
           {"mge.nhwc", "fp32", "2,64,256,257"},
           {"mge.nchw64", "int8", "2,70,256,257"},
           {"mge.nhwc", "int8", "4,64,255,257"},
           {"mge.nhwc", "fp32", "1,24,511,513"},
           {"mge.nhwc", "fp16", "2,64,256,257"},
           {"mge.nchw32", "bf16", "1,72,256,500"},
       }) {
    expect_pass(layout, dtype, shape);
  }
}

// Streamed 16-bit packs of 32k rows write whole pixel lines straight out when
// the group starts on a line, through the stage otherwise; those of 4 rows
// (NCHW4) non-temporal from the first line boundary on; those of 2 to 15 rows
// (VBMI permutes) non-temporal when the group starts on a line (the second
// NHWC int8 image does not): both, against the reference's bytes; and the
// unpacks into line-aligned rows and rows 16 bytes in.
TEST(MgeLarge, streamed_packs_from_a_line_and_inside_one) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nhwc", "fp16", "2,64,256,257"},
           {"mge.nchw32", "bf16", "1,72,256,500"},
           {"mge.nchw4", "fp16", "8,17,256,240"},
           {"mge.nhwc", "int8", "2,3,1700,1701"},
           {"mge.nhwc", "fp16", "1,3,1400,2000"},
           {"mge.nhwc", "fp32", "1,5,1024,820"},
       }) {
    const Case c = must_case(layout, dtype, shape);
    std::vector<uint8_t> logical;
    fill_position_unique(c, 5, &logical);
    const size_t pb = *reference_impl().size_bytes(c);
    std::vector<uint8_t> want(pb);
    ASSERT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), want.data(), pb).ok());
    std::vector<uint8_t> phys(pb + 128), back(logical.size() + 128);
    for (size_t off : {0, 16}) {
      uint8_t* at = phys.data() + (kLineBytes - reinterpret_cast<uintptr_t>(phys.data()) % kLineBytes) % kLineBytes + off;
      ASSERT_TRUE(optimized_impl().pack(c, logical.data(), logical.size(), at, pb).ok());
      EXPECT_EQ(0, std::memcmp(at, want.data(), pb)) << layout << " " << dtype << " +" << off;
      uint8_t* lg = back.data() + (kLineBytes - reinterpret_cast<uintptr_t>(back.data()) % kLineBytes) % kLineBytes + off;
      ASSERT_TRUE(optimized_impl().unpack(c, want.data(), pb, lg, logical.size()).ok());
      EXPECT_EQ(0, std::memcmp(lg, logical.data(), logical.size())) << layout << " " << dtype << " unpack +" << off;
    }
  }
}

// Both ways, into line-aligned buffers and buffers 16 bytes in, at every
// instruction-set level, against the reference's bytes.
void expect_both_ways_from_a_line_and_inside_one(const char* layout, const char* dtype, const char* shape,
                                                 uint64_t seed) {
  SCOPED_TRACE(std::string(layout) + " " + dtype + " " + shape);
  const Case c = must_case(layout, dtype, shape);
  std::vector<uint8_t> logical;
  fill_position_unique(c, seed, &logical);
  const size_t lb = logical.size(), pb = *reference_impl().size_bytes(c);
  std::vector<uint8_t> want(pb);
  ASSERT_TRUE(reference_impl().pack(c, logical.data(), lb, want.data(), pb).ok());
  std::vector<uint8_t> phys(pb + 128), back(lb + 128);
  const auto line = [](std::vector<uint8_t>& v, size_t off) {
    return v.data() + (kLineBytes - reinterpret_cast<uintptr_t>(v.data()) % kLineBytes) % kLineBytes + off;
  };
  for (Isa isa : available_isas()) {
    IsaCapScope cap(isa);
    for (size_t off : {0, 16}) {
      uint8_t *ph = line(phys, off), *lg = line(back, off);
      std::memset(ph, 0xA5, pb);
      ASSERT_TRUE(optimized_impl().pack(c, logical.data(), lb, ph, pb).ok());
      EXPECT_EQ(0, std::memcmp(ph, want.data(), pb)) << isa_name(isa) << " pack +" << off;
      std::memset(lg, 0xA5, lb);
      ASSERT_TRUE(optimized_impl().unpack(c, want.data(), pb, lg, lb).ok());
      EXPECT_EQ(0, std::memcmp(lg, logical.data(), lb)) << isa_name(isa) << " unpack +" << off;
    }
  }
}

// 4-bit groups whose rows start on a byte go as 8-bit groups of row pairs:
// streamed (16 MiB), the pairs' rows written non-temporal when they start on
// a line, the next block fetched ahead; a pair with one padding row, a group of
// only padding pairs; 64 rows in steps of 128 pixels and a tail of 108.
TEST(MgeLarge, int4_row_pairs_from_a_line_and_inside_one) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nchw64", "int4", "1,97,510,522"},
           {"mge.nhwc", "uint4", "2,64,256,512"},
           {"mge.nchw32", "int4", "1,127,256,1024"},
           {"mge.nhwc", "int4", "1,128,512,512"},
       }) {
    expect_both_ways_from_a_line_and_inside_one(layout, dtype, shape, 9);
  }
}

// The same in cache (the pairs made in the 8-bit blocks' stage without
// AVX-512): 64 rows of 4096 pixels (whole blocks), 97 channels (a pair with
// one padding row, pairs of padding only) of 1050 pixels (a tail), NHWC of
// 128 channels (64 row pairs, two blocks of 32 a step) and of 64.
TEST(MgeLarge, int4_row_pairs_in_cache) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nchw64", "int4", "1,128,64,64"},
           {"mge.nchw64", "int4", "2,97,30,35"},
           {"mge.nhwc", "int4", "1,128,40,40"},
           {"mge.nhwc", "uint4", "3,64,17,61"},
       }) {
    expect_both_ways_from_a_line_and_inside_one(layout, dtype, shape, 10);
  }
}

// 4-bit rows that start inside a byte (planes of an odd H*W: every other
// channel's) pair through copies realigned on bytes and back where images have
// more than 128 pixels: NCHW64 of 13 x 13 (a group of 2 channels and 62
// padding rows after the first), of 27 x 27 (blocks of pairs past 64 pixels
// and a rest), NCHW32 of 11 x 13, NHWC of 4 and 6 channels; at every ISA
// level (the AVX2 realignment and the bytes around it).
TEST(MgeKernels, int4_rows_inside_a_byte_equal_the_reference_at_every_isa_level) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nchw64", "int4", "1,66,13,13"},
           {"mge.nchw64", "uint4", "2,64,27,27"},
           {"mge.nchw32", "int4", "3,40,11,13"},
           {"mge.nhwc", "int4", "1,4,13,11"},
           {"mge.nhwc", "uint4", "2,6,9,131"},
       }) {
    expect_pass_at_every_isa(layout, dtype, shape);
  }
}

// 4-bit groups in cache that the row pairs take slowly go through bytes, one
// element a byte, and the 8-bit transposes: images of at most 64 pixels (128
// with rows inside a byte: NCHW64 of 7 x 7 with padding rows, NCHW32 of 5 x
// 9, NCHW4 of 11 x 11, CHWN4 of 3 x 3, NHWC of 1024 channels of 4 x 4), an
// odd number of rows (NHWC of 3 and 5 channels), pixels that start inside a
// byte (the second image of an odd C x H x W), blocks of pixels where the
// stages do not hold the group (3 x 225 x 223); at every ISA level (the AVX2
// expansions and compressions and the nibbles around their runs).
TEST(MgeKernels, int4_groups_through_bytes_equal_the_reference_at_every_isa_level) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nchw64", "int4", "1,66,7,7"},
           {"mge.nchw32", "uint4", "3,40,5,9"},
           {"mge.nchw4", "int4", "2,6,11,11"},
           {"mge.chwn4", "uint4", "3,5,3,3"},
           {"mge.nhwc", "int4", "1,1024,4,4"},
           {"mge.nhwc", "uint4", "2,5,1,9"},
           {"mge.nhwc", "int4", "2,3,225,223"},
       }) {
    expect_pass_at_every_isa(layout, dtype, shape);
  }
}

// NCHW4 images of fewer than 16 bytes a channel row (every channel real)
// without AVX-512 VBMI: blocks in 16-byte registers, two a 256-bit register,
// the last ones through scratch: many blocks, 15 pixels of bytes, one block
// (scratch only), four blocks of 28 bytes (the last two through scratch),
// 16-bit rows of 7 and 4 elements, 32-bit rows of 3 and 2.
TEST(MgeKernels, tiny_nchw4_blocks_equal_the_reference_at_every_isa_level) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nchw4", "int8", "1,1024,3,3"},
           {"mge.nchw4", "uint8", "3,12,3,5"},
           {"mge.nchw4", "int8", "1,4,2,1"},
           {"mge.nchw4", "int8", "2,8,1,7"},
           {"mge.nchw4", "fp16", "2,8,1,7"},
           {"mge.nchw4", "bf16", "5,4,2,2"},
           {"mge.nchw4", "fp32", "3,20,1,3"},
           {"mge.nchw4", "int32", "1,8,2,1"},
       }) {
    expect_pass_at_every_isa(layout, dtype, shape);
  }
}

// Streamed groups of rows the fastest tiles do not take: packs through a
// stage of padded pixels closed up straight to memory (8-bit of 24 and 13
// rows, 16-bit of 20 and 12, 32-bit of 12 and 17), non-temporal when the
// group starts on a line (the second image of each two does not); unpacks of
// 8 rows of 32 bits by the permutes of a few rows.
TEST(MgeLarge, padded_pitch_from_a_line_and_inside_one) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nhwc", "int8", "2,24,601,601"},
           {"mge.nhwc", "uint8", "1,13,1300,1000"},
           {"mge.nhwc", "fp16", "2,20,451,467"},
           {"mge.nhwc", "bf16", "1,12,1024,700"},
           {"mge.nhwc", "fp32", "2,12,421,421"},
           {"mge.nhwc", "int32", "1,17,500,500"},
           {"mge.nhwc", "fp32", "2,8,517,517"},
       }) {
    expect_both_ways_from_a_line_and_inside_one(layout, dtype, shape, 11);
  }
}

// Streamed groups of a few rows (small_rows_pshufb: packs through the stage;
// unpacks in place where there are no byte permutes), at every level: 8-bit
// of 3 rows (an odd image length: a tail), 7, and 8 with padding rows
// (CHWN4); 16-bit of 3 and 32-bit of 5.
TEST(MgeLarge, streamed_small_rows_by_shuffles) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nhwc", "uint8", "2,3,1700,1701"},
           {"mge.nhwc", "int8", "1,7,1500,1601"},
           {"mge.chwn4", "int8", "2,6,1200,1200"},
           {"mge.nhwc", "fp16", "1,3,1400,2001"},
           {"mge.nhwc", "fp32", "1,5,1024,821"},
       }) {
    expect_both_ways_from_a_line_and_inside_one(layout, dtype, shape, 13);
  }
}

// Streamed packs of the rows the shuffles take (8-bit 2 to 8 but 4, 16- and
// 32-bit 2 to 7 but 4) store the shuffles' 32-byte pieces straight to memory
// from the first pixel that starts on 32 bytes, the pixels before it element
// by element; with an even count of 8-bit rows and an odd address, or 16- or
// 32-bit rows at an odd address, no pixel does, and they go another way.
// Unpacks store the rows' pieces so when every row has the same offset in 32
// bytes (not so the planes of 511 x 701 bytes). Into buffers at every kind of
// offset in a line, at every instruction-set level, against the reference's
// bytes; nothing written outside the image or the tensor.
TEST(MgeLarge, streamed_small_rows_from_any_offset) {
  const auto untouched = [](const std::vector<uint8_t>& v, const uint8_t* at, size_t n) {
    const size_t before = static_cast<size_t>(at - v.data());
    return std::count(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(before), 0xA5) == static_cast<long>(before) &&
           std::count(v.begin() + static_cast<std::ptrdiff_t>(before + n), v.end(), 0xA5) ==
               static_cast<long>(v.size() - before - n);
  };
  for (const auto& [dtype, shape] : std::vector<std::pair<const char*, const char*>>{
           {"int8", "32,2,512,513"}, {"uint8", "16,3,512,700"}, {"int8", "8,7,512,600"},
           {"fp16", "8,3,512,700"}, {"fp32", "4,5,512,513"}, {"uint8", "16,3,511,701"}}) {
    SCOPED_TRACE(std::string(dtype) + " " + shape);
    const Case c = must_case("mge.nhwc", dtype, shape);
    std::vector<uint8_t> logical;
    fill_position_unique(c, 3, &logical);
    const size_t pb = *reference_impl().size_bytes(c);
    ASSERT_GE(pb, size_t{16} << 20);
    std::vector<uint8_t> want(pb);
    ASSERT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), want.data(), pb).ok());
    std::vector<uint8_t> phys(pb + 128), back(logical.size() + 128);
    const auto line = [](std::vector<uint8_t>& v, size_t off) {
      return v.data() + (kLineBytes - reinterpret_cast<uintptr_t>(v.data()) % kLineBytes) % kLineBytes + off;
    };
    for (Isa isa : available_isas()) {
      IsaCapScope cap(isa);
      for (size_t off : {0, 1, 5, 16, 31}) {
        uint8_t* at = line(phys, off);
        std::fill(phys.begin(), phys.end(), 0xA5);
        ASSERT_TRUE(optimized_impl().pack(c, logical.data(), logical.size(), at, pb).ok());
        EXPECT_EQ(0, std::memcmp(at, want.data(), pb)) << isa_name(isa) << " pack +" << off;
        EXPECT_TRUE(untouched(phys, at, pb)) << isa_name(isa) << " pack +" << off;
        uint8_t* lg = line(back, off);
        std::fill(back.begin(), back.end(), 0xA5);
        ASSERT_TRUE(optimized_impl().unpack(c, want.data(), pb, lg, logical.size()).ok());
        EXPECT_EQ(0, std::memcmp(lg, logical.data(), logical.size())) << isa_name(isa) << " unpack +" << off;
        EXPECT_TRUE(untouched(back, lg, logical.size())) << isa_name(isa) << " unpack +" << off;
      }
    }
  }
}

TEST(MgeLarge, streamed_nchw4_at_every_isa_level) {
  for (const auto& [dtype, shape] : std::vector<std::pair<const char*, const char*>>{
           {"fp32", "4,17,256,240"},
           {"fp32", "4,17,256,257"},
           {"int8", "16,18,256,240"},
           {"int8", "16,18,256,257"},
           {"fp16", "8,17,256,240"},
           {"bf16", "8,17,256,257"},
       }) {
    expect_pass_at_every_isa("mge.nchw4", dtype, shape);
  }
}

// Streamed packs of 8-bit groups of 32 rows or a multiple of 64 (NCHW32,
// NCHW64, CHWN4 with N = 16 and 32), of 16-bit groups of a multiple of 32
// rows (NHWC, NCHW32: without AVX-512 the rows' lines through an L1 stage)
// or of 8 (the L2 stage), and of 32-bit groups of a multiple of 16 rows
// (NHWC): with AVX-512 whole lines from registers (non-temporal when the
// group starts on a line), padding rows, a run of pixels that is not a whole
// number of tiles; at every instruction-set level.
TEST(MgeLarge, streamed_tiles_at_every_isa_level) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nchw32", "int8", "2,40,256,512"},
           {"mge.nchw64", "int8", "1,100,255,659"},
           {"mge.chwn4", "int8", "16,10,256,384"},
           {"mge.chwn4", "int8", "32,5,256,257"},
           {"mge.chwn4", "int8", "5,7,256,1700"},
           {"mge.nhwc", "fp32", "1,48,256,352"},
           {"mge.nhwc", "fp32", "2,32,255,259"},
           {"mge.nhwc", "fp16", "2,64,256,257"},
           {"mge.nchw32", "fp16", "1,40,256,512"},
           {"mge.nhwc", "fp16", "2,24,256,700"},
       }) {
    expect_pass_at_every_isa(layout, dtype, shape);
  }
}

// Where 512-bit operations split in two (Split512Scope), streamed 16-bit
// packs of 32k rows whose pixels start on a line take the AVX2 rows' L1 stage
// with AVX-512 about them.
TEST(MgeLarge, streamed_16bit_packs_where_512bit_operations_split) {
  Split512Scope split(true);
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nhwc", "fp16", "2,64,256,257"},
           {"mge.nchw32", "bf16", "1,72,256,500"},
           {"mge.chwn4", "fp16", "16,10,256,384"},
       }) {
    expect_both_ways_from_a_line_and_inside_one(layout, dtype, shape, 12);
  }
}

// Streamed packs of 8-bit groups of 32 or 64k rows without AVX-512: two
// halves of an L1 stage, one filled as the other is transposed, pixel lines
// streamed out when the group starts on 32 bytes. Many blocks and a tail of
// fewer than 16 pixels, two blocks (the second part), one part block, padding
// rows (the second NCHW64 group, the last CHWN4 channels), 128 rows (CHWN4 of
// 32 images).
TEST(MgeLarge, streamed_8bit_packs_of_32_and_64k_rows_at_every_isa_level) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nchw32", "int8", "1,64,513,513"},
           {"mge.nchw64", "int8", "1,70,363,363"},
           {"mge.chwn4", "int8", "16,34,171,171"},
           {"mge.nchw32", "int8", "1,84000,10,20"},
           {"mge.nchw64", "int8", "1,169600,10,10"},
           {"mge.chwn4", "int8", "32,8,257,257"},
       }) {
    expect_both_ways_from_a_line_and_inside_one(layout, dtype, shape, 13);
  }
}

// Streamed packs of 32-bit groups of 16k rows, pixels from a line: passes of
// 32 rows (16 tiles of 16 rows each), each pixel's lines of a pass streamed
// out whole (16 bytes in: through the stage). Pixels past the last 8, padding
// rows (NCHW32 of 40 channels, CHWN4 of 6), a last pass of 16 rows (NHWC of
// 48 channels).
TEST(MgeLarge, streamed_32bit_packs_of_16k_rows_at_every_isa_level) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nhwc", "fp32", "1,64,257,257"},
           {"mge.nchw32", "fp32", "1,40,257,257"},
           {"mge.chwn4", "fp32", "4,6,363,363"},
           {"mge.nhwc", "fp32", "1,48,299,301"},
       }) {
    expect_both_ways_from_a_line_and_inside_one(layout, dtype, shape, 14);
  }
}

// Streamed packs of 8-bit groups of 17 to 31 rows without AVX-512: two
// 16-row tiles into an L1 stage, streamed out when the pixels start on 32
// bytes (from a line), else through the L2 stage (16 bytes in); groups of 24
// rows from a line through registers instead, at every level from AVX2 up.
// Cases: 24 rows and a tail of 3 pixels, 17 rows, images of 31 rows one after
// the other, 18 rows whose second and third images start off 32 bytes, CHWN4
// of 5 and of 6 images (24 rows) with padding rows; at every instruction-set
// level.
TEST(MgeLarge, streamed_rows_17_to_31_from_a_line_and_inside_one) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nhwc", "int8", "1,24,1023,701"},
           {"mge.nhwc", "uint8", "1,17,1000,1031"},
           {"mge.nhwc", "int8", "2,31,512,520"},
           {"mge.nhwc", "int8", "3,18,511,609"},
           {"mge.chwn4", "int8", "5,7,256,1700"},
           {"mge.chwn4", "int8", "6,7,256,1700"},
       }) {
    expect_both_ways_from_a_line_and_inside_one(layout, dtype, shape, 17);
  }
}

// Packs of 24 rows of bytes (NHWC int8 with 24 channels) go 64 pixels a step
// through registers with AVX-512 VBMI, the last pixels (fewer than 64)
// through the padded pitch when streamed, else the masked tiles; streamed
// ones whose pixels start on 32 bytes (from a line) 32 pixels a step through
// AVX2's registers at every level from AVX2 up. Streamed: no
// tail, a tail of 4 with the second image starting 32 bytes into a line,
// images of fewer than 64 pixels (all by the padded pitch), and a tail of 3;
// in cache: no tail, a tail of 4, one step and a tail of 17, images of 49
// pixels (none in registers); at every instruction-set level, into buffers on
// a line and 16 bytes in.
TEST(MgeLarge, rows_24_from_a_line_and_inside_one) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nhwc", "int8", "1,24,1024,1024"},
           {"mge.nhwc", "uint8", "2,24,511,700"},
           {"mge.nhwc", "int8", "12000,24,7,9"},
           {"mge.nhwc", "int8", "1,24,1023,701"},
           {"mge.nhwc", "int8", "1,24,56,56"},
           {"mge.nhwc", "uint8", "2,24,14,14"},
           {"mge.nhwc", "int8", "3,24,9,9"},
           {"mge.nhwc", "int8", "2,24,7,7"},
       }) {
    expect_both_ways_from_a_line_and_inside_one(layout, dtype, shape, 24);
  }
}

// Images of one pixel (1 x 1) are copies: NHWC, NCHWx of whole blocks and
// CHWN4 of one image of whole blocks byte for byte (4-bit odd counts
// included), NCHWx with a part-padding last block image by image, the padding
// zeros; CHWN4 of several images is still a transpose.
TEST(MgeOnePixel, copies_at_every_isa_level) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nhwc", "fp32", "3,2048,1,1"},
           {"mge.nhwc", "int4", "1,5,1,1"},
           {"mge.nchw64", "int8", "2,192,1,1"},
           {"mge.nchw4", "int4", "3,12,1,1"},
           {"mge.chwn4", "int8", "1,12,1,1"},
           {"mge.nchw64", "int8", "3,100,1,1"},
           {"mge.nchw4", "fp32", "4,10,1,1"},
           {"mge.nchw32", "int8", "1,33,1,1"},
           {"mge.nchw64", "int4", "3,65,1,1"},
           {"mge.chwn4", "int8", "3,12,1,1"},
           {"mge.chwn4", "fp32", "1,10,1,1"},
       }) {
    expect_pass_at_every_isa(layout, dtype, shape);
  }
}

// 8-bit groups of 32 and 64 rows in cache: packs in 64-column register tiles
// (32 rows) or, 64k rows, through a two-part stage of 256 columns (AVX-512)
// or 256-column blocks, unpacks in blocks of 1024 columns of every row (64k
// rows with AVX-512: 64 x 64 transposes, runs of 256 columns); runs
// of pixels of several blocks and a partial one (of 1 to 3 lines of a row, and
// fewer than 64 pixels), 128 rows, padding rows, at every instruction-set level.
TEST(MgeInCache, long_rows_at_every_isa_level) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nchw32", "int8", "2,40,33,97"},
           {"mge.nchw64", "int8", "1,70,40,77"},
           {"mge.chwn4", "int8", "8,6,33,65"},
           {"mge.nchw32", "uint8", "1,32,64,64"},
           {"mge.nchw64", "int8", "2,64,17,19"},
           {"mge.nchw64", "uint8", "1,3,13,37"},
           {"mge.nhwc", "int8", "1,128,9,37"},
           {"mge.nchw64", "int8", "1,64,7,9"},
           // 64k rows in 64 x 64 transposes: a run of 256 columns and a partial one.
           {"mge.nchw64", "int8", "1,64,16,20"},
           // Rows 4 KiB apart: runs of 512 columns.
           {"mge.nchw64", "int8", "1,128,64,64"},
           {"mge.nhwc", "uint8", "1,64,64,64"},
           {"mge.chwn4", "int8", "16,6,33,65"},
           // NCHW32 unpacks of two blocks as 64 rows: a pair and a block alone;
           // pairs of rows 4 KiB apart, two images; a pair ending in a partial
           // tile and a block alone; a whole block paired with one of 28 channels.
           {"mge.nchw32", "int8", "1,96,33,97"},
           {"mge.nchw32", "uint8", "2,64,64,64"},
           {"mge.nchw32", "int8", "1,70,9,9"},
           {"mge.nchw32", "int8", "2,60,9,9"},
       }) {
    expect_pass_at_every_isa(layout, dtype, shape);
  }
}

// Groups of few pixels (late convolution layers: 7 x 7, 1 x 1) and the last
// pixels past the whole tiles take masked AVX-512 tiles: the 64 x 64 unpack
// and the four-row tiles end in a partial tile, other groups of 16k rows go in
// 16-row tiles; 8-bit groups of 4, 32, 64 and 16k rows (padding rows among
// them), 32-bit NHWC of 16k channels with tails of 4 to 15 pixels, unpacks of
// fewer than 64 and of more pixels past the whole blocks; at every
// instruction-set level.
TEST(MgeInCache, masked_tiles_at_every_isa_level) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nchw64", "int8", "1,2048,7,7"},
           {"mge.nchw64", "int8", "2,100,1,2"},
           {"mge.nchw32", "int8", "1,70,7,7"},
           {"mge.nchw32", "int8", "1,64,14,14"},
           // Whole 8-bit NCHW64 / NCHW32 groups of 16 to 64 pixels in 16 x 16
           // tiles where they lie (small_groups_epi8_avx2): 16, 21 and 25
           // pixels (the unpack by the pack's tiles), 32, 36 (each run's last
           // tile over the one before) and 64; padding channels (a group left
           // to the row table), several images.
           {"mge.nchw64", "int8", "2,128,4,4"},
           {"mge.nchw64", "uint8", "1,64,3,7"},
           {"mge.nchw32", "int8", "1,96,5,5"},
           {"mge.nchw32", "uint8", "2,96,4,8"},
           {"mge.nchw32", "int8", "3,100,6,6"},
           {"mge.nchw64", "int8", "2,130,8,8"},
           {"mge.nhwc", "int8", "1,2048,7,7"},
           {"mge.nhwc", "int8", "2,48,3,5"},
           // 8-bit groups of more than 16 rows, no multiple of 16 (NHWC of 24,
           // 40 and 17 channels, CHWN4 of 5 images with padding rows): tiles
           // of 16 rows, the last one overlapping the one before; whole tiles
           // and a masked last one, or only that.
           {"mge.nhwc", "int8", "1,24,9,61"},
           {"mge.nhwc", "uint8", "2,40,5,13"},
           {"mge.nhwc", "int8", "1,17,7,7"},
           {"mge.chwn4", "int8", "5,6,3,23"},
           // The same for 16- and 32-bit tiles (8 x 32, 16 x 16 with AVX-512,
           // 4 x 8 and 4 x 4 below it): NHWC fp16 of 20, 13 and 9 channels,
           // fp32 of 13, 33 and 17, CHWN4 of 5 images with padding rows.
           {"mge.nhwc", "fp16", "1,20,9,61"},
           {"mge.nhwc", "bf16", "2,13,5,35"},
           {"mge.nhwc", "fp16", "1,9,3,40"},
           {"mge.nhwc", "fp32", "1,13,9,61"},
           {"mge.nhwc", "int32", "2,33,5,35"},
           {"mge.nhwc", "fp32", "1,17,7,7"},
           {"mge.chwn4", "fp16", "5,6,3,23"},
           // 16-bit tiles below AVX-512 by rows of tiles (rows a multiple of
           // 4 KiB apart, padding rows among them) and by 8-column tiles
           // (pixel lines 4 KiB apart).
           {"mge.nchw32", "fp16", "1,40,32,64"},
           {"mge.nhwc", "fp16", "1,2048,7,7"},
           {"mge.chwn4", "fp32", "5,6,5,13"},
           {"mge.chwn4", "int8", "16,10,3,3"},
           {"mge.nchw64", "uint8", "1,64,5,61"},
           {"mge.nhwc", "fp32", "1,32,7,7"},
           {"mge.nhwc", "fp32", "2,48,3,9"},
           {"mge.nhwc", "fp32", "1,2048,1,2"},
           // NHWC images of at most 64 pixels, 16 | C (small_images_epi32): runs of
           // the stage, the last one short; 64 pixels; a last pixel by gathers
           // in the pass of the block before it, four last pixels so after the
           // first block and after the third (runs, the last short); an image
           // of three pixels, all by gathers.
           {"mge.nhwc", "fp32", "2,528,5,5"},
           {"mge.nhwc", "int32", "1,1024,8,8"},
           {"mge.nhwc", "fp32", "1,2048,7,7"},
           {"mge.nhwc", "fp32", "2,32,4,5"},
           {"mge.nhwc", "int32", "2,528,4,13"},
           {"mge.nhwc", "fp32", "3,16,1,3"},
           // The same below AVX-512, 8 | C and C >= 256 (small_images_avx2):
           // runs of 128 rows and a short one, whole tiles of 8 (32-bit) or 16
           // (16-bit) pixels, a partial tile of 3, a last pixel element by
           // element, an image of two pixels in one partial tile.
           {"mge.nhwc", "fp16", "2,264,5,7"},
           {"mge.nhwc", "bf16", "1,256,8,8"},
           {"mge.nhwc", "fp16", "3,512,1,2"},
           {"mge.nhwc", "fp32", "2,264,5,7"},
           {"mge.nhwc", "int32", "2,264,3,3"},
           // Four rows (NCHW4, CHWN4 of one image): a masked tile after the
           // whole ones (16-bit: and before them, up to a line boundary).
           {"mge.nchw4", "int8", "1,20,7,7"},
           {"mge.nchw4", "int8", "2,9,9,15"},
           {"mge.chwn4", "int8", "1,10,3,5"},
           {"mge.nchw4", "fp16", "1,20,7,7"},
           {"mge.nchw4", "bf16", "2,9,9,15"},
           {"mge.nchw4", "int16", "1,8,32,64"},
           {"mge.chwn4", "fp16", "1,10,3,5"},
           {"mge.nchw4", "fp16", "3,5,1,3"},
           // Four rows of 8-, 16- or 32-bit elements below AVX-512
           // (pack_4rows_avx2, unpack_4rows_avx2): columns up to a line
           // boundary, whole lines of each row, a tail; a padding row.
           {"mge.nchw4", "fp32", "2,9,9,15"},
           {"mge.nchw4", "fp16", "1,9,33,35"},
           {"mge.nchw4", "bf16", "2,8,40,41"},
           {"mge.nchw4", "int8", "1,7,16,40"},
           // 4-bit groups as 8-bit groups of row pairs (rows on a byte: an
           // even H*W): a pair with a padding row, 130 pixels (a tail of the
           // 128-byte runs), CHWN4; an odd H*W goes nibble by nibble. 64
           // rows in steps of 128 pixels: rows 4 KiB apart (through stages),
           // with padding pairs; 1,500 pixels (runs of 512, a last one of
           // 384, a tail of 92).
           {"mge.nchw64", "int4", "1,65,7,8"},
           {"mge.nchw64", "uint4", "2,64,13,10"},
           {"mge.nchw64", "int4", "1,65,64,128"},
           {"mge.nchw64", "uint4", "2,64,30,50"},
           {"mge.chwn4", "int4", "8,10,16,16"},
           {"mge.nchw4", "uint4", "2,7,5,6"},
           {"mge.nhwc", "int4", "1,66,3,300"},
           {"mge.nhwc", "uint4", "2,128,5,26"},
           {"mge.nchw32", "int4", "2,33,3,3"},
           // 8-bit groups of 16 | R, not 32 | R (16 x 64 tiles): 16 rows with
           // padding rows and a tail, 48 rows, one whole tile.
           {"mge.chwn4", "int8", "4,9,16,17"},
           {"mge.nhwc", "uint8", "2,48,9,15"},
           {"mge.nhwc", "int8", "1,16,8,8"},
           // Groups of 2 to 15 rows by permutes (VBMI): whole blocks of 64 /
           // 32 / 16 pixels and a masked last one, CHWN4 of 3 images (12
           // rows) with padding rows; 16-bit of 3, 6 and 15 channels, 32-bit
           // of 3 and 7.
           {"mge.nhwc", "int8", "2,3,13,11"},
           {"mge.nhwc", "uint8", "1,2,8,16"},
           {"mge.nhwc", "int8", "1,15,9,9"},
           {"mge.chwn4", "int8", "3,6,5,7"},
           {"mge.chwn4", "fp16", "3,6,5,7"},
           {"mge.nhwc", "fp16", "2,3,7,9"},
           {"mge.nhwc", "bf16", "1,6,16,16"},
           {"mge.nhwc", "int16", "1,15,5,13"},
           {"mge.nhwc", "fp32", "2,3,7,9"},
           {"mge.nhwc", "int32", "1,7,16,16"},
           // 8-bit groups of 2 to 8 rows but 4, 16- and 32-bit of 2 to 7 but 4,
           // by in-lane shuffles (AVX2 and up, small_rows_pshufb): 32 bytes of
           // each row at a time and a tail, 64 pixels, fewer than a step,
           // padding rows (CHWN4 of two images, 6 channels).
           {"mge.nhwc", "uint8", "1,5,7,9"},
           {"mge.nhwc", "int8", "2,6,8,8"},
           {"mge.nhwc", "uint8", "1,7,33,1"},
           {"mge.nhwc", "int8", "1,8,5,13"},
           {"mge.nhwc", "uint8", "3,2,16,4"},
           {"mge.nhwc", "int8", "1,3,3,7"},
           {"mge.chwn4", "int8", "2,6,5,7"},
           {"mge.chwn4", "uint8", "2,5,8,8"},
           {"mge.nhwc", "fp16", "1,5,7,9"},
           {"mge.nhwc", "int16", "2,7,3,5"},
           {"mge.nhwc", "bf16", "1,2,8,8"},
           {"mge.nhwc", "fp32", "1,6,7,9"},
           {"mge.nhwc", "int32", "2,5,1,7"},
           {"mge.nhwc", "fp32", "1,2,9,9"},
           // Whole groups of at most 64 pixels, each one tile (small_groups_epi8):
           // 64 pixels, 15 (the last rows read masked), two; 32 rows with an odd
           // count (a last pixel in half a line) and a padding group.
           {"mge.nchw64", "int8", "1,128,8,8"},
           {"mge.nchw64", "int8", "2,64,3,5"},
           {"mge.nchw64", "uint8", "3,192,1,2"},
           {"mge.nchw32", "int8", "1,96,3,3"},
           {"mge.nchw32", "int8", "2,40,7,9"},
           // NCHW32 unpacks of two blocks at once: three whole blocks (a pair
           // and one alone).
           {"mge.nchw32", "int8", "1,96,7,7"},
           // NHWC 8-bit images of at most 64 pixels, 64 | C (small_images_epi8):
           // a run of 256 channels and a short one, two images; 64 pixels;
           // packs of 16 to 63 pixels from 64 channels by 16 pixels of the
           // block's rows at a time, the last 16 overlapping the ones before
           // (25, 36 pixels) or not (16, 48), and of fewer under 256 channels.
           {"mge.nhwc", "int8", "2,320,7,7"},
           {"mge.nhwc", "uint8", "1,256,8,8"},
           {"mge.nhwc", "int8", "2,64,5,5"},
           {"mge.nhwc", "uint8", "1,128,6,6"},
           {"mge.nhwc", "int8", "3,192,4,4"},
           {"mge.nhwc", "int8", "1,64,6,8"},
           {"mge.nhwc", "int8", "2,128,3,5"},
           // 16-bit elements, 8 | R (tiles_8x32_epi16): whole tiles of 32
           // pixels and a tail, padding rows (NCHW32 / NCHW64 of a partial
           // block), CHWN4 of two images (8 rows), 8 channels.
           {"mge.nhwc", "fp16", "1,512,14,14"},
           {"mge.nhwc", "bf16", "2,24,5,13"},
           {"mge.nchw32", "fp16", "1,40,8,8"},
           {"mge.nchw64", "int16", "2,70,3,11"},
           {"mge.chwn4", "fp16", "2,6,7,9"},
           {"mge.nhwc", "uint16", "3,8,8,4"},
           // ... unpacked in cache eight rows at a time over a window of
           // pixels when the rows are a multiple of 2 KiB apart (padding
           // rows), through a stage so from 96 rows on, straight when not.
           {"mge.nchw32", "fp16", "1,40,32,32"},
           {"mge.nhwc", "bf16", "1,64,16,64"},
           {"mge.nhwc", "fp16", "1,96,32,32"},
           {"mge.nhwc", "int16", "2,128,16,64"},
           {"mge.nchw64", "fp16", "1,64,32,40"},
           // NCHW4 8-bit blocks of small images (small_blocks4_epi8): tiles of
           // 64 pixels and a partial one, a padding group; packs up to 1024 pixels.
           {"mge.nchw4", "int8", "2,10,14,14"},
           {"mge.nchw4", "uint8", "1,8,30,30"},
           // 16- and 32-bit ones (small_blocks4_wide): whole and masked tiles,
           // a padding group, images of 1 and 3 x 3 pixels, 1024 pixels.
           {"mge.nchw4", "fp16", "2,10,7,7"},
           {"mge.nchw4", "bf16", "1,8,3,3"},
           {"mge.nchw4", "int16", "1,6,1,1"},
           {"mge.nchw4", "fp16", "1,4,32,32"},
           {"mge.nchw4", "fp32", "2,10,7,7"},
           {"mge.nchw4", "int32", "1,7,3,3"},
           {"mge.nchw4", "fp32", "1,8,32,32"},
           {"mge.nchw4", "fp32", "1,4,4,4"},
           // 16- and 32-bit NCHW4 blocks of images of no whole number of tiles
           // (32 and 16 pixels), every channel real, as one run (blocks4_run):
           // tiles across two blocks and two images, a last partial tile; 36
           // and 20 pixels (the unpack by the run, the pack by byte permutes);
           // 196; a last tile of one pixel.
           {"mge.nchw4", "fp16", "2,12,7,7"},
           {"mge.nchw4", "bf16", "1,8,6,6"},
           {"mge.nchw4", "int16", "3,4,14,14"},
           {"mge.nchw4", "fp16", "1,4,1,33"},
           {"mge.nchw4", "fp32", "2,12,5,5"},
           {"mge.nchw4", "int32", "1,8,4,5"},
           {"mge.nchw4", "fp32", "3,4,14,14"},
           {"mge.nchw4", "int32", "1,4,1,17"},
           // NCHWx blocks of tiny images, every channel real, by byte permutes
           // (group_permutes.h): several groups a block and a last block of
           // fewer, one group of eight registers (NCHW32 4 x 4, NCHW64 2 x 4,
           // NCHW32 fp16 2 x 4), 7 x 7; padding channels (through the rows).
           {"mge.nchw4", "int8", "1,8,3,3"},
           {"mge.nchw4", "fp16", "2,8,2,2"},
           {"mge.nchw4", "fp32", "1,1024,3,3"},
           {"mge.nchw4", "uint8", "3,12,7,7"},
           {"mge.nchw32", "int8", "1,64,3,3"},
           {"mge.nchw32", "int8", "1,96,4,4"},
           {"mge.nchw64", "int8", "1,128,2,4"},
           {"mge.nchw32", "fp16", "2,64,2,4"},
           {"mge.nchw64", "int8", "1,128,3,3"},  // nine registers
           {"mge.nchw32", "bf16", "1,96,3,3"},
           {"mge.nchw4", "int8", "1,10,3,3"},
           // The same without VBMI (4 rows of 16 bytes or more, two blocks a
           // pass in the lanes): 7 x 7, a whole pass, one block, a block and a
           // last one overlapping it, 32-bit rows of one block.
           {"mge.nchw4", "fp16", "2,16,7,7"},
           {"mge.nchw4", "bf16", "1,8,4,4"},
           {"mge.nchw4", "int8", "2,8,4,4"},
           {"mge.nchw4", "int16", "1,12,5,5"},
           {"mge.nchw4", "fp32", "3,4,2,2"},
           // NHWC 16-bit images of at most 64 pixels, 32 | C, 64 channels and
           // more (small_images_epi16): a whole block of pixels and a last one
           // (packs: a whole block ending at the last pixel; unpacks: masked),
           // runs of 256 channels and a shorter last run, 64 pixels, 1 pixel;
           // blocks of at most 16 pixels (one tile of 16, masked or whole),
           // of 17 to 31 (packs: two whole tiles of 16, overlapping), 48.
           {"mge.nhwc", "fp16", "1,64,7,7"},
           {"mge.nhwc", "bf16", "2,288,3,3"},
           {"mge.nhwc", "int16", "1,96,8,8"},
           {"mge.nhwc", "fp16", "1,544,5,7"},
           {"mge.nhwc", "fp16", "3,64,1,2"},
           {"mge.nhwc", "fp16", "1,64,4,4"},
           {"mge.nhwc", "int16", "2,96,5,5"},
           {"mge.nhwc", "bf16", "1,64,6,8"},
           // CHWN4 of 8 and 16 images (small_chwn4_epi8): groups of 8 images
           // in pairs and one alone, a padding group; 64 pixels; 16 images.
           {"mge.chwn4", "int8", "8,22,7,7"},
           {"mge.chwn4", "int8", "8,8,8,8"},
           {"mge.chwn4", "uint8", "16,12,5,5"},
           // CHWN4 of 4 images (tile_16x64_epi8_masked): 7 x 7 and 8 x 8
           // pixels, a padding group; more than 64 pixels, a masked last tile.
           {"mge.chwn4", "int8", "4,10,7,7"},
           {"mge.chwn4", "uint8", "4,8,8,8"},
           {"mge.chwn4", "int8", "4,4,1,3"},
           {"mge.chwn4", "int8", "4,6,10,10"},
           {"mge.nhwc", "int8", "1,48,7,7"},
           // Groups of rows no tile takes, through a stage of padded pixels
           // (padded_pitch): 8-bit to 32k rows (24; 17: the closing permutes'
           // farthest reach; 65: tiles of 96 rows; 100; 40; 300), a pitch too
           // wide for it (600 bytes); 16-bit of 20 rows (to 32) and 13 (to 16:
           // 32 would reach past two registers); 32-bit of 9, 13 and 17; packs
           // of 8-bit groups of 9 rows (unpacks: the permutes of a few rows);
           // 4-bit groups as 8-bit groups of row pairs.
           {"mge.nhwc", "int8", "1,24,7,9"},
           {"mge.nhwc", "uint8", "2,17,8,8"},
           {"mge.nhwc", "int8", "1,100,5,5"},
           {"mge.nhwc", "int8", "1,65,1,2"},
           {"mge.nhwc", "uint8", "1,40,9,9"},
           {"mge.nhwc", "int8", "1,300,3,3"},
           {"mge.nhwc", "int8", "1,600,2,3"},
           {"mge.nhwc", "fp16", "2,20,5,7"},
           {"mge.nhwc", "bf16", "1,13,9,9"},
           {"mge.nhwc", "fp32", "1,9,9,9"},
           {"mge.nhwc", "int32", "2,13,7,7"},
           {"mge.nhwc", "fp32", "1,17,8,8"},
           {"mge.nhwc", "int8", "1,9,10,10"},
           {"mge.nhwc", "int4", "1,40,8,8"},   // 20 row pairs
           {"mge.nhwc", "uint4", "1,26,6,6"},  // 13 row pairs
           // A last tile of fewer than 64 pixels after whole ones: 32 rows (81
           // pixels, an odd tail), and streamed (16 MiB and more) for 64 and 32 rows.
           {"mge.nchw32", "int8", "1,32,9,9"},
           {"mge.nchw64", "int8", "1,128,363,363"},
           {"mge.nchw32", "int8", "1,512,183,183"},
       }) {
    expect_pass_at_every_isa(layout, dtype, shape);
  }
}

// Large tensors (streamed: 16 MiB and more) with many groups, groups that do
// not share out evenly (split into runs of pixels), one group (a column-major
// matrix), rows off a cache line (odd H*W), padding rows, 4-bit elements (one
// thread) and plain copies; small ones thread too when asked.
TEST(MgeThreads, every_thread_count_writes_the_same_bytes) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"mge.nchw4", "fp32", "2,17,256,257"},
           {"mge.nchw4", "int8", "5,18,256,240"},
           {"mge.nchw32", "int8", "3,33,256,257"},
           {"mge.nchw64", "int8", "1,70,256,257"},
           {"mge.nhwc", "fp32", "1,64,256,257"},
           {"mge.chwn4", "int8", "8,9,256,257"},
           {"mge.matrix(order=col)", "fp32", "37,120001"},
           {"mge.nchw64", "int4", "1,65,256,257"},
           {"mge.nchw64", "int4", "1,65,256,256"},
           {"mge.nhwc", "uint4", "2,64,128,130"},
           {"mge.matrix(order=col)", "int4", "37,12002"},
           {"mge.nchw", "int8", "1,3,2048,2731"},
           {"mge.nhwc", "fp16", "1,5,7,333"},
           {"mge.matrix(order=col)", "int8", "3,1001"},
           {"mge.nchw32", "uint4", "1,33,3,129"},
           {"mge.nhwc", "int8", "2,24,256,257"},  // padded pitch: runs of pixels, the second image off a line
           {"mge.nhwc", "int8", "2,24,512,700"},  // streamed: 24 rows from registers
           {"mge.nhwc", "fp32", "2,13,256,257"},
           {"mge.nchw4", "int8", "16,256,3,3"},  // byte permutes of tiny images (16-byte registers without VBMI)
           {"mge.nchw4", "fp16", "9,12,1,5"},    // the same, ranges of blocks not in pairs
       }) {
    expect_same_bytes_at_every_thread_count(layout, dtype, shape);
  }
}

}  // namespace
}  // namespace layoutcheck
