// The CLI's part of the entry points besides layouts (tools/extension_cli.cc):
// `check --layout 'convert.*' | nvdla.sparse | nvdla.winograd.phase1`, the
// plugin's converter for `convert --impl X.so` and for `oracle --impl X.so`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "layoutcheck/impl.h"
#include "layoutcheck/convert_check.h"
#include "layoutcheck/oracle.h"
#include "layoutcheck/precision.h"

namespace layoutcheck::cli {

struct ExtensionCheckArgs {
  std::string glob;
  uint64_t seed = 1;
  uint64_t cases = 0;
  double seconds = 20;
  bool fail_fast = false;
  bool json = false;
};

// True when `glob` names none of the registered layouts but one of the entries
// (convert.ieee, convert.nvdla, convert.nvdla-int, convert.nvdla-float, nvdla.sparse,
// nvdla.winograd.phase1).
bool is_extension_glob(const std::string& glob);

// Checks those entries of `impl` (a plugin, or a built-in implementation)
// against the reference; prints the tallies and failures. Exit status: 0 all
// claimed passed (or nothing claimed), 1 a failure.
int check_extensions(const Impl& impl, const ExtensionCheckArgs& args);

// The converter of `impl`: the built-in ones, a plugin's convert member, or
// null when it has none.
const Converter* converter_of(const Impl& impl);

// The entries of the reference (reference = true) or the optimized implementation.
Extensions builtin_extensions(bool reference);

// For `oracle --impl`: whether `impl` claims every conversion of the case (a
// case with no conversion line is claimed by the built-in implementations only).
bool claims_precision_case(const Impl& impl, const PrecisionOracleCase& pc);

// For `convert --impl X.so`: the plugin's converter (loaded isolated); an
// error names the plugin and the pair when it does not claim the conversion.
Result<const Converter*> plugin_converter(const std::string& path, const ConvertSpec& spec);

}  // namespace layoutcheck::cli
