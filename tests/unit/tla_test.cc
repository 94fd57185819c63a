#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "layoutcheck/c_api.h"
#include "layoutcheck/int_tuple.h"
#include "layoutcheck/plugin.h"
#include "optimized/isa.h"
#include "optimized/tla_layout.h"
#include "reference/tla.h"
#include "support.h"

namespace layoutcheck {
namespace {

using testing::must_case;

IntTuple tup(const std::string& text) {
  auto t = parse_int_tuple(text);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : IntTuple();
}

TlaLayoutText lay(const std::string& text) {
  auto l = parse_tla_layout(text);
  EXPECT_TRUE(l.ok()) << l.status().message();
  return l.ok() ? *l : TlaLayoutText{};
}

void expect_invalid(const std::string& text, const std::string& needle) {
  auto l = parse_layout(text);
  ASSERT_FALSE(l.ok()) << text << " parsed as " << to_string(*l);
  EXPECT_EQ(l.status().code(), StatusCode::kInvalid);
  EXPECT_NE(l.status().message().find(needle), std::string::npos) << text << ": " << l.status().message();
}

TEST(TlaIntTuple, rank_depth_get) {
  IntTuple t = tup("((4,2),(4,3))");
  EXPECT_EQ(t.rank(), 2u);
  EXPECT_EQ(t.depth(), 2);
  EXPECT_EQ(*t.get({1, 1}), IntTuple(3));
  EXPECT_EQ(t.get({1})->rank(), 2u);
  EXPECT_EQ(t.get({1})->depth(), 1);
  EXPECT_EQ(t.get({2}), nullptr);
  EXPECT_EQ(IntTuple(7).rank(), 1u);
  EXPECT_EQ(IntTuple(7).depth(), 0);
  EXPECT_EQ(*IntTuple(7).get({0}), IntTuple(7));
  EXPECT_EQ(*t.product(), 96u);
  EXPECT_EQ(t.leaves(), (std::vector<int64_t>{4, 2, 4, 3}));
}

TEST(TlaIntTuple, static_marks_round_trip) {
  IntTuple t = tup("(_2, 4)");
  EXPECT_TRUE(t.get({0})->is_static());
  EXPECT_FALSE(t.get({1})->is_static());
  EXPECT_EQ(to_string(t), "(_2,4)");
  EXPECT_NE(tup("(_2,4)"), tup("(2,4)"));
}

TEST(TlaNotation, document_layouts_round_trip) {
  for (const char* text : {"((4,2),(4,3)):((4,16),(1,32))", "(_2,4):(_12,_1)", "((16,2),(16,3)):((16,256),(1,512))",
                           "(2,3):(3,1)", "(2,3):(1,2)", "(((2,2),2),3):(((1,2),4),8)"}) {
    auto l = parse_layout(text);
    ASSERT_TRUE(l.ok()) << text << ": " << l.status().message();
    EXPECT_EQ(l->name, "tla.layout");
    EXPECT_EQ(to_string(*l), text);
    EXPECT_EQ(*parse_layout(to_string(*l)), *l);
  }
}

TEST(TlaNotation, whitespace_is_canonicalized) {
  auto l = parse_layout("( (4, 2), (4,3) ) : ((4,16), (1, 32))");
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(to_string(*l), "((4,2),(4,3)):((4,16),(1,32))");
}

TEST(TlaNotation, tile_and_named_round_trip) {
  for (const char* text : {"MakeLayoutTile(((4,2),(4,3)):((4,16),(1,32)),(4,4))", "tla.zN", "tla.nZ(c0=4)",
                           "tla.zZ(c0=4,c0_per_fractal=2)", "tla.rowmajor"}) {
    auto l = parse_layout(text);
    ASSERT_TRUE(l.ok()) << text << ": " << l.status().message();
    EXPECT_EQ(to_string(*l), text);
  }
}

TEST(TlaNotation, unbalanced_parentheses) {
  expect_invalid("((4,2),(4,3):((4,16),(1,32))", "unbalanced");
  expect_invalid("((4,2),(4,3))):((4,16),(1,32))", "unexpected ')'");
  expect_invalid("((4,2),(4,3)):((4,16),(1,32)", "missing ')'");
}

TEST(TlaNotation, shape_and_stride_must_be_congruent) {
  expect_invalid("(4,2):(1,2,3)", "differ in rank");
  expect_invalid("((4,2),3):((1,4),8,9)", "differ in rank");
  expect_invalid("((4,2),3):(4,(1,8))", "differ in nesting at mode 0");
  expect_invalid("((4,2),(4,3)):((4,16),(1,(32,1)))", "mode 1,1");
}

TEST(TlaNotation, zero_extent_names_the_mode) {
  expect_invalid("((4,0),(4,3)):((4,16),(1,32))", "shape extent 0 at mode 0,1 is zero");
}

TEST(TlaNotation, overflow_is_rejected) {
  expect_invalid("(99999999999999999999,1):(1,1)", "overflows");
  expect_invalid("((65536,65536),(65536,65536)):((1,65536),(1,1))", "overflows");
}

TEST(TlaNotation, depth_and_size_are_capped) {
  std::string deep = "2", stride = "1";
  for (int i = 0; i < 12; ++i) deep = "(" + deep + ",1)", stride = "(" + stride + ",1)";
  expect_invalid(deep + ":" + stride, "nesting deeper than 8");
  std::string many = "(1", many_stride = "(1";
  for (int i = 0; i < 70; ++i) many += ",1", many_stride += ",1";
  expect_invalid(many + "):" + many_stride + ")", "more than 64 integers");
  EXPECT_FALSE(parse_layout(std::string(100000, '(')).ok());
}

TEST(TlaNotation, any_number_of_modes_round_trips) {
  for (const char* text : {"(8):(1)", "(_8):(_1)", "8:1", "(2,3,4):(1,2,6)", "(2,(2,2),3):(1,(2,12),4)",
                           "(1,2,3,4,5):(120,60,20,5,1)"}) {
    auto l = parse_layout(text);
    ASSERT_TRUE(l.ok()) << text << ": " << l.status().message();
    EXPECT_EQ(l->name, "tla.layout");
    EXPECT_EQ(to_string(*l), text);
    EXPECT_EQ(*parse_layout(to_string(*l)), *l);
  }
}

TEST(TlaNotation, tile_needs_two_modes) {
  for (const char* text : {"MakeLayoutTile((2,3,4):(1,2,6),(2,2))", "MakeLayoutTile((_8):(_1),(2,2))"}) {
    auto l = parse_layout(text);
    ASSERT_TRUE(l.ok()) << text << ": " << l.status().message();
    EXPECT_EQ(to_string(*l), text);
    for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
      Status s = impl->supports(Case{*l, DType::kInt8, {2, 2}});
      EXPECT_EQ(s.code(), StatusCode::kInvalid) << impl->name() << " " << text;
      if (impl == &reference_impl()) {
        EXPECT_EQ(s.rule(), "tla.layout/rank-2") << s.message();
      }
    }
  }
}

TEST(TlaNotation, malformed) {
  expect_invalid("(2,3)", "no ':'");
  expect_invalid("(2,3):(1,2):(3)", "more than one ':'");
  expect_invalid("(2,x):(1,2)", "expected an integer");
  expect_invalid("():()", "unexpected ')'");
}

TEST(TlaNotation, tile_errors) {
  expect_invalid("MakeLayoutTile(((4,2),(4,3)):((4,16),(1,32)),(4,0))", "zero extent");
  expect_invalid("MakeLayoutTile(((4,2),(4,3)):((4,16),(1,32)),(4,4,4))", "flat pair");
  expect_invalid("MakeLayoutTile(((4,2),(4,3)):((4,16),(1,32)))", "MakeLayoutTile takes");
}

TEST(TlaReference, crd2offset_document_example) {
  TlaLayoutText l = lay("((4,2),(4,3)):((4,16),(1,32))");
  EXPECT_EQ(*tla_ref::crd2offset(tup("(1,5)"), l.shape, l.stride), 37u);
  EXPECT_EQ(*tla_ref::crd2offset(tup("(1,(1,1))"), l.shape, l.stride), 37u);
  EXPECT_EQ(*tla_ref::crd2offset(tup("((1,0),(1,1))"), l.shape, l.stride), 37u);
  EXPECT_EQ(*tla_ref::crd2offset(tup("(5,1)"), l.shape, l.stride), 21u);
  EXPECT_EQ(*tla_ref::crd2offset(tup("42"), l.shape, l.stride), *tla_ref::crd2offset(tup("(2,5)"), l.shape, l.stride));
  EXPECT_EQ(*tla_ref::size(l), 96u);
  EXPECT_EQ(*tla_ref::cosize(l), 96u);
  auto out = tla_ref::crd2offset(tup("(8,0)"), l.shape, l.stride);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("outside the mode (4,2)"), std::string::npos) << out.status().message();
  auto bad = tla_ref::crd2offset(tup("((1,2,3),0)"), l.shape, l.stride);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("does not match"), std::string::npos) << bad.status().message();
}

