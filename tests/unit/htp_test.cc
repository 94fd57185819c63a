#include <algorithm>
#include <cstring>
#include <map>

#include "core/htp_notation.h"
#include "layoutcheck/byte_rules.h"
#include "layoutcheck/checker.h"
#include "optimized/isa.h"
#include "optimized/threads.h"
#include "support.h"

namespace layoutcheck {
namespace {

using testing::facts_of;
using testing::expect_pass;
using testing::expect_pass_at_every_isa;
using testing::must_case;
using testing::must_offset;

std::string canonical(const std::string& text) {
  auto l = parse_layout(text);
  EXPECT_TRUE(l.ok()) << text << ": " << l.status().message();
  return l.ok() ? to_string(*l) : "";
}

void expect_invalid(const std::string& text, std::vector<std::string> needles) {
  auto l = parse_layout(text);
  ASSERT_FALSE(l.ok()) << text << " parsed as " << to_string(*l);
  EXPECT_EQ(l.status().code(), StatusCode::kInvalid);
  for (const auto& n : needles) EXPECT_NE(l.status().message().find(n), std::string::npos) << l.status().message() << " lacks " << n;
}

TEST(HtpNotation, canonical_text_is_the_documents_spacing) {
  EXPECT_EQ(canonical("ChunkedMemoryLayout<4,0,0,1,0,2,0,3,0,1,8,2,8,3,32>"),
            "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,8, 3,32>");
  EXPECT_EQ(canonical("  ChunkedMemoryLayout < 4 , 3,0, 2,0, 0,0, 1,0, 2, 8, 3,32, 2,004 >  "),
            "ChunkedMemoryLayout<4, 3,0, 2,0, 0,0, 1,0, 2,8, 3,32, 2,4>");
  EXPECT_EQ(canonical("ChunkedMemoryLayout</* RANK */ 2, /* rows */ 0,0, 1,0, 1,4>"), "ChunkedMemoryLayout<2, 0,0, 1,0, 1,4>");
  EXPECT_EQ(canonical("ChunkedMemoryLayout<2, 0,0, 1,0, 1,4>(pad=7)"), "ChunkedMemoryLayout<2, 0,0, 1,0, 1,4>(pad=7)");
  EXPECT_EQ(canonical("ChunkedMemoryLayout<2, 0,0, 1,0, 1,4>(pad=0)"), "ChunkedMemoryLayout<2, 0,0, 1,0, 1,4>");
  EXPECT_EQ(canonical("FlatMemoryLayout<4>"), "FlatMemoryLayout<4>");
  EXPECT_EQ(canonical("FlatMemoryLayout< 3 >"), "FlatMemoryLayout<3>");
  EXPECT_EQ(canonical("htp.flat"), "FlatMemoryLayout<4>");
  EXPECT_EQ(canonical("htp.chunked(rank=2,pairs=1:0 0:0 0:3)"), "ChunkedMemoryLayout<2, 1,0, 0,0, 0,3>");
}

TEST(HtpNotation, vendor_names_are_aliases) {
  const std::map<std::string, std::string> aliases = {
      {"R4FlatMemoryLayout", "FlatMemoryLayout<4>"},  {"R4NCHWMemoryLayout", "htp.nchw"},
      {"R4Depth32MemoryLayout", "htp.depth32"},       {"R4CroutonLayout", "htp.crouton"},
      {"R4Crouton4x1Layout", "htp.crouton4x1"},       {"R4Crouton2x2Layout", "htp.crouton2x2"},
      {"R4Crouton2Layout", "htp.crouton2"},           {"R4CroutonLayout(pad=31)", "htp.crouton(pad=31)"},
      {"ChannelMajorCrouton", "htp.channel_major_crouton"}, {"SpatialXYMajor", "htp.spatial_xy_major"},
      {"SpatialXMajor", "htp.spatial_x_major"},       {"SpatialXMajor(pad=5)", "htp.spatial_x_major(pad=5)"}};
  for (const auto& [alias, name] : aliases) EXPECT_EQ(canonical(alias), name) << alias;
  expect_invalid("R4CroutonLayoutX", {"unknown layout"});
  expect_invalid("SpatialXMajorY", {"unknown layout"});
}

TEST(HtpNotation, listing_names_mean_their_annotated_listings) {
  const std::map<std::string, std::string> listings = {
      {"ChannelMajorCrouton",
       "ChunkedMemoryLayout< /* RANK */ 4, /* Least Major: Batch Dim, all the rest */ 0,0, /* height */ 1,0, "
       "/* width */ 2,0, /* depth */ 3,0, /* 8 rows high */ 1,8, /* 8 columns wide */ 2,8, /* 32 channels deep */ 3,32>"},
      {"SpatialXYMajor",
       "ChunkedMemoryLayout< /* RANK */ 4, 0,0, 1,0, 2,0, 3,0, /* 4 high */ 1,4, /* 4 wide */ 2,4, "
       "/* 32 channels deep */ 3,32, /* 2 rows */ 1,2, /* 2 cols */ 2,2>"},
      {"SpatialXMajor",
       "ChunkedMemoryLayout< /* RANK */ 4, 0,0, 1,0, 2,0, 3,0, /* 8 high */ 1,4, /* 2 wide */ 2,2, "
       "/* 32 channels deep */ 3,32, /* 4 cols */ 2,4>"}};
  for (const auto& [name, listing] : listings) {
    auto named = parse_layout(name);
    ASSERT_TRUE(named.ok()) << name << ": " << named.status().message();
    EXPECT_EQ(htp_notation_text(*htp_notation_of(*named)), canonical(listing)) << name;
    EXPECT_EQ(find_spec(named->name)->section, "Details about Tensors") << name;
  }
  // SpatialXMajor is taken as written (1,4), not as R4Crouton4x1Layout (1,8).
  EXPECT_NE(htp_notation_text(*htp_notation_of(*parse_layout("SpatialXMajor"))),
            htp_notation_text(*htp_notation_of(*parse_layout("R4Crouton4x1Layout"))));
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    EXPECT_EQ(must_offset(*impl, must_case("SpatialXMajor", "uint8", "1,8,8,64"), {0, 4, 0, 0}), 2048u);
    EXPECT_EQ(must_offset(*impl, must_case("R4Crouton4x1Layout", "uint8", "1,8,8,64"), {0, 4, 0, 0}), 1024u);
  }
}

TEST(HtpNotation, round_trips) {
  for (const char* text : {"ChunkedMemoryLayout<1, 0,0>", "ChunkedMemoryLayout<3, 2,0, 0,0, 1,0, 1,3, 2,5, 1,2>",
                           "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,4, 2,4, 3,32, 1,2, 2,2>(pad=255)",
                           "FlatMemoryLayout<7>", "htp.weights", "htp.depth32(pad=1)", "htp.nchw",
                           "htp.chunked(rank=2,pairs=not pairs)", "htp.chunked(rank=2,pairs=0:0  1:0)"}) {
    auto l = parse_layout(text);
    ASSERT_TRUE(l.ok()) << text << ": " << l.status().message();
    auto again = parse_layout(to_string(*l));
    ASSERT_TRUE(again.ok()) << to_string(*l) << ": " << again.status().message();
    EXPECT_EQ(*again, *l) << text << " -> " << to_string(*l);
  }
}

TEST(HtpNotation, both_nchw_readings_are_reachable) {
  Case prose = must_case("ChunkedMemoryLayout<4, 0,0, 3,0, 1,0, 2,0>", "uint8", "1,2,3,1");
  Case table = must_case("ChunkedMemoryLayout<4, 0,0, 3,0, 2,0, 1,0>", "uint8", "1,2,3,1");
  Case named = must_case("R4NCHWMemoryLayout", "uint8", "1,2,3,1");
  EXPECT_EQ(must_offset(reference_impl(), prose, {0, 0, 1, 0}), 1u);
  EXPECT_EQ(must_offset(reference_impl(), table, {0, 0, 1, 0}), 2u);
  Case prose_named = must_case("htp.nchw_prose", "uint8", "1,2,3,1");
  EXPECT_EQ(must_offset(reference_impl(), named, {0, 0, 1, 0}), 2u);
  EXPECT_EQ(must_offset(reference_impl(), prose_named, {0, 0, 1, 0}), 1u);
  EXPECT_EQ(must_offset(optimized_impl(), table, {0, 0, 1, 0}), 2u);
}

TEST(HtpNotation, invalid_notations_name_the_rule_and_values) {
  expect_invalid("ChunkedMemoryLayout<0>", {"rank 0", "at least 1"});
  expect_invalid("ChunkedMemoryLayout<65, 0,0>", {"rank 65", "maximum 64"});
  expect_invalid("ChunkedMemoryLayout<4, 0,0, 1,0, 2,0>", {"rank 4", "got 3", "dimension 3 has no (3,0)"});
  expect_invalid("ChunkedMemoryLayout<3, 0,0, 1,0, 2,0, 3,0>", {"pair (3,0)", "dimension 3", "[0, 2]"});
  expect_invalid("ChunkedMemoryLayout<2, 0,0, 1,0, 1,4, 7,2>", {"pair (7,2)", "[0, 1]"});
  expect_invalid("ChunkedMemoryLayout<2, 0,0, 1>", {"do not form", "'1' has no size"});
  expect_invalid("ChunkedMemoryLayout<2, 0,0, 1,4, 1,0>", {"(1,0) follows the sized pair (1,4)"});
  expect_invalid("ChunkedMemoryLayout<2, 0,0, 0,0, 1,0>", {"dimension 0 has more than one zero-size pair"});
  expect_invalid("ChunkedMemoryLayout<1, 0,0, 0,4294967296, 0,4294967296>", {"more than 2^64"});
  expect_invalid("ChunkedMemoryLayout<1, 0,0, 0,131072, 0,1099511627776>", {"144115188075855872", "2^56"});
  expect_invalid("ChunkedMemoryLayout<99999999999999999999>", {"overflows 64 bits"});
  expect_invalid("ChunkedMemoryLayout<2, 0,0, 1,0, 1,-1>", {"'-1'", "non-negative decimal"});
  expect_invalid("ChunkedMemoryLayout<2, 0,0, 1,0, 1,0x4>", {"'0x4'"});
  expect_invalid("ChunkedMemoryLayout<>", {"missing rank"});
  expect_invalid("ChunkedMemoryLayout<2, /* 0,0, 1,0>", {"unterminated"});
  expect_invalid("ChunkedMemoryLayout<2, 0,0, 1,0", {"missing '>' closing the '<' at column 20", "ChunkedMemoryLayout<rank, dim,size, ...>"});
  expect_invalid("ChunkedMemoryLayout<1, 0,0> x", {"unexpected text 'x'"});
  expect_invalid("ChunkedMemoryLayout<1, 0,0>(foo=1)", {"unknown parameter 'foo'"});
  EXPECT_EQ(reference_impl().supports(must_case("ChunkedMemoryLayout<1, 0,0>(pad=256)", "uint8", "3")).rule(), "htp/pad-value");
  expect_invalid("ChunkedMemoryLayout<1, 0,0>(rank=2)", {"rank and pairs are given in <...>"});
  expect_invalid("FlatMemoryLayout<0>", {"rank 0"});
  expect_invalid("FlatMemoryLayout<100>", {"rank 100", "[1, 64]"});
  expect_invalid("FlatMemoryLayout<4>(pad=1)", {"unknown parameter 'pad'"});
  expect_invalid("htp.nchw(pad=1)", {"unknown parameter 'pad'"});
  std::string many = "ChunkedMemoryLayout<1, 0,0";
  for (int i = 0; i < 300; ++i) many += ", 0,1";
  expect_invalid(many + ">", {"301 pairs exceed the supported maximum 256"});
}

TEST(HtpNotation, shared_parser) {
  auto n = parse_htp_notation("R4Crouton4x1Layout");
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(htp_notation_text(*n), "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,2, 3,32, 2,4>");
  EXPECT_EQ(htp_pairs_param(*n), "0:0 1:0 2:0 3:0 1:8 2:2 3:32 2:4");
  EXPECT_FALSE(parse_htp_notation("tpu.continuous").ok());
  EXPECT_EQ(htp_notation_text(flat_htp_notation(2)), "ChunkedMemoryLayout<2, 0,0, 1,0>");
}

TEST(HtpCases, invalid_cases_name_the_rule_and_values) {
  struct Bad { const char* layout; const char* dtype; const char* shape; std::vector<const char*> needles; };
  for (const Bad& b : std::vector<Bad>{
           {"htp.crouton", "uint8", "2,3", {"shape 2,3 has rank 2", "rank 4"}},
           {"ChunkedMemoryLayout<2, 0,0, 1,0>", "uint8", "1,2,3", {"rank 3", "rank 2"}},
           {"htp.crouton", "uint8", "1,0,5,30", {"dimension 1 = 0", "positive"}},
           {"htp.crouton", "uint8", "1,72057594037927935,1,1", {"padded", "too many"}},
           {"htp.chunked(rank=2,pairs=garbage)", "uint8", "1,1", {"'garbage'", "dim:size"}},
       }) {
    Case c = must_case(b.layout, b.dtype, b.shape);
    Status s = reference_impl().supports(c);
    ASSERT_EQ(s.code(), StatusCode::kInvalid) << b.layout << " " << s.to_string();
    for (const char* n : b.needles) EXPECT_NE(s.message().find(n), std::string::npos) << s.message() << " lacks " << n;
    EXPECT_EQ(optimized_impl().supports(c).code(), StatusCode::kInvalid) << b.layout;
    EXPECT_EQ(check(c, reference_impl(), optimized_impl()).verdict, Verdict::kBothInvalid);
  }
}

TEST(HtpCases, sub_byte_types_are_declined) {
  Case c = must_case("htp.crouton", "int4", "1,8,8,32");
  EXPECT_EQ(reference_impl().supports(c).code(), StatusCode::kUnsupported);
  EXPECT_EQ(optimized_impl().supports(c).code(), StatusCode::kUnsupported);
}

TEST(HtpDescribe, crouton_walk_facts) {
  auto f = facts_of(must_case("R4CroutonLayout(pad=31)", "fp16", "2,9,20,50"));
  EXPECT_EQ(f["padded_shape"], "2,16,24,64");
  EXPECT_EQ(f["chunk_shape"], "1,8,8,32");
  EXPECT_EQ(f["chunk_grid"], "2,2,3,2");
  EXPECT_EQ(f["chunk_order"], "0,1,2,3");
  EXPECT_EQ(f["chunk_bytes"], "4096");
  EXPECT_EQ(f["size_bytes"], "98304");
  EXPECT_EQ(f["pad_bits"], "0x4fc0");
  EXPECT_EQ(f["notation"], "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,8, 3,32>");
}

// Boundary classes: every dimension against its chunk extent.
TEST(HtpBoundary, depth_lt_chunk) { expect_pass("htp.crouton", "uint8", "1,8,8,31"); }
TEST(HtpBoundary, depth_eq_chunk) { expect_pass("htp.crouton", "uint8", "1,8,8,32"); }
TEST(HtpBoundary, depth_gt_chunk) { expect_pass("htp.crouton", "fp16", "1,8,8,33"); }
TEST(HtpBoundary, depth_div_chunk) { expect_pass("htp.crouton", "fp32", "1,8,8,64"); }
TEST(HtpBoundary, height_lt_chunk) { expect_pass("htp.crouton(pad=9)", "uint8", "2,7,8,32"); }
TEST(HtpBoundary, height_gt_chunk) { expect_pass("htp.crouton", "uint8", "2,9,8,32"); }
TEST(HtpBoundary, width_lt_chunk) { expect_pass("htp.depth32", "uint8", "1,3,3,32"); }
TEST(HtpBoundary, width_gt_chunk) { expect_pass("htp.depth32(pad=1)", "fp16", "1,3,5,65"); }
TEST(HtpBoundary, split_width_gt_chunk) { expect_pass("htp.crouton4x1", "uint8", "1,9,9,33"); }
TEST(HtpBoundary, split_width_eq_chunk) { expect_pass("htp.crouton4x1", "uint8", "2,8,16,64"); }
TEST(HtpBoundary, weights_eq_chunk) { expect_pass("htp.weights", "uint8", "3,3,64,64"); }
TEST(HtpBoundary, weights_eq_chunk_fp16) { expect_pass("htp.weights", "fp16", "2,3,32,64"); }
TEST(HtpBoundary, split_both_eq_chunk) { expect_pass("htp.crouton2x2", "uint8", "2,8,16,64"); }
TEST(HtpBoundary, split_both_gt_chunk) { expect_pass("htp.crouton2x2(pad=3)", "uint8", "1,9,9,65"); }
TEST(HtpBoundary, split_both_lt_chunk) { expect_pass("htp.crouton2x2", "bf16", "1,7,7,31"); }
TEST(HtpBoundary, crouton2_eq_chunk) { expect_pass("htp.crouton2", "int16", "1,8,4,32"); }
TEST(HtpBoundary, weights_in_gt_chunk) { expect_pass("htp.weights", "uint8", "3,3,33,32"); }
TEST(HtpBoundary, weights_out_lt_chunk) { expect_pass("htp.weights", "fp32", "1,2,32,31"); }
TEST(HtpBoundary, rank1) { expect_pass("ChunkedMemoryLayout<1, 0,0, 0,3, 0,5>(pad=4)", "uint8", "16"); }
TEST(HtpBoundary, rank5_permuted) { expect_pass("ChunkedMemoryLayout<5, 4,0, 2,0, 0,0, 3,0, 1,0, 4,2, 0,3>", "fp16", "4,2,3,2,5"); }
TEST(HtpBoundary, flat_rank3) { expect_pass("FlatMemoryLayout<3>", "int32", "3,4,5"); }

TEST(HtpPack, padding_is_the_pad_byte_and_elements_land) {
  Case c = must_case("R4CroutonLayout(pad=31)", "uint8", "1,3,5,30");
  std::vector<uint8_t> logical(450);
  for (size_t i = 0; i < logical.size(); ++i) logical[i] = static_cast<uint8_t>(100 + i % 100);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::vector<uint8_t> phys(2048, 0xEE);
    ASSERT_TRUE(impl->pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
    EXPECT_EQ(phys[0], 100);
    EXPECT_EQ(phys[29], 129);
    EXPECT_EQ(phys[30], 31);   // (0,0,0,30) is padding
    EXPECT_EQ(phys[31], 31);
    EXPECT_EQ(phys[32], 130);  // (0,0,1,0)
    EXPECT_EQ(phys[160], 31);  // (0,0,5,0) is padding
    EXPECT_EQ(phys[2047], 31);
    EXPECT_EQ(std::count(phys.begin(), phys.end(), 31), 1598) << impl->name();
    std::vector<uint8_t> back(450, 0);
    ASSERT_TRUE(impl->unpack(c, phys.data(), phys.size(), back.data(), back.size()).ok());
    EXPECT_EQ(back, logical) << impl->name();
  }
}

TEST(HtpPack, wrong_buffer_sizes_are_rejected) {
  Case c = must_case("htp.crouton", "uint8", "1,3,5,30");
  std::vector<uint8_t> logical(450), phys(2047);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    Status s = impl->pack(c, logical.data(), logical.size(), phys.data(), phys.size());
    EXPECT_EQ(s.code(), StatusCode::kInvalid);
    EXPECT_NE(s.message().find("2048"), std::string::npos) << s.message();
  }
}

