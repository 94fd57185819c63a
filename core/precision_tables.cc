// The NVDLA precision tables as data, and the names and checks of the
// conversion rules. nvdla-in-memory-data-formats.txt, "Precision Conversion"
// (the four tables) and "FP16 Supporting" (the INF converted values).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "layoutcheck/precision.h"

namespace layoutcheck {
namespace {

using L = PrecisionLayer;
using I = PrecisionInput;
constexpr DType i8 = DType::kInt8, i16 = DType::kInt16, f16 = DType::kFp16, i32 = DType::kInt32,
                f32 = DType::kFp32;

constexpr PrecisionRow valid(L l, I in, DType out, DType pipe, DType weight, int line) {
  return {l, in, out, true, pipe, true, weight, line};
}
constexpr PrecisionRow valid(L l, I in, DType out, DType pipe, int line) {
  return {l, in, out, true, pipe, false, pipe, line};
}
constexpr PrecisionRow invalid(L l, I in, DType out, bool weight, int line) {
  return {l, in, out, false, out, weight, out, line};
}

// Table order and contents exactly as printed; the PDP table's third row reads
// "int16" a second time, taken as fp16 (oracles/ERRATA.md, NVDLA precision 1).
constexpr PrecisionRow kRows[] = {
    // Precision conversion for convolutional layer
    valid(L::kConv, I::kImageInt, i8, i8, i8, 1),
    valid(L::kConv, I::kImageInt, i16, i16, i16, 2),
    valid(L::kConv, I::kImageInt, f16, f16, f16, 3),
    invalid(L::kConv, I::kImageFp16, i8, true, 4),
    invalid(L::kConv, I::kImageFp16, i16, true, 5),
    valid(L::kConv, I::kImageFp16, f16, f16, f16, 6),
    valid(L::kConv, I::kInt8, i8, i8, i8, 7),
    invalid(L::kConv, I::kInt8, i16, true, 8),
    invalid(L::kConv, I::kInt8, f16, true, 9),
    invalid(L::kConv, I::kInt16, i8, true, 10),
    valid(L::kConv, I::kInt16, i16, i16, i16, 11),
    invalid(L::kConv, I::kInt16, f16, true, 12),
    invalid(L::kConv, I::kFp16, i8, true, 13),
    invalid(L::kConv, I::kFp16, i16, true, 14),
    valid(L::kConv, I::kFp16, f16, f16, f16, 15),
    // Precision conversion for SDP layer (offline mode)
    valid(L::kSdp, I::kInt8, i8, i32, 1),
    valid(L::kSdp, I::kInt8, i16, i32, 2),
    invalid(L::kSdp, I::kInt8, f16, false, 3),
    valid(L::kSdp, I::kInt16, i8, i32, 4),
    valid(L::kSdp, I::kInt16, i16, i32, 5),
    valid(L::kSdp, I::kInt16, f16, i32, 6),
    invalid(L::kSdp, I::kFp16, i8, false, 7),
    valid(L::kSdp, I::kFp16, i16, f32, 8),
    valid(L::kSdp, I::kFp16, f16, f32, 9),
    // Precision conversion for LRN layer
    valid(L::kLrn, I::kInt8, i8, i8, 1),
    invalid(L::kLrn, I::kInt8, i16, false, 2),
    invalid(L::kLrn, I::kInt8, f16, false, 3),
    invalid(L::kLrn, I::kInt16, i8, false, 4),
    valid(L::kLrn, I::kInt16, i16, i16, 5),
    invalid(L::kLrn, I::kInt16, f16, false, 6),
    invalid(L::kLrn, I::kFp16, i8, false, 7),
    invalid(L::kLrn, I::kFp16, i16, false, 8),
    valid(L::kLrn, I::kFp16, f16, f16, 9),
    // Precision conversion for pooling layer
    valid(L::kPdp, I::kInt8, i8, i8, 1),
    invalid(L::kPdp, I::kInt8, i16, false, 2),
    invalid(L::kPdp, I::kInt8, f16, false, 3),
    invalid(L::kPdp, I::kInt16, i8, false, 4),
    valid(L::kPdp, I::kInt16, i16, i16, 5),
    invalid(L::kPdp, I::kInt16, f16, false, 6),
    invalid(L::kPdp, I::kFp16, i8, false, 7),
    invalid(L::kPdp, I::kFp16, i16, false, 8),
    valid(L::kPdp, I::kFp16, f16, f16, 9),
};

struct Named {
  const char* name;
  uint8_t value;
};

template <typename E, size_t N>
Result<E> parse_named(std::string_view what, std::string_view name, const Named (&names)[N]) {
  std::string known;
  for (const Named& n : names) {
    if (name == n.name) return static_cast<E>(n.value);
    if (!known.empty()) known += '|';
    known += n.name;
  }
  return Status::invalid("unknown " + std::string(what) + " " + quote_input(name) + " (known: " + known + ")");
}

constexpr Named kLayerNames[] = {{"conv", 0}, {"sdp", 1}, {"lrn", 2}, {"pdp", 3}};
constexpr Named kInputNames[] = {{"image-uint8", 0}, {"image-int16", 0}, {"image-uint16", 0}, {"image-int", 0},
                                 {"image-fp16", 1},  {"int8", 2},        {"int16", 3},        {"fp16", 4}};
constexpr Named kRuleNames[] = {{"ieee", 0}, {"nvdla", 1}, {"nvdla-int", 2}, {"nvdla-float", 3}};
constexpr Named kConvModeNames[] = {{"dc", 0}, {"winograd", 1}, {"image", 2}};
constexpr Named kUnitNames[] = {{"conv", 0}, {"conv-winograd", 1}, {"sdp", 2},
                                {"cdp", 3},  {"pdp", 4},           {"pdp-minmax", 5}};
constexpr Named kTruncateNames[] = {{"nearest-away", 0}, {"nearest-even", 1}, {"toward-zero", 2}};

// "INF converted values" (FP16 Supporting), as fp32 bit patterns:
//   Convolution pipeline +/-65536 (DC/IMG), +/-65504 (Winograd); SDP
//   +/-3.40282e+38 (the largest fp32 normal printed to 6 digits, ERRATA 3);
//   CDP +/-4292870144 = 2^32 - 2^21; PDP +/-4292870144 (AVE), INF (Max/Min).
constexpr uint32_t kInfValueBits[] = {0x47800000u, 0x477fe000u, 0x7f7fffffu,
                                      0x4f7fe000u, 0x4f7fe000u, 0x7f800000u};

bool is_one_of(DType t, std::initializer_list<DType> set) {
  for (DType s : set) {
    if (s == t) return true;
  }
  return false;
}

// Rule nvdla-float: fp16 data, the units that convert ("Precision Conversion") and the
// rows of their tables that are valid.
Status validate_float_path(const ConvertSpec& s, const std::string& rule, const std::string& pair);

}  // namespace

const char* precision_layer_name(PrecisionLayer l) { return kLayerNames[static_cast<size_t>(l) & 3].name; }

const char* precision_table_title(PrecisionLayer l) {
  switch (l) {
    case L::kConv: return "Precision conversion for convolutional layer";
    case L::kSdp: return "Precision conversion for SDP layer (offline mode)";
    case L::kLrn: return "Precision conversion for LRN layer";
    case L::kPdp: return "Precision conversion for pooling layer";
  }
  return "?";
}

const char* precision_input_text(PrecisionInput i) {
  switch (i) {
    case I::kImageInt: return "image input (uint8/int16/uint16)";
    case I::kImageFp16: return "image input (fp16)";
    case I::kInt8: return "int8 feature data";
    case I::kInt16: return "int16 feature data";
    case I::kFp16: return "fp16 feature data";
  }
  return "?";
}

Result<PrecisionLayer> parse_precision_layer(std::string_view name) {
  return parse_named<PrecisionLayer>("layer", name, kLayerNames);
}
Result<PrecisionInput> parse_precision_input(std::string_view name) {
  return parse_named<PrecisionInput>("input format", name, kInputNames);
}

const PrecisionRow* nvdla_precision_rows(size_t* count) {
  *count = std::size(kRows);
  return kRows;
}

Result<const PrecisionRow*> nvdla_precision(PrecisionLayer layer, PrecisionInput input, DType output) {
  for (const PrecisionRow& r : kRows) {
    if (r.layer == layer && r.input == input && r.output == output) return &r;
  }
  std::string why = (input == I::kImageInt || input == I::kImageFp16) && layer != L::kConv
                        ? " (image input mode is a convolution pipeline mode)"
                        : " (output precisions: int8, int16, fp16)";
  return Status::invalid(std::string(precision_table_title(layer)) + " has no row for input " +
                         precision_input_text(input) + " and output precision " + dtype_name(output) + why +
                         " (Precision Conversion)");
}

std::string describe_precision_row(const PrecisionRow& r) {
  std::string s = std::string(precision_table_title(r.layer)) + ", row " + std::to_string(r.line) + ": " +
                  precision_input_text(r.input) + " -> " + dtype_name(r.output) + ": ";
  if (!r.valid) return s + "Invalid case";
  s += std::string("real precision in pipeline ") + dtype_name(r.pipeline);
  if (r.has_weight) s += std::string(", weight precision ") + dtype_name(r.weight);
  return s;
}

const char* convert_rule_name(ConvertRule r) { return kRuleNames[static_cast<size_t>(r) % 4].name; }
const char* nvdla_unit_name(NvdlaUnit u) { return kUnitNames[static_cast<size_t>(u) % 6].name; }
const char* truncate_mode_name(TruncateMode m) { return kTruncateNames[static_cast<size_t>(m) % 3].name; }
Result<ConvertRule> parse_convert_rule(std::string_view name) {
  return parse_named<ConvertRule>("conversion rule", name, kRuleNames);
}
Result<NvdlaUnit> parse_nvdla_unit(std::string_view name) { return parse_named<NvdlaUnit>("unit", name, kUnitNames); }
Result<TruncateMode> parse_truncate_mode(std::string_view name) {
  return parse_named<TruncateMode>("truncate mode", name, kTruncateNames);
}

uint32_t nvdla_inf_value_bits(NvdlaUnit u) { return kInfValueBits[static_cast<size_t>(u) % 6]; }

const NvdlaInternalFormat& nvdla_internal_format(NvdlaUnit u) {
  return u == NvdlaUnit::kSdp ? kNvdlaFp32 : kNvdlaFp17;
}

std::string to_string(const ConvertSpec& s) {
  std::string out = std::string(convert_rule_name(s.rule)) + " " + dtype_name(s.from) + "->" + dtype_name(s.to);
  if (s.rule == ConvertRule::kNvdla) {
    out += std::string(" unit=") + nvdla_unit_name(s.unit);
    if (s.flush_nan) out += " flush-nan";
  }
  if (s.rule == ConvertRule::kNvdlaFloat) out += std::string(" unit=") + nvdla_unit_name(s.unit) + (s.flush_nan ? " flush-nan" : "");
  if (s.rule == ConvertRule::kNvdlaInt || s.rule == ConvertRule::kNvdlaFloat) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(s.scale));
    out += " offset=" + std::to_string(s.offset) + " scale=" + buf + " truncate=" + truncate_mode_name(s.truncate);
  }
  return out;
}