TEST(TlaReference, make_layout_tile_document_example) {
  auto t = tla_ref::make_layout_tile(lay("((4,2),(4,3)):((4,16),(1,32))"), tup("(4,4)"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(to_string(*t), "((4,1),(4,1)):((4,16),(1,32))");
  EXPECT_EQ(to_string(*tla_ref::make_layout_tile(lay("(8,12):(12,1)"), tup("(3,5)"))), "(3,5):(12,1)");
  EXPECT_EQ(to_string(*tla_ref::make_layout_tile(lay("(((2,2),3),5):(((1,2),4),12)"), tup("(9,5)"))),
            "(((2,2),3),5):(((1,2),4),12)");
}

TEST(TlaStatic, document_layouts_match_the_runtime_form) {
  using namespace tla_opt;
  const auto zn = make_layout(make_shape(make_shape(_4{}, _2{}), make_shape(_4{}, _3{})),
                              make_stride(make_stride(_4{}, _16{}), make_stride(_1{}, _32{})));
  static_assert(decltype(size(zn))::value == 96, "size is static");
  static_assert(decltype(cosize(zn))::value == 96, "cosize is static");
  static_assert(depth(zn.shape()) == 2 && rank(zn.shape()) == 2, "rank and depth");
  static_assert(std::decay_t<decltype(get<1, 1>(zn.stride()))>::value == 32, "get<1,1>");
  EXPECT_EQ(to_string(zn), "((_4,_2),(_4,_3)):((_4,_16),(_1,_32))");
  EXPECT_EQ(crd2offset(make_coord(1, 5), zn), 37);
  const TlaLayoutText rt = lay(to_string(zn));
  for (int64_t r = 0; r < 8; ++r) {
    for (int64_t c = 0; c < 12; ++c) {
      IntTuple coord(std::vector<IntTuple>{IntTuple(r), IntTuple(c)});
      EXPECT_EQ(static_cast<uint64_t>(crd2offset(make_coord(r, c), zn)), *tla_ref::crd2offset(coord, rt.shape, rt.stride));
    }
  }
  const auto w2xh4 = make_layout(make_shape(_2{}, int64_t{4}), make_stride(_12{}, _1{}));
  EXPECT_EQ(to_string(w2xh4), "(_2,4):(_12,_1)");
  EXPECT_EQ(cosize(w2xh4), 16);
  const auto tiled = make_layout_tile(zn, make_shape(4, 4));
  EXPECT_EQ(to_string(tiled), "((_4,1),(_4,1)):((_4,_16),(_1,_32))");
  EXPECT_EQ(to_string(tiled), to_string(*tla_ref::make_layout_tile(rt, tup("(4,4)"))));
}

TEST(TlaImpl, errors_name_the_rule_and_values) {
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    Status s = impl->supports(must_case("(2,2):(1,1)", "int8", "2,2"));
    EXPECT_EQ(s.code(), StatusCode::kInvalid);
    EXPECT_NE(s.message().find("not injective"), std::string::npos) << s.message();
    s = impl->supports(must_case("(2,3):(3,1)", "int8", "3,2"));
    EXPECT_EQ(s.code(), StatusCode::kInvalid);
    EXPECT_NE(s.message().find("2,3"), std::string::npos) << s.message();
    s = impl->supports(must_case("(2,3,4):(12,4,1)", "int8", "6,4"));
    EXPECT_EQ(s.code(), StatusCode::kInvalid) << impl->name();
    s = impl->supports(must_case("MakeLayoutTile(((16,2),(16,3)):((16,256),(1,512)),(30,43))", "fp16", "31,43"));
    EXPECT_EQ(s.code(), StatusCode::kInvalid) << impl->name();
    s = impl->supports(must_case("tla.zN", "int4", "16,16"));
    EXPECT_NE(s.message().find("sizeof(ElemType)"), std::string::npos) << s.message();
    Case packed = must_case("tla.zN", "int8", "16,16");
    packed.dtype = DType::kInt8x4;
    s = impl->supports(packed);
    EXPECT_NE(s.message().find("sizeof(ElemType)"), std::string::npos) << impl->name() << ": " << s.message();
    s = impl->supports(must_case("(65536,65536):(281474976710656,1)", "fp32", "65536,65536"));
    EXPECT_EQ(s.code(), StatusCode::kInvalid);
  }
}

TEST(TlaImpl, large_interleaved_layouts_are_not_enumerated_forever) {
  // 2^22 elements with interleaved strides: rejected without enumerating.
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    Status s = impl->supports(must_case("(2048,2048):(3,2)", "int8", "2048,2048"));
    EXPECT_EQ(s.code(), StatusCode::kInvalid) << impl->name();
    EXPECT_NE(s.message().find("injective"), std::string::npos) << s.message();
  }
  // Small interleaved but injective: (3,2):(2,3) has offsets 0,3,2,5,4,7.
  EXPECT_TRUE(reference_impl().supports(must_case("(3,2):(2,3)", "int8", "3,2")).ok());
  EXPECT_TRUE(optimized_impl().supports(must_case("(3,2):(2,3)", "int8", "3,2")).ok());
}