// The checker notices a pack that ignores the pad parameter.
class ZeroPadding : public testing::ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    Case zero = c;
    zero.layout.params["pad"] = "0";
    return inner_.pack(zero, l, ls, p, ps);
  }
};

TEST(HtpChecker, catches_padding_without_the_pad_byte) {
  ZeroPadding mutant(optimized_impl());
  CheckReport r = check(must_case("htp.crouton(pad=31)", "uint8", "1,3,5,30"), reference_impl(), mutant);
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("belongs to no element (padding must be 0x1f)"), std::string::npos) << r.message;
}

// The checker notices an implementation that takes the table's NCHW reading.
class TableNchw : public testing::ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  static Case as_table(const Case& c) {
    Case t = c;
    t.layout = *parse_layout("ChunkedMemoryLayout<4, 0,0, 3,0, 2,0, 1,0>");
    return t;
  }
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override { return inner_.offset_bits(as_table(c), at); }
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    return inner_.pack(as_table(c), l, ls, p, ps);
  }
  Status unpack(const Case& c, const void* p, size_t ps, void* l, size_t ls) const override {
    return inner_.unpack(as_table(c), p, ps, l, ls);
  }
};

TEST(HtpChecker, tells_the_nchw_readings_apart) {
  TableNchw mutant(optimized_impl());
  CheckReport r = check(must_case("htp.nchw_prose", "uint8", "1,2,3,1"), reference_impl(), mutant);
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("step along height: expected 3 bytes, actual 1"), std::string::npos) << r.message;
}

