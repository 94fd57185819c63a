// layoutcheck/precision.h — the NVDLA precision rules: which conversions a layer
// accepts, and what a conversion does to every value.
//
// Two things live here (nvdla-in-memory-data-formats.txt, "Precision Type",
// "Precision Conversion", "FP16 Supporting"):
//
// 1. The four conversion-validity tables (convolution, SDP offline, LRN,
//    pooling) as data, with a query:
//
//      auto row = nvdla_precision(PrecisionLayer::kConv, PrecisionInput::kImageFp16, DType::kInt8);
//      row.ok() && !row.value()->valid;          // "Invalid case"
//      describe_precision_row(**row);            // names the table and the row
//
// 2. Value conversions as named rules, with a reference and an optimized
//    implementation of the same interface:
//
//      ConvertSpec s;  s.rule = ConvertRule::kNvdla;  s.from = DType::kFp32;  s.to = DType::kFp16;
//      float in[2] = {1e6f, 1.0f};  uint16_t out[2];  NanCounts nan;
//      precision_reference().convert(s, in, sizeof in, out, sizeof out, &nan);
//      // out = {0x7bff (65504, clipped), 0x3c00}
//
//    ieee       IEEE 754 conversion between fp32, fp16 and bf16, round to nearest even.
//    nvdla      fp32/fp16 -> fp32/fp16 as NVDLA does it: round to nearest except on
//               overflow (clip to the largest normal value), INF inputs become the
//               unit's documented value and then saturate, NaN propagates unless
//               flush_nan, denormals as IEEE.
//    nvdla-int  Equations 1 and 3: d_out = truncate2intN((d_in - offset) * SF) or
//               int2fp((d_in - offset) * SF); the rounding of truncate2intN is
//               selectable (TruncateMode), saturation is the document's.
//    nvdla-float fp16 data through the float data path with offset and SF:
//               unit conv is Equation 1 for floating-point pixels (T_*_F -> fp16) in
//               the convolution pipeline's fp17; unit sdp is the SDP table's fp16 ->
//               int16 and fp16 -> fp16 in its real precision fp32. Each operation of
//               (d - offset) * SF rounds to nearest in the internal format, which has
//               no denormals; then fp16 (with denormals, clipped) or truncate2int16.
//
// Element sizes come from the dtype table (layoutcheck/dtype.h). Values are
// little-endian in the buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "layoutcheck/dtype.h"
#include "layoutcheck/layout.h"
#include "layoutcheck/status.h"