TEST(TlaImpl, fractal_formats_pad_with_zero) {
  Case c = must_case("tla.nZ", "fp16", "3,5");
  std::vector<uint8_t> logical(*logical_bytes(c), 0xEE);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    ASSERT_EQ(*impl->size_bytes(c), 16u * 16u * 2u);
    std::vector<uint8_t> phys(*impl->size_bytes(c), 0x11);
    ASSERT_TRUE(impl->pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
    size_t nonzero = 0;
    for (uint8_t b : phys) nonzero += b != 0;
    EXPECT_EQ(nonzero, 3u * 5u * 2u) << impl->name();
  }
}

class SwapFractalRows : public testing::ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    LC_RETURN_IF_ERROR(inner_.pack(c, l, ls, p, ps));
    std::swap_ranges(static_cast<uint8_t*>(p), static_cast<uint8_t*>(p) + 32, static_cast<uint8_t*>(p) + 32);
    return Status();
  }
};

TEST(TlaImpl, checker_catches_a_planted_bug) {
  SwapFractalRows mutant(optimized_impl());
  CheckReport r = check(must_case("tla.zN", "fp16", "32,32"), reference_impl(), mutant);
  EXPECT_EQ(r.verdict, Verdict::kFail) << r.message;
}

// Reads each nested part last sub-mode fastest; flat coordinates stay right.
class NestedLastFastest : public testing::ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Result<uint64_t> offset_bits_nested(const Case& c, const IntTuple& at) const override {
    if (at.is_integer()) return inner_.offset_bits_nested(c, at);
    std::vector<IntTuple> parts;
    for (const IntTuple& p : at.items()) {
      std::vector<IntTuple> sub = p.is_tuple() ? p.items() : std::vector<IntTuple>{};
      std::reverse(sub.begin(), sub.end());
      parts.push_back(p.is_tuple() ? IntTuple(sub) : p);
    }
    return inner_.offset_bits_nested(c, IntTuple(parts));
  }
};