namespace {

// The settings of Equations 1 and 3: the offset register's range, a finite
// scaling factor and a known truncate mode.
Status validate_equation_settings(const ConvertSpec& s, const std::string& rule) {
  if (s.offset < kNvdlaOffsetMin || s.offset > kNvdlaOffsetMax) {
    return Status::invalid(rule + "offset " + std::to_string(s.offset) + " is outside " + std::to_string(kNvdlaOffsetMin) +
                           ".." + std::to_string(kNvdlaOffsetMax));
  }
  if (!std::isfinite(s.scale)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(s.scale));
    return Status::invalid(rule + "scaling factor " + buf + " is not a finite number");
  }
  if (static_cast<size_t>(s.truncate) > 2) {
    return Status::invalid(rule + "unknown truncate mode " + std::to_string(static_cast<int>(s.truncate)));
  }
  return Status();
}

}  // namespace

Status validate_convert(const ConvertSpec& s, size_t src_bytes, size_t dst_bytes) {
  if (static_cast<size_t>(s.rule) > 3) {
    return Status::invalid("unknown conversion rule " + std::to_string(static_cast<int>(s.rule)));
  }
  if (static_cast<size_t>(s.from) > static_cast<size_t>(DType::kFp32) ||
      static_cast<size_t>(s.to) > static_cast<size_t>(DType::kFp32)) {
    return Status::invalid(std::string("rule ") + convert_rule_name(s.rule) +
                           ": packed storage types are not element types of a conversion");
  }
  const std::string rule = std::string("rule ") + convert_rule_name(s.rule) + ": ";
  const std::string pair = std::string(dtype_name(s.from)) + " -> " + dtype_name(s.to);
  switch (s.rule) {
    case ConvertRule::kIeee:
      if (!is_one_of(s.from, {f32, f16, DType::kBf16}) || !is_one_of(s.to, {f32, f16, DType::kBf16})) {
        return Status::invalid(rule + "converts between fp32, fp16 and bf16, not " + pair);
      }
      break;
    case ConvertRule::kNvdla:
      if (!is_one_of(s.from, {f32, f16}) || !is_one_of(s.to, {f32, f16})) {
        return Status::invalid(rule + "converts between fp32 and fp16 (the NVDLA float data path, FP16 Supporting), not " +
                               pair);
      }
      if (static_cast<size_t>(s.unit) > 5) {
        return Status::invalid(rule + "unknown unit " + std::to_string(static_cast<int>(s.unit)));
      }
      break;
    case ConvertRule::kNvdlaInt:
      if (!is_one_of(s.from, {i8, DType::kUInt8, i16, DType::kUInt16}) || !is_one_of(s.to, {i8, i16, f16})) {
        return Status::invalid(rule + "converts an integer pixel or feature value (int8, uint8, int16, uint16) to "
                                      "int8, int16 or fp16 (Equations 1 and 3, Precision Conversion), not " + pair);
      }
      LC_RETURN_IF_ERROR(validate_equation_settings(s, rule));
      break;
    case ConvertRule::kNvdlaFloat:
      LC_RETURN_IF_ERROR(validate_float_path(s, rule, pair));
      break;
  }
  const size_t from_bytes = dtype_bits(s.from) / 8, to_bytes = dtype_bits(s.to) / 8;
  if (src_bytes % from_bytes != 0) {
    return Status::invalid(rule + pair + ": input of " + std::to_string(src_bytes) + " bytes is not a whole number of " +
                           std::to_string(from_bytes) + "-byte " + dtype_name(s.from) + " values");
  }
  const size_t count = src_bytes / from_bytes;
  if (count > SIZE_MAX / to_bytes || dst_bytes != count * to_bytes) {
    return Status::invalid(rule + pair + ": output buffer of " + std::to_string(dst_bytes) + " bytes does not hold " +
                           std::to_string(count) + " " + dtype_name(s.to) + " values");
  }
  return Status();
}


