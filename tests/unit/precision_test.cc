#include <gtest/gtest.h>

#include <cfloat>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "layoutcheck/nvdla.h"
#include "layoutcheck/precision.h"
#include "layoutcheck/rules.h"

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
  EXPECT_EQ(to_string(s), "nvdla-int uint8->int8 offset=128 scale=0.5 truncate=nearest-even");
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


// One tie rule: the default truncate2int and the int8 Winograd weight conversion round
// the same halves the same way (ties to even), and nearest-away would not.
TEST(PrecisionTieRule, truncate_default_rounds_halves_as_the_winograd_conversion) {
  EXPECT_EQ(ConvertSpec{}.truncate, TruncateMode::kNearestEven);
  for (int value : {2, 6, 10, 14, -2, -6, -10, 3, 5, 100}) {
    const auto v = static_cast<int8_t>(value);
    std::vector<int8_t> kernel(9, 0);
    kernel[4] = v;  // U[1][1] = W[1][1] / 4
    auto u = nvdla::winograd_transform_reference(DType::kInt8, {1, 1, 3, 3}, kernel.data(), kernel.size());
    ASSERT_TRUE(u.ok()) << u.status().message();
    ConvertSpec s;
    s.rule = ConvertRule::kNvdlaInt;
    s.from = DType::kInt8;
    s.to = DType::kInt8;
    s.scale = 0.25f;
    int8_t out = 0;
    ASSERT_TRUE(precision_reference().convert(s, &v, 1, &out, 1, nullptr).ok());
    EXPECT_EQ(out, static_cast<int8_t>((*u)[5])) << value;
    s.truncate = TruncateMode::kNearestAway;
    ASSERT_TRUE(precision_reference().convert(s, &v, 1, &out, 1, nullptr).ok());
    if (value % 8 == 2 || value % 8 == -2) {  // x.5 with x even
      EXPECT_NE(out, static_cast<int8_t>((*u)[5])) << value;
    }
  }
}

// The internal formats: fp17's largest value is the CDP and PDP INF value, fp32's the
// SDP's; fp17's smallest normal lies below half the smallest fp16 denormal.
TEST(PrecisionInternal, fp17_and_fp32_are_the_inf_tables_formats) {
  auto largest = [](const NvdlaInternalFormat& f) {
    return std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax);
  };
  EXPECT_EQ(largest(nvdla_internal_format(NvdlaUnit::kCdp)), 4292870144.0);
  EXPECT_EQ(largest(nvdla_internal_format(NvdlaUnit::kPdp)), double{as_float(nvdla_inf_value_bits(NvdlaUnit::kPdp))});
  EXPECT_EQ(largest(nvdla_internal_format(NvdlaUnit::kSdp)), double{FLT_MAX});
  EXPECT_EQ(as_float(nvdla_inf_value_bits(NvdlaUnit::kSdp)), FLT_MAX);
  EXPECT_STREQ(nvdla_internal_format(NvdlaUnit::kConv).name, "fp17");
  EXPECT_LT(std::ldexp(1.0, kNvdlaFp17.emin), std::ldexp(1.0, -25));
  EXPECT_LE(65536.0, largest(kNvdlaFp17));  // the convolution pipeline's INF value fits fp17, not fp16
}

TEST(PrecisionFloatPath, validates_units_pairs_and_registers) {
  ConvertSpec s;
  s.rule = ConvertRule::kNvdlaFloat;
  s.from = DType::kFp16;
  s.to = DType::kFp16;
  EXPECT_TRUE(validate_convert(s, 2, 2).ok());
  s.to = DType::kInt16;
  EXPECT_NE(validate_convert(s, 2, 2).message().find("row 5: image input (fp16) -> int16: Invalid case"), std::string::npos);
  s.unit = NvdlaUnit::kSdp;
  EXPECT_TRUE(validate_convert(s, 2, 2).ok());
  s.to = DType::kInt8;
  EXPECT_NE(validate_convert(s, 2, 1).message().find("row 7: fp16 feature data -> int8: Invalid case"), std::string::npos);
  s.to = DType::kInt16;
  s.unit = NvdlaUnit::kPdpMinMax;
  EXPECT_NE(validate_convert(s, 2, 2).message().find("Pooling layer"), std::string::npos);
  s.unit = NvdlaUnit::kSdp;
  s.from = DType::kFp32;
  EXPECT_FALSE(validate_convert(s, 4, 2).ok());
  s.from = DType::kFp16;
  s.offset = 65536;
  EXPECT_EQ(validate_convert(s, 2, 2).message(), "rule nvdla-float: offset 65536 is outside -65536..65535");
  s.offset = 0;
  s.scale = INFINITY;
  EXPECT_FALSE(validate_convert(s, 2, 2).ok());
  s.scale = 1.0f;
  EXPECT_FALSE(validate_convert(s, 3, 2).ok());
  EXPECT_EQ(to_string(s), "nvdla-float fp16->int16 unit=sdp offset=0 scale=1 truncate=nearest-even");
}