TEST(TlaImpl, checker_compares_nested_coordinate_offsets) {
  NestedLastFastest mutant(optimized_impl());
  for (const char* layout : {"((4,2),(4,3)):((4,16),(1,32))", "tla.zN"}) {
    Case c = must_case(layout, "int8", layout[0] == '(' ? "8,12" : "32,64");
    CheckReport r = check(c, reference_impl(), mutant);
    EXPECT_EQ(r.verdict, Verdict::kFail) << r.message;
    EXPECT_NE(r.message.find("nested offset of element"), std::string::npos) << r.message;
    EXPECT_EQ(check(c, reference_impl(), optimized_impl()).verdict, Verdict::kPass);
  }
  // Layouts without nested modes have nothing to read differently.
  EXPECT_EQ(check(must_case("(2,3):(3,1)", "int8", "2,3"), reference_impl(), mutant).verdict, Verdict::kPass);
}

TEST(TlaImpl, describe_reports_the_layout) {
  Case c = must_case("tla.zZ", "fp32", "20,20");
  auto ref = reference_impl().describe(c);
  auto opt = optimized_impl().describe(c);
  ASSERT_TRUE(ref.ok() && opt.ok());
  EXPECT_EQ(*ref, *opt);
}

}  // namespace
}  // namespace layoutcheck

namespace layoutcheck {
namespace {

// Past L2 (1 MiB) a z unpack writes each logical row from runs of 16
// fractals: block rows of several runs and a partial one, a partial last
// block row and fractal column.
TEST(TlaOptimized, large_z_unpacks_match_the_reference_at_every_isa_level) {
  testing::expect_pass_at_every_isa("tla.zN", "fp16", "520,1010");
  testing::expect_pass_at_every_isa("tla.zZ", "fp16", "520,1010");
}

// fp32 n inside past kStreamAbove (4 MiB): the fractals written non-temporal
// (pack), a partial last block row and fractal column.
TEST(TlaOptimized, large_fp32_n_fractals_match_the_reference_at_every_isa_level) {
  testing::expect_pass_at_every_isa("tla.nZ", "fp32", "1030,1100");
  testing::expect_pass_at_every_isa("tla.nN", "fp32", "1030,1100");
}

TEST(TlaOptimized, fractal_transposes_match_the_reference_at_every_isa_level) {
  for (const char* layout : {"tla.nZ", "tla.nN", "tla.zN", "tla.zZ"}) {
    for (const char* dtype : {"int8", "fp16", "bf16", "fp32"}) {
      // Whole and edge fractals; matrices narrower than a fractal (a vector);
      // rows a multiple of 2 KiB apart (int8 without AVX-512: through a stage).
      for (const char* shape : {"64,64", "96,48", "33,47", "32,16", "100,200", "70,1", "47,5", "16,16", "3,20",
                                "70,2048"}) {
        testing::expect_pass_at_every_isa(layout, dtype, shape);
      }
    }
  }
}

}  // namespace
}  // namespace layoutcheck