// Outputs of 8 MiB and more take the non-temporal store path.
TEST(HtpLarge, streaming_rows_equal_the_reference_at_every_isa_level) {
  expect_pass_at_every_isa("htp.depth32", "fp16", "1,64,64,1024");
  expect_pass_at_every_isa("htp.crouton(pad=5)", "uint8", "1,63,70,2050");
  expect_pass_at_every_isa("htp.crouton4x1", "uint8", "1,64,64,2048");
  expect_pass_at_every_isa("htp.crouton4x1(pad=9)", "uint8", "1,63,70,2050");
  // Padded height and width, whole chunks of depth (the tile pairs when both
  // buffers are on cache lines: every_buffer_alignment below).
  expect_pass_at_every_isa("htp.crouton4x1(pad=9)", "uint8", "1,63,70,2048");
  expect_pass_at_every_isa("htp.crouton2x2(pad=3)", "uint8", "1,63,70,2048");
  // 16-bit four-row tiles unpacked with each row's piece of a tile a whole
  // line (streamed), and with the depth padded (not streamed).
  expect_pass_at_every_isa("htp.crouton4x1", "fp16", "1,64,64,1024");
  expect_pass_at_every_isa("htp.crouton4x1", "fp16", "1,64,64,1040");
  // Padded 64-byte rows (16-bit depth32) streamed back a logical row at a
  // time: whole pieces only, and a last piece of 29 elements.
  expect_pass_at_every_isa("htp.depth32(pad=3)", "fp16", "1,63,66,1024");
  expect_pass_at_every_isa("htp.depth32(pad=3)", "fp16", "1,63,66,1021");
  // Rows of a length no kernel is specialized for: 48 bytes, streamed both
  // ways; 96 bytes cut by padding (not streamed: unpacked front to back).
  expect_pass_at_every_isa("ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,8, 3,48>", "uint8", "1,64,64,2064");
  expect_pass_at_every_isa("ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,8, 3,96>", "uint8", "1,64,64,2050");
}

