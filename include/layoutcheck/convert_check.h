// layoutcheck/convert_check.h — checking the entry points besides layouts:
// precision conversions, NVDLA sparse compression and Winograd phase 1
// (the ABI 1.1 members of c_api.h), against the reference.
//
//   Extensions mine = plugin_extensions(**plugin);        // or builtin ones
//   auto tallies = run_extension_checks("convert.*", reference_extensions, mine, options);
//
// Names (the capability names of c_api.h, matched by `check --layout GLOB`):
//   convert.ieee  convert.nvdla  convert.nvdla-int  nvdla.sparse  nvdla.winograd.phase1
//
// Conversions: each claimed from>to pair under every unit and option the rule
// has, on every 8- and 16-bit input pattern, and for fp32 every boundary class
// (zeros, denormals, the largest finite values, the rounding ties of each
// exponent for fp16 and bf16, INF, NaNs with various payloads) plus random
// patterns. Outputs are compared bit for bit, except where the document leaves
// them open: a NaN the nvdla rule produces may have any mantissa, its sign kept ("the
// mantissa propagation behavior is undefined", FP16 Supporting; ERRATA 4), and
// so may a NaN of the fp16 Winograd transform.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "layoutcheck/impl.h"
#include "layoutcheck/nvdla.h"
#include "layoutcheck/precision.h"

namespace layoutcheck {

class PluginImpl;

// The entry names, in this order.
const std::vector<std::string>& extension_entry_names();
// True when glob matches one of them.
bool glob_matches_extension(const std::string& glob);

// Every (from, to) pair validate_convert accepts for a rule.
std::vector<std::pair<DType, DType>> convert_pairs(ConvertRule rule);
// The pair as a capability spells it: "fp32>fp16".
std::string convert_pair_name(DType from, DType to);
// The spec under every unit and option of the rule: nvdla every unit with and
// without flush_nan; nvdla-int every truncate mode with a set of (offset,
// scale) values that reach ties, saturation and negative scales.
std::vector<ConvertSpec> convert_variants(ConvertRule rule, DType from, DType to);
// The fp32 boundary classes, as bit patterns.
std::vector<uint32_t> fp32_boundary_inputs();
// Inputs of `from` as little-endian bytes: every pattern of an 8- or 16-bit
// type; for fp32 the boundary classes and then `random` patterns from `seed`.
std::vector<uint8_t> convert_inputs(DType from, uint64_t random, uint64_t seed);
// Whether `actual` is what the document allows where the reference gives `expected`.
bool convert_output_accepted(const ConvertSpec& spec, uint64_t expected, uint64_t actual);
// Whether the document leaves the output of `input` free (any value passes):
// an nvdla-float NaN converted to int16 without flush_nan.
bool convert_output_free(const ConvertSpec& spec, uint64_t input);
// "convert.nvdla fp32>fp16 unit=sdp flush-nan=1"
std::string convert_variant_name(const ConvertSpec& spec);
// A shell line that converts one input value with `impl` and prints the output bytes.
std::string convert_repro(const ConvertSpec& spec, uint64_t input_bits, const std::string& impl);

// The non-layout entry points of one implementation. A null function is absent.
struct Extensions {
  std::string name;  // --impl as a repro line names it
  const Converter* converter = nullptr;
  std::function<bool(ConvertRule, DType, DType)> claims_convert;
  std::function<Result<nvdla::CompressedWeights>(const Case&, const void*, size_t, size_t wgs_size,
                                                 size_t wmb_size, size_t data_capacity)>
      compress;
  std::function<Status(const Case&, const nvdla::CompressedWeights&, void*, size_t)> decompress;
  std::function<bool(DType)> claims_sparse;
  std::function<Status(DType, const Shape&, int64_t, const void*, size_t, void*, size_t)> extend;
  std::function<Status(DType, const Shape&, const void*, size_t, void*, size_t)> transform;
  std::function<bool(DType)> claims_winograd;
};

// A plugin's: the members it has, claimed by its capabilities.
Extensions plugin_extensions(const PluginImpl& plugin);

// A Converter over a plugin's convert member; the NaN counts are counted from
// the values (the ABI has no NaN registers).
class PluginConverter : public Converter {
 public:
  explicit PluginConverter(const PluginImpl& p) : plugin_(p) {}
  std::string name() const override;
  Status convert(const ConvertSpec& spec, const void* src, size_t src_bytes, void* dst, size_t dst_bytes,
                 NanCounts* nan) const override;

 private:
  const PluginImpl& plugin_;
};

struct ExtensionCheckOptions {
  uint64_t seed = 1;
  uint64_t cases = 0;    // > 0: random fp32 values per variant and sparse/Winograd cases per entry
  double seconds = 20;   // otherwise: the time for all entries together
  size_t max_failures = 5;  // failure messages kept per entry
  bool fail_fast = false;
  std::function<void(const std::string&)> progress;
};

struct ExtensionTally {
  std::string entry;  // "convert.nvdla", "nvdla.sparse", ...
  bool claimed = false;
  uint64_t passed = 0, failed = 0;  // variants (conversions) or cases
  uint64_t values = 0;              // values compared (conversions)
  std::vector<std::string> failures;
};

// Checks every entry whose name matches glob and `actual` claims against
// `expected` (the reference's functions). `layouts` packs the sparse cases.
std::vector<ExtensionTally> run_extension_checks(const std::string& glob, const Extensions& expected,
                                                 const Extensions& actual, const Impl& layouts,
                                                 const ExtensionCheckOptions& options);

}  // namespace layoutcheck
