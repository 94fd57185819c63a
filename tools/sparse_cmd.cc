#include "tools/sparse_cmd.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "layoutcheck/isolate.h"
// For the function's type only: the expected answers come from nvdla::placement_breaks.
#include "layoutcheck/nvdla_surface.h"
#include "tools/cli_args.h"
#include "tools/cli_json.h"
#include "tools/function_lib.h"

namespace layoutcheck::cli {
namespace {

using nvdla::SurfacePlacement;

constexpr const char* kSymbol = NVDLA_SPARSE_SURFACES_VALID_SYMBOL;
constexpr uint64_t kRuleMax = 128;        // bytes of *rule the child copies
constexpr uint64_t kMaxInputs = 1 << 21;  // placements per request
constexpr uint64_t kTop = UINT64_MAX;
constexpr size_t kPrinted = 10;           // disagreements printed in full
constexpr size_t kListed = 100;           // disagreements in --json

// The boundary placements start from three 128- and 256-byte surfaces far apart.
constexpr SurfacePlacement kBase{0x10000, 128, 0x20000, 128, 0x30000, 256};

uint64_t& address(SurfacePlacement& p, int s) { return s == 0 ? p.wgs_address : s == 1 ? p.wmb_address : p.data_address; }
uint64_t& size(SurfacePlacement& p, int s) { return s == 0 ? p.wgs_size : s == 1 ? p.wmb_size : p.data_size; }

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// A random address or size: mostly well formed (a multiple of `unit` below
// `units` of them, or near 2^64), else off by a residue, 0, or any 64-bit value.
uint64_t random_number(std::mt19937_64& rng, uint64_t unit, uint64_t units) {
  switch (rng() % 16) {
    case 0: return 0;
    case 1: return kTop - unit * (rng() % 4) - (unit - 1);  // a multiple of unit near 2^64
    case 2: return unit * (rng() % units) + 1 + rng() % (unit - 1);
    case 3: return rng();
    default: return unit * (rng() % units);
  }
}

SurfacePlacement parse_placement(const std::string& text) {
  const std::string form = "--placement 'wgs=SIZE@ADDR wmb=SIZE@ADDR data=SIZE@ADDR' (decimal or 0x numbers)";
  SurfacePlacement p;
  int seen = 0;
  std::string spaced = text;
  std::replace(spaced.begin(), spaced.end(), ',', ' ');
  size_t at = 0;
  while (at < spaced.size()) {
    const size_t b = spaced.find_first_not_of(' ', at);
    if (b == std::string::npos) break;
    const size_t e = std::min(spaced.find(' ', b), spaced.size());
    const std::string w = spaced.substr(b, e - b);
    at = e;
    const size_t eq = w.find('='), sign = w.find('@');
    const int s = w.compare(0, eq, "wgs") == 0 ? 0 : w.compare(0, eq, "wmb") == 0 ? 1 : w.compare(0, eq, "data") == 0 ? 2 : -1;
    if (eq == std::string::npos || sign == std::string::npos || sign < eq || s < 0 || (seen & (1 << s))) {
      throw UsageError{"cannot read " + quote_input(w) + " of the placement: " + form};
    }
    const auto sz = parse_whole_number(w.substr(eq + 1, sign - eq - 1)), addr = parse_whole_number(w.substr(sign + 1));
    if (!sz || !addr) throw UsageError{"cannot read " + quote_input(w) + ": a number of 64 bits expected, " + form};
    size(p, s) = *sz;
    address(p, s) = *addr;
    seen |= 1 << s;
  }
  if (seen != 7) throw UsageError{"the placement names wgs, wmb and data once each: " + form};
  return p;
}

// ---- the child: loads the library, calls the function ---------------------------

std::string serve(void* sym, const std::string& request) {
  Reader r{request};
  const uint64_t fn = r.u64();
  const uint64_t count = r.u64();
  std::string reply;
  if (r.bad || fn != 0 || sym == nullptr || count > kMaxInputs) {
    put_str(&reply, "a malformed request");
    return reply;
  }
  // The struct ends where a guard page begins: reading past it is reported.
  GuardedPages buf(sizeof(nvdla_sparse_surfaces), "placement struct");
  if (!buf.ok()) {
    put_str(&reply, "cannot map the argument buffer");
    return reply;
  }
  auto* s = reinterpret_cast<nvdla_sparse_surfaces*>(buf.data() + buf.size()) - 1;
  const auto valid = as_function<nvdla_sparse_surfaces_valid_fn>(sym);
  std::string outputs;
  for (uint64_t i = 0; i < count; ++i) {
    const nvdla_sparse_surfaces in{r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64()};
    if (r.bad) {
      put_str(&reply, "a malformed request");
      return reply;
    }
    *s = in;
    const char* rule = nullptr;
    const int answer = valid(s, &rule);
    if (Status st = buf.check_slack(kSymbol); !st.ok()) {
      put_str(&reply, st.message());
      return reply;
    }
    put_u64(&outputs, static_cast<uint64_t>(static_cast<int64_t>(answer)));
    put_u64(&outputs, std::memcmp(s, &in, sizeof in) != 0 ? 1 : 0);
    // *rule is read only for an invalid answer (a valid one leaves it alone).
    put_u64(&outputs, answer == 0 && rule != nullptr ? 1 : 0);
    put_str(&outputs, answer == 0 && rule != nullptr ? std::string(rule, strnlen(rule, kRuleMax)) : std::string());
  }
  if (std::string stray = Sandbox::child_stray_processes(); !stray.empty()) {
    put_str(&reply, std::string(kSymbol) + " " + stray);
    return reply;
  }
  put_str(&reply, "");
  reply += outputs;
  return reply;
}

// ---- the parent ------------------------------------------------------------------

struct Disagreement {
  std::string placement, expected, got, repro;
};

std::string expected_text(const std::vector<Status>& breaks) {
  if (breaks.empty()) return "valid";
  std::string rules;
  for (const Status& s : breaks) {
    if (rules.find(s.rule()) == std::string::npos) rules += (rules.empty() ? "" : " or ") + s.rule();
  }
  return "invalid, " + rules + " (" + breaks.front().message() + ")";
}

}  // namespace

std::string placement_text(const SurfacePlacement& p) {
  return "wgs=" + std::to_string(p.wgs_size) + "@" + hex(p.wgs_address) + " wmb=" + std::to_string(p.wmb_size) + "@" +
         hex(p.wmb_address) + " data=" + std::to_string(p.data_size) + "@" + hex(p.data_address);
}

std::vector<SurfacePlacement> sparse_check_inputs(uint64_t seed, uint64_t random) {
  std::vector<SurfacePlacement> out{kBase};
  // Each surface alone: its start address and its size in every class the
  // table tells apart (residues of 256 and 128), near 2^64 (address + size
  // overflows), and 0.
  for (int s = 0; s < 3; ++s) {
    SurfacePlacement p = kBase;
    const uint64_t base = address(p, s);
    for (uint64_t addr : {base, base + 1, base + 127, base + 128, base + 255, base + 256, uint64_t{0}, kTop - 255,
                          kTop - 127, kTop}) {
      for (uint64_t sz : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{129}, uint64_t{255},
                          uint64_t{256}, uint64_t{384}, kTop - 255, kTop - 127, kTop}) {
        address(p, s) = addr;
        size(p, s) = sz;
        out.push_back(p);
      }
    }
  }
  // Two surfaces: apart, touching, overlapping, one inside the other, one empty.
  for (int a = 0; a < 3; ++a) {
    for (int b = a + 1; b < 3; ++b) {
      for (int64_t shift : {-512, -256, 0, 256, 512}) {
        for (uint64_t size_a : {0, 256, 512}) {
          for (uint64_t size_b : {128, 256}) {
            SurfacePlacement p = kBase;
            size(p, a) = size_a;
            size(p, b) = size_b;
            address(p, b) = address(p, a) + static_cast<uint64_t>(shift);
            out.push_back(p);
          }
        }
      }
    }
  }
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0; i < random; ++i) {
    SurfacePlacement p;
    for (int s = 0; s < 3; ++s) {
      address(p, s) = random_number(rng, 256, uint64_t{1} << 20);  // 256 MiB
      size(p, s) = random_number(rng, 128, 64);                    // up to 8 KiB
    }
    out.push_back(p);
  }
  return out;
}