Case sdp_data(const char* layout, const char* dtype, const char* shape) {
  auto c = parse_case(layout, dtype, shape);
  EXPECT_TRUE(c.ok()) << layout << ": " << c.status().message();
  return c.ok() ? *c : Case{};
}

SdpLayer offline(PrecisionInput in, DType out) {
  SdpLayer l;
  l.input = in;
  l.output = out;
  return l;
}

SdpLayer on_flying(ConvMode mode, PrecisionInput conv_in, DType conv_out, DType out) {
  SdpLayer l;
  l.on_flying = true;
  l.conv_mode = mode;
  l.conv_input = conv_in;
  l.conv_output = conv_out;
  l.input = conv_out == DType::kInt8 ? PrecisionInput::kInt8 : conv_out == DType::kInt16 ? PrecisionInput::kInt16
                                                                                           : PrecisionInput::kFp16;
  l.output = out;
  return l;
}

TEST(SdpLayer, offline_follows_the_sdp_table) {
  EXPECT_TRUE(check_sdp_layer(offline(PrecisionInput::kInt16, DType::kFp16)).ok());
  EXPECT_TRUE(check_sdp_layer(offline(PrecisionInput::kFp16, DType::kInt16)).ok());
  EXPECT_EQ(check_sdp_layer(offline(PrecisionInput::kFp16, DType::kInt8)).rule(), "nvdla.precision/sdp-offline-table");
  EXPECT_EQ(check_sdp_layer(offline(PrecisionInput::kInt8, DType::kFp16)).rule(), "nvdla.precision/sdp-offline-table");
  EXPECT_EQ(check_sdp_layer(offline(PrecisionInput::kInt8, DType::kFp32)).rule(), "nvdla.precision/sdp-offline-table");
  EXPECT_EQ(check_sdp_layer(offline(PrecisionInput::kImageInt, DType::kInt8)).rule(), "nvdla.precision/sdp-feature-input");
}

TEST(SdpLayer, on_flying_keeps_the_bit_depth_and_takes_the_convolution_output) {
  EXPECT_TRUE(check_sdp_layer(on_flying(ConvMode::kDirect, PrecisionInput::kInt16, DType::kInt16, DType::kFp16)).ok());
  EXPECT_TRUE(check_sdp_layer(on_flying(ConvMode::kDirect, PrecisionInput::kFp16, DType::kFp16, DType::kInt16)).ok());
  // int8 -> int16 is in the offline table, not on-flying.
  const Status depth = check_sdp_layer(on_flying(ConvMode::kDirect, PrecisionInput::kInt8, DType::kInt8, DType::kInt16));
  EXPECT_EQ(depth.rule(), "nvdla.precision/on-flying-same-bit-depth");
  EXPECT_NE(depth.message().find("int8 (8 bits) to int16 (16 bits)"), std::string::npos) << depth.message();
  EXPECT_EQ(check_sdp_layer(on_flying(ConvMode::kDirect, PrecisionInput::kInt16, DType::kInt16, DType::kInt8)).rule(),
            "nvdla.precision/on-flying-same-bit-depth");
  // The CDMA and SDP convert individually: image uint8 -> int16 in the CDMA, int16 -> fp16 in
  // the SDP, although the convolution table has image -> fp16 as a row of its own.
  SdpLayer chain = on_flying(ConvMode::kImage, PrecisionInput::kImageInt, DType::kInt16, DType::kInt16);
  EXPECT_TRUE(check_sdp_layer(chain).ok());
  chain.input = PrecisionInput::kInt8;  // the SDP told the image's 8 bits, not the convolution's int16
  chain.output = DType::kInt8;
  EXPECT_EQ(check_sdp_layer(chain).rule(), "nvdla.precision/convert-individually");
  // The image fp16 -> fp16 -> int16 chain is valid piece by piece, image fp16 -> int16 is not.
  SdpLayer fp = on_flying(ConvMode::kDirect, PrecisionInput::kFp16, DType::kFp16, DType::kInt16);
  EXPECT_TRUE(check_sdp_layer(fp).ok());
  EXPECT_EQ(check_sdp_layer(on_flying(ConvMode::kImage, PrecisionInput::kImageFp16, DType::kInt16, DType::kInt16)).rule(),
            "nvdla.precision/conv-table");
  EXPECT_EQ(check_sdp_layer(on_flying(ConvMode::kDirect, PrecisionInput::kInt8, DType::kInt16, DType::kInt16)).rule(),
            "nvdla.precision/conv-table");
}