namespace {

Status validate_float_path(const ConvertSpec& s, const std::string& rule, const std::string& pair) {
  if (s.from != f16 || !is_one_of(s.to, {i8, i16, f16})) {
    return Status::invalid(rule + "converts fp16 data through the float data path to int16 or fp16 (Precision "
                                  "Conversion), not " + pair);
  }
  if (static_cast<size_t>(s.unit) > 5) {
    return Status::invalid(rule + "unknown unit " + std::to_string(static_cast<int>(s.unit)));
  }
  const std::string unit = std::string("unit ") + nvdla_unit_name(s.unit);
  switch (s.unit) {
    case NvdlaUnit::kConv: {  // image input mode: the fp16 image row group of the convolution table
      const PrecisionRow* row = *nvdla_precision(L::kConv, I::kImageFp16, s.to);
      if (!row->valid) return Status::invalid(rule + unit + ": " + describe_precision_row(*row));
      break;
    }
    case NvdlaUnit::kSdp: {
      const PrecisionRow* row = *nvdla_precision(L::kSdp, I::kFp16, s.to);
      if (!row->valid) return Status::invalid(rule + unit + ": " + describe_precision_row(*row));
      break;
    }
    case NvdlaUnit::kConvWinograd:
      return Status::invalid(rule + unit + ": \"Direct convolution (DC) mode and Winograd convolution mode do not "
                                        "support precision conversion\" (Precision Conversion)");
    case NvdlaUnit::kCdp:
      return Status::invalid(rule + unit + ": \"LRN layer (implemented in CDP) does not support any precision "
                                        "conversion\" (Precision Conversion)");
    case NvdlaUnit::kPdp:
    case NvdlaUnit::kPdpMinMax:
      return Status::invalid(rule + unit + ": \"Pooling layer (implemented in PDP) does not support any precision "
                                        "conversion\" (Precision Conversion)");
  }
  return validate_equation_settings(s, rule);
}

int precision_bits(DType t) { return static_cast<int>(dtype_bits(t)); }

// The precision an SDP data case is processed at: its proc parameter, or its
// component dtype for proc=same.
Result<DType> data_proc(const Case& c) {
  auto it = c.layout.params.find("proc");
  if (it == c.layout.params.end() || it->second == "same") return c.dtype;
  return parse_dtype(it->second);
}

std::string layer_where(const SdpLayer& l) { return "SDP layer " + to_string(l) + ": "; }

}  // namespace

