#include <gtest/gtest.h>

#include <cfloat>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "layoutcheck/precision.h"

namespace layoutcheck {
namespace {

float as_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(PrecisionTable, has_the_four_tables_in_document_order) {
  size_t n = 0;
  const PrecisionRow* rows = nvdla_precision_rows(&n);
  ASSERT_EQ(n, 42u);
  int per_layer[4] = {};
  for (size_t i = 0; i < n; ++i) {
    ++per_layer[static_cast<int>(rows[i].layer)];
    EXPECT_EQ(rows[i].line, per_layer[static_cast<int>(rows[i].layer)]);
    EXPECT_EQ(rows[i].has_weight, rows[i].layer == PrecisionLayer::kConv);
  }
  EXPECT_EQ(per_layer[0], 15);
  EXPECT_EQ(per_layer[1], 9);
  EXPECT_EQ(per_layer[2], 9);
  EXPECT_EQ(per_layer[3], 9);
}

TEST(PrecisionTable, image_int_inputs_share_a_row) {
  for (const char* name : {"image-uint8", "image-int16", "image-uint16", "image-int"}) {
    auto in = parse_precision_input(name);
    ASSERT_TRUE(in.ok()) << name;
    auto row = nvdla_precision(PrecisionLayer::kConv, *in, DType::kInt16);
    ASSERT_TRUE(row.ok());
    EXPECT_EQ((*row)->line, 2);
  }
}

TEST(PrecisionTable, describes_a_row_with_table_and_row_number) {
  auto row = nvdla_precision(PrecisionLayer::kConv, PrecisionInput::kImageFp16, DType::kInt8);
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(describe_precision_row(**row),
            "Precision conversion for convolutional layer, row 4: image input (fp16) -> int8: Invalid case");
  auto sdp = nvdla_precision(PrecisionLayer::kSdp, PrecisionInput::kInt16, DType::kFp16);
  ASSERT_TRUE(sdp.ok());
  EXPECT_EQ(describe_precision_row(**sdp),
            "Precision conversion for SDP layer (offline mode), row 6: int16 feature data -> fp16: real precision in "
            "pipeline int32");
}

TEST(PrecisionTable, unknown_names_list_the_known_ones) {
  auto layer = parse_precision_layer("cdp");
  ASSERT_FALSE(layer.ok());
  EXPECT_EQ(layer.status().message(), "unknown layer 'cdp' (known: conv|sdp|lrn|pdp)");
  auto input = parse_precision_input("uint8");
  ASSERT_FALSE(input.ok());
  EXPECT_NE(input.status().message().find("image-uint8"), std::string::npos);
  EXPECT_FALSE(parse_convert_rule("IEEE").ok());
  EXPECT_FALSE(parse_nvdla_unit("winograd").ok());
  EXPECT_FALSE(parse_truncate_mode("round").ok());
}

TEST(PrecisionTable, missing_rows_are_errors_naming_the_table) {
  auto r = nvdla_precision(PrecisionLayer::kLrn, PrecisionInput::kImageInt, DType::kInt8);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Precision conversion for LRN layer has no row"), std::string::npos);
  auto fp32 = nvdla_precision(PrecisionLayer::kConv, PrecisionInput::kFp16, DType::kFp32);
  ASSERT_FALSE(fp32.ok());
  EXPECT_NE(fp32.status().message().find("output precision fp32"), std::string::npos);
}

TEST(PrecisionInfTable, values_are_the_documents_numbers) {
  EXPECT_EQ(as_float(nvdla_inf_value_bits(NvdlaUnit::kConv)), 65536.0f);
  EXPECT_EQ(as_float(nvdla_inf_value_bits(NvdlaUnit::kConvWinograd)), 65504.0f);
  EXPECT_EQ(as_float(nvdla_inf_value_bits(NvdlaUnit::kSdp)), FLT_MAX);
  EXPECT_EQ(static_cast<double>(as_float(nvdla_inf_value_bits(NvdlaUnit::kCdp))), 4292870144.0);
  EXPECT_EQ(static_cast<double>(as_float(nvdla_inf_value_bits(NvdlaUnit::kPdp))), 4292870144.0);
  EXPECT_EQ(nvdla_inf_value_bits(NvdlaUnit::kPdpMinMax), 0x7f800000u);
}

TEST(PrecisionValidate, names_the_rule_and_the_values) {
  ConvertSpec s;
  s.rule = ConvertRule::kIeee;
  s.from = DType::kInt8;
  s.to = DType::kFp16;
  EXPECT_EQ(validate_convert(s, 1, 2).message(), "rule ieee: converts between fp32, fp16 and bf16, not int8 -> fp16");
  s.from = DType::kFp32;
  EXPECT_EQ(validate_convert(s, 6, 2).message(),
            "rule ieee: fp32 -> fp16: input of 6 bytes is not a whole number of 4-byte fp32 values");
  EXPECT_EQ(validate_convert(s, 8, 2).message(),
            "rule ieee: fp32 -> fp16: output buffer of 2 bytes does not hold 2 fp16 values");
  EXPECT_TRUE(validate_convert(s, 8, 4).ok());
  s.rule = ConvertRule::kNvdlaInt;
  s.from = DType::kInt16;
  s.to = DType::kInt8;
  s.offset = -70000;
  EXPECT_EQ(validate_convert(s, 2, 1).message(), "rule nvdla-int: offset -70000 is outside -65536..65535");
  s.offset = 0;
  s.scale = as_float(0x7fc00000u);
  EXPECT_EQ(validate_convert(s, 2, 1).message(), "rule nvdla-int: scaling factor nan is not a finite number");
  s.scale = 1;
  s.from = DType::kInt8x4;
  EXPECT_FALSE(validate_convert(s, 4, 1).ok());
}

TEST(PrecisionValidate, element_sizes_come_from_the_dtype_table) {
  ConvertSpec s;
  s.rule = ConvertRule::kNvdlaInt;
  for (DType from : {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16}) {
    for (DType to : {DType::kInt8, DType::kInt16, DType::kFp16}) {
      s.from = from;
      s.to = to;
      EXPECT_TRUE(validate_convert(s, 3 * dtype_bits(from) / 8, 3 * dtype_bits(to) / 8).ok()) << to_string(s);
    }
  }
}

TEST(PrecisionConvert, both_implementations_reject_bad_input_alike) {
  ConvertSpec s;
  s.rule = ConvertRule::kNvdla;
  s.from = DType::kBf16;
  s.to = DType::kFp16;
  uint16_t in = 0, out = 0;
  Status a = precision_reference().convert(s, &in, 2, &out, 2, nullptr);
  Status b = precision_optimized().convert(s, &in, 2, &out, 2, nullptr);
  EXPECT_EQ(a.code(), StatusCode::kInvalid);
  EXPECT_EQ(a.message(), b.message());
}

TEST(PrecisionConvert, empty_input_converts_to_nothing) {
  ConvertSpec s;
  NanCounts nan{5, 5};
  EXPECT_TRUE(precision_optimized().convert(s, nullptr, 0, nullptr, 0, &nan).ok());
  EXPECT_EQ(nan.input, 0u);
  EXPECT_TRUE(precision_reference().convert(s, nullptr, 0, nullptr, 0, &nan).ok());
  EXPECT_EQ(nan.output, 0u);
}

TEST(PrecisionConvert, spec_text_names_every_setting) {
  ConvertSpec s;
  s.rule = ConvertRule::kNvdla;
  s.unit = NvdlaUnit::kConvWinograd;
  s.flush_nan = true;
  EXPECT_EQ(to_string(s), "nvdla fp32->fp16 unit=conv-winograd flush-nan");
  s.rule = ConvertRule::kNvdlaInt;
  s.from = DType::kUInt8;
  s.to = DType::kInt8;
  s.offset = 128;
  s.scale = 0.5f;
  EXPECT_EQ(to_string(s), "nvdla-int uint8->int8 offset=128 scale=0.5 truncate=nearest-away");
}

// The element sizes every document states, all read from the one dtype table.
TEST(PrecisionDTypeTable, element_sizes_of_every_document) {
  // NVDLA, Precision Type: int8 8-bit, int16 16-bit, fp16 16-bit half precision.
  EXPECT_EQ(dtype_bits(DType::kInt8), 8u);
  EXPECT_EQ(dtype_bits(DType::kInt16), 16u);
  EXPECT_EQ(dtype_bits(DType::kFp16), 16u);
  EXPECT_EQ(dtype_info(DType::kFp16).kind, DTypeKind::kFloat);
  EXPECT_EQ(dtype_info(DType::kInt8).kind, DTypeKind::kSignedInt);
  // TPU storage modes: int8x4 (4N), int16x2 (2N), fp32x2 (2IC) pack 4, 2 and 2 lanes.
  EXPECT_EQ(dtype_bits(DType::kInt8x4), 4 * dtype_bits(DType::kInt8));
  EXPECT_EQ(dtype_bits(DType::kInt16x2), 2 * dtype_bits(DType::kInt16));
  EXPECT_EQ(dtype_bits(DType::kFp32x2), 2 * dtype_bits(DType::kFp32));
  EXPECT_EQ(dtype_info(DType::kInt8x4).lanes, 4u);
  EXPECT_EQ(dtype_info(DType::kFp32x2).lane, DType::kFp32);
  // TLA fractal: 16 x (32 / sizeof(element)) elements of 32 bytes per row.
  for (DType t : {DType::kInt8, DType::kFp16, DType::kFp32}) {
    const uint32_t columns = 32 / (dtype_bits(t) / 8);
    EXPECT_EQ(columns * dtype_bits(t) / 8, 32u) << dtype_name(t);
  }
  EXPECT_EQ(32 / (dtype_bits(DType::kInt8) / 8), 32u);
  EXPECT_EQ(32 / (dtype_bits(DType::kFp16) / 8), 16u);
  EXPECT_EQ(32 / (dtype_bits(DType::kFp32) / 8), 8u);
}

}  // namespace
}  // namespace layoutcheck
