#include "tools/extension_cli.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

#include "layoutcheck/checker.h"
#include "layoutcheck/convert_check.h"
#include "layoutcheck/layout.h"
#include "layoutcheck/nvdla.h"
#include "layoutcheck/plugin.h"

namespace layoutcheck::cli {

Extensions builtin_extensions(bool reference) {
  Extensions e;
  e.name = reference ? "reference" : "optimized";
  e.converter = reference ? &precision_reference() : &precision_optimized();
  e.claims_convert = [](ConvertRule, DType, DType) { return true; };
  e.compress = [reference](const Case& c, const void* in, size_t n, size_t, size_t, size_t) {
    return reference ? nvdla::compress_reference(c, in, n) : nvdla::compress(c, in, n);
  };
  e.decompress = [reference](const Case& c, const nvdla::CompressedWeights& z, void* out, size_t n) {
    return reference ? nvdla::decompress_reference(c, z, out, n) : nvdla::decompress(c, z, out, n);
  };
  e.claims_sparse = [](DType) { return true; };
  e.extend = [reference](DType t, const Shape& s, int64_t stride, const void* in, size_t n, void* out, size_t m) -> Status {
    auto r = reference ? nvdla::winograd_extend_reference(t, s, stride, in, n) : nvdla::winograd_extend(t, s, stride, in, n);
    if (!r.ok()) return r.status();
    if (r->size() != m) return Status::internal("extended kernels are " + std::to_string(r->size()) + " bytes, not " + std::to_string(m));
    std::copy(r->begin(), r->end(), static_cast<uint8_t*>(out));
    return Status();
  };
  e.transform = [reference](DType t, const Shape& s, const void* in, size_t n, void* out, size_t m) -> Status {
    auto r = reference ? nvdla::winograd_transform_reference(t, s, in, n) : nvdla::winograd_transform(t, s, in, n);
    if (!r.ok()) return r.status();
    if (r->size() != m) return Status::internal("transformed kernels are " + std::to_string(r->size()) + " bytes, not " + std::to_string(m));
    std::copy(r->begin(), r->end(), static_cast<uint8_t*>(out));
    return Status();
  };
  e.claims_winograd = [](DType) { return true; };
  return e;
}

namespace {

std::string json_text(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += c;
  }
  return out + "\"";
}

}  // namespace

bool is_extension_glob(const std::string& glob) {
  if (!glob_matches_extension(glob)) return false;
  for (const auto& s : layout_specs()) {
    if (glob_match(glob, s.name)) return false;
  }
  return true;
}