namespace layoutcheck {

// ---------------------------------------------------------------- the tables

enum class PrecisionLayer : uint8_t { kConv, kSdp, kLrn, kPdp };

// "Configured input format" of the tables. Image input with an integer pixel
// (uint8/int16/uint16) is one row group of the convolution table.
enum class PrecisionInput : uint8_t { kImageInt, kImageFp16, kInt8, kInt16, kFp16 };

struct PrecisionRow {
  PrecisionLayer layer;
  PrecisionInput input;
  DType output;        // configured output precision
  bool valid;          // false: "Invalid case"
  DType pipeline;      // real precision in pipeline (when valid)
  bool has_weight;     // only the convolution table has a weight column
  DType weight;        // corresponding weight precision (when valid and has_weight)
  int line;            // 1-based row of its table, in the document's order
};

const char* precision_layer_name(PrecisionLayer l);   // "conv", "sdp", "lrn", "pdp"
const char* precision_table_title(PrecisionLayer l);  // the document's table caption
const char* precision_input_text(PrecisionInput i);   // "image input (uint8/int16/uint16)", ...
Result<PrecisionLayer> parse_precision_layer(std::string_view name);
// image-uint8 | image-int16 | image-uint16 | image-int | image-fp16 | int8 | int16 | fp16
Result<PrecisionInput> parse_precision_input(std::string_view name);

// Every row of the four tables, in the document's order.
const PrecisionRow* nvdla_precision_rows(size_t* count);
// The row for (layer, input, output); invalid Status when the table has no such
// row (e.g. image input to the SDP, or an fp32 output precision).
Result<const PrecisionRow*> nvdla_precision(PrecisionLayer layer, PrecisionInput input, DType output);
// "Precision conversion for convolutional layer, row 4: image input (fp16) -> int8: Invalid case"
std::string describe_precision_row(const PrecisionRow& row);

// ------------------------------------------------------------- SDP layers
//
// An SDP layer's precisions and the SDP data it reads, checked against
// "Precision Conversion" and the processing-precision notes of "Batch
// Normalization Data Format" and "Element-Wise Data Format":
//
//   SdpLayer l;  l.input = PrecisionInput::kInt16;  l.output = DType::kInt8;
//   l.data = {*parse_case("nvdla.sdp.channel(use=bn,proc=int16)", "int16", "8,2")};
//   check_sdp_layer(l).rule() == "nvdla.precision/sdp-data-processing-precision"
//
// Offline, the SDP reads feature data from memory and (input, output) is a row
// of the SDP table. On-flying, it takes the convolution pipeline's output: the
// convolution's own conversion is a row of the convolution table ("The CDMA and
// SDP convert precision individually"), the SDP's input precision is that
// output, and the SDP keeps the bit depth.

enum class ConvMode : uint8_t { kDirect, kWinograd, kImage };
const char* conv_mode_name(ConvMode m);  // "dc", "winograd", "image"
Result<ConvMode> parse_conv_mode(std::string_view name);

struct SdpLayer {
  bool on_flying = false;
  PrecisionInput input = PrecisionInput::kInt8;  // the SDP's input precision (feature data)
  DType output = DType::kInt8;                   // the SDP's configured output precision
  // On-flying: the convolution layer in front of the SDP.
  ConvMode conv_mode = ConvMode::kDirect;
  PrecisionInput conv_input = PrecisionInput::kInt8;
  DType conv_output = DType::kInt8;
  // The SDP data the layer reads: nvdla.sdp.channel / nvdla.sdp.element cases,
  // whose proc parameter (PROC_PRECISION; "same": the component dtype) is checked.
  std::vector<Case> data;
};

// The PROC_PRECISION the layer's SDP data may take: the layer's precision when
// it does not convert, int8 when it converts between int16 and int8 ("need set
// to processing precision which is always INT8"), int16 or fp16 for a
// conversion between them (the document leaves it open, ERRATA NVDLA precision 14).
std::vector<DType> sdp_processing_precisions(const SdpLayer& layer);
// OK, or the first broken rule (nvdla.precision/...) naming the values.
Status check_sdp_layer(const SdpLayer& layer);
// "offline int16 feature data -> int8" / "on-flying after dc conv int8 feature data -> int8: int8 -> int8"
std::string to_string(const SdpLayer& layer);
// The layer lines of the precision oracles, without "layer" and "-> RESULT":
// "offline|on-flying INPUT OUTPUT [conv=MODE/INPUT/OUTPUT] [data=LAYOUT@DTYPE@SHAPE]..."
//   parse_sdp_layer("on-flying int16 fp16 conv=dc/int16/int16")
Result<SdpLayer> parse_sdp_layer(std::string_view text);

// The optimized library's own encoding of the four tables and of
// check_sdp_layer (optimized/precision_layer.cc), derived from the prose rules
// of "Precision Conversion" rather than from the printed rows: a second version
// to check the reference's tables and layer rules against, as a user's compiler
// would encode them.
struct PrecisionSupport {
  bool row = false;           // the table has a row for (input, output)
  bool valid = false;         // ... and it is not "Invalid case"
  DType pipeline = DType::kInt8;  // real precision in pipeline (when valid)
  bool has_weight = false;    // the convolution table's weight column
  DType weight = DType::kInt8;    // corresponding weight precision (when valid and has_weight)
};
PrecisionSupport precision_supported_optimized(PrecisionLayer layer, PrecisionInput input, DType output);
// check_sdp_layer's verdict: "" when the layer is accepted, else the id of the
// first rule it breaks, in check_sdp_layer's order.
std::string sdp_layer_rule_optimized(const SdpLayer& layer);

// ------------------------------------------------------------- conversions

enum class ConvertRule : uint8_t { kIeee, kNvdla, kNvdlaInt, kNvdlaFloat };
// The sub-modules of the "INF converted values" table. kPdp is PDP average
// pooling; kPdpMinMax is PDP max/min pooling, which keeps INF internally.
enum class NvdlaUnit : uint8_t { kConv, kConvWinograd, kSdp, kCdp, kPdp, kPdpMinMax };
// How truncate2int8/truncate2int16 turn the product into an integer before
// saturating (oracles/ERRATA.md, "NVDLA precision" 2 and 12). The default is the
// document's one rounding rule, "Rounding to Nearest (or RN)": ties to even, as
// the float data path and the Winograd weight conversion round.
enum class TruncateMode : uint8_t { kNearestAway, kNearestEven, kTowardZero };
constexpr TruncateMode kDefaultTruncate = TruncateMode::kNearestEven;

struct ConvertSpec {
  ConvertRule rule = ConvertRule::kIeee;
  DType from = DType::kFp32;
  DType to = DType::kFp16;
  NvdlaUnit unit = NvdlaUnit::kConv;     // nvdla, nvdla-float: whose INF value (and data path) applies
  bool flush_nan = false;                // nvdla, nvdla-float: the NaN-to-zero register
  int32_t offset = 0;                    // nvdla-int, nvdla-float: offset register
  float scale = 1.0f;                    // nvdla-int, nvdla-float: scaling factor SF
  TruncateMode truncate = kDefaultTruncate;  // nvdla-int, nvdla-float (int16 output)
};

// The NaN counting registers: NaNs among the inputs and among the outputs.
struct NanCounts {
  uint64_t input = 0;
  uint64_t output = 0;
};

const char* convert_rule_name(ConvertRule r);   // "ieee", "nvdla", "nvdla-int", "nvdla-float"
const char* nvdla_unit_name(NvdlaUnit u);       // "conv", "conv-winograd", "sdp", "cdp", "pdp", "pdp-minmax"
const char* truncate_mode_name(TruncateMode m); // "nearest-away", "nearest-even", "toward-zero"
Result<ConvertRule> parse_convert_rule(std::string_view name);
Result<NvdlaUnit> parse_nvdla_unit(std::string_view name);
Result<TruncateMode> parse_truncate_mode(std::string_view name);

// The "INF converted values" table: the value (as fp32 bits, positive sign) a
// unit replaces +INF with; kPdpMinMax keeps INF (0x7f800000).
uint32_t nvdla_inf_value_bits(NvdlaUnit u);
// The internal float formats of "FP16 Supporting" ("NVDLA internal float point
// data-path often provide fp17/fp32 value ... doesn't support denormalized value
// during calculation"): fp17 has 1 sign, 6 exponent (bias 31) and 10 fraction
// bits, so its largest value is (2 - 2^-10) * 2^31 = 4292870144, the CDP and PDP
// INF value, and its smallest normal 2^-30 lies below every fp16 denormal.
struct NvdlaInternalFormat {
  const char* name;   // "fp17", "fp32"
  int precision;      // significand bits, hidden bit included
  int emin, emax;     // normal exponents; no denormals
};
constexpr NvdlaInternalFormat kNvdlaFp17{"fp17", 11, -30, 31};
constexpr NvdlaInternalFormat kNvdlaFp32{"fp32", 24, -126, 127};
// The format a unit computes in: conv, conv-winograd (the convolution pipeline),
// cdp, pdp, pdp-minmax: fp17; sdp: fp32 (the SDP table's "real precision in
// pipeline fp32").
const NvdlaInternalFormat& nvdla_internal_format(NvdlaUnit u);

// Offset range the nvdla-int rule accepts: the difference d - offset stays below
// 2^17 in magnitude, so (d - offset) * SF is exact in a double.
constexpr int32_t kNvdlaOffsetMin = -65536;
constexpr int32_t kNvdlaOffsetMax = 65535;

// Checks the spec (rule, dtype pair, offset, scale) and the buffer sizes:
// src_bytes a whole number of `from` elements and dst_bytes the same count of
// `to` elements. The message names the rule and the values.
Status validate_convert(const ConvertSpec& spec, size_t src_bytes, size_t dst_bytes);
// "nvdla fp32->fp16 unit=conv" etc.: the spec as CLI-like text for messages.
std::string to_string(const ConvertSpec& spec);

class Converter {
 public:
  virtual ~Converter() = default;
  virtual std::string name() const = 0;
  // Converts src (little-endian `from` values) to dst; counts NaNs when `nan` is
  // not null. Returns validate_convert's status for bad input.
  virtual Status convert(const ConvertSpec& spec, const void* src, size_t src_bytes, void* dst,
                         size_t dst_bytes, NanCounts* nan) const = 0;
};

// The document's rules written out value by value (reference library).
const Converter& precision_reference();

// Vector paths of the optimized library; kAuto picks the best the CPU has.
enum class SimdPath : uint8_t { kAuto, kPortable, kF16cAvx2, kAvx512 };
const char* simd_path_name(SimdPath p);
bool simd_path_available(SimdPath p);
// The optimized converter on one path (kAuto: chosen at run time with
// __builtin_cpu_supports). An unavailable path falls back to kPortable.
const Converter& precision_optimized(SimdPath path = SimdPath::kAuto);

}  // namespace layoutcheck