// Tiles of 2 or 4 rows of 32-byte pieces other than 32 x 4 bytes (crouton2 at
// every element size; the 4-row croutons and the weights with 16- and 32-bit
// elements): whole, partly padding along the depth (pieces cut after 6, 13, 7,
// 30 and 12 bytes, read whole or, at the tensor's end, through the stack),
// the width or the height, streamed from 8 MiB on.
TEST(HtpKernels, wide_tiles_equal_the_reference_at_every_isa_level) {
  expect_pass_at_every_isa("htp.crouton2", "uint8", "1,16,8,64");
  expect_pass_at_every_isa("htp.crouton2(pad=3)", "uint8", "1,9,7,70");
  // Padded along the depth only, the batch loop fused with the height's outer
  // one (a fused loop's coordinate runs past its dimension's extent).
  expect_pass_at_every_isa("htp.crouton2", "int8", "2,16,8,33");
  expect_pass_at_every_isa("htp.crouton2(pad=3)", "uint8", "1,7,9,45");
  expect_pass_at_every_isa("htp.crouton2(pad=3)", "uint8", "1,7,9,39");
  expect_pass_at_every_isa("htp.crouton2", "fp16", "2,8,12,96");
  expect_pass_at_every_isa("htp.crouton2(pad=5)", "fp32", "1,9,9,40");
  expect_pass_at_every_isa("htp.crouton2(pad=5)", "int16", "1,17,6,31");
  expect_pass_at_every_isa("htp.crouton4x1", "fp16", "1,8,16,64");
  expect_pass_at_every_isa("htp.crouton4x1(pad=3)", "fp32", "1,9,9,33");
  expect_pass_at_every_isa("htp.crouton2x2(pad=7)", "fp16", "1,9,9,70");
  expect_pass_at_every_isa("htp.spatial_x_major", "bf16", "1,4,8,64");
  expect_pass_at_every_isa("htp.weights", "int16", "3,3,64,64");
  expect_pass_at_every_isa("htp.weights(pad=9)", "fp32", "3,2,33,70");
  expect_pass_at_every_isa("htp.crouton2", "uint8", "1,64,64,2048");
  expect_pass_at_every_isa("htp.crouton2(pad=3)", "fp16", "1,63,62,1030");
  expect_pass_at_every_isa("htp.crouton4x1", "fp16", "1,64,64,1024");
  // Streamed crouton2 packs of 4 KiB a position (a crouton's eight rows in
  // turn each step): the last crouton's rows and pixels partly padding, and
  // the depth too; unpacked streamed when the depth is whole.
  expect_pass_at_every_isa("htp.crouton2(pad=3)", "uint8", "1,255,257,128");
  expect_pass_at_every_isa("htp.crouton2(pad=3)", "uint8", "1,255,257,120");
}