int check_extensions(const Impl& impl, const ExtensionCheckArgs& args) {
  const auto* plugin = dynamic_cast<const PluginImpl*>(&impl);
  const Extensions actual = plugin ? plugin_extensions(*plugin) : builtin_extensions(&impl == &reference_impl());
  const Extensions expected = builtin_extensions(true);
  ExtensionCheckOptions o;
  o.seed = args.seed;
  o.cases = args.cases;
  o.seconds = args.seconds;
  o.fail_fast = args.fail_fast;
  o.progress = [](const std::string& line) { std::cerr << line << std::endl; };
  std::cerr << "layoutcheck check: " << impl.name() << " vs reference, entries '" << args.glob << "', ";
  if (args.cases) std::cerr << args.cases << " random values or cases per entry";
  else std::cerr << args.seconds << " s";
  std::cerr << ", seed " << args.seed << std::endl;
  const auto tallies = run_extension_checks(args.glob, expected, actual, reference_impl(), o);
  uint64_t passed = 0, failed = 0, skipped = 0;
  auto status = [](const ExtensionTally& t) {
    return !t.claimed ? "SKIPPED" : t.failed ? "FAILED" : "PASSED";
  };
  if (args.json) {
    std::cout << "{\"impl\": " << json_text(impl.name()) << ", \"seed\": " << args.seed << ", \"entries\": [";
    for (size_t i = 0; i < tallies.size(); ++i) {
      const auto& t = tallies[i];
      std::string f;
      for (const auto& m : t.failures) f += (f.empty() ? "" : ", ") + json_text(m);
      std::cout << (i ? "," : "") << "\n  {\"entry\": " << json_text(t.entry) << ", \"status\": " << json_text(status(t))
                << ", \"passed\": " << t.passed << ", \"failed\": " << t.failed << ", \"values\": " << t.values
                << ", \"failures\": [" << f << "]}";
    }
    std::cout << "\n]}\n";
  } else {
    std::printf("%-24s %8s %8s %12s  %s\n", "entry", "passed", "failed", "values", "status");
    for (const auto& t : tallies) {
      std::printf("%-24s %8llu %8llu %12llu  %s%s\n", t.entry.c_str(), static_cast<unsigned long long>(t.passed),
                  static_cast<unsigned long long>(t.failed), static_cast<unsigned long long>(t.values), status(t),
                  t.claimed ? "" : " (not claimed)");
    }
    for (const auto& t : tallies) {
      for (const auto& m : t.failures) std::printf("\n%s", m.c_str());
      if (t.failed > t.failures.size()) {
        std::printf("  ... and %llu more failing variants or cases of %s\n",
                    static_cast<unsigned long long>(t.failed - t.failures.size()), t.entry.c_str());
      }
    }
  }
  for (const auto& t : tallies) {
    passed += t.passed;
    failed += t.failed;
    skipped += t.claimed ? 0 : 1;
  }
  if (!args.json) {
    std::printf("\ncheck: %llu passed, %llu failed, %llu skipped\n", static_cast<unsigned long long>(passed),
                static_cast<unsigned long long>(failed), static_cast<unsigned long long>(skipped));
  }
  return failed ? 1 : 0;
}

const Converter* converter_of(const Impl& impl) {
  if (&impl == &reference_impl()) return &precision_reference();
  if (&impl == &optimized_impl()) return &precision_optimized();
  const auto* plugin = dynamic_cast<const PluginImpl*>(&impl);
  if (!plugin || !plugin->has_member(PluginImpl::kConvertMember)) return nullptr;
  static std::map<const PluginImpl*, std::unique_ptr<PluginConverter>> converters;
  auto& slot = converters[plugin];
  if (!slot) slot = std::make_unique<PluginConverter>(*plugin);
  return slot.get();
}

bool claims_precision_case(const Impl& impl, const PrecisionOracleCase& pc) {
  const auto* plugin = dynamic_cast<const PluginImpl*>(&impl);
  if (!plugin) return converter_of(impl) != nullptr;
  if (!converter_of(impl)) return false;
  bool any = false;
  for (const auto& [line, text] : pc.checks) {
    std::istringstream words(text);
    std::string verb, rule, from, to;
    words >> verb >> rule >> from >> to;
    if (verb != "convert") continue;
    any = true;
    if (!plugin->claims_entry("convert." + rule, from + ">" + to)) return false;
  }
  return any;
}

Result<const Converter*> plugin_converter(const std::string& path, const ConvertSpec& spec) {
  static std::map<std::string, std::unique_ptr<IsolatedImpl>> plugins;
  auto& slot = plugins[path];
  if (!slot) {
    SandboxLimits limits;
    if (const char* t = std::getenv("LAYOUTCHECK_PLUGIN_TIMEOUT"); t && std::atof(t) > 0) limits.timeout_seconds = std::atof(t);
    auto loaded = load_plugin_isolated(path, limits);
    if (!loaded.ok()) return loaded.status();
    slot = std::move(loaded).value();
  }
  const std::string entry = std::string("convert.") + convert_rule_name(spec.rule);
  const std::string pair = std::string(dtype_name(spec.from)) + ">" + dtype_name(spec.to);
  if (!slot->has_member(PluginImpl::kConvertMember)) {
    return Status::unsupported("plugin " + slot->name() + " has no convert (ABI 1.1 member)");
  }
  if (!slot->claims_entry(entry, pair)) {
    return Status::unsupported("plugin " + slot->name() + " does not claim " + entry + " " + pair +
                               " (a capability named " + entry + " whose dtypes list " + pair + ")");
  }
  return converter_of(*slot);
}

}  // namespace layoutcheck::cli