namespace layoutcheck {
namespace {

std::vector<uint8_t> packed(const Impl& impl, const Case& c, uint8_t fill) {
  std::vector<uint8_t> logical(*logical_bytes(c));
  for (size_t i = 0; i < logical.size(); ++i) logical[i] = static_cast<uint8_t>(i * 7 + 1);
  std::vector<uint8_t> phys(*impl.size_bytes(c), fill);
  EXPECT_TRUE(impl.pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
  return phys;
}

TEST(TlaImpl, tile_by_origin_shape_pads_the_partial_blocks_with_zero) {
  const std::string text = "MakeLayoutTile(((16,2),(16,3)):((16,256),(1,512)),(30,43))";
  Case origin = must_case(text, "fp16", "30,43");
  Case whole = must_case(text, "fp16", "32,48");
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    ASSERT_TRUE(impl->supports(origin).ok()) << impl->name() << ": " << impl->supports(origin).message();
    EXPECT_EQ(*impl->size_bytes(origin), 3072u);
    EXPECT_EQ(*impl->size_bytes(whole), 3072u);
    EXPECT_EQ(*impl->offset_bits(origin, {29, 42}), 2996u * 8);
    std::vector<uint8_t> phys = packed(*impl, origin, 0xAB);
    // (30, 0) and (0, 43) are padding: 0. (29, 42) is the last logical element.
    const uint64_t row30 = (14 * 16 + 256) * 2, col43 = (11 + 2 * 512) * 2;
    EXPECT_EQ(phys[row30], 0) << impl->name();
    EXPECT_EQ(phys[col43], 0) << impl->name();
    const uint64_t last = (29 * 43 + 42) * 2;
    EXPECT_EQ(phys[2996], static_cast<uint8_t>(last * 7 + 1)) << impl->name();
    std::vector<uint8_t> back(*logical_bytes(origin));
    ASSERT_TRUE(impl->unpack(origin, phys.data(), phys.size(), back.data(), back.size()).ok());
    for (size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], static_cast<uint8_t>(i * 7 + 1)) << i;
  }
  CheckReport r = check(origin, reference_impl(), optimized_impl());
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
}

TEST(TlaImpl, layouts_of_one_and_three_modes_pack_like_their_offsets) {
  for (const char* spec : {"(8):(1)|8", "8:3|8", "(2,3,4):(1,2,6)|2,3,4", "(2,(2,2),3):(1,(2,12),4)|2,4,3",
                           "(3,2,2):(1,12,3)|3,2,2"}) {
    const std::string s(spec);
    Case c = must_case(s.substr(0, s.find('|')), "int16", s.substr(s.find('|') + 1));
    for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
      ASSERT_TRUE(impl->supports(c).ok()) << impl->name() << " " << spec << ": " << impl->supports(c).message();
      std::vector<uint8_t> phys = packed(*impl, c, 0xCD);
      const uint64_t n = *element_count(c.shape);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t off = *impl->offset_bits(c, coord_of_index(c.shape, i)) / 8;
        ASSERT_EQ(phys[off], static_cast<uint8_t>(2 * i * 7 + 1)) << impl->name() << " " << spec << " element " << i;
      }
    }
    CheckReport r = check(c, reference_impl(), optimized_impl());
    EXPECT_EQ(r.verdict, Verdict::kPass) << spec << ": " << r.message;
  }
  Case c3 = must_case("(2,3,4):(12,4,1)", "int8", "2,3,4");
  EXPECT_EQ(*reference_impl().offset_bits(c3, {1, 2, 3}), 23u * 8);
  EXPECT_EQ(*optimized_impl().offset_bits(c3, {1, 2, 3}), 23u * 8);
  EXPECT_FALSE(reference_impl().offset_bits(c3, {1, 2}).ok());
  EXPECT_FALSE(optimized_impl().offset_bits(c3, {1, 2}).ok());
  EXPECT_FALSE(optimized_impl().offset_bits(c3, {2, 0, 0}).ok());
}

}  // namespace
}  // namespace layoutcheck

