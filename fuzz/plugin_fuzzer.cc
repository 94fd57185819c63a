// Differential fuzzer for a plugin (built by layoutcheck_add_plugin_fuzzer):
// the plugin against the reference on every layout it claims, or on every
// layout when it declares no capabilities. Inputs are as for
// fuzz_differential: a "case: LAYOUT | DTYPE | SHAPE" line or generator bytes.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz_util.h"
#include "layoutcheck/plugin.h"

using namespace layoutcheck;

namespace {

const PluginImpl& plugin() {
  static std::unique_ptr<PluginImpl> impl = [] {
    const char* path = std::getenv("LAYOUTCHECK_PLUGIN");
#ifdef LAYOUTCHECK_PLUGIN_PATH
    if (!path) path = LAYOUTCHECK_PLUGIN_PATH;
#endif
    if (!path) {
      std::fprintf(stderr, "set LAYOUTCHECK_PLUGIN to the plugin's .so\n");
      std::exit(2);
    }
    auto loaded = load_plugin(path);
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", loaded.status().message().c_str());
      std::exit(2);
    }
    return std::move(loaded).value();
  }();
  return *impl;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const PluginImpl& impl = plugin();
  std::vector<const LayoutSpec*> specs;
  for (const auto& s : layout_specs()) {
    bool claimed = impl.capabilities().empty();
    for (const auto& cap : impl.capabilities()) claimed |= glob_match(cap.layout_glob, s.name);
    if (claimed && s.random_case) specs.push_back(&s);
  }
  if (specs.empty()) return 0;
  Case c;
  if (!fuzz::parse_text_case(std::string(reinterpret_cast<const char*>(data), size), &c)) {
    fuzz::Bytes in(data, size);
    const LayoutSpec& spec = *specs[in.take(1) % specs.size()];
    std::mt19937_64 rng(in.take(8));
    c = spec.random_case(rng, static_cast<int>(in.take(1) % 3));
    while (!in.empty()) {
      size_t dim = in.take(1) % c.shape.size();
      c.shape[dim] = static_cast<int64_t>(in.take(1) % 70) + 1;
    }
  }
  // A declined case is a finding only when the plugin claims it.
  if (impl.supports(c).code() == StatusCode::kUnsupported && !impl.claims(c)) return 0;
  fuzz::require_agreement(c, reference_impl(), impl, size);
  return 0;
}