const char* conv_mode_name(ConvMode m) { return kConvModeNames[static_cast<size_t>(m) % 3].name; }
Result<ConvMode> parse_conv_mode(std::string_view name) {
  return parse_named<ConvMode>("convolution mode", name, kConvModeNames);
}

std::string to_string(const SdpLayer& l) {
  std::string s = l.on_flying ? std::string("on-flying after ") + conv_mode_name(l.conv_mode) + " conv " +
                                    precision_input_text(l.conv_input) + " -> " + dtype_name(l.conv_output) + ", "
                              : std::string("offline ");
  return s + precision_input_text(l.input) + " -> " + dtype_name(l.output);
}

std::vector<DType> sdp_processing_precisions(const SdpLayer& l) {
  const DType in = l.input == I::kInt8 ? i8 : l.input == I::kInt16 ? i16 : f16;
  if (in == l.output) return {in};
  // "when the layer is running from INT16 to INT8 or INT8 to INT16 precision conversion,
  // batch normalization data need set to processing precision which is always INT8"
  // (Batch Normalization Data Format; the same words in Element-Wise Data Format).
  if ((in == i16 && l.output == i8) || (in == i8 && l.output == i16)) return {i8};
  return {in, l.output};  // int16 <-> fp16: not given (ERRATA NVDLA precision 14)
}