TEST(SdpLayer, conv_mode_matches_its_input_and_sdp_converts_behind_dc_only) {
  EXPECT_EQ(check_sdp_layer(on_flying(ConvMode::kDirect, PrecisionInput::kImageInt, DType::kInt8, DType::kInt8)).rule(),
            "nvdla.precision/conv-mode-input");
  EXPECT_EQ(check_sdp_layer(on_flying(ConvMode::kImage, PrecisionInput::kInt8, DType::kInt8, DType::kInt8)).rule(),
            "nvdla.precision/conv-mode-input");
  EXPECT_TRUE(check_sdp_layer(on_flying(ConvMode::kWinograd, PrecisionInput::kInt16, DType::kInt16, DType::kInt16)).ok());
  EXPECT_EQ(check_sdp_layer(on_flying(ConvMode::kWinograd, PrecisionInput::kInt16, DType::kInt16, DType::kFp16)).rule(),
            "nvdla.precision/sdp-convert-dc-only");
  EXPECT_EQ(check_sdp_layer(on_flying(ConvMode::kImage, PrecisionInput::kImageInt, DType::kFp16, DType::kInt16)).rule(),
            "nvdla.precision/sdp-convert-dc-only");
}

TEST(SdpLayer, bn_and_ew_data_take_int8_when_the_layer_converts_between_int16_and_int8) {
  SdpLayer l = offline(PrecisionInput::kInt16, DType::kInt8);
  l.data = {sdp_data("nvdla.sdp.channel(use=bn,proc=int8)", "int16", "8,2"),
            sdp_data("nvdla.sdp.element(use=ew)", "int8", "8,2,2,1")};
  EXPECT_TRUE(check_sdp_layer(l).ok());
  EXPECT_EQ(sdp_processing_precisions(l), std::vector<DType>{DType::kInt8});
  l.data.push_back(sdp_data("nvdla.sdp.channel(use=bn,proc=int16)", "int16", "8,2"));
  const Status s = check_sdp_layer(l);
  EXPECT_EQ(s.rule(), "nvdla.precision/sdp-data-processing-precision");
  EXPECT_NE(s.message().find("SDP data 2"), std::string::npos) << s.message();
  l = offline(PrecisionInput::kInt8, DType::kInt16);
  l.data = {sdp_data("nvdla.sdp.element(use=ew2)", "int16", "8,2,2,2")};  // proc=same: int16
  EXPECT_EQ(check_sdp_layer(l).rule(), "nvdla.precision/sdp-data-processing-precision");
  l = offline(PrecisionInput::kInt16, DType::kInt16);
  l.data = {sdp_data("nvdla.sdp.channel(use=bn,proc=int16)", "int8", "8,2")};
  EXPECT_TRUE(check_sdp_layer(l).ok());
  l.data = {sdp_data("nvdla.sdp.channel(use=bn,proc=int8)", "int8", "8,2")};
  EXPECT_EQ(check_sdp_layer(l).rule(), "nvdla.precision/sdp-data-processing-precision");
  l = offline(PrecisionInput::kInt16, DType::kFp16);
  l.data = {sdp_data("nvdla.sdp.channel(use=bn,proc=int16)", "int16", "8,2"),
            sdp_data("nvdla.sdp.element(use=ew)", "fp16", "8,2,2,1")};
  EXPECT_TRUE(check_sdp_layer(l).ok());
  l.data = {sdp_data("nvdla.sdp.channel(use=bn,proc=int8)", "int8", "8,2")};
  EXPECT_EQ(check_sdp_layer(l).rule(), "nvdla.precision/sdp-data-processing-precision");
  l.data = {sdp_data("nvdla.feature", "int16", "8,2,2")};
  EXPECT_EQ(check_sdp_layer(l).rule(), "nvdla.precision/sdp-data-layout");
}

