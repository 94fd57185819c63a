// layoutcheck — the command line.
//
//   layoutcheck list [--json]
//   layoutcheck describe LAYOUT --dtype D --shape a,b,c,d [--impl NAME] [--json]
//   layoutcheck offset   LAYOUT --dtype D --shape ... --at i,j,k,l [--at ...] [--impl NAME]
//   layoutcheck pack     LAYOUT --dtype D --shape ... [--impl NAME] [--in FILE] [--out FILE]
//   layoutcheck unpack   LAYOUT --dtype D --shape ... [--impl NAME] [--in FILE] [--out FILE]
//   layoutcheck check    [--impl NAME|PATH.so] [--layout GLOB] [--seconds N] [--seed N] [--jobs N]
//                        [--timeout S] [--save DIR] [--json]
//   layoutcheck repro    LAYOUT --dtype D --shape ... [--impl NAME] [--seed N]
//   layoutcheck oracle   [--id GLOB] [--impl NAME] [--dir DIR] [--json]
//
// Exit status: 0 success, 1 a check or oracle failed, 2 bad input.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "layoutcheck/checker.h"
#include "layoutcheck/impl.h"
#include "layoutcheck/oracle.h"
#include "layoutcheck/plugin.h"
#include "tools/precision_cli.h"

using namespace layoutcheck;

namespace {

struct UsageError {
  std::string message;
};

const char* kUsage =
    "usage: layoutcheck COMMAND [options]\n"
    "  list [--json]                                   every layout: name, family, document section\n"
    "  describe LAYOUT --dtype D --shape S [--json]    size, strides, padding, rules\n"
    "  offset LAYOUT --dtype D --shape S --at C [--at C ...]   byte offset per coordinate\n"
    "  pack LAYOUT --dtype D --shape S [--in F] [--out F]      logical (row-major) -> physical\n"
    "  unpack LAYOUT --dtype D --shape S [--in F] [--out F]    physical -> logical\n"
    "  check [--layout GLOB] [--seconds N] [--seed N] [--jobs N] [--save DIR] [--json]\n"
    "                                                  differential check vs the reference\n"
    "  repro LAYOUT --dtype D --shape S [--seed N]     replay one case of check\n"
    "  oracle [--id GLOB] [--dir DIR] [--json]         the documents' worked examples\n"
    "  precision nvdla --layer conv|sdp|lrn|pdp --input FORMAT --output PRECISION   NVDLA precision tables\n"
    "  convert --rule ieee|nvdla|nvdla-int --from D --to D [--unit U] [--flush-nan] [--offset X --scale Y]\n"
    "          [--truncate M] [--in F] [--out F]       convert raw little-endian values (NaN counts on stderr)\n"
    "common: --impl reference|optimized|PATH.so (default optimized; a plugin runs isolated)\n";

struct Args {
  std::string command;
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> options;
  bool has(const std::string& k) const { return options.count(k) > 0; }
  // The last occurrence wins, so a script's defaults can be overridden by appending.
  std::string get(const std::string& k, const std::string& def = "") const {
    auto [first, last] = options.equal_range(k);
    return first == last ? def : std::prev(last)->second;
  }
  std::vector<std::string> all(const std::string& k) const {
    std::vector<std::string> out;
    for (auto [it, end] = options.equal_range(k); it != end; ++it) out.push_back(it->second);
    return out;
  }
};

Args parse_args(int argc, char** argv) {
  static const char* kFlags[] = {"--json", "--help", "-h", "--isolate", "--fail-fast"};
  Args a;
  if (argc < 2) throw UsageError{"missing command"};
  a.command = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0) {
      bool flag = false;
      for (const char* f : kFlags) flag |= arg == f;
      if (flag) {
        a.options.emplace(arg.substr(2), "1");
        continue;
      }
      if (size_t eq = arg.find('='); eq != std::string::npos) {
        a.options.emplace(arg.substr(2, eq - 2), arg.substr(eq + 1));
        continue;
      }
      if (i + 1 >= argc) throw UsageError{"option " + arg + " needs a value"};
      a.options.emplace(arg.substr(2), argv[++i]);
    } else {
      a.positional.push_back(arg);
    }
  }
  return a;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return "\"" + out + "\"";
}

void expect_known_options(const Args& a, std::initializer_list<const char*> known) {
  for (const auto& [k, v] : a.options) {
    bool ok = false;
    for (const char* n : known) ok |= k == n;
    if (!ok) throw UsageError{"unknown option --" + k + " for '" + a.command + "'"};
  }
}