Status check_sdp_layer(const SdpLayer& l) {
  const std::string where = layer_where(l);
  if (l.input == I::kImageInt || l.input == I::kImageFp16) {
    return Status::invalid(where + "the SDP reads feature data, not " + precision_input_text(l.input) +
                           " (image input mode is a convolution pipeline mode, Precision Conversion)")
        .with_rule("nvdla.precision/sdp-feature-input");
  }
  if (!l.on_flying) {
    auto row = nvdla_precision(L::kSdp, l.input, l.output);
    if (!row.ok()) return Status::invalid(where + row.status().message()).with_rule("nvdla.precision/sdp-offline-table");
    if (!(*row)->valid) {
      return Status::invalid(where + describe_precision_row(**row)).with_rule("nvdla.precision/sdp-offline-table");
    }
  } else {
    const bool image_input = l.conv_input == I::kImageInt || l.conv_input == I::kImageFp16;
    if (image_input != (l.conv_mode == ConvMode::kImage)) {
      return Status::invalid(where + "a " + conv_mode_name(l.conv_mode) + " convolution takes " +
                             (image_input ? "feature data, not " : "an image, not ") +
                             precision_input_text(l.conv_input) + " (Precision Conversion)")
          .with_rule("nvdla.precision/conv-mode-input");
    }
    auto row = nvdla_precision(L::kConv, l.conv_input, l.conv_output);
    if (!row.ok()) return Status::invalid(where + row.status().message()).with_rule("nvdla.precision/conv-table");
    if (!(*row)->valid) return Status::invalid(where + describe_precision_row(**row)).with_rule("nvdla.precision/conv-table");
    // "The CDMA and SDP convert precision individually. When working in on-flying mode, SDP
    // takes precision of convolution pipeline output as input precision"
    const DType sdp_in = l.input == I::kInt8 ? i8 : l.input == I::kInt16 ? i16 : f16;
    if (sdp_in != l.conv_output) {
      return Status::invalid(where + "the SDP's input precision " + dtype_name(sdp_in) +
                             " is not the convolution pipeline's output precision " + dtype_name(l.conv_output) +
                             " (\"The CDMA and SDP convert precision individually\", Precision Conversion)")
          .with_rule("nvdla.precision/convert-individually");
    }
    // "... then do another precision conversion, but the input precision and output
    // precision should have the same bit-depth."
    if (!is_one_of(l.output, {i8, i16, f16}) || precision_bits(sdp_in) != precision_bits(l.output)) {
      return Status::invalid(where + "on-flying, the SDP converts " + dtype_name(sdp_in) + " (" +
                             std::to_string(precision_bits(sdp_in)) + " bits) to " + dtype_name(l.output) + " (" +
                             std::to_string(precision_bits(l.output)) +
                             " bits); input and output precision should have the same bit-depth (Precision Conversion)")
          .with_rule("nvdla.precision/on-flying-same-bit-depth");
    }
    // "Batch-normalization and element-wise layer (implemented in SDP) support free
    // conversion of int16 <-> fp16 and int8 <-> int16 for DC mode only."
    if (sdp_in != l.output && l.conv_mode != ConvMode::kDirect) {
      return Status::invalid(where + "the SDP converts " + dtype_name(sdp_in) + " to " + dtype_name(l.output) +
                             " behind a " + conv_mode_name(l.conv_mode) +
                             " convolution; the SDP converts \"for DC mode only\" (Precision Conversion)")
          .with_rule("nvdla.precision/sdp-convert-dc-only");
    }
  }
  const std::vector<DType> allowed = sdp_processing_precisions(l);
  for (size_t i = 0; i < l.data.size(); ++i) {
    const Case& c = l.data[i];
    const std::string which = "SDP data " + std::to_string(i) + " (" + to_string(c) + ")";
    if (c.layout.name != "nvdla.sdp.channel" && c.layout.name != "nvdla.sdp.element") {
      return Status::invalid(where + which + " is not an SDP data layout (nvdla.sdp.channel, nvdla.sdp.element)")
          .with_rule("nvdla.precision/sdp-data-layout");
    }
    auto proc = data_proc(c);
    if (!proc.ok()) return Status::invalid(where + which + ": " + proc.status().message()).with_rule("nvdla.precision/sdp-data-layout");
    bool ok = false;
    std::string names;
    for (DType a : allowed) {
      ok = ok || a == *proc;
      names += (names.empty() ? "" : " or ") + std::string(dtype_name(a));
    }
    if (!ok) {
      return Status::invalid(where + which + " is processed at " + dtype_name(*proc) + "; the layer's processing "
                             "precision is " + names + " (\"INT8 and INT16 here means the processing precision\", Batch "
                             "Normalization Data Format, Element-Wise Data Format)")
          .with_rule("nvdla.precision/sdp-data-processing-precision");
    }
  }
  return Status();
}

