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
//
// Element sizes come from the dtype table (layoutcheck/dtype.h). Values are
// little-endian in the buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "layoutcheck/dtype.h"
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

// ------------------------------------------------------------- conversions

enum class ConvertRule : uint8_t { kIeee, kNvdla, kNvdlaInt };
// The sub-modules of the "INF converted values" table. kPdp is PDP average
// pooling; kPdpMinMax is PDP max/min pooling, which keeps INF internally.
enum class NvdlaUnit : uint8_t { kConv, kConvWinograd, kSdp, kCdp, kPdp, kPdpMinMax };
// How truncate2int8/truncate2int16 turn the exact product into an integer
// before saturating (oracles/ERRATA.md, "NVDLA precision").
enum class TruncateMode : uint8_t { kNearestAway, kNearestEven, kTowardZero };

struct ConvertSpec {
  ConvertRule rule = ConvertRule::kIeee;
  DType from = DType::kFp32;
  DType to = DType::kFp16;
  NvdlaUnit unit = NvdlaUnit::kConv;     // nvdla: whose INF value applies
  bool flush_nan = false;                // nvdla: the NaN-to-zero register
  int32_t offset = 0;                    // nvdla-int: offset register
  float scale = 1.0f;                    // nvdla-int: scaling factor SF
  TruncateMode truncate = TruncateMode::kNearestAway;  // nvdla-int
};

// The NaN counting registers: NaNs among the inputs and among the outputs.
struct NanCounts {
  uint64_t input = 0;
  uint64_t output = 0;
};

const char* convert_rule_name(ConvertRule r);   // "ieee", "nvdla", "nvdla-int"
const char* nvdla_unit_name(NvdlaUnit u);       // "conv", "conv-winograd", "sdp", "cdp", "pdp", "pdp-minmax"
const char* truncate_mode_name(TruncateMode m); // "nearest-away", "nearest-even", "toward-zero"
Result<ConvertRule> parse_convert_rule(std::string_view name);
Result<NvdlaUnit> parse_nvdla_unit(std::string_view name);
Result<TruncateMode> parse_truncate_mode(std::string_view name);

// The "INF converted values" table: the value (as fp32 bits, positive sign) a
// unit replaces +INF with; kPdpMinMax keeps INF (0x7f800000).
uint32_t nvdla_inf_value_bits(NvdlaUnit u);
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