namespace layoutcheck {
namespace {

lc_status nested_supports(const lc_case*, char*, size_t) { return LC_OK; }
lc_status nested_size(const lc_case*, uint64_t* b) { return *b = 96, LC_OK; }
lc_status nested_pack(const lc_case*, const void*, size_t, void*, size_t) { return LC_OK; }
lc_status nested_offset(const lc_case*, const char* coord, uint64_t* bits) {
  *bits = std::strcmp(coord, "((1,0),(1,1))") == 0 ? 37 * 8 : 0;
  return LC_OK;
}

TEST(TlaPluginAbi, offset_bits_tuple_is_read_only_when_struct_size_covers_it) {
  static const lc_capability caps[] = {{"tla.layout", "*", 0}};
  lc_plugin t{LC_ABI_MAJOR, 1, static_cast<uint32_t>(LC_PLUGIN_SIZE_1_1), "old", caps, 1,
              nested_supports, nested_size, nullptr, nested_pack, nested_pack, nullptr, nullptr, nullptr, nullptr,
              nullptr, nested_offset};
  Case c = must_case("((4,2),(4,3)):((4,16),(1,32))", "int8", "8,12");
  auto old = plugin_from_table(&t, "old.so");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_FALSE((*old)->has_member(PluginImpl::kOffsetBitsTupleMember));
  EXPECT_EQ((*old)->offset_bits_nested(c, tup("((1,0),(1,1))")).status().code(), StatusCode::kUnsupported);
  t.abi_minor = LC_ABI_MINOR;
  t.struct_size = sizeof(lc_plugin);
  auto now = plugin_from_table(&t, "new.so");
  ASSERT_TRUE(now.ok());
  EXPECT_TRUE((*now)->has_member(PluginImpl::kOffsetBitsTupleMember));
  EXPECT_EQ(*(*now)->offset_bits_nested(c, tup("((1,0),(1,1))")), 37u * 8);
  EXPECT_EQ(*(*now)->offset_bits_nested(c, tup("(1,5)")), 0u);  // the text is passed as written
}

TEST(TlaImpl, nested_coordinates_match_their_flat_ones) {
  Case c = must_case("((4,2),(4,3)):((4,16),(1,32))", "int8", "8,12");
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    EXPECT_EQ(*impl->offset_bits_nested(c, tup("((1,0),(1,1))")), 37u * 8) << impl->name();
    EXPECT_EQ(*impl->offset_bits_nested(c, tup("(1,(1,1))")), 37u * 8) << impl->name();
    EXPECT_EQ(*impl->offset_bits_nested(c, tup("((3,1),(3,2))")), *impl->offset_bits(c, {7, 11})) << impl->name();
    for (const char* bad : {"37", "(1,5,0)", "((4,0),(1,1))", "((1,0,0),(1,1))", "(8,0)", "((1),5)"}) {
      EXPECT_EQ(impl->offset_bits_nested(c, tup(bad)).status().code(), StatusCode::kInvalid) << impl->name() << " " << bad;
    }
  }
  Case tile = must_case("MakeLayoutTile(((16,2),(16,3)):((16,256),(1,512)),(30,43))", "fp16", "30,43");
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    EXPECT_EQ(*impl->offset_bits_nested(tile, tup("((13,1),(10,2))")), 2996u * 8) << impl->name();
    EXPECT_FALSE(impl->offset_bits_nested(tile, tup("((14,1),(10,2))")).ok()) << impl->name();  // row 30: padding
  }
  Case one = must_case("8:2", "int8", "8");
  EXPECT_EQ(*reference_impl().offset_bits_nested(one, tup("5")), 80u);
  EXPECT_EQ(*optimized_impl().offset_bits_nested(one, tup("5")), 80u);
}

// `off` bytes past the first cache line boundary of `v` (which has room for it).
uint8_t* at_line_offset(std::vector<uint8_t>& v, size_t off) {
  return v.data() + (64 - reinterpret_cast<uintptr_t>(v.data()) % 64) % 64 + off;
}

// The bytes of `v` outside [out, out + n) that are no longer `fill`.
size_t changed_outside(const std::vector<uint8_t>& v, const uint8_t* out, size_t n, uint8_t fill) {
  size_t changed = 0;
  for (const uint8_t* q = v.data(); q < v.data() + v.size(); ++q) {
    if (q < out || q >= out + n) changed += *q != fill;
  }
  return changed;
}

