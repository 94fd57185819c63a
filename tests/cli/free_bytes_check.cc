// Checks that every byte rule by which a document leaves bytes free is
// exercised by a lenient example plugin: for each such rule the reference
// states, some plugin writes a non-zero byte where the rule applies, so the
// plugin tests (`check` passes, `check --strict-padding` fails) show the
// verdict leaving those bytes free.
//
//   free_bytes_check PLUGIN.so...
//
// The rules come from the reference's byte map (byte_rules) of the cases of
// every registered layout: its boundary cases and random ones of the three
// smaller size classes, fixed seeds. Each plugin packs the cases it claims
// into a buffer of zeros; a free region with a non-zero byte afterwards is a
// rule exercised. Prints the plugin that exercises each rule; exit 1 naming
// each rule none exercises (with a case that has it), 2 on a usage or load
// error.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "layoutcheck/byte_rules.h"
#include "layoutcheck/checker.h"
#include "layoutcheck/impl.h"
#include "layoutcheck/layout.h"
#include "layoutcheck/plugin.h"

using namespace layoutcheck;

namespace {

constexpr int kRandomCases = 150;                  // per layout and size class
constexpr uint64_t kMaxBytes = uint64_t{1} << 20;  // larger cases are left out

struct Probe {
  Case c;
  ByteRules rules;
};

// The cases of every layout with at least one free byte, and each free rule
// with the first case that has it.
void probe(std::vector<Probe>* cases, std::map<std::string, std::string>* free_rules) {
  for (const LayoutSpec& spec : layout_specs()) {
    std::vector<Case> pool;
    if (spec.boundary_cases) pool = spec.boundary_cases();
    if (spec.random_case) {
      std::mt19937_64 rng(std::hash<std::string>{}(spec.name) ^ 0x5eed);
      for (int size_class = 0; size_class < 3; ++size_class) {
        for (int i = 0; i < kRandomCases; ++i) pool.push_back(spec.random_case(rng, size_class));
      }
    }
    for (Case& c : pool) {
      auto bytes = reference_impl().size_bytes(c);
      if (!bytes.ok() || *bytes > kMaxBytes) continue;
      auto logical = logical_bytes(c);
      if (!logical.ok() || *logical > kMaxBytes) continue;
      auto rules = byte_rules(c);
      if (!rules.ok()) continue;
      bool any = false;
      for (const ByteRegion& r : rules->regions) {
        if (r.kind != ByteKind::kFree) continue;
        any = true;
        free_rules->emplace(rules->rule_of(r).id, to_string(c));
      }
      if (any) cases->push_back({std::move(c), std::move(*rules)});
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: free_bytes_check PLUGIN.so...\n");
    return 2;
  }
  std::vector<Probe> cases;
  std::map<std::string, std::string> free_rules;  // rule id -> a case that has it
  probe(&cases, &free_rules);
  if (free_rules.empty()) {
    std::fprintf(stderr, "free_bytes_check: the reference states no free byte in %zu layouts\n",
                 layout_specs().size());
    return 2;
  }
  std::map<std::string, std::string> exercised;  // rule id -> the first plugin writing there
  for (int i = 1; i < argc; ++i) {
    auto plugin = load_plugin(argv[i]);
    if (!plugin.ok()) {
      std::fprintf(stderr, "free_bytes_check: %s\n", plugin.status().message().c_str());
      return 2;
    }
    const std::string name = (*plugin)->plugin_name();
    size_t packed = 0;
    for (const Probe& p : cases) {
      if (!(*plugin)->claims(p.c) || !(*plugin)->supports(p.c).ok()) continue;
      std::vector<uint8_t> logical;
      fill_position_unique(p.c, 1, &logical);
      std::vector<uint8_t> physical(p.rules.size_bytes, 0);
      if (!(*plugin)->pack(p.c, logical.data(), logical.size(), physical.data(), physical.size()).ok()) continue;
      ++packed;
      for (const ByteRegion& r : p.rules.regions) {
        if (r.kind != ByteKind::kFree) continue;
        const auto first = physical.begin() + static_cast<std::ptrdiff_t>(r.first);
        if (std::any_of(first, first + static_cast<std::ptrdiff_t>(r.length), [](uint8_t b) { return b != 0; })) {
          exercised.emplace(p.rules.rule_of(r).id, name);
        }
      }
    }
    std::printf("%s: %zu cases with free bytes packed\n", name.c_str(), packed);
  }
  int missing = 0;
  for (const auto& [rule, example] : free_rules) {
    auto it = exercised.find(rule);
    if (it != exercised.end()) {
      std::printf("%-36s written non-zero by %s\n", rule.c_str(), it->second.c_str());
      continue;
    }
    std::printf("%-36s no lenient example writes non-zero there (a case with it: %s)\n", rule.c_str(),
                example.c_str());
    ++missing;
  }
  std::printf("%zu free-byte rules over %zu cases, %d without a lenient example\n", free_rules.size(),
              cases.size(), missing);
  return missing == 0 ? 0 : 1;
}