// The NCHW layouts transpose planes (rows the innermost physical loop,
// columns the logical one of stride 1; optimized/plane_transpose.h): staged
// tiles, blocks overlapping the last ones at the edges, planes narrower than
// a block, every element size.
TEST(HtpKernels, plane_transposes_equal_the_reference_at_every_isa_level) {
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,64,3,64");
  expect_pass_at_every_isa("htp.nchw", "uint8", "2,70,5,35");
  expect_pass_at_every_isa("htp.nchw", "fp16", "1,30,30,70");
  expect_pass_at_every_isa("htp.nchw", "fp32", "1,17,9,13");
  expect_pass_at_every_isa("htp.nchw", "int16", "1,100,2,24");
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,5,5,3");
  // Planes of fewer rows than a block: squares of 16 bytes a side.
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,20,3,40");
  expect_pass_at_every_isa("htp.nchw", "fp16", "1,12,2,9");
  expect_pass_at_every_isa("htp.nchw", "fp32", "1,6,3,10");
  expect_pass_at_every_isa("htp.nchw_prose", "uint8", "1,9,13,70");
  expect_pass_at_every_isa("htp.nchw_prose", "fp32", "1,64,64,33");
  expect_pass_at_every_isa("htp.nchw_prose", "int16", "1,8,8,40");
  // Planes (more than 64 pixels) narrower than 16 bytes of at least two
  // blocks' rows, unpacking: whole blocks storing the plane's few columns,
  // the rows whose reads would pass the plane's end element by element (a
  // block and a row; two blocks and 8 rows; two and 4).
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,14,14,256");
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,9,8,33");
  expect_pass_at_every_isa("htp.nchw", "fp16", "1,6,12,40");
  expect_pass_at_every_isa("htp.nchw", "fp32", "2,3,22,20");
  // Planes of at most 64 pixels fuse into tiles (pixels x channels): in
  // squares of 16 bytes a side, the last ones moved back inside the tile, of
  // exactly one square, of every element size.
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,7,7,40");
  expect_pass_at_every_isa("htp.nchw", "uint8", "2,4,4,16");
  expect_pass_at_every_isa("htp.nchw", "fp16", "1,4,5,21");
  expect_pass_at_every_isa("htp.nchw_prose", "fp32", "1,3,3,9");
  expect_pass_at_every_isa("ChunkedMemoryLayout<3, 2,0, 1,0, 0,0>", "int32", "7,130,9");
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,64,64,2048");
  // Streamed planes: unpacked planes starting half a line into their rows
  // (16 rows by the edge first), and packed rows half a line apart (none streamed).
  expect_pass_at_every_isa("htp.nchw", "fp16", "1,64,64,1040");
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,32,129,2048");
  // Packs whose planes' rows are not whole tiles go in runs of planes, their
  // rows gathered: bands of rows within a plane and across planes, the last
  // band and column tile moved back (a half tile where what is left fits),
  // columns of exactly a half tile, every element size, two images; planes of
  // fewer columns than a half tile a plane at a time.
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,17,17,160");
  expect_pass_at_every_isa("htp.nchw", "uint8", "2,13,9,70");
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,112,9,32");
  expect_pass_at_every_isa("htp.nchw", "fp16", "1,17,17,100");
  expect_pass_at_every_isa("htp.nchw", "fp32", "1,13,20,40");
  expect_pass_at_every_isa("htp.nchw", "int16", "1,24,5,16");
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,30,30,31");
  // A band whose rows end exactly at its last plane's end (rows 240..255 of
  // planes of 17), of two images: a band read one row further would take
  // the second image's.
  expect_pass_at_every_isa("htp.nchw", "fp32", "2,17,16,40");
  // Planes of fewer columns than a half tile (the channels of an RGB image)
  // in runs of pixels, bands of rows through a stage: packs of rows of at
  // most 256 bytes in one band, others in bands of a whole tile, the last one
  // moved back; planes of fewer rows than a tile, runs longer than the stage
  // cut in two, every element size.
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,224,224,3");
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,100,30,3");
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,66,400,3");
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,300,5,3");
  expect_pass_at_every_isa("htp.nchw", "fp16", "2,20,9,5");
  expect_pass_at_every_isa("htp.nchw", "fp32", "1,40,7,3");
  expect_pass_at_every_isa("htp.nchw", "int16", "1,70,3,15");
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,12,20,3");
  expect_pass_at_every_isa("htp.nchw", "fp16", "1,6,30,4");
  // Not so when the loop around the planes is not logically next to the
  // channels (the prose's NCHW: the images).
  expect_pass_at_every_isa("htp.nchw_prose", "uint8", "2,20,10,3");
  // Planes of exactly half a tile of rows or columns whose rows are lines
  // apart: tiles of 32 bytes that way (uint8 unpacks of 32-pixel planes,
  // fp16 of 16, fp32 of 8).
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,32,32,256");
  expect_pass_at_every_isa("htp.nchw", "fp16", "1,16,20,96");
  expect_pass_at_every_isa("htp.nchw", "fp32", "1,8,30,48");
  // In-cache planes whose destination rows are a multiple of 1 KiB apart, in
  // groups of planes side by side through a stage: unpacks of 2 planes a
  // group and packs of 4; unpacks in groups of 5 of 48 planes (the last group
  // of 3), two images; packs so; planes of 32-byte rows (the uint8 unpack
  // above) too short for a run of 256 bytes stay a plane at a time.
  expect_pass_at_every_isa("htp.nchw", "fp16", "1,32,32,128");
  expect_pass_at_every_isa("htp.nchw", "fp16", "2,100,48,32");
  expect_pass_at_every_isa("htp.nchw", "uint8", "2,64,48,96");
  // Planes of whole tiles (group_lanes with AVX-512, group_lanes_avx2
  // without it): groups of as many planes as the stage holds. 16-bit in
  // cache both ways: 4 of 32 x 128 and of 64 x 64 (two images of two
  // groups), 5 of 32 x 96 and of 96 x 32 (the last group of one plane);
  // packs of 8 and 32 bits in cache (groups of 4 and 2) and streamed
  // (16-bit, groups of 4; buffers on a line: see
  // every_buffer_alignment_writes_the_same_bytes_at_every_isa_level).
  expect_pass_at_every_isa("htp.nchw", "fp16", "2,64,8,64");
  expect_pass_at_every_isa("htp.nchw", "fp16", "1,32,16,96");
  expect_pass_at_every_isa("htp.nchw", "int16", "1,96,16,32");
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,64,16,128");
  expect_pass_at_every_isa("htp.nchw", "fp32", "1,32,32,128");
  expect_pass_at_every_isa("htp.nchw", "fp16", "1,64,64,1024");
  // Byte tiles whose rows are 4 KiB apart: through AVX-512 registers, staged
  // where 512-bit operations split in two.
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,64,64,64");
  {
    // The other answer of splits_512bit_ops() (Split512Scope) for these and
    // the planes of whole tiles above, so that any CPU with AVX-512 runs both
    // forms: where 512-bit operations split in two, packs still go through
    // group_lanes, unpacks through the tiles, and the byte tiles are staged.
    const bool split = !splits_512bit_ops();
    Split512Scope other(split);
    SCOPED_TRACE(split ? "512-bit operations split" : "512-bit operations whole");
    expect_pass_at_every_isa("htp.nchw", "uint8", "1,64,64,64");
    expect_pass_at_every_isa("htp.nchw", "fp16", "1,32,32,128");
    expect_pass_at_every_isa("htp.nchw", "uint8", "1,64,16,128");
    expect_pass_at_every_isa("htp.nchw", "fp32", "1,32,32,128");
    expect_pass_at_every_isa("htp.nchw", "fp16", "1,64,64,1024");
  }
  // Streamed (8 MiB and more): groups through a stage of 256 KiB, the rows
  // streamed out; groups of 3 both ways of 104 planes (the last of 2), and
  // unpacks in groups of 2 of 129 planes (the last of 1), through the
  // tiles; these 8-bit planes of whole tiles group as group_lanes does (6
  // and 8 planes, a stage of 512 KiB; without AVX-512 group_lanes_avx2, 3
  // and 4, 256 KiB), through it where the destination starts on a line and
  // through the tiles where it does not.
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,128,104,640");
  expect_pass_at_every_isa("htp.nchw", "uint8", "1,64,129,1024");
}

// Every thread count (optimized/threads.h) writes the reference's bytes, on
// every walk: rows dense and padded, streamed (8 MiB and more) or not, 32 x 4
// tiles dense and padded, tiles in logical order (the weights), wider
// elements, chunks placed apart, and nests with a single position.
TEST(HtpLarge, every_thread_count_writes_the_same_bytes_at_every_isa_level) {
  struct Shape {
    const char* layout;
    const char* dtype;
    const char* shape;
  };
  const Shape cases[] = {{"htp.crouton", "uint8", "1,64,64,2048"},
                         {"htp.crouton(pad=5)", "uint8", "1,63,70,2050"},
                         {"htp.depth32", "fp16", "1,64,64,1024"},
                         {"htp.depth32(pad=3)", "fp16", "1,63,66,1021"},
                         {"htp.crouton", "fp16", "2,9,13,70"},
                         {"htp.crouton4x1", "uint8", "1,64,64,2048"},
                         {"htp.crouton4x1", "fp16", "1,64,64,1024"},
                         {"htp.crouton4x1(pad=9)", "uint8", "1,63,70,2050"},
                         {"htp.crouton2x2", "uint8", "1,64,64,2048"},
                         {"htp.crouton2x2(pad=3)", "uint8", "2,9,9,65"},
                         {"htp.crouton4x1(pad=9)", "uint8", "1,63,70,2048"},
                         {"htp.crouton2x2(pad=3)", "uint8", "3,9,11,128"},
                         {"htp.crouton2x2(pad=3)", "uint8", "1,181,183,256"},
                         {"htp.weights", "uint8", "3,3,1024,1024"},
                         {"htp.weights", "fp16", "3,3,70,50"},
                         {"htp.crouton2(pad=3)", "fp16", "1,63,62,1030"},
                         {"htp.crouton2", "uint8", "1,64,64,2048"},
                         {"htp.crouton2(pad=3)", "uint8", "2,9,13,70"},
                         {"htp.crouton2(pad=3)", "uint8", "1,255,257,120"},
                         {"htp.nchw", "uint8", "1,64,64,2048"},
                         {"htp.nchw", "uint8", "2,17,13,160"},
                         {"htp.nchw", "uint8", "2,67,45,3"},
                         {"htp.nchw", "fp16", "1,100,48,32"},
                         {"htp.nchw", "uint8", "1,128,104,640"},
                         {"htp.nchw_prose", "fp16", "2,9,13,70"},
                         {"htp.chunk_table(rank=4,pairs=0:0 1:0 2:0 3:0 1:8 2:8 3:32,pad=7,chunk_stride=4608)", "fp16", "1,9,9,33"},
                         {"ChunkedMemoryLayout<1, 0,0, 0,3, 0,5>(pad=4)", "uint8", "16"}};
  for (const Shape& s : cases) testing::expect_same_bytes_at_every_thread_count(s.layout, s.dtype, s.shape);
}