template <typename T>
T or_fail(Result<T> r) {
  if (!r.ok()) throw UsageError{r.status().message()};
  return std::move(r).value();
}

void or_fail(const Status& s) {
  if (!s.ok()) throw UsageError{s.message()};
}

bool is_plugin_path(const std::string& name) {
  return name.find('/') != std::string::npos || (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0);
}

// `--impl` names a built-in implementation or a plugin's shared library. A
// plugin is loaded and called in a child process (IsolatedImpl), each call
// bounded by LAYOUTCHECK_PLUGIN_TIMEOUT seconds (default 10).
const Impl& impl_of(const Args& a) {
  static std::map<std::string, std::unique_ptr<PluginImpl>> plugins;
  std::string name = a.get("impl", "optimized");
  if (const Impl* impl = builtin_impl(name)) return *impl;
  if (!is_plugin_path(name)) {
    throw UsageError{"unknown --impl '" + name + "' (reference, optimized, or the path of a plugin .so)"};
  }
  auto& slot = plugins[name];
  if (!slot) {
    SandboxLimits limits;
    if (const char* t = std::getenv("LAYOUTCHECK_PLUGIN_TIMEOUT"); t && std::atof(t) > 0) limits.timeout_seconds = std::atof(t);
    slot = or_fail(load_plugin_isolated(name, limits));
  }
  return *slot;
}

// Rejects a case the implementation does not take. Where the case breaks a rule
// of the document, the reference's message names the rule.
void require_supported(const Impl& impl, const Case& c) {
  Status s = impl.supports(c);
  if (s.ok()) return;
  Status ref = reference_impl().supports(c);
  throw UsageError{ref.code() == StatusCode::kInvalid ? ref.message() : s.to_string()};
}

Case case_of(const Args& a) {
  if (a.positional.size() != 1) throw UsageError{"'" + a.command + "' takes one LAYOUT argument"};
  if (!a.has("dtype")) throw UsageError{"missing --dtype"};
  if (!a.has("shape")) throw UsageError{"missing --shape"};
  return or_fail(parse_case(a.positional[0], a.get("dtype"), a.get("shape")));
}