bool sparse_function(const std::string& name) { return name == kSymbol; }

bool sparse_lib_covers(const std::string& rule) {
  for (const SurfacePlacement& p : sparse_check_inputs(1, 0)) {
    const std::vector<Status> breaks = nvdla::placement_breaks(p);
    if (rule == "ok" ? breaks.empty() : breaks.size() == 1 && breaks[0].rule() == rule) return true;
  }
  return false;
}

int sparse_main(const Args& a) {
  for (const auto& [k, v] : a.options) {
    if (k != "lib" && k != "json" && k != "seed" && k != "cases" && k != "placement") {
      throw UsageError{"unknown option --" + k.substr(0, 40) + " for 'sparse'"};
    }
  }
  if (!a.has("lib")) throw UsageError{std::string("sparse needs --lib PATH.so, a library exporting ") + kSymbol};
  const std::string path = a.get("lib");
  struct stat st;
  if (stat(path.c_str(), &st) != 0) throw UsageError{"cannot read " + path + ": " + std::strerror(errno)};
  const uint64_t seed = cli::ranged_whole_number(a, "seed", 1, 0, UINT64_MAX);
  const uint64_t random = cli::ranged_whole_number(a, "cases", 2000, 0, 1000000);
  std::vector<SurfacePlacement> inputs;
  for (const std::string& text : a.all("placement")) inputs.push_back(parse_placement(text));
  const bool chosen = !inputs.empty();
  if (!chosen) inputs = sparse_check_inputs(seed, random);

  LibraryChild lib("sparse", path);
  if (!lib.start_serving({kSymbol}, serve)) return 2;
  std::string request;
  put_u64(&request, 0);
  put_u64(&request, inputs.size());
  for (const SurfacePlacement& p : inputs) {
    for (uint64_t v : {p.wgs_address, p.wgs_size, p.wmb_address, p.wmb_size, p.data_address, p.data_size}) put_u64(&request, v);
  }
  std::optional<Reader> r = lib.call(request, kSymbol, inputs.size(), inputs.size() * (32 + kRuleMax) + (1 << 14));
  if (!r) return 2;

  std::vector<Disagreement> found;
  for (const SurfacePlacement& p : inputs) {
    const int64_t answer = static_cast<int64_t>(r->u64());
    const bool changed = r->u64() != 0;
    const bool has_rule = r->u64() != 0;
    const std::string rule = r->str(kRuleMax);
    if (r->bad) return lib.bad_library(std::string("sent a malformed answer during ") + kSymbol);
    const std::vector<Status> breaks = nvdla::placement_breaks(p);
    const bool named = std::any_of(breaks.begin(), breaks.end(), [&](const Status& s) { return s.rule() == rule; });
    std::string got;
    if (answer == 1) {
      if (!breaks.empty()) got = "valid";
    } else if (answer == 0) {
      if (!has_rule) got = "invalid, *rule not set";
      else if (breaks.empty() || !named) got = "invalid, " + rule + (breaks.empty() ? "" : ", a rule the placement does not break");
    } else {
      got = "an answer of " + std::to_string(answer) + " (1 or 0 expected)";
    }
    if (got.empty() && changed) got = "the right answer, but it modified its const struct";
    if (got.empty()) continue;
    found.push_back({placement_text(p), expected_text(breaks), got,
                     "layoutcheck sparse --lib " + shell_quote(path) + " --placement '" + placement_text(p) + "'"});
  }

  const std::string title = std::string(kSymbol) + " of " + path +
                            " against the reference (nvdla-in-memory-data-formats.txt § Alignment of Start Address and "
                            "Stride, § Sparse Compression option)";
  if (a.has("json")) {
    Json j = report_header("sparse");
    j["lib"] = path;
    j["seed"] = chosen ? Json(nullptr) : Json(seed);
    j["status"] = found.empty() ? "passed" : "failed";
    j["totals"] = {{"functions", 1}, {"passed", found.empty() ? 1 : 0}, {"failed", found.empty() ? 0 : 1}, {"not_provided", 0}};
    Json fn = {{"function", kSymbol}, {"status", found.empty() ? "passed" : "failed"}, {"inputs", inputs.size()},
               {"failed_inputs", found.size()}, {"first_failure", nullptr}};
    if (!found.empty()) {
      fn["first_failure"] = {{"input", found[0].placement}, {"expected", found[0].expected}, {"actual", found[0].got},
                             {"note", found[0].repro}};
    }
    j["functions"] = Json::array({fn});
    Json list = Json::array();
    for (size_t i = 0; i < found.size() && i < kListed; ++i) {
      list.push_back({{"placement", found[i].placement}, {"expected", found[i].expected}, {"actual", found[i].got},
                      {"repro", found[i].repro}});
    }
    j["disagreements"] = list;
    std::cout << dump_json(j);
  } else {
    std::printf("%s\n", title.c_str());
    if (chosen) {
      std::printf("  %zu placement%s of --placement\n", inputs.size(), inputs.size() == 1 ? "" : "s");
    } else {
      std::printf("  %zu boundary placements, %llu random ones (--seed %llu)\n", inputs.size() - random,
                  static_cast<unsigned long long>(random), static_cast<unsigned long long>(seed));
    }
    for (size_t i = 0; i < found.size() && i < kPrinted; ++i) {
      std::printf("  DIFFERS at %s\n    expected %s\n    actual   %s\n    repro    %s\n", found[i].placement.c_str(),
                  found[i].expected.c_str(), found[i].got.c_str(), found[i].repro.c_str());
    }
    if (found.size() > kPrinted) {
      std::printf("  ... and %zu more (--json lists up to %zu)\n", found.size() - kPrinted, kListed);
    }
    std::printf("sparse: %zu placements, %zu agree, %zu differ\n", inputs.size(), inputs.size() - found.size(),
                found.size());
  }
  return found.empty() ? 0 : 1;
}

}  // namespace layoutcheck::cli