// The kernels choose their walk by the buffers' alignment too (whole-line
// transposes of rows need both buffers on 64-byte boundaries): buffers on a
// cache line, on 16 bytes and on an odd byte write the reference's bytes at
// every instruction-set level, streamed (8 MiB and more) or not.
TEST(HtpLarge, every_buffer_alignment_writes_the_same_bytes_at_every_isa_level) {
  struct Shape {
    const char* layout;
    const char* dtype;
    const char* shape;
  };
  const Shape cases[] = {{"htp.crouton", "uint8", "1,64,64,2048"},  {"htp.crouton", "uint8", "2,16,8,64"},
                         {"htp.crouton", "fp16", "1,8,16,64"},      {"htp.depth32", "uint8", "1,32,64,4096"},
                         {"htp.depth32", "uint8", "2,3,6,128"},     {"htp.depth32", "uint8", "1,3,8,96"},
                         {"htp.depth32", "fp16", "1,5,12,64"},      {"htp.depth32", "fp16", "1,64,64,1024"},
                         {"htp.crouton(pad=5)", "uint8", "1,9,8,64"}, {"htp.crouton4x1", "uint8", "1,16,16,64"},
                         {"htp.crouton2x2", "uint8", "1,16,16,64"}, {"htp.crouton2x2", "uint8", "1,64,64,2048"},
                         {"htp.crouton4x1", "fp16", "1,64,64,1024"},
                         {"htp.weights", "uint8", "3,3,64,100"},    {"htp.depth32(pad=3)", "fp16", "1,63,66,1021"},
                         {"htp.weights(pad=7)", "uint8", "3,1,64,70"}, {"htp.weights", "uint8", "1,2,32,64"},
                         {"htp.crouton", "uint8", "1,10,11,70"},      {"htp.depth32", "fp16", "1,5,7,61"},
                         {"htp.crouton(pad=9)", "uint8", "2,9,17,250"},  {"htp.crouton", "uint8", "1,63,62,2040"},
                         {"htp.weights", "uint8", "3,3,1024,920"},
                         // Padded 32-byte rows, an even number of chunks along them: the
                         // padded transposes, both ways, streamed.
                         {"htp.crouton(pad=5)", "uint8", "1,63,70,2040"},
                         // Padded height and width, whole chunks of depth: the padded tile
                         // pairs, rows of a tile in padding read from (or written to) a line
                         // of their own; packs of blocks of 16 KiB or less (depth 256 or
                         // less) by blocks, streamed from 8 MiB on.
                         {"htp.crouton4x1(pad=9)", "uint8", "2,9,11,64"},
                         {"htp.crouton2x2(pad=3)", "uint8", "1,63,70,2048"},
                         {"htp.crouton4x1(pad=9)", "uint8", "1,183,181,256"},
                         {"htp.crouton2x2(pad=3)", "uint8", "1,181,183,256"},
                         // crouton2 streamed where the buffers start on lines: packs of a
                         // crouton's eight rows in turn, unpacks of whole lines of rows.
                         {"htp.crouton2(pad=3)", "uint8", "1,255,257,128"},
                         // Packs of planes in runs, streamed (planes of whole lines): the
                         // runs' tiles stream only where their destination rows start on a line.
                         {"htp.nchw", "uint8", "1,36,128,2048"},
                         // Groups of in-cache planes through a stage (rows copied out as runs).
                         {"htp.nchw", "fp16", "1,32,32,128"},
                         // Planes of whole tiles through group_lanes, streamed where the
                         // destination starts on a line: 8-bit both ways (groups of 8, the
                         // last of 1), 16-bit packs (groups of 4).
                         {"htp.nchw", "uint8", "1,64,129,1024"},
                         {"htp.nchw", "fp16", "1,64,64,1024"}};
  for (const Shape& s : cases) {
    SCOPED_TRACE(std::string(s.layout) + " " + s.dtype + " " + s.shape);
    const Case c = must_case(s.layout, s.dtype, s.shape);
    std::vector<uint8_t> logical;
    fill_position_unique(c, 11, &logical);
    const uint64_t size = *reference_impl().size_bytes(c);
    std::vector<uint8_t> expected(size, 0x5A);
    ASSERT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), expected.data(), size).ok());
    std::vector<uint8_t> lg_store(logical.size() + 128), ph_store(size + 128);
    for (size_t offset : {size_t{0}, size_t{16}, size_t{1}}) {
      auto at = [offset](std::vector<uint8_t>& v) {
        const uintptr_t a = reinterpret_cast<uintptr_t>(v.data());
        return v.data() + ((64 - a % 64) % 64) + offset;
      };
      uint8_t* lg = at(lg_store);
      uint8_t* ph = at(ph_store);
      std::memcpy(lg, logical.data(), logical.size());
      for (Isa isa : available_isas()) {
        IsaCapScope cap(isa);
        for (unsigned threads : {1u, 2u}) {
          std::memset(ph, 0x5A, size);
          ASSERT_TRUE(optimized_pack(c, lg, logical.size(), ph, size, threads).ok());
          EXPECT_EQ(std::memcmp(ph, expected.data(), size), 0) << isa_name(isa) << " pack, offset " << offset << ", threads " << threads;
          std::memset(lg, 0xA5, logical.size());
          ASSERT_TRUE(optimized_unpack(c, ph, size, lg, logical.size(), threads).ok());
          EXPECT_EQ(std::memcmp(lg, logical.data(), logical.size()), 0)
              << isa_name(isa) << " unpack, offset " << offset << ", threads " << threads;
        }
      }
    }
  }
}

