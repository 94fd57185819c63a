#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "layoutcheck/precision.h"

namespace layoutcheck {
namespace {

using LayerRule = std::string (*)(const SdpLayer&);

std::string reference_rule(const SdpLayer& l) {
  const Status s = check_sdp_layer(l);
  return s.ok() ? "" : s.rule();
}

DType feature_dtype(PrecisionInput i) {
  return i == PrecisionInput::kInt8 ? DType::kInt8 : i == PrecisionInput::kInt16 ? DType::kInt16 : DType::kFp16;
}

bool is_feature(PrecisionInput i) { return i != PrecisionInput::kImageInt && i != PrecisionInput::kImageFp16; }

// What an accepted layer must satisfy, by the documents' words; "" when it does.
std::string definition_breach(const SdpLayer& l) {
  if (!is_feature(l.input)) return "the SDP reads feature data";
  const DType in = feature_dtype(l.input);
  // "the input precision and output precision should have the same bit-depth"
  if (l.on_flying && dtype_bits(in) != dtype_bits(l.output)) return "on-flying with two bit depths";
  // "The CDMA and SDP convert precision individually": the SDP's input is the convolution's output.
  if (l.on_flying && in != l.conv_output) return "on-flying SDP input is not the convolution output";
  if (!l.on_flying) {
    auto row = nvdla_precision(PrecisionLayer::kSdp, l.input, l.output);
    if (!row.ok() || !(*row)->valid) return "offline outside the SDP table";
  }
  for (const Case& c : l.data) {
    auto it = c.layout.params.find("proc");
    const DType proc = it == c.layout.params.end() || it->second == "same" ? c.dtype : *parse_dtype(it->second);
    const bool int16_int8 = (in == DType::kInt16 && l.output == DType::kInt8) || (in == DType::kInt8 && l.output == DType::kInt16);
    // "batch normalization data need set to processing precision which is always INT8"
    if (int16_int8 && proc != DType::kInt8) return "BN/EW data not at INT8 in an INT16 <-> INT8 layer";
    if (in == l.output && proc != in) return "BN/EW data not at the layer's precision";
  }
  return "";
}

// The verdicts of `rule` and the reference differ, or an accepted layer breaks
// a definition: "" when neither.
std::string disagreement(const SdpLayer& l, LayerRule rule) {
  const std::string want = reference_rule(l), got = rule(l);
  if (want != got) return to_string(l) + ": reference '" + want + "', checked '" + got + "'";
  if (got.empty()) {
    const std::string breach = definition_breach(l);
    if (!breach.empty()) return to_string(l) + ": accepted, but " + breach;
  }
  return "";
}

const PrecisionInput kInputs[] = {PrecisionInput::kImageInt, PrecisionInput::kImageFp16, PrecisionInput::kInt8,
                                  PrecisionInput::kInt16, PrecisionInput::kFp16};
const DType kOutputs[] = {DType::kInt8, DType::kInt16, DType::kFp16, DType::kUInt16, DType::kFp32};

rc::Gen<PrecisionInput> any_input() { return rc::gen::elementOf(std::vector<PrecisionInput>(std::begin(kInputs), std::end(kInputs))); }
rc::Gen<DType> any_output() { return rc::gen::elementOf(std::vector<DType>(std::begin(kOutputs), std::end(kOutputs))); }

Case draw_data(const SdpLayer& l) {
  const bool element = *rc::gen::arbitrary<bool>();
  if (*rc::gen::inRange(0, 12) == 0) return *parse_case("nvdla.feature", "int8", "8,2,2");
  const std::string use = element ? *rc::gen::element<std::string>("bias", "ew", "ew2")
                                  : *rc::gen::element<std::string>("bias", "prelu", "bn");
  // Mostly a precision of the layer, so that accepted layers carry data.
  std::vector<std::string> procs = {"int8", "int16", "fp16", "same"};
  if (is_feature(l.input)) procs.push_back(dtype_name(feature_dtype(l.input)));
  procs.push_back(dtype_name(l.output));
  std::string proc = *rc::gen::elementOf(procs);
  if (proc == "uint16" || proc == "fp32") proc = "same";
  const DType t = proc == "fp16" ? DType::kFp16 : proc == "same" ? *rc::gen::element(DType::kInt8, DType::kInt16, DType::kFp16)
                                                                 : *rc::gen::element(DType::kInt8, DType::kInt16);
  auto layout = make_layout(element ? "nvdla.sdp.element" : "nvdla.sdp.channel", {{"use", use}, {"proc", proc}});
  RC_ASSERT(layout.ok());
  const int64_t P = use == "bn" || use == "ew2" ? 2 : 1;
  return element ? Case{*layout, t, {4, 2, 3, P}} : Case{*layout, t, {8, P}};
}

SdpLayer draw_layer() {
  SdpLayer l;
  l.on_flying = *rc::gen::arbitrary<bool>();
  // Mostly feature data and a consistent chain, so that every later rule is reached.
  l.input = *rc::gen::inRange(0, 8) == 0 ? *any_input()
                                         : *rc::gen::element(PrecisionInput::kInt8, PrecisionInput::kInt16, PrecisionInput::kFp16);
  l.output = *rc::gen::inRange(0, 8) == 0 ? *any_output() : *rc::gen::element(DType::kInt8, DType::kInt16, DType::kFp16);
  l.conv_mode = *rc::gen::element(ConvMode::kDirect, ConvMode::kWinograd, ConvMode::kImage);
  l.conv_input = *any_input();
  if (*rc::gen::inRange(0, 4) != 0) {
    l.conv_input = l.conv_mode == ConvMode::kImage ? *rc::gen::element(PrecisionInput::kImageInt, PrecisionInput::kImageFp16)
                                                   : *rc::gen::element(PrecisionInput::kInt8, PrecisionInput::kInt16, PrecisionInput::kFp16);
  }
  l.conv_output = *any_output();
  if (l.on_flying && *rc::gen::inRange(0, 4) != 0 && is_feature(l.input)) l.conv_output = feature_dtype(l.input);
  const int n = *rc::gen::inRange(0, 4);
  for (int i = 0; i < n; ++i) l.data.push_back(draw_data(l));
  return l;
}

RC_GTEST_PROP(PrecisionLayerProperty, optimized_layer_check_gets_the_reference_verdict_and_the_rules_hold, ()) {
  const SdpLayer l = draw_layer();
  const std::string why = disagreement(l, &sdp_layer_rule_optimized);
  RC_LOG() << why;
  RC_ASSERT(why.empty());
  RC_TAG(reference_rule(l).empty() ? "accepted" : reference_rule(l));
}

RC_GTEST_PROP(PrecisionLayerProperty, optimized_tables_agree_with_the_reference_rows, ()) {
  const auto layer = *rc::gen::element(PrecisionLayer::kConv, PrecisionLayer::kSdp, PrecisionLayer::kLrn, PrecisionLayer::kPdp);
  const PrecisionInput input = *any_input();
  const DType output = *rc::gen::element(DType::kInt8, DType::kInt16, DType::kFp16, DType::kFp32, DType::kUInt8);
  const PrecisionSupport got = precision_supported_optimized(layer, input, output);
  auto row = nvdla_precision(layer, input, output);
  RC_ASSERT(got.row == row.ok());
  if (!row.ok()) return;
  RC_ASSERT(got.valid == (*row)->valid);
  if (!got.valid) return;
  RC_ASSERT(got.pipeline == (*row)->pipeline);
  RC_ASSERT(got.has_weight == (*row)->has_weight);
  if (got.has_weight) RC_ASSERT(got.weight == (*row)->weight);
}

// Every combination of the tables, and every layer without data, exhaustively.
TEST(PrecisionLayerEncoding, optimized_encoding_agrees_on_every_combination) {
  for (auto layer : {PrecisionLayer::kConv, PrecisionLayer::kSdp, PrecisionLayer::kLrn, PrecisionLayer::kPdp}) {
    for (PrecisionInput in : kInputs) {
      for (DType out : kOutputs) {
        const PrecisionSupport got = precision_supported_optimized(layer, in, out);
        auto row = nvdla_precision(layer, in, out);
        ASSERT_EQ(got.row, row.ok()) << precision_layer_name(layer) << " " << precision_input_text(in) << " " << dtype_name(out);
        if (row.ok()) {
          EXPECT_EQ(got.valid, (*row)->valid) << describe_precision_row(**row);
          if (got.valid) {
            EXPECT_EQ(got.pipeline, (*row)->pipeline) << describe_precision_row(**row);
          }
        }
      }
    }
  }
  int accepted = 0;
  for (bool on_flying : {false, true}) {
    for (PrecisionInput in : kInputs) {
      for (DType out : kOutputs) {
        for (auto mode : {ConvMode::kDirect, ConvMode::kWinograd, ConvMode::kImage}) {
          for (PrecisionInput conv_in : kInputs) {
            for (DType conv_out : kOutputs) {
              SdpLayer l;
              l.on_flying = on_flying;
              l.input = in;
              l.output = out;
              l.conv_mode = mode;
              l.conv_input = conv_in;
              l.conv_output = conv_out;
              EXPECT_EQ(disagreement(l, &sdp_layer_rule_optimized), "");
              accepted += reference_rule(l).empty();
            }
          }
        }
      }
    }
  }
  EXPECT_GT(accepted, 0);
}

// Checks that break a rule on purpose are caught.
std::string ignores_bit_depth(const SdpLayer& l) {
  const std::string r = sdp_layer_rule_optimized(l);
  return r == "nvdla.precision/on-flying-same-bit-depth" ? "" : r;
}
std::string int16_data_in_int16_to_int8(const SdpLayer& l) {
  const std::string r = sdp_layer_rule_optimized(l);
  const bool convert = l.input == PrecisionInput::kInt16 && l.output == DType::kInt8;
  return convert && r == "nvdla.precision/sdp-data-processing-precision" ? "" : r;
}

TEST(PrecisionLayerEncoding, a_check_that_breaks_a_rule_is_caught) {
  SdpLayer depth;
  depth.on_flying = true;
  depth.input = PrecisionInput::kInt8;
  depth.output = DType::kInt16;
  depth.conv_input = PrecisionInput::kInt8;
  depth.conv_output = DType::kInt8;
  EXPECT_EQ(disagreement(depth, &sdp_layer_rule_optimized), "");
  EXPECT_NE(disagreement(depth, &ignores_bit_depth), "");
  SdpLayer bn;
  bn.input = PrecisionInput::kInt16;
  bn.output = DType::kInt8;
  bn.data = {*parse_case("nvdla.sdp.channel(use=bn,proc=int16)", "int16", "8,2")};
  EXPECT_EQ(disagreement(bn, &sdp_layer_rule_optimized), "");
  EXPECT_NE(disagreement(bn, &int16_data_in_int16_to_int8), "");
  // The definition alone catches a check that agrees with nothing but accepts.
  EXPECT_NE(definition_breach(depth), "");
  EXPECT_NE(definition_breach(bn), "");
}

}  // namespace
}  // namespace layoutcheck
