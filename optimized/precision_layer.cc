// The optimized library's second encoding of the NVDLA precision tables and the
// SDP layer rules ("Precision Conversion", "Batch Normalization Data Format",
// "Element-Wise Data Format"). The reference (core/precision_tables.cc) holds
// the four tables row by row as printed; this file derives them from the prose
// rules above the tables instead:
//  - convolution: "supports precision conversion for image input mode only",
//    "integer to all 3 types", "Floating point images can only be converted to
//    fp16", DC and Winograd keep the precision; the pipeline runs at the output
//    precision, with weights of that precision;
//  - SDP (offline): "free conversion of int16 <-> fp16 and int8 <-> int16", the
//    pipeline int32 for integer input, fp32 for fp16;
//  - LRN (CDP) and pooling (PDP): "does not support any precision conversion".
// Each table is then a 3x3 bit matrix (input precision x output precision, one
// bit per valid pair) and a layer check is a few mask tests. The two encodings
// agree on every (layer, input, output) and on random layers
// (tests/property/precision_test.cc, fuzz/fuzz_precision_layer.cc).
#include <cstdint>

#include "layoutcheck/precision.h"

namespace layoutcheck {
namespace {

// Precision indices: int8 0, int16 1, fp16 2; -1 for every other dtype.
int precision_index(DType t) {
  switch (t) {
    case DType::kInt8: return 0;
    case DType::kInt16: return 1;
    case DType::kFp16: return 2;
    default: return -1;
  }
}
constexpr DType kPrecision[3] = {DType::kInt8, DType::kInt16, DType::kFp16};
constexpr uint32_t kBits[3] = {8, 16, 16};

constexpr uint16_t bit(int in, int out) { return static_cast<uint16_t>(1u << (3 * in + out)); }
constexpr uint16_t kSame = bit(0, 0) | bit(1, 1) | bit(2, 2);
// int8 <-> int16, int16 <-> fp16 ("free conversion"), and no conversion.
constexpr uint16_t kSdpPairs = kSame | bit(0, 1) | bit(1, 0) | bit(1, 2) | bit(2, 1);

bool is_image(PrecisionInput i) { return i == PrecisionInput::kImageInt || i == PrecisionInput::kImageFp16; }
// The feature data inputs' precision index.
int input_index(PrecisionInput i) {
  return i == PrecisionInput::kInt8 ? 0 : i == PrecisionInput::kInt16 ? 1 : i == PrecisionInput::kFp16 ? 2 : -1;
}

}  // namespace

PrecisionSupport precision_supported_optimized(PrecisionLayer layer, PrecisionInput input, DType output) {
  PrecisionSupport s;
  const int out = precision_index(output);
  if (out < 0 || static_cast<unsigned>(layer) > 3 || static_cast<unsigned>(input) > 4) return s;
  if (is_image(input)) {
    if (layer != PrecisionLayer::kConv) return s;  // image input is a convolution pipeline mode
    s.row = true;
    s.valid = input == PrecisionInput::kImageInt || output == DType::kFp16;
  } else {
    const int in = input_index(input);
    s.row = true;
    s.valid = ((layer == PrecisionLayer::kSdp ? kSdpPairs : kSame) & bit(in, out)) != 0;
  }
  if (!s.valid) return s;
  s.has_weight = layer == PrecisionLayer::kConv;
  if (layer == PrecisionLayer::kSdp) {
    s.pipeline = input == PrecisionInput::kFp16 ? DType::kFp32 : DType::kInt32;
  } else {
    s.pipeline = output;  // conversions only at the convolution's input: the pipeline runs at the output
  }
  s.weight = s.has_weight ? output : s.pipeline;
  return s;
}

std::string sdp_layer_rule_optimized(const SdpLayer& l) {
  const int in = input_index(l.input), out = precision_index(l.output);
  if (in < 0) return "nvdla.precision/sdp-feature-input";
  if (!l.on_flying) {
    if (!precision_supported_optimized(PrecisionLayer::kSdp, l.input, l.output).valid) {
      return "nvdla.precision/sdp-offline-table";
    }
  } else {
    if (is_image(l.conv_input) != (l.conv_mode == ConvMode::kImage)) return "nvdla.precision/conv-mode-input";
    if (!precision_supported_optimized(PrecisionLayer::kConv, l.conv_input, l.conv_output).valid) {
      return "nvdla.precision/conv-table";
    }
    if (kPrecision[in] != l.conv_output) return "nvdla.precision/convert-individually";
    if (out < 0 || kBits[in] != kBits[out]) return "nvdla.precision/on-flying-same-bit-depth";
    if (in != out && l.conv_mode != ConvMode::kDirect) return "nvdla.precision/sdp-convert-dc-only";
  }
  // PROC_PRECISION of the SDP data: the layer's precision, int8 between int16
  // and int8, either side of an int16 <-> fp16 conversion.
  uint32_t allowed = 1u << in;
  if (out >= 0 && in != out) allowed = (in | out) == 1 ? 1u : (1u << in) | (1u << out);
  for (const Case& c : l.data) {
    if (c.layout.name != "nvdla.sdp.channel" && c.layout.name != "nvdla.sdp.element") {
      return "nvdla.precision/sdp-data-layout";
    }
    DType proc = c.dtype;
    auto it = c.layout.params.find("proc");
    if (it != c.layout.params.end() && it->second != "same") {
      auto parsed = parse_dtype(it->second);
      if (!parsed.ok()) return "nvdla.precision/sdp-data-layout";
      proc = *parsed;
    }
    const int p = precision_index(proc);
    if (p < 0 || !(allowed & (1u << p))) return "nvdla.precision/sdp-data-processing-precision";
  }
  return "";
}

}  // namespace layoutcheck