TEST(HtpChunkTable, invalid_placements_name_the_rule_and_values) {
  struct Bad { const char* layout; const char* rule; std::vector<const char*> needles; };
  const std::string pairs = "htp.chunk_table(rank=2,pairs=0:0 1:0 1:8,";
  for (const Bad& b : std::vector<Bad>{
           {"chunk_stride=15)", "htp.chunk_table/stride-covers-chunk", {"chunk_stride 15", "16 bytes of a chunk"}},
           {"chunk_stride=17)", "htp.chunk_table/base-align-element", {"chunk_stride 17", "2-byte element"}},
           {"chunk_stride=16,bases=0 16 32 48)", "htp.chunk_table/stride-or-bases", {"chunk_stride=16", "give one"}},
           {"bases=0 16 32)", "htp.chunk_table/bases-one-per-chunk", {"3 bases", "4 chunks", "2,2"}},
           {"bases=0 16 32 48 64)", "htp.chunk_table/bases-one-per-chunk", {"5 bases", "4 chunks"}},
           {"bases=0 16 x 48)", "htp.chunk_table/bases-one-per-chunk", {"'x'"}},
           {"bases=0 16 33 64)", "htp.chunk_table/base-align-element", {"chunk 2 starts at byte 33"}},
           {"bases=0 40 30 64)", "htp.chunk_table/bases-disjoint", {"chunk 2 at byte 30", "overlaps chunk 1 at byte 40"}},
           {"bases=0 16 32 1152921504606846962)", "htp.chunk_table/size-overflow", {"chunk 3", "2^60"}},
           {"chunk_stride=281474976710656)", "", {}},
       }) {
    Case c = must_case(pairs + b.layout, "fp16", "2,10");
    Status s = reference_impl().supports(c);
    if (std::string(b.rule).empty()) {
      EXPECT_TRUE(s.ok()) << s.to_string();
      EXPECT_EQ(*reference_impl().size_bytes(c), 3 * (uint64_t{1} << 48) + 16);
      EXPECT_EQ(*optimized_impl().size_bytes(c), 3 * (uint64_t{1} << 48) + 16);
      continue;
    }
    ASSERT_EQ(s.code(), StatusCode::kInvalid) << b.layout << " " << s.to_string();
    EXPECT_EQ(s.rule(), b.rule) << b.layout;
    for (const char* n : b.needles) EXPECT_NE(s.message().find(n), std::string::npos) << s.message() << " lacks " << n;
    EXPECT_EQ(optimized_impl().supports(c).code(), StatusCode::kInvalid) << b.layout;
    EXPECT_EQ(check(c, reference_impl(), optimized_impl()).verdict, Verdict::kBothInvalid);
  }
  Case far = must_case("htp.chunk_table(rank=1,pairs=0:0,chunk_stride=281474976710656)", "uint8", "4097");
  EXPECT_EQ(reference_impl().supports(far).rule(), "htp.chunk_table/size-overflow");
  EXPECT_EQ(optimized_impl().supports(far).code(), StatusCode::kInvalid);
  EXPECT_TRUE(reference_impl().supports(must_case("htp.chunk_table(rank=1,pairs=0:0,chunk_stride=281474976710656)", "uint8", "4096")).ok());
}

TEST(HtpChunkTable, defaults_are_the_consecutive_layout) {
  Case table = must_case("htp.chunk_table(rank=4,pairs=0:0 1:0 2:0 3:0 1:8 2:8 3:32,pad=7)", "fp16", "1,9,9,33");
  Case chunked = must_case("R4CroutonLayout(pad=7)", "fp16", "1,9,9,33");
  std::vector<uint8_t> logical(*logical_bytes(table));
  for (size_t i = 0; i < logical.size(); ++i) logical[i] = static_cast<uint8_t>(i * 7 + 1);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    ASSERT_EQ(*impl->size_bytes(table), *impl->size_bytes(chunked));
    std::vector<uint8_t> a(*impl->size_bytes(table), 0xEE), b(a.size(), 0xEE);
    ASSERT_TRUE(impl->pack(table, logical.data(), logical.size(), a.data(), a.size()).ok());
    ASSERT_TRUE(impl->pack(chunked, logical.data(), logical.size(), b.data(), b.size()).ok());
    EXPECT_EQ(a, b) << impl->name();
  }
  EXPECT_EQ(to_string(table.layout), "htp.chunk_table(pairs=0:0 1:0 2:0 3:0 1:8 2:8 3:32,pad=7)");
  EXPECT_EQ(to_string(*parse_layout("ChunkedMemoryLayout<2, 0,0, 1,0, 1,8>(chunk_stride=24)")),
            "htp.chunk_table(rank=2,pairs=0:0 1:0 1:8,chunk_stride=24)");
}

TEST(HtpChunkTable, chunks_land_at_their_bases_and_gaps_are_free) {
  Case c = must_case("htp.chunk_table(rank=2,pairs=0:0 1:0 1:8,bases=72 0 48 24,pad=9)", "fp16", "2,10");
  std::vector<uint8_t> logical(40);
  for (size_t i = 0; i < logical.size(); ++i) logical[i] = static_cast<uint8_t>(100 + i);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    ASSERT_EQ(*impl->size_bytes(c), 88u);
    std::vector<uint8_t> phys(88, 0xEE);
    ASSERT_TRUE(impl->pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
    EXPECT_EQ(phys[72], 100);  // (0,0): chunk 0 at 72
    EXPECT_EQ(phys[0], 116);   // (0,8): chunk 1 at 0
    EXPECT_EQ(phys[4], 0x80);  // (0,10): padding of chunk 1, 9.0 = 0x4880
    EXPECT_EQ(phys[5], 0x48);
    EXPECT_EQ(phys[48], 120);  // (1,0): chunk 2 at 48
    EXPECT_EQ(phys[24], 136);  // (1,8): chunk 3 at 24
    EXPECT_EQ(phys[16], 0xEE) << impl->name();  // a gap: left as it was
    EXPECT_EQ(must_offset(*impl, c, {1, 9}), 26u);
    std::vector<uint8_t> back(40, 0);
    ASSERT_TRUE(impl->unpack(c, phys.data(), phys.size(), back.data(), back.size()).ok());
    EXPECT_EQ(back, logical) << impl->name();
  }
  ByteRules r = *byte_rules(c);
  EXPECT_EQ(r.bytes_of(ByteKind::kFree), 24u);
  EXPECT_EQ(r.rule_of(*r.find(16)).id, "htp.chunk-gap");
  EXPECT_EQ(r.find(16)->kind, ByteKind::kFree);
  EXPECT_EQ(r.find(4)->kind, ByteKind::kFixed);
  EXPECT_EQ(r.find(4)->value, 0x80);
  const auto facts = facts_of(c);
  EXPECT_EQ(facts.at("chunk_bases"), "72,0,48,24");
  EXPECT_EQ(facts.at("contiguous_run_bytes"), "16");
  EXPECT_EQ(facts.at("gap_bytes"), "24");
}

// The checker notices an implementation that packs the chunks consecutively.
class Consecutive : public testing::ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  static Case consecutive(const Case& c) {
    Case t = c;
    t.layout.params["chunk_stride"] = "0";
    t.layout.params["bases"] = kHtpNoBases;
    return t;
  }
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override { return inner_.offset_bits(consecutive(c), at); }
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    std::vector<uint8_t> tmp(*inner_.size_bytes(consecutive(c)));
    LC_RETURN_IF_ERROR(inner_.pack(consecutive(c), l, ls, tmp.data(), tmp.size()));
    std::memcpy(p, tmp.data(), std::min(ps, tmp.size()));
    return Status();
  }
};