std::vector<uint8_t> read_input(const Args& a) {
  std::string path = a.get("in", "-");
  std::vector<uint8_t> data;
  if (path == "-") {
    data.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError{"cannot read " + path};
    data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return data;
}

void write_output(const Args& a, const std::vector<uint8_t>& data) {
  std::string path = a.get("out", "-");
  if (path == "-") {
    std::cout.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    std::cout.flush();
    return;
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    if (!out) throw UsageError{"cannot write " + tmp};
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw UsageError{"cannot rename " + tmp + " to " + path};
}

int cmd_list(const Args& a) {
  expect_known_options(a, {"json"});
  if (a.has("json")) {
    std::cout << "[";
    bool first = true;
    for (const auto& s : layout_specs()) {
      std::string dims;
      for (const auto& d : s.dims) dims += (dims.empty() ? "" : ",") + json_escape(d);
      std::cout << (first ? "" : ",") << "\n  {\"name\": " << json_escape(s.name)
                << ", \"family\": " << json_escape(s.name.substr(0, s.name.find('.')))
                << ", \"document\": " << json_escape(s.document) << ", \"section\": " << json_escape(s.section)
                << ", \"dims\": [" << dims << "], \"summary\": " << json_escape(s.summary) << "}";
      first = false;
    }
    std::cout << "\n]\n";
    return 0;
  }
  for (const auto& s : layout_specs()) {
    std::string dims;
    for (const auto& d : s.dims) dims += (dims.empty() ? "" : ",") + d;
    std::string params;
    for (const auto& p : s.params) params += (params.empty() ? "" : ",") + p.key;
    std::printf("%-18s %-6s (%s) %s\n    %s § %s\n    parameters: %s\n", s.name.c_str(),
                s.name.substr(0, s.name.find('.')).c_str(), dims.c_str(), s.summary.c_str(), s.document.c_str(),
                s.section.c_str(), params.empty() ? "none" : params.c_str());
  }
  return 0;
}

int cmd_describe(const Args& a) {
  expect_known_options(a, {"dtype", "shape", "impl", "json"});
  Case c = case_of(a);
  const Impl& ref = a.has("impl") ? impl_of(a) : reference_impl();
  require_supported(ref, c);
  uint64_t logical = or_fail(logical_bytes(c));
  std::vector<Fact> facts = {{"layout", to_string(c.layout)}, {"dtype", dtype_name(c.dtype)},
                             {"shape", shape_to_string(c.shape)}, {"logical_bytes", std::to_string(logical)}};
  auto more = ref.describe(c);
  if (more.ok()) {
    facts.insert(facts.end(), more->begin(), more->end());
  } else {
    facts.push_back({"size_bytes", std::to_string(or_fail(ref.size_bytes(c)))});
  }
  const LayoutSpec* spec = find_spec(c.layout.name);
  if (spec) facts.push_back({"document", spec->document + " § " + spec->section});
  if (a.has("json")) {
    std::cout << "{";
    for (size_t i = 0; i < facts.size(); ++i) {
      std::cout << (i ? ", " : "") << json_escape(facts[i].first) << ": " << json_escape(facts[i].second);
    }
    std::cout << "}\n";
  } else {
    for (const auto& [k, v] : facts) std::printf("%-18s %s\n", k.c_str(), v.c_str());
  }
  return 0;
}

int cmd_offset(const Args& a) {
  expect_known_options(a, {"dtype", "shape", "impl", "at"});
  Case c = case_of(a);
  const Impl& impl = impl_of(a);
  require_supported(impl, c);
  auto ats = a.all("at");
  if (ats.empty()) throw UsageError{"offset needs at least one --at i,j,..."};
  for (const auto& at : ats) {
    Coord coord = or_fail(parse_shape(at));
    uint64_t bits = or_fail(impl.offset_bits(c, coord));
    if (bits % 8 == 0) std::cout << bits / 8 << "\n";
    else std::cout << bits / 8 << "+" << bits % 8 << "b\n";
  }
  return 0;
}

int cmd_pack(const Args& a, bool pack) {
  expect_known_options(a, {"dtype", "shape", "impl", "in", "out"});
  Case c = case_of(a);
  const Impl& impl = impl_of(a);
  require_supported(impl, c);
  uint64_t logical = or_fail(logical_bytes(c));
  uint64_t physical = or_fail(impl.size_bytes(c));
  constexpr uint64_t kMaxMaterialized = uint64_t{16} << 30;
  if (physical > kMaxMaterialized || logical > kMaxMaterialized) {
    throw UsageError{to_string(c) + " needs " + std::to_string(std::max(physical, logical)) +
                     " bytes; the CLI materializes buffers of at most 16 GiB"};
  }
  std::vector<uint8_t> in = read_input(a);
  uint64_t want = pack ? logical : physical;
  if (in.size() != want) {
    throw UsageError{"input is " + std::to_string(in.size()) + " bytes; " + to_string(c) + " needs " +
                     std::to_string(want) + " (" + (pack ? "dense row-major logical" : "physical") + ")"};
  }
  std::vector<uint8_t> out(pack ? physical : logical);
  if (pack) or_fail(impl.pack(c, in.data(), in.size(), out.data(), out.size()));
  else or_fail(impl.unpack(c, in.data(), in.size(), out.data(), out.size()));
  write_output(a, out);
  return 0;
}

uint64_t number_of(const Args& a, const std::string& key, uint64_t def) {
  if (!a.has(key)) return def;
  auto v = parse_shape(a.get(key));
  if (!v.ok() || v->size() != 1 || (*v)[0] < 0) throw UsageError{"--" + key + " takes a non-negative number"};
  return static_cast<uint64_t>((*v)[0]);
}

int cmd_check(const Args& a) {
  expect_known_options(a, {"impl", "layout", "seconds", "seed", "json", "min-cases", "max-cases", "jobs", "timeout",
                           "save", "isolate", "fail-fast"});
  const Impl& impl = impl_of(a);
  const auto* plugin = dynamic_cast<const PluginImpl*>(&impl);
  RunOptions opt;
  opt.layout_glob = a.get("layout", "*");
  opt.seconds = static_cast<double>(number_of(a, "seconds", 20));
  opt.seed = number_of(a, "seed", 1);
  opt.min_cases = number_of(a, "min-cases", 20);
  opt.max_cases = number_of(a, "max-cases", 0);
  opt.jobs = static_cast<unsigned>(std::max<uint64_t>(1, number_of(a, "jobs", 1)));
  const double timeout = static_cast<double>(number_of(a, "timeout", 10));
  opt.fail_fast = a.has("fail-fast");
  // Plugins run each case in a child process: a crash or hang fails that case only.
  const bool isolate = plugin != nullptr || a.has("isolate");
  const std::string save_dir = a.get("save", "corpus/regressions/fuzz_differential");
  bool matched = false;
  for (const auto& s : layout_specs()) matched |= glob_match(opt.layout_glob, s.name);
  if (!matched) throw UsageError{"--layout '" + opt.layout_glob + "' matches no registered layout"};
  auto run_one = [&](const Case& c, const CheckOptions& co) {
    return isolate ? check_isolated(c, reference_impl(), impl, co, timeout) : check(c, reference_impl(), impl, co);
  };
  opt.runner = run_one;
  if (plugin && !plugin->capabilities().empty()) opt.claimed = [plugin](const Case& c) { return plugin->claims(c); };
  opt.progress = [](const std::string& line) { std::cerr << line << std::endl; };
  std::cerr << "layoutcheck check: " << impl.name() << " vs reference, layouts '" << opt.layout_glob << "', "
            << opt.seconds << " s, seed " << opt.seed << ", " << opt.jobs << " job(s)"
            << (isolate ? ", each case in a child process" : "") << std::endl;
  auto tallies = run_checks(reference_impl(), impl, opt);

  // Shrink each layout's first failure, print its reproducer and save it.
  std::vector<std::string> failures;
  for (auto& t : tallies) {
    if (!t.failed) continue;
    CheckOptions co = opt.check;
    Case small = shrink_case(t.first_failing_case, [&](const Case& c) { return run_one(c, co).verdict == Verdict::kFail; });
    CheckReport r = run_one(small, co);
    if (r.verdict != Verdict::kFail) {
      // Not reproduced (a non-deterministic plugin): print and save the case that failed.
      r.message = t.first_failure;
      small = t.first_failing_case;
    }
    std::string text = r.message;
    if (!(small == t.first_failing_case)) {
      text = "smallest failing shape " + shape_to_string(small.shape) + " (from " +
             shape_to_string(t.first_failing_case.shape) + "):\n" + text;
    }
    auto saved = save_regression(save_dir, small, impl.name(), r.message);
    text += saved.ok() ? "  saved: " + *saved + "\n" : "  not saved: " + saved.status().message() + "\n";
    t.first_failure = text;
  }

  bool failed = false;
  auto status_of = [](const LayoutTally& t) {
    if (t.failed) return "FAILED";
    if (t.passed == 0 && t.declined > 0) return "UNSUPPORTED";
    if (t.passed == 0) return "SKIPPED";
    return "PASSED";
  };
  if (a.has("json")) {
    std::cout << "{\"impl\": " << json_escape(impl.name()) << ", \"seed\": " << opt.seed << ", \"layouts\": [";
    for (size_t i = 0; i < tallies.size(); ++i) {
      const auto& t = tallies[i];
      std::string grid;
      for (const auto& [dt, n] : t.passed_by_dtype) grid += (grid.empty() ? "" : ", ") + json_escape(dt) + ": " + std::to_string(n);
      std::cout << (i ? "," : "") << "\n  {\"layout\": " << json_escape(t.layout) << ", \"cases\": " << t.cases
                << ", \"passed\": " << t.passed << ", \"invalid\": " << t.invalid << ", \"declined\": " << t.declined
                << ", \"skipped\": " << t.skipped << ", \"failed\": " << t.failed
                << ", \"status\": " << json_escape(status_of(t)) << ", \"passed_by_dtype\": {" << grid << "}"
                << ", \"first_failure\": " << json_escape(t.first_failure) << "}";
      failed |= t.failed > 0;
    }
    std::cout << "\n]}\n";
    return failed ? 1 : 0;
  }
  std::printf("%-20s %8s %8s %8s %8s %8s %8s  %s\n", "layout", "cases", "passed", "invalid", "declined", "skipped",
              "failed", "status");
  uint64_t total = 0, total_failed = 0, total_passed = 0;
  for (const auto& t : tallies) {
    std::printf("%-20s %8llu %8llu %8llu %8llu %8llu %8llu  %s\n", t.layout.c_str(),
                static_cast<unsigned long long>(t.cases), static_cast<unsigned long long>(t.passed),
                static_cast<unsigned long long>(t.invalid), static_cast<unsigned long long>(t.declined),
                static_cast<unsigned long long>(t.skipped), static_cast<unsigned long long>(t.failed),
                status_of(t));
    total += t.cases;
    total_failed += t.failed;
    // Cases both implementations reject count as passed: the rule was enforced.
    total_passed += t.passed + t.invalid;
  }
  if (plugin) {
    // Coverage grid: passed cases per layout and dtype.
    std::vector<std::string> dtypes;
    for (const auto& t : tallies) {
      for (const auto& [dt, n] : t.passed_by_dtype) {
        if (std::find(dtypes.begin(), dtypes.end(), dt) == dtypes.end()) dtypes.push_back(dt);
      }
    }
    std::printf("\ncoverage (passed cases)\n%-20s", "layout");
    for (const auto& dt : dtypes) std::printf(" %7s", dt.c_str());
    std::printf("\n");
    for (const auto& t : tallies) {
      std::printf("%-20s", t.layout.c_str());
      for (const auto& dt : dtypes) {
        auto it = t.passed_by_dtype.find(dt);
        std::printf(" %7llu", static_cast<unsigned long long>(it == t.passed_by_dtype.end() ? 0 : it->second));
      }
      std::printf("\n");
    }
  }
  for (const auto& t : tallies) {
    if (t.failed) std::printf("\n%s", t.first_failure.c_str());
  }
  std::printf("\ncheck: %llu passed, %llu failed, %llu skipped\n",
              static_cast<unsigned long long>(total_passed), static_cast<unsigned long long>(total_failed),
              static_cast<unsigned long long>(total - total_passed - total_failed));
  return total_failed ? 1 : 0;
}

int cmd_repro(const Args& a) {
  expect_known_options(a, {"dtype", "shape", "impl", "seed"});
  Case c = case_of(a);
  CheckOptions co;
  co.seed = number_of(a, "seed", 1);
  const Impl& impl = impl_of(a);
  CheckReport r = dynamic_cast<const PluginImpl*>(&impl) ? check_isolated(c, reference_impl(), impl, co, 10)
                                                          : check(c, reference_impl(), impl, co);
  std::cout << r.message;
  return r.verdict == Verdict::kFail ? 1 : 0;
}

int cmd_oracle(const Args& a) {
  expect_known_options(a, {"id", "impl", "dir", "json"});
  const Impl& impl = a.has("impl") ? impl_of(a) : optimized_impl();
  std::string dir = a.get("dir", std::string(LAYOUTCHECK_SOURCE_DIR) + "/oracles");
  auto cases = or_fail(load_oracle_dir(dir));
  std::string glob = a.get("id", "*");
  uint64_t run = 0, failed = 0;
  std::string json;
  for (const auto& oc : cases) {
    if (!glob_match(glob, oc.id)) continue;
    ++run;
    auto failures = run_oracle(oc, impl);
    if (!failures.empty()) ++failed;
    if (a.has("json")) {
      std::string f;
      for (const auto& s : failures) f += (f.empty() ? "" : ", ") + json_escape(s);
      json += std::string(json.empty() ? "" : ",") + "\n  {\"id\": " + json_escape(oc.id) +
              ", \"source\": " + json_escape(oc.source) + ", \"passed\": " + (failures.empty() ? "true" : "false") +
              ", \"failures\": [" + f + "]}";
    } else {
      std::printf("%-44s %s  (%s)\n", oc.id.c_str(), failures.empty() ? "ok" : "FAILED", oc.source.c_str());
      for (const auto& s : failures) std::printf("    %s\n", s.c_str());
    }
  }
  if (run == 0) throw UsageError{"no oracle case matches --id '" + glob + "'"};
  if (a.has("json")) {
    std::cout << "{\"impl\": " << json_escape(impl.name()) << ", \"cases\": [" << json << "\n]}\n";
  } else {
    std::printf("%llu passed, %llu failed\n", static_cast<unsigned long long>(run - failed),
                static_cast<unsigned long long>(failed));
  }
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help"))) {
      std::cout << kUsage;
      return 0;
    }
    if (argc >= 2 && !std::strcmp(argv[1], "precision")) return cli::precision_main(argc, argv);
    if (argc >= 2 && !std::strcmp(argv[1], "convert")) return cli::convert_main(argc, argv);
    Args a = parse_args(argc, argv);
    if (a.has("help") || a.has("h")) {
      std::cout << kUsage;
      return 0;
    }
    if (a.command == "list") return cmd_list(a);
    if (a.command == "describe") return cmd_describe(a);
    if (a.command == "offset") return cmd_offset(a);
    if (a.command == "pack") return cmd_pack(a, true);
    if (a.command == "unpack") return cmd_pack(a, false);
    if (a.command == "check") return cmd_check(a);
    if (a.command == "repro") return cmd_repro(a);
    if (a.command == "oracle") return cmd_oracle(a);
    throw UsageError{"unknown command '" + a.command + "'"};
  } catch (const UsageError& e) {
    std::cerr << "layoutcheck: " << e.message << "\n";
    if (e.message.find("command") != std::string::npos) std::cerr << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "layoutcheck: " << e.what() << "\n";
    return 2;
  }
}