Result<SdpLayer> parse_sdp_layer(std::string_view text) {
  std::vector<std::string> t;
  {
    std::string w;
    for (char ch : text) {
      if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
        if (!w.empty()) t.push_back(w);
        w.clear();
      } else {
        w += ch;
      }
    }
    if (!w.empty()) t.push_back(w);
  }
  const char* form = "expected 'offline|on-flying INPUT OUTPUT [conv=MODE/INPUT/OUTPUT] [data=LAYOUT@DTYPE@SHAPE]...'";
  if (t.size() < 3 || (t[0] != "offline" && t[0] != "on-flying")) return Status::invalid(form);
  SdpLayer l;
  l.on_flying = t[0] == "on-flying";
  LC_ASSIGN_OR_RETURN(l.input, parse_precision_input(t[1]));
  LC_ASSIGN_OR_RETURN(l.output, parse_dtype(t[2]));
  for (size_t i = 3; i < t.size(); ++i) {
    const std::string& w = t[i];
    if (w.rfind("conv=", 0) == 0) {
      const size_t a = w.find('/', 5), b = a == std::string::npos ? a : w.find('/', a + 1);
      if (b == std::string::npos) return Status::invalid("expected conv=MODE/INPUT/OUTPUT, got " + quote_input(w));
      LC_ASSIGN_OR_RETURN(l.conv_mode, parse_conv_mode(w.substr(5, a - 5)));
      LC_ASSIGN_OR_RETURN(l.conv_input, parse_precision_input(w.substr(a + 1, b - a - 1)));
      LC_ASSIGN_OR_RETURN(l.conv_output, parse_dtype(w.substr(b + 1)));
    } else if (w.rfind("data=", 0) == 0) {
      const size_t a = w.find('@', 5), b = a == std::string::npos ? a : w.find('@', a + 1);
      if (b == std::string::npos) return Status::invalid("expected data=LAYOUT@DTYPE@SHAPE, got " + quote_input(w));
      LC_ASSIGN_OR_RETURN(Case c, parse_case(w.substr(5, a - 5), w.substr(a + 1, b - a - 1), w.substr(b + 1)));
      l.data.push_back(std::move(c));
    } else {
      return Status::invalid("unknown word " + quote_input(w) + " (conv=..., data=...)");
    }
  }
  return l;
}

}  // namespace layoutcheck