// The copies read and write whole cache lines: buffers starting anywhere in a
// line give the reference's bytes, and unpack writes nothing outside the
// logical tensor.
TEST(TlaOptimized, fractal_copies_at_every_buffer_offset) {
  for (Isa isa : available_isas()) {
    IsaCapScope cap(isa);
    for (const char* layout : {"tla.nZ", "tla.nN", "tla.zN", "tla.zZ"}) {
      for (const char* dtype : {"int8", "fp16"}) {
        for (const char* shape : {"64,192", "65,130", "45,3"}) {
          const Case c = testing::must_case(layout, dtype, shape);
          std::vector<uint8_t> logical;
          fill_position_unique(c, 3, &logical);
          const size_t pb = *reference_impl().size_bytes(c);
          std::vector<uint8_t> want(pb);
          ASSERT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), want.data(), pb).ok());
          for (size_t off : {0, 8, 16, 40, 3}) {
            std::vector<uint8_t> src(logical.size() + 192), phys(pb + 192), back(logical.size() + 192, 0xAB);
            auto at = [off](std::vector<uint8_t>& v) { return at_line_offset(v, off); };
            std::memcpy(at(src), logical.data(), logical.size());
            ASSERT_TRUE(optimized_impl().pack(c, at(src), logical.size(), at(phys), pb).ok());
            EXPECT_EQ(0, std::memcmp(at(phys), want.data(), pb)) << isa_name(isa) << " " << layout << " " << dtype << " +" << off;
            uint8_t* out = at(back);
            ASSERT_TRUE(optimized_impl().unpack(c, want.data(), pb, out, logical.size()).ok());
            EXPECT_EQ(0, std::memcmp(out, logical.data(), logical.size())) << isa_name(isa) << " " << layout << " +" << off;
            EXPECT_EQ(changed_outside(back, out, logical.size(), 0xAB), 0u)
                << isa_name(isa) << " " << layout << " " << dtype << " +" << off;
          }
        }
      }
    }
  }
}

// The unpack of a case into logical rows on lines at every ISA level: the
// logical bytes back, nothing written outside them; `min_bytes`: the least
// logical size the case must have (the path it is there for).
void expect_unpack_into_rows_on_lines(const char* layout, const char* dtype, const char* shape, size_t min_bytes) {
  SCOPED_TRACE(std::string(layout) + " " + dtype + " " + shape);
  const Case c = testing::must_case(layout, dtype, shape);
  std::vector<uint8_t> logical;
  fill_position_unique(c, 7, &logical);
  ASSERT_GE(logical.size(), min_bytes);
  const size_t pb = *reference_impl().size_bytes(c);
  std::vector<uint8_t> want(pb);
  ASSERT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), want.data(), pb).ok());
  std::vector<uint8_t> back(logical.size() + 128);
  for (Isa isa : available_isas()) {
    IsaCapScope cap(isa);
    std::memset(back.data(), 0xA5, back.size());
    uint8_t* out = at_line_offset(back, 0);
    ASSERT_TRUE(optimized_impl().unpack(c, want.data(), pb, out, logical.size()).ok());
    EXPECT_EQ(0, std::memcmp(out, logical.data(), logical.size())) << isa_name(isa);
    EXPECT_EQ(changed_outside(back, out, logical.size(), 0xA5), 0u) << isa_name(isa);
  }
}

// Past L2, z unpacks into logical rows on lines below kStreamAbove (4 MiB): two rows
// a line of each fractal, written side by side (z_unpack_rows_avx2 without
// AVX-512, two fractals at a time), a partial last block row, an odd count of
// fractals a block row (520 x 1040 fp16: 65); nothing written outside the tensor.
TEST(TlaOptimized, z_unpacks_past_l2_into_rows_on_lines_at_every_isa_level) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"tla.zN", "fp16", "648,1024"}, {"tla.zN", "int8", "520,2048"}, {"tla.zZ", "fp16", "528,1056"},
           {"tla.zN", "fp16", "520,1040"}}) {
    expect_unpack_into_rows_on_lines(layout, dtype, shape, size_t{1} << 20);
  }
}

// Past kStreamAbove (4 MiB), n unpacks into logical rows on lines are
// streamed: straight from the registers with AVX-512, through a stage of
// kStreamStageLines lines a row without it; 65 lines a row (a partial last
// run of the stage) and a partial last block row; nothing written outside
// the tensor.
TEST(TlaOptimized, streamed_n_unpacks_into_rows_on_lines_at_every_isa_level) {
  for (const auto& [layout, dtype, shape] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"tla.nZ", "fp16", "1030,2080"}, {"tla.nN", "int8", "1030,4160"}}) {
    expect_unpack_into_rows_on_lines(layout, dtype, shape, size_t{4} << 20);
  }
}