TEST(SdpLayer, every_rule_is_registered_with_its_section) {
  for (const char* id : {"nvdla.precision/sdp-feature-input", "nvdla.precision/sdp-offline-table",
                         "nvdla.precision/conv-mode-input", "nvdla.precision/conv-table",
                         "nvdla.precision/convert-individually", "nvdla.precision/on-flying-same-bit-depth",
                         "nvdla.precision/sdp-convert-dc-only", "nvdla.precision/sdp-data-layout",
                         "nvdla.precision/sdp-data-processing-precision"}) {
    const Rule* r = find_rule(id);
    ASSERT_NE(r, nullptr) << id;
    EXPECT_EQ(r->document, "nvdla-in-memory-data-formats.txt");
  }
  EXPECT_EQ(to_string(on_flying(ConvMode::kDirect, PrecisionInput::kInt16, DType::kInt16, DType::kFp16)),
            "on-flying after dc conv int16 feature data -> int16, int16 feature data -> fp16");
  EXPECT_FALSE(parse_conv_mode("direct").ok());
  EXPECT_EQ(*parse_conv_mode("winograd"), ConvMode::kWinograd);
}


// Every layer of a grid: every rejection names a registered nvdla.precision rule and
// every nvdla.precision rule fires.
TEST(SdpLayer, a_grid_of_layers_fires_every_precision_rule) {
  const std::vector<std::vector<Case>> data = {
      {},
      {sdp_data("nvdla.sdp.channel(use=bn,proc=int8)", "int16", "8,2")},
      {sdp_data("nvdla.sdp.channel(use=prelu)", "int16", "8,1")},
      {sdp_data("nvdla.sdp.element(use=ew)", "fp16", "4,2,3,1")},
      {sdp_data("nvdla.feature", "int8", "4,2,3")}};
  const PrecisionInput inputs[] = {PrecisionInput::kImageInt, PrecisionInput::kImageFp16, PrecisionInput::kInt8,
                                   PrecisionInput::kInt16, PrecisionInput::kFp16};
  std::set<std::string> fired;
  size_t valid = 0;
  for (bool flying : {false, true}) {
    for (PrecisionInput in : inputs) {
      for (DType out : {DType::kInt8, DType::kInt16, DType::kFp16, DType::kFp32}) {
        for (ConvMode mode : {ConvMode::kDirect, ConvMode::kWinograd, ConvMode::kImage}) {
          for (PrecisionInput conv_in : inputs) {
            for (DType conv_out : {DType::kInt8, DType::kInt16, DType::kFp16}) {
              for (const auto& d : data) {
                SdpLayer l;
                l.on_flying = flying;
                l.input = in;
                l.output = out;
                l.conv_mode = mode;
                l.conv_input = conv_in;
                l.conv_output = conv_out;
                l.data = d;
                const Status st = check_sdp_layer(l);
                if (st.ok()) {
                  ++valid;
                  continue;
                }
                ASSERT_NE(find_rule(st.rule()), nullptr) << to_string(l) << ": " << st.message();
                ASSERT_EQ(st.rule().rfind("nvdla.precision/", 0), 0u) << st.rule();
                fired.insert(st.rule());
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(valid, 0u);
  for (const Rule& r : rules()) {
    if (r.id.rfind("nvdla.precision/", 0) == 0) {
      EXPECT_EQ(fired.count(r.id), 1u) << r.id << " never fires";
    }
  }
}

}  // namespace
}  // namespace layoutcheck
