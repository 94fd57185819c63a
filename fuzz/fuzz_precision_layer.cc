// Differential fuzzer of the NVDLA precision tables and SDP layer rules: a layer
// line of the precision oracles ("[layer] offline|on-flying INPUT OUTPUT
// [conv=MODE/INPUT/OUTPUT] [data=LAYOUT@DTYPE@SHAPE]... [-> RESULT]") gets the
// same verdict from the reference (check_sdp_layer over the printed tables) and
// the optimized encoding (sdp_layer_rule_optimized, derived from the prose), the
// tables' rows for its precisions agree, and an accepted layer keeps the
// documents' rules: the same bit depth on-flying, the SDP's input is the
// convolution's output, BN/EW data at INT8 when converting between INT16 and INT8.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "layoutcheck/precision.h"

using namespace layoutcheck;

namespace {

[[noreturn]] void finding(const std::string& line, const std::string& what) {
  std::fprintf(stderr, "layer %s: %s\n", line.c_str(), what.c_str());
  std::abort();
}

void same_rows(const std::string& line, PrecisionLayer layer, PrecisionInput in, DType out) {
  auto row = nvdla_precision(layer, in, out);
  const PrecisionSupport got = precision_supported_optimized(layer, in, out);
  const bool agree = got.row == row.ok() &&
                     (!row.ok() || (got.valid == (*row)->valid &&
                                    (!got.valid || (got.pipeline == (*row)->pipeline && got.has_weight == (*row)->has_weight &&
                                                    (!got.has_weight || got.weight == (*row)->weight)))));
  if (!agree) {
    finding(line, std::string("the tables differ for ") + precision_layer_name(layer) + " " + precision_input_text(in) +
                      " -> " + dtype_name(out) + ": reference " + (row.ok() ? describe_precision_row(**row) : "no row"));
  }
}

DType feature(PrecisionInput i) {
  return i == PrecisionInput::kInt8 ? DType::kInt8 : i == PrecisionInput::kInt16 ? DType::kInt16 : DType::kFp16;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  std::string line(reinterpret_cast<const char*>(data), size);
  if (const size_t nl = line.find('\n'); nl != std::string::npos) line.resize(nl);
  if (line.rfind("layer ", 0) == 0) line.erase(0, 6);
  if (const size_t arrow = line.find(" -> "); arrow != std::string::npos) line.resize(arrow);
  auto parsed = parse_sdp_layer(line);
  if (!parsed.ok()) {
    if (parsed.status().message().empty()) finding(line, "rejected without a message");
    return 0;
  }
  const SdpLayer& l = *parsed;
  for (auto layer : {PrecisionLayer::kConv, PrecisionLayer::kSdp, PrecisionLayer::kLrn, PrecisionLayer::kPdp}) {
    same_rows(line, layer, l.input, l.output);
  }
  same_rows(line, PrecisionLayer::kConv, l.conv_input, l.conv_output);
  const Status ref = check_sdp_layer(l);
  const std::string want = ref.ok() ? "" : ref.rule(), got = sdp_layer_rule_optimized(l);
  if (want != got) finding(line, "reference '" + want + "' (" + ref.message() + "), optimized '" + got + "'");
  if (!ref.ok()) {
    if (ref.message().empty()) finding(line, "rejected without a message");
    return 0;
  }
  const DType in = feature(l.input);
  if (l.input == PrecisionInput::kImageInt || l.input == PrecisionInput::kImageFp16) finding(line, "accepted an image input");
  if (l.on_flying && (dtype_bits(in) != dtype_bits(l.output) || in != l.conv_output)) {
    finding(line, "accepted an on-flying layer that changes the bit depth or is not fed by the convolution");
  }
  const bool int16_int8 = (in == DType::kInt16 && l.output == DType::kInt8) || (in == DType::kInt8 && l.output == DType::kInt16);
  for (const Case& c : l.data) {
    auto it = c.layout.params.find("proc");
    const DType proc = it == c.layout.params.end() || it->second == "same" ? c.dtype : *parse_dtype(it->second);
    if (int16_int8 && proc != DType::kInt8) finding(line, "accepted BN/EW data not at INT8 in an INT16 <-> INT8 layer");
    if (in == l.output && proc != in) finding(line, "accepted SDP data not at the layer's precision");
  }
  return 0;
}