// Notation layouts of the fractal formats take the fractal copies.
TEST(TlaOptimized, notation_fractal_layouts_match_the_reference) {
  const std::pair<const char*, const char*> cases[] = {
      {"((16,4),(16,3)):((16,768),(1,256))", "64,48"},   // zZ fp16
      {"((16,4),(16,3)):((16,256),(1,1024))", "64,48"},  // zN fp16
      {"((16,4),(16,3)):((1,768),(16,256))", "64,48"},   // nZ fp16
      {"((16,4),(16,3)):((1,256),(16,1024))", "64,48"},  // nN fp16
  };
  for (const auto& [layout, shape] : cases) testing::expect_pass_at_every_isa(layout, "fp16", shape);
}

// Every thread count writes the reference's bytes at every instruction-set
// level, on matrices past 1 MiB (the packs that prefetch rows ahead): rows on
// whole lines and rows that start inside them, edge fractals on the right and
// at the bottom, z and n fractals of int8 and fp16.
TEST(TlaOptimized, every_thread_count_writes_the_same_bytes_past_a_mebibyte) {
  const std::pair<const char*, const char*> cases[] = {
      {"tla.zN", "1024,1088"}, {"tla.zN", "1023,1090"}, {"tla.nN", "1056,1056"},
      {"tla.nZ", "1025,1030"}, {"tla.zZ", "1040,1040"},
  };
  for (const auto& [layout, shape] : cases) {
    for (const char* dtype : {"fp16", "int8"}) {
      testing::expect_same_bytes_at_every_thread_count(layout, dtype, shape, {1, 3});
    }
  }
}

// From 4 MiB written, a pack streams the fractals and an unpack the logical
// rows with AVX2 or AVX-512 (z fractals: rows that start inside lines too,
// shifted into whole lines with VBMI): the reference's bytes at every level, for every
// thread count, buffers on a line and 16 bytes into one, edge fractals at the
// bottom and on the right, rows shorter than a line; nothing written outside
// the logical tensor.
TEST(TlaOptimized, streamed_copies_from_four_mebibytes) {
  if (cpu_isa() < Isa::kAvx2) GTEST_SKIP() << "no AVX2 on this CPU: the copies are not streamed";
  const std::tuple<const char*, const char*, const char*> cases[] = {
      {"tla.zN", "fp16", "1024,2048"}, {"tla.nZ", "fp16", "1040,2032"}, {"tla.nZ", "int8", "2048,2048"},
      {"tla.zZ", "fp16", "1026,2049"}, {"tla.zN", "fp16", "67664,31"},  {"tla.nN", "fp32", "1032,1040"},
      // n unpacks streamed straight from the groups' registers, a partial last block row.
      {"tla.nN", "fp16", "1030,2048"}, {"tla.nZ", "int8", "2050,2112"}};
  for (const auto& [layout, dtype, shape] : cases) {
    SCOPED_TRACE(std::string(layout) + " " + dtype + " " + shape);
    const Case c = testing::must_case(layout, dtype, shape);
    std::vector<uint8_t> logical;
    fill_position_unique(c, 5, &logical);
    const size_t pb = *reference_impl().size_bytes(c);
    std::vector<uint8_t> want(pb);
    ASSERT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), want.data(), pb).ok());
    std::vector<uint8_t> src(logical.size() + 128), phys(pb + 128), back(logical.size() + 128);
    for (size_t off : {0, 16}) {
      auto at = [off](std::vector<uint8_t>& v) { return at_line_offset(v, off); };
      std::memcpy(at(src), logical.data(), logical.size());
      for (Isa isa : available_isas()) {
        if (isa < Isa::kAvx2) continue;
        IsaCapScope cap(isa);
        for (unsigned threads : {1u, 3u}) {
          std::memset(at(phys), 0x5A, pb);
          std::memset(back.data(), 0xA5, back.size());
          ASSERT_TRUE(optimized_pack(c, at(src), logical.size(), at(phys), pb, threads).ok());
          EXPECT_EQ(0, std::memcmp(at(phys), want.data(), pb)) << isa_name(isa) << " pack +" << off << " threads " << threads;
          ASSERT_TRUE(optimized_unpack(c, at(phys), pb, at(back), logical.size(), threads).ok());
          EXPECT_EQ(0, std::memcmp(at(back), logical.data(), logical.size()))
              << isa_name(isa) << " unpack +" << off << " threads " << threads;
          EXPECT_EQ(changed_outside(back, at(back), logical.size(), 0xA5), 0u)
              << isa_name(isa) << " unpack +" << off << " threads " << threads << ": bytes outside the tensor";
        }
      }
    }
  }
}

}  // namespace
}  // namespace layoutcheck