TEST(HtpChunkTable, checker_catches_chunks_packed_consecutively) {
  Consecutive mutant(optimized_impl());
  CheckReport r = check(must_case("htp.chunk_table(rank=2,pairs=0:0 1:0 1:8,chunk_stride=24)", "fp16", "2,10"),
                        reference_impl(), mutant);
  EXPECT_EQ(r.verdict, Verdict::kFail);
  // The gaps are free: each pack leaves its own poison there, and the check passes.
  EXPECT_EQ(check(must_case("htp.chunk_table(rank=2,pairs=0:0 1:0 1:8,chunk_stride=24)", "fp16", "2,10"),
                  reference_impl(), optimized_impl()).verdict, Verdict::kPass);
}

TEST(HtpPad, the_pad_value_is_a_value_of_the_element_type) {
  struct Want { const char* layout; DType t; std::vector<uint8_t> bytes; };
  for (const Want& w : std::vector<Want>{
           {"htp.crouton(pad=31)", DType::kUInt8, {0x1F}},
           {"htp.crouton(pad=-1)", DType::kInt8, {0xFF}},
           {"htp.crouton(pad=31.0)", DType::kFp16, {0xC0, 0x4F}},
           {"htp.crouton(pad=31)", DType::kFp16, {0xC0, 0x4F}},
           {"htp.crouton(pad=31)", DType::kBf16, {0xF8, 0x41}},
           {"htp.crouton(pad=31)", DType::kFp32, {0x00, 0x00, 0xF8, 0x41}},
           {"htp.crouton(pad=-0.0)", DType::kFp16, {0x00, 0x80}},
           {"htp.crouton(pad=65504)", DType::kFp16, {0xFF, 0x7B}},
           {"htp.crouton(pad=2049)", DType::kFp16, {0x00, 0x68}},  // a tie: to the even 2048
           {"htp.crouton(pad=2051)", DType::kFp16, {0x02, 0x68}},  // a tie: to the even 2052
           {"htp.crouton(pad=6e-8)", DType::kFp16, {0x01, 0x00}},  // the smallest subnormal
           {"htp.crouton(pad=-inf)", DType::kBf16, {0x80, 0xFF}},
           {"htp.crouton(pad=-300)", DType::kInt16, {0xD4, 0xFE}},
           {"htp.crouton(pad=4294967295)", DType::kUInt32, {0xFF, 0xFF, 0xFF, 0xFF}},
           {"htp.crouton(interface=scale_offset,offset=128)", DType::kUInt8, {0x80}},
           {"htp.crouton(interface=scale_offset,offset=-5)", DType::kInt16, {0xFB, 0xFF}},
           {"htp.crouton(interface=scale_offset,offset=128,pad=3)", DType::kUInt8, {0x03}},
       }) {
    auto bytes = htp_pad_element(*parse_layout(w.layout), w.t);
    ASSERT_TRUE(bytes.ok()) << w.layout << ": " << bytes.status().message();
    EXPECT_EQ(*bytes, w.bytes) << w.layout << " " << dtype_name(w.t);
  }
  struct Bad { const char* layout; const char* dtype; const char* rule; const char* needle; };
  for (const Bad& b : std::vector<Bad>{
           {"htp.crouton(pad=31.0)", "uint8", "htp/pad-value", "an integer in [0, 255]"},
           {"htp.crouton(pad=128)", "int8", "htp/pad-value", "[-128, 127]"},
           {"htp.crouton(pad=-1)", "uint16", "htp/pad-value", "[0, 65535]"},
           {"htp.crouton(pad=70000)", "fp16", "htp/pad-value", "largest finite fp16"},
           {"htp.crouton(pad=nan)", "fp32", "htp/pad-value", "a decimal number"},
           {"htp.crouton(pad=0x1f)", "fp16", "htp/pad-value", "'0x1f'"},
           {"htp.crouton(pad=abc)", "uint8", "htp/pad-value", "'abc'"},
           {"htp.crouton(interface=scale_offset)", "fp16", "htp/scale-offset-dtype", "fp16 is a floating-point type"},
           {"htp.crouton(interface=scale_offset,offset=128)", "int8", "htp/offset-range", "offset 128"},
           {"htp.weights(interface=scale_offset,offset=-1)", "uint8", "htp/offset-range", "[0, 255]"},
       }) {
    Case c = must_case(b.layout, b.dtype, "1,8,8,32");
    Status s = reference_impl().supports(c);
    ASSERT_EQ(s.code(), StatusCode::kInvalid) << b.layout << " " << b.dtype;
    EXPECT_EQ(s.rule(), b.rule) << b.layout;
    EXPECT_NE(s.message().find(b.needle), std::string::npos) << s.message() << " lacks " << b.needle;
    EXPECT_EQ(optimized_impl().supports(c).code(), StatusCode::kInvalid) << b.layout;
  }
}

TEST(HtpPad, padding_elements_hold_the_typed_value) {
  Case c = must_case("R4CroutonLayout(pad=31.0)", "fp16", "1,3,5,30");
  std::vector<uint8_t> logical(900, 0x11);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::vector<uint8_t> phys(4096, 0xEE);
    ASSERT_TRUE(impl->pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
    EXPECT_EQ(phys[60], 0xC0) << impl->name();  // (0,0,0,30) is padding: 31.0 = 0x4FC0
    EXPECT_EQ(phys[61], 0x4F) << impl->name();
    EXPECT_EQ(phys[4094], 0xC0) << impl->name();
    EXPECT_EQ(phys[4095], 0x4F) << impl->name();
  }
  EXPECT_EQ(facts_of(c).at("pad_bits"), "0x4fc0");
  ByteRules r = *byte_rules(c);
  EXPECT_EQ(r.find(60)->value, 0xC0);
  EXPECT_EQ(r.find(61)->value, 0x4F);
}

// The checker notices padding written byte by byte (0x1F1F for fp16 31.0).
class BytePadding : public testing::ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    LC_RETURN_IF_ERROR(inner_.pack(c, l, ls, p, ps));
    LC_ASSIGN_OR_RETURN(ByteRules r, reference_impl().byte_rules(c));
    auto* bytes = static_cast<uint8_t*>(p);
    for (const ByteRegion& g : r.regions) {
      if (g.kind == ByteKind::kFixed) std::memset(bytes + g.first, 31, g.length);
    }
    return Status();
  }
};

TEST(HtpPad, checker_catches_padding_bytes_that_are_not_the_typed_value) {
  BytePadding mutant(optimized_impl());
  CheckReport r = check(must_case("htp.crouton(pad=31.0)", "fp16", "1,3,5,30"), reference_impl(), mutant);
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("padding must be 0xc0"), std::string::npos) << r.message;
  // For uint8 the byte and the value agree: the same mutant passes.
  EXPECT_EQ(check(must_case("htp.crouton(pad=31)", "uint8", "1,3,5,30"), reference_impl(), mutant).verdict, Verdict::kPass);
  // A scale/offset tensor padded with 0 instead of its quantized 0 fails.
  ZeroPadding zero(optimized_impl());
  CheckReport q = check(must_case("htp.crouton(interface=scale_offset,offset=128)", "uint8", "1,3,5,30"), reference_impl(), zero);
  EXPECT_EQ(q.verdict, Verdict::kFail);
  EXPECT_NE(q.message.find("padding must be 0x80"), std::string::npos) << q.message;
}

}  // namespace
}  // namespace layoutcheck
