// The check of the entry points besides layouts (layoutcheck/convert_check.h)
// and the ABI 1.1 members of a plugin table read only where struct_size covers them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "layoutcheck/c_api.h"
#include "layoutcheck/convert_check.h"
#include "layoutcheck/plugin.h"

namespace layoutcheck {
namespace {

TEST(ConvertInputs, sixteen_bit_types_get_every_pattern) {
  for (DType t : {DType::kFp16, DType::kBf16, DType::kInt16, DType::kUInt16}) {
    auto in = convert_inputs(t, 0, 1);
    ASSERT_EQ(in.size(), 65536u * 2) << dtype_name(t);
    std::set<uint32_t> seen;
    for (size_t i = 0; i < in.size(); i += 2) seen.insert(static_cast<uint32_t>(in[i] | in[i + 1] << 8));
    EXPECT_EQ(seen.size(), 65536u);
  }
  EXPECT_EQ(convert_inputs(DType::kInt8, 0, 1).size(), 256u);
}

TEST(ConvertInputs, fp32_covers_every_boundary_class) {
  const auto v = fp32_boundary_inputs();
  auto has = [&](uint32_t b) { return std::find(v.begin(), v.end(), b) != v.end(); };
  for (uint32_t b : {0u, 0x80000000u, 1u, 0x807fffffu, 0x7f7fffffu, 0xff7fffffu, 0x7f800000u, 0xff800000u,
                     0x7fc00000u, 0x7f800001u, 0xffffffffu, 0x477ff000u, 0x33000000u}) {
    EXPECT_TRUE(has(b)) << std::hex << b;
  }
  // A tie for fp16 in every exponent, with an even and an odd kept mantissa.
  for (uint32_t e = 0; e < 255; ++e) {
    EXPECT_TRUE(has(e << 23 | 0x1000u)) << e;
    EXPECT_TRUE(has(e << 23 | 0x3000u)) << e;
  }
  // Random values follow the boundary classes and depend on the seed only.
  EXPECT_EQ(convert_inputs(DType::kFp32, 10, 7), convert_inputs(DType::kFp32, 10, 7));
  EXPECT_NE(convert_inputs(DType::kFp32, 10, 7), convert_inputs(DType::kFp32, 10, 8));
  EXPECT_EQ(convert_inputs(DType::kFp32, 10, 7).size(), (v.size() + 10) * 4);
}

TEST(ConvertAccepted, nvdla_nan_mantissa_is_free_its_sign_and_other_rules_are_not) {
  ConvertSpec s;
  s.rule = ConvertRule::kNvdla;
  s.from = DType::kFp32;
  s.to = DType::kFp16;
  EXPECT_TRUE(convert_output_accepted(s, 0x7e00, 0x7fff));
  EXPECT_TRUE(convert_output_accepted(s, 0x7e00, 0x7c01));
  EXPECT_FALSE(convert_output_accepted(s, 0x7e00, 0xfe00));  // the sign
  EXPECT_FALSE(convert_output_accepted(s, 0x7e00, 0x7c00));  // INF is no NaN
  EXPECT_FALSE(convert_output_accepted(s, 0x7bff, 0x7bfe));
  s.rule = ConvertRule::kIeee;
  EXPECT_FALSE(convert_output_accepted(s, 0x7e00, 0x7fff));
}

TEST(ConvertVariants, every_unit_and_option_of_a_rule) {
  EXPECT_EQ(convert_variants(ConvertRule::kIeee, DType::kFp32, DType::kFp16).size(), 1u);
  EXPECT_EQ(convert_variants(ConvertRule::kNvdla, DType::kFp32, DType::kFp16).size(), 12u);  // 6 units x flush
  const auto ints = convert_variants(ConvertRule::kNvdlaInt, DType::kInt16, DType::kInt8);
  std::set<TruncateMode> modes;
  for (const auto& s : ints) modes.insert(s.truncate);
  EXPECT_EQ(modes.size(), 3u);
  EXPECT_EQ(convert_variant_name(ints[1]), "convert.nvdla-int int16>int8 offset=0 scale=0.5 truncate=nearest-away");
}

TEST(ConvertRepro, one_line_with_the_input_bytes_and_every_option) {
  ConvertSpec s;
  s.rule = ConvertRule::kNvdla;
  s.from = DType::kFp32;
  s.to = DType::kFp16;
  s.unit = NvdlaUnit::kSdp;
  s.flush_nan = true;
  EXPECT_EQ(convert_repro(s, 0x7f800000, "/p/lib.so"),
            "printf '\\x00\\x00\\x80\\x7f' | layoutcheck convert --impl '/p/lib.so' --rule nvdla --from fp32 --to fp16 "
            "--unit sdp --flush-nan | od -An -tx1");
}

lc_status ok_supports(const lc_case*, char*, size_t) { return LC_OK; }
lc_status ok_size(const lc_case*, uint64_t* b) { return *b = 0, LC_OK; }
lc_status ok_pack(const lc_case*, const void*, size_t, void*, size_t) { return LC_OK; }
lc_status copy_convert(const lc_convert_case*, const void* src, size_t n, void* dst, size_t m) {
  std::memcpy(dst, src, std::min(n, m));
  return LC_OK;
}

TEST(PluginTable, members_beyond_struct_size_are_not_read) {
  static const lc_capability caps[] = {{"convert.ieee", "fp16>fp16", 0}};
  lc_plugin t{LC_ABI_MAJOR, 0, static_cast<uint32_t>(LC_PLUGIN_SIZE_1_0), "old", caps, 1,
              ok_supports, ok_size, nullptr, ok_pack, ok_pack, copy_convert, nullptr, nullptr, nullptr, nullptr, nullptr};
  auto old = plugin_from_table(&t, "old.so");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_FALSE((*old)->has_member(PluginImpl::kConvertMember));
  ConvertSpec s;
  s.from = s.to = DType::kFp16;
  uint16_t in = 0x3c00, out = 0;
  EXPECT_EQ((*old)->convert(s, &in, 2, &out, 2).code(), StatusCode::kUnsupported);

  t.abi_minor = 1;
  t.struct_size = sizeof(lc_plugin);
  auto now = plugin_from_table(&t, "new.so");
  ASSERT_TRUE(now.ok());
  EXPECT_TRUE((*now)->has_member(PluginImpl::kConvertMember));
  EXPECT_TRUE((*now)->convert(s, &in, 2, &out, 2).ok());
  EXPECT_EQ(out, 0x3c00);
  EXPECT_TRUE((*now)->claims_entry("convert.ieee", "fp16>fp16"));
  EXPECT_FALSE((*now)->claims_entry("convert.ieee", "fp32>fp16"));
  EXPECT_FALSE((*now)->claims_entry("convert.nvdla", "fp16>fp16"));
}


TEST(ConvertAccepted, nvdla_float_nan_to_int16_is_free_and_nothing_else) {
  ConvertSpec s;
  s.rule = ConvertRule::kNvdlaFloat;
  s.from = DType::kFp16;
  s.to = DType::kInt16;
  s.unit = NvdlaUnit::kSdp;
  EXPECT_TRUE(convert_output_free(s, 0x7e00));
  EXPECT_TRUE(convert_output_free(s, 0xfc01));
  EXPECT_FALSE(convert_output_free(s, 0x7c00));  // INF has the SDP's value
  EXPECT_FALSE(convert_output_accepted(s, 0x7fff, 0x7ffe));
  s.flush_nan = true;
  EXPECT_FALSE(convert_output_free(s, 0x7e00));  // a flushed NaN is zero
  s.flush_nan = false;
  s.to = DType::kFp16;
  EXPECT_FALSE(convert_output_free(s, 0x7e00));
  EXPECT_TRUE(convert_output_accepted(s, 0x7e00, 0x7c01));
  EXPECT_FALSE(convert_output_accepted(s, 0x7e00, 0xfe00));
}

TEST(ConvertVariants, nvdla_float_pairs_are_the_valid_table_rows) {
  const auto pairs = convert_pairs(ConvertRule::kNvdlaFloat);
  const std::vector<std::pair<DType, DType>> want = {{DType::kFp16, DType::kInt16}, {DType::kFp16, DType::kFp16}};
  EXPECT_EQ(pairs, want);
  for (const auto& s : convert_variants(ConvertRule::kNvdlaFloat, DType::kFp16, DType::kInt16)) {
    EXPECT_EQ(s.unit, NvdlaUnit::kSdp);
  }
  std::set<NvdlaUnit> units;
  for (const auto& s : convert_variants(ConvertRule::kNvdlaFloat, DType::kFp16, DType::kFp16)) units.insert(s.unit);
  EXPECT_EQ(units.size(), 2u);
  EXPECT_EQ(extension_entry_names().back(), "convert.nvdla-float");
}

}  // namespace
}  // namespace layoutcheck
