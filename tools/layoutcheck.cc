// layoutcheck — the command line.
//
//   layoutcheck list [--json]
//   layoutcheck describe LAYOUT --dtype D --shape a,b,c,d [--impl NAME] [--json]
//   layoutcheck offset   LAYOUT --dtype D --shape ... --at i,j,k,l [--at ...] [--impl NAME]
//   layoutcheck pack     LAYOUT --dtype D --shape ... [--impl NAME] [--in FILE] [--out FILE]
//   layoutcheck unpack   LAYOUT --dtype D --shape ... [--impl NAME] [--in FILE] [--out FILE]
//   layoutcheck check    [--impl NAME|PATH.so] [--layout GLOB] [--seconds N | --cases N] [--seed N]
//                        [--jobs N] [--timeout S] [--save DIR] [--json]
//   layoutcheck repro    LAYOUT --dtype D --shape ... [--impl NAME] [--seed N] [--timeout S]
//   layoutcheck replay   PATH... [--impl NAME] [--timeout S]
//   layoutcheck oracle   [--id GLOB] [--impl NAME|PATH.so] [--dir DIR] [--spec-dir DIR] [--json]
//
// Exit status: 0 success, 1 a check or oracle failed, 2 bad input or a failed read
// or write (the message names the path and the reason).
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "layoutcheck/byte_rules.h"
#include "layoutcheck/checker.h"
#include "layoutcheck/impl.h"
#include "layoutcheck/oracle.h"
#include "layoutcheck/plugin.h"
#include "layoutcheck/precision.h"
#include "tools/cli_io.h"
#include "tools/precision_cli.h"
#include "tools/rules_cmd.h"

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
    "  check [--layout GLOB] [--seconds N | --cases N] [--seed N] [--jobs N] [--timeout S] [--save DIR]\n"
    "        [--fail-fast] [--strict-padding] [--json]\n"
    "                                                  differential check vs the reference\n"
    "  repro LAYOUT --dtype D --shape S [--seed N] [--strict-padding]   replay one case of check\n"
    "  replay PATH... [--timeout S] [--strict-padding]  replay regression files (or directories of them)\n"
    "  oracle [--id GLOB] [--dir DIR] [--spec-dir DIR] [--json]\n"
    "                                                  the documents' worked examples\n"
    "  rules [GLOB] [--json]                           the documents' rules: id, section, text\n"
    "  precision nvdla --layer conv|sdp|lrn|pdp --input FORMAT --output PRECISION   NVDLA precision tables\n"
    "  convert --rule ieee|nvdla|nvdla-int --from D --to D [--unit U] [--flush-nan] [--offset X --scale Y]\n"
    "          [--truncate M] [--in F] [--out F]       convert raw little-endian values (NaN counts on stderr)\n"
    "common: --impl reference|optimized|PATH.so (default optimized; a plugin runs isolated)\n"
    "files: --in reads at most the size the case needs (one byte more is an error); --out replaces a\n"
    "  regular file atomically (temporary file beside it, fsync, rename), writes a device or FIFO in\n"
    "  place, follows a symbolic link to its target; a failed write exits 2 and leaves no file behind\n";

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

// How many LAYOUT arguments each command takes; -1 for a command not listed here.
int layout_arguments(const std::string& command) {
  for (const char* c : {"describe", "offset", "pack", "unpack", "repro", "rules"}) {
    if (command == c) return 1;
  }
  for (const char* c : {"list", "check", "oracle"}) {
    if (command == c) return 0;
  }
  return -1;
}

Args parse_args(int argc, char** argv) {
  static const char* kFlags[] = {"--json", "--help", "-h", "--isolate", "--fail-fast", "--strict-padding"};
  Args a;
  if (argc < 2) throw UsageError{"missing command"};
  a.command = argv[1];
  const int layouts = layout_arguments(a.command);
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h") {
      a.options.emplace("help", "1");
      continue;
    }
    if (layouts >= 0 && arg.size() > 1 && arg[0] == '-' && arg[1] != '-') {
      throw UsageError{"unknown option " + clip_input(arg) + " for '" + a.command + "'"};
    }
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
  if (layouts >= 0 && a.positional.size() > static_cast<size_t>(layouts) && !a.has("help")) {
    throw UsageError{"'" + a.command + "' takes " + (layouts ? "one LAYOUT argument" : "no arguments") +
                     "; unexpected argument " + quote_input(a.positional[static_cast<size_t>(layouts)])};
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
    if (!ok) throw UsageError{"unknown option " + clip_input("--" + k) + " for '" + a.command + "'"};
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
    throw UsageError{"unknown --impl " + quote_input(name) + " (reference, optimized, or the path of a plugin .so)"};
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
  if (a.positional.size() != 1) throw UsageError{"'" + a.command + "' needs a LAYOUT argument"};
  if (!a.has("dtype")) {
    throw UsageError{"'" + a.command + "' needs --dtype D (one of: " + logical_dtype_names() + ")"};
  }
  if (!a.has("shape")) {
    throw UsageError{"'" + a.command + "' needs --shape, the logical extents separated by commas (e.g. 2,3,4,5)"};
  }
  return or_fail(parse_case(a.positional[0], a.get("dtype"), a.get("shape")));
}

// The input of a case that needs `want` bytes: at most want + 1 bytes are read,
// so an endless or oversized input stops with a size error.
std::vector<uint8_t> read_input(const Args& a, const Case& c, uint64_t want, const char* what) {
  const std::string path = a.get("in", "-");
  cli::BoundedInput in = or_fail(cli::read_bounded(path, want));
  if (in.more || in.bytes.size() != want) {
    throw UsageError{"input " + (path == "-" ? std::string() : cli::input_name(path) + " ") + "is " +
                     (in.more ? "more than " + std::to_string(want) : std::to_string(in.bytes.size())) + " bytes; " +
                     to_string(c) + " needs " + std::to_string(want) + " (" + what + ")"};
  }
  return std::move(in.bytes);
}

void write_output(const Args& a, const std::vector<uint8_t>& data) {
  or_fail(cli::write_output(a.get("out", "-"), data.data(), data.size()));
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
  if (auto rules = byte_rules(c); rules.ok()) for (const Fact& f : byte_rule_facts(*rules)) facts.push_back(f);
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
  std::vector<uint8_t> in = read_input(a, c, pack ? logical : physical, pack ? "dense row-major logical" : "physical");
  std::vector<uint8_t> out(pack ? physical : logical);
  if (pack) or_fail(impl.pack(c, in.data(), in.size(), out.data(), out.size()));
  else or_fail(impl.unpack(c, in.data(), in.size(), out.data(), out.size()));
  write_output(a, out);
  return 0;
}

// An integer option within [lo, hi]; anything else is refused with the value and the range.
uint64_t ranged_number(const Args& a, const std::string& key, uint64_t def, uint64_t lo, uint64_t hi,
                       const std::string& unit = "") {
  if (!a.has(key)) return def;
  const std::string text = a.get(key);
  uint64_t v = 0;
  bool ok = !text.empty() && text.size() <= 20;
  for (char ch : text) {
    if (!ok) break;
    const uint64_t digit = static_cast<uint64_t>(ch - '0');
    ok = ch >= '0' && ch <= '9' && v <= (UINT64_MAX - digit) / 10;
    v = v * 10 + digit;
  }
  if (!ok || v < lo || v > hi) {
    throw UsageError{"--" + key + " " + text + " is out of range: it takes a whole number from " + std::to_string(lo) +
                     " to " + std::to_string(hi) + unit};
  }
  return v;
}

constexpr uint64_t kMaxJobs = 1024;
const uint64_t kMaxSeconds = static_cast<uint64_t>(kMaxTimeoutSeconds);

// The options of one check, the same for check, repro and replay: built from
// the command line here, then passed on unchanged (replay sets the seed of
// each file, check the seed of each case).
CheckOptions check_options_of(const Args& a) {
  CheckOptions co;
  co.strict_padding = a.has("strict-padding");  // compare the bytes the document leaves free too
  return co;
}

// How check, repro and replay run one case: a plugin (or --isolate) in a child
// process with a time limit, a built-in implementation in this process.
struct CaseRunner {
  const Impl& impl;
  bool isolate = false;
  double timeout = 10;
  CheckReport operator()(const Case& c, const CheckOptions& co) const {
    return isolate ? check_isolated(c, reference_impl(), impl, co, timeout) : check(c, reference_impl(), impl, co);
  }
};

CaseRunner runner_of(const Args& a, const Impl& impl, double default_timeout) {
  CaseRunner r{impl};
  r.isolate = dynamic_cast<const PluginImpl*>(&impl) != nullptr || a.has("isolate");
  r.timeout = a.has("timeout") ? static_cast<double>(ranged_number(a, "timeout", 10, 1, kMaxSeconds, " seconds"))
                               : default_timeout;
  return r;
}

// Declining a case the plugin claims in its capabilities is a failure.
CheckReport claimed_decline(const Impl& impl, const Case& c, CheckReport r) {
  const auto* plugin = dynamic_cast<const PluginImpl*>(&impl);
  if (r.verdict != Verdict::kDeclined || !plugin || plugin->capabilities().empty() || !plugin->claims(c)) return r;
  r.verdict = Verdict::kFail;
  r.message = "FAIL " + to_string(c) + ": " + impl.name() + " claims this case in its capabilities but answers unsupported:\n" +
              r.message + "  repro: " + r.repro + "\n";
  return r;
}

// share/layoutcheck beside the executable's bin/ (an installed tree, or the
// build tree, where CMake links it to the sources), or $LAYOUTCHECK_DATA_DIR.
std::string data_dir(const char* what) {
  if (const char* env = std::getenv("LAYOUTCHECK_DATA_DIR"); env != nullptr && *env != 0) return env;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir = exe.parent_path().parent_path() / "share" / "layoutcheck";
  if (!ec && std::filesystem::is_directory(dir / what, ec)) return dir.string();
  throw UsageError{std::string("cannot find layoutcheck's ") + what + " (looked in " + (dir / what).string() +
                   "); set LAYOUTCHECK_DATA_DIR to the directory that holds oracles/ and spec/"};
}

int cmd_check(const Args& a) {
  expect_known_options(a, {"impl", "layout", "seconds", "seed", "json", "min-cases", "max-cases", "cases", "jobs",
                           "timeout", "save", "isolate", "fail-fast", "strict-padding"});
  RunOptions opt;
  opt.layout_glob = a.get("layout", "*");
  opt.cases = ranged_number(a, "cases", 0, 1, UINT64_MAX);
  if (opt.cases && (a.has("seconds") || a.has("min-cases") || a.has("max-cases"))) {
    throw UsageError{"--cases fixes the number of cases per layout; it does not combine with --seconds, --min-cases "
                     "or --max-cases"};
  }
  opt.seconds = static_cast<double>(ranged_number(a, "seconds", 20, 0, kMaxSeconds, " seconds"));
  opt.seed = ranged_number(a, "seed", 1, 0, UINT64_MAX);
  opt.min_cases = ranged_number(a, "min-cases", 20, 0, UINT64_MAX);
  opt.max_cases = ranged_number(a, "max-cases", 0, 0, UINT64_MAX);
  opt.jobs = static_cast<unsigned>(ranged_number(a, "jobs", 1, 1, kMaxJobs));
  opt.check = check_options_of(a);
  opt.fail_fast = a.has("fail-fast");
  if (a.has("save") && a.get("save").empty()) throw UsageError{"--save takes a directory"};
  // Regression files go only where --save says.
  const std::string save_dir = a.get("save", "");
  bool matched = false;
  for (const auto& s : layout_specs()) matched |= glob_match(opt.layout_glob, s.name);
  if (!matched) throw UsageError{"--layout '" + opt.layout_glob + "' matches no registered layout"};
  const Impl& impl = impl_of(a);
  const auto* plugin = dynamic_cast<const PluginImpl*>(&impl);
  // Plugins run each case in a child process: a crash or hang fails that case
  // only. A fixed case count has no time limit unless --timeout sets one.
  const CaseRunner run_one = runner_of(a, impl, opt.cases ? kNoTimeLimit : 10);
  opt.runner = run_one;
  if (plugin && !plugin->capabilities().empty()) opt.claimed = [plugin](const Case& c) { return plugin->claims(c); };
  opt.progress = [](const std::string& line) { std::cerr << line << std::endl; };
  if (!save_dir.empty()) {
    auto removed = remove_stale_regression_temporaries(save_dir);
    if (!removed.ok()) throw UsageError{removed.status().message()};
    if (*removed) std::cerr << "layoutcheck check: removed " << *removed << " unfinished file(s) of an earlier run from " << save_dir << std::endl;
  }
  std::cerr << "layoutcheck check: " << impl.name() << " vs reference, layouts '" << opt.layout_glob << "', ";
  if (opt.cases) std::cerr << opt.cases << " cases per layout";
  else std::cerr << opt.seconds << " s";
  std::cerr << ", seed " << opt.seed << ", " << opt.jobs << " job(s)"
            << (run_one.isolate ? ", each case in a child process" : "") << std::endl;
  // A plugin first replays the documents' worked examples (their rejection
  // cases included) of the layouts it claims and --layout selects.
  uint64_t oracle_passed = 0, oracle_failed = 0;
  std::vector<std::string> oracle_failures;
  if (plugin) {
    auto cases = or_fail(load_oracle_dir(data_dir("oracles") + "/oracles", data_dir("spec") + "/spec"));
    OracleOptions oo;
    oo.describer = &reference_impl();
    oo.claimed = [&](const Case& c) {
      if (!glob_match(opt.layout_glob, c.layout.name)) return false;
      return plugin->capabilities().empty() ? plugin->supports(c).code() != StatusCode::kUnsupported
                                            : plugin->claims(c);
    };
    for (const auto& oc : cases) {
      OracleResult r = run_oracle_case(oc, impl, oo);
      if (r.outcome == OracleResult::kPassed) ++oracle_passed;
      if (r.outcome != OracleResult::kFailed) continue;
      ++oracle_failed;
      oracle_failures.insert(oracle_failures.end(), r.failures.begin(), r.failures.end());
    }
    std::cerr << "layoutcheck check: the documents' examples of the claimed layouts: " << oracle_passed
              << " passed, " << oracle_failed << " failed" << std::endl;
  }
  // The generated cases run even after a failed example: they find the smallest
  // failing case to print, save and replay.
  auto tallies = run_checks(reference_impl(), impl, opt);

  // Shrink each layout's first failure, print its reproducer and save it.
  std::vector<std::string> saved_paths;
  for (auto& t : tallies) {
    if (!t.failed) continue;
    CheckOptions co = opt.check;
    co.seed = t.first_failing_seed;
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
    if (!save_dir.empty()) {
      auto saved = save_regression(save_dir, small, impl.name(),
                                   r.message, co);
      if (saved.ok()) saved_paths.push_back(*saved);
      text += saved.ok() ? "  saved: " + *saved + "\n" : "  not saved: " + saved.status().message() + "\n";
    }
    t.first_failure = text;
  }
  const std::string replay_line =
      saved_paths.empty() ? ""
                          : "layoutcheck replay " +
                                std::filesystem::path(saved_paths.front()).parent_path().string() + " --impl " +
                                impl.name();

  bool failed = false;
  auto status_of = [](const LayoutTally& t) {
    if (t.failed) return "FAILED";
    if (t.passed == 0 && t.declined > 0) return "UNSUPPORTED";
    if (t.passed == 0) return "SKIPPED";
    return "PASSED";
  };
  if (a.has("json")) {
    std::string saved_json;
    for (const auto& p : saved_paths) saved_json += (saved_json.empty() ? "" : ", ") + json_escape(p);
    std::string oracle_json;
    for (const auto& f : oracle_failures) oracle_json += (oracle_json.empty() ? "" : ", ") + json_escape(f);
    failed = oracle_failed > 0;
    std::cout << "{\"impl\": " << json_escape(impl.name()) << ", \"seed\": " << opt.seed << ", \"saved\": ["
              << saved_json << "], \"oracle\": {\"passed\": " << oracle_passed << ", \"failed\": " << oracle_failed
              << ", \"failures\": [" << oracle_json << "]}, \"layouts\": [";
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
    std::cout << "\n], \"coverage\": " << cli::coverage_json(tallies) << "}\n";
    if (!saved_paths.empty()) std::cerr << "layoutcheck check: regression files saved; replay: " << replay_line << std::endl;
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
  std::fputs(cli::coverage_text(tallies).c_str(), stdout);
  for (const auto& t : tallies) {
    if (t.failed) std::printf("\n%s", t.first_failure.c_str());
  }
  if (plugin) {
    std::printf("\noracle (the documents' examples of the claimed layouts): %llu passed, %llu failed\n",
                static_cast<unsigned long long>(oracle_passed), static_cast<unsigned long long>(oracle_failed));
    for (const auto& f : oracle_failures) std::printf("  %s\n", f.c_str());
  }
  std::printf("\ncheck: %llu passed, %llu failed, %llu skipped\n",
              static_cast<unsigned long long>(total_passed + oracle_passed),
              static_cast<unsigned long long>(total_failed + oracle_failed),
              static_cast<unsigned long long>(total - total_passed - total_failed));
  if (!saved_paths.empty()) {
    std::printf("regressions: %zu file(s) saved in %s\n  replay: %s\n", saved_paths.size(),
                std::filesystem::path(saved_paths.front()).parent_path().c_str(), replay_line.c_str());
  } else if (total_failed && save_dir.empty()) {
    std::printf("regressions: not saved (--save DIR keeps them for `layoutcheck replay DIR`)\n");
  }
  return total_failed + oracle_failed ? 1 : 0;
}

int cmd_repro(const Args& a) {
  expect_known_options(a, {"dtype", "shape", "impl", "seed", "timeout", "isolate", "strict-padding"});
  Case c = case_of(a);
  CheckOptions co = check_options_of(a);
  co.seed = ranged_number(a, "seed", 1, 0, UINT64_MAX);
  const Impl& impl = impl_of(a);
  const CaseRunner run_one = runner_of(a, impl, 10);
  CheckReport r = claimed_decline(impl, c, run_one(c, co));
  std::cout << r.message;
  return r.verdict == Verdict::kFail ? 1 : 0;
}

// The regression files under a path: the file itself, or every file of a
// directory tree but hidden ones (unfinished saves) and those that are not
// regression files (fuzzer byte inputs, READMEs), which are counted.
void collect_regressions(const std::string& path, std::vector<std::pair<std::string, std::string>>* files,
                         uint64_t* ignored) {
  namespace fs = std::filesystem;
  auto read = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw UsageError{"cannot read " + p.string()};
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> found;
    fs::recursive_directory_iterator it(path, fs::directory_options::follow_directory_symlink, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (!name.empty() && name[0] == '.') {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file()) found.push_back(it->path());
    }
    if (ec) throw UsageError{"cannot list " + path + ": " + ec.message()};
    std::sort(found.begin(), found.end());
    for (const auto& p : found) {
      std::string text = read(p);
      if (is_regression_text(text)) files->emplace_back(p.string(), std::move(text));
      else ++*ignored;
    }
  } else if (fs::exists(path, ec)) {
    // A file named on the command line must be a regression file.
    files->emplace_back(path, read(path));
  } else {
    throw UsageError{path + ": no such file or directory"};
  }
}

int cmd_replay(const Args& a) {
  expect_known_options(a, {"impl", "timeout", "isolate", "strict-padding"});
  if (a.positional.empty()) throw UsageError{"'replay' takes one or more regression files or directories of them"};
  std::vector<std::pair<std::string, std::string>> files;
  uint64_t ignored = 0;
  for (const auto& p : a.positional) collect_regressions(p, &files, &ignored);
  // Every file is read before any case runs: a malformed one stops the replay.
  std::vector<std::pair<std::string, Regression>> regressions;
  bool malformed = false;
  for (const auto& [path, text] : files) {
    auto r = parse_regression(text, path);
    if (r.ok()) {
      regressions.emplace_back(path, *r);
    } else {
      std::cerr << "layoutcheck: " << r.status().message() << "\n";
      malformed = true;
    }
  }
  if (malformed) return 2;
  if (regressions.empty()) {
    throw UsageError{"no regression files (a 'case: LAYOUT | DTYPE | SHAPE' line first) in the given paths"};
  }
  const Impl& impl = impl_of(a);
  const CaseRunner run_one = runner_of(a, impl, 10);
  const CheckOptions base = check_options_of(a);
  std::map<Verdict, uint64_t> count;
  for (const auto& [path, reg] : regressions) {
    CheckOptions co = base;
    co.seed = reg.seed;
    CheckReport r = claimed_decline(impl, reg.c, run_one(reg.c, co));
    ++count[r.verdict];
    const bool ok = r.verdict == Verdict::kPass || r.verdict == Verdict::kBothInvalid;
    std::printf("%-8s %s\n", ok ? "ok" : verdict_name(r.verdict), path.c_str());
    if (r.verdict == Verdict::kFail) std::printf("%s", r.message.c_str());
  }
  std::printf("replay: %llu passed, %llu failed, %llu declined, %llu skipped",
              static_cast<unsigned long long>(count[Verdict::kPass] + count[Verdict::kBothInvalid]),
              static_cast<unsigned long long>(count[Verdict::kFail]),
              static_cast<unsigned long long>(count[Verdict::kDeclined]),
              static_cast<unsigned long long>(count[Verdict::kSkipped]));
  if (ignored) std::printf(" (%llu other files ignored)", static_cast<unsigned long long>(ignored));
  std::printf("\n");
  return count[Verdict::kFail] ? 1 : 0;
}

int cmd_oracle(const Args& a) {
  expect_known_options(a, {"id", "impl", "dir", "spec-dir", "json"});
  const Impl& impl = a.has("impl") ? impl_of(a) : optimized_impl();
  const auto* plugin = dynamic_cast<const PluginImpl*>(&impl);
  const std::string dir = a.has("dir") ? a.get("dir") : data_dir("oracles") + "/oracles";
  const std::string spec_dir = a.has("spec-dir") ? a.get("spec-dir") : data_dir("spec") + "/spec";
  auto cases = or_fail(load_oracle_dir(dir, spec_dir));
  // A fact the reference does not report for its case is a mistake of the file.
  or_fail(check_oracle_facts(cases, reference_impl()));
  auto precision_cases = or_fail(load_precision_oracle_dir(dir, spec_dir));
  OracleOptions options;
  options.describer = &reference_impl();
  if (plugin) {
    // A case outside the plugin's capabilities is skipped; a claimed case it
    // declines fails. A plugin that lists no capabilities claims what it accepts.
    if (!plugin->capabilities().empty()) {
      options.claimed = [plugin](const Case& c) { return plugin->claims(c); };
    } else {
      options.claimed = [plugin](const Case& c) { return plugin->supports(c).code() != StatusCode::kUnsupported; };
    }
  }
  const std::string glob = a.get("id", "*");
  uint64_t run = 0, counts[3] = {0, 0, 0};
  std::string json;
  for (const auto& oc : cases) {
    if (!glob_match(glob, oc.id)) continue;
    ++run;
    OracleResult r = run_oracle_case(oc, impl, options);
    ++counts[r.outcome];
    std::string how;
    if (!r.facts_from.empty()) how += "facts from " + r.facts_from;
    if (r.offsets_from_pack) how += std::string(how.empty() ? "" : ", ") + "offsets through pack";
    if (a.has("json")) {
      std::string f;
      for (const auto& s : r.failures) f += (f.empty() ? "" : ", ") + json_escape(s);
      json += std::string(json.empty() ? "" : ",") + "\n  {\"id\": " + json_escape(oc.id) +
              ", \"source\": " + json_escape(oc.source) + ", \"status\": " + json_escape(outcome_name(r.outcome)) +
              ", \"passed\": " + (r.outcome == OracleResult::kPassed ? "true" : "false") +
              ", \"facts_from\": " + json_escape(r.facts_from) + ", \"offsets_from\": " +
              json_escape(r.offsets_from_pack ? "pack" : "offset_bits") +
              ", \"skip_reason\": " + json_escape(r.skip_reason) + ", \"failures\": [" + f + "]}";
    } else {
      const char* status = r.outcome == OracleResult::kPassed   ? "ok"
                           : r.outcome == OracleResult::kFailed ? "FAILED"
                                                                : "skipped";
      std::printf("%-44s %s  (%s)%s\n", oc.id.c_str(), status, oc.source.c_str(),
                  how.empty() ? "" : ("  [" + how + "]").c_str());
      for (const auto& s : r.failures) std::printf("    %s\n", s.c_str());
    }
  }
  // The precision oracles (*.precision): conversions of the implementation's
  // converter; a plugin implements layouts only, so they are skipped for it.
  const Converter* converter = &impl == &reference_impl()   ? &precision_reference()
                               : &impl == &optimized_impl() ? &precision_optimized()
                                                            : nullptr;
  for (const auto& pc : precision_cases) {
    if (!glob_match(glob, pc.id)) continue;
    ++run;
    std::vector<std::string> failures;
    if (converter) failures = run_precision_oracle(pc, *converter);
    const OracleResult::Outcome outcome = !converter          ? OracleResult::kSkipped
                                          : failures.empty() ? OracleResult::kPassed
                                                             : OracleResult::kFailed;
    ++counts[outcome];
    const std::string skip_reason = converter ? "" : impl.name() + " has no precision conversions";
    if (a.has("json")) {
      std::string f;
      for (const auto& s : failures) f += (f.empty() ? "" : ", ") + json_escape(s);
      json += std::string(json.empty() ? "" : ",") + "\n  {\"id\": " + json_escape(pc.id) +
              ", \"source\": " + json_escape(pc.source) + ", \"status\": " + json_escape(outcome_name(outcome)) +
              ", \"passed\": " + (outcome == OracleResult::kPassed ? "true" : "false") +
              ", \"converter\": " + json_escape(converter ? converter->name() : "") +
              ", \"skip_reason\": " + json_escape(skip_reason) + ", \"failures\": [" + f + "]}";
    } else {
      const char* status = outcome == OracleResult::kPassed ? "ok" : outcome == OracleResult::kFailed ? "FAILED" : "skipped";
      std::printf("%-44s %s  (%s)%s\n", pc.id.c_str(), status, pc.source.c_str(),
                  converter ? ("  [converter " + converter->name() + "]").c_str() : "");
      for (const auto& s : failures) std::printf("    %s\n", s.c_str());
    }
  }
  if (run == 0) throw UsageError{"no oracle case matches --id '" + glob + "'"};
  const auto passed = static_cast<unsigned long long>(counts[OracleResult::kPassed]);
  const auto failed = static_cast<unsigned long long>(counts[OracleResult::kFailed]);
  const auto skipped = static_cast<unsigned long long>(counts[OracleResult::kSkipped]);
  if (a.has("json")) {
    std::cout << "{\"impl\": " << json_escape(impl.name()) << ", \"passed\": " << passed << ", \"failed\": " << failed
              << ", \"skipped\": " << skipped << ", \"cases\": [" << json << "\n]}\n";
  } else {
    std::printf("%llu passed, %llu failed, %llu skipped\n", passed, failed, skipped);
  }
  return failed ? 1 : 0;
}

}  // namespace

int run_command(int argc, char** argv) {
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
    if (a.command == "replay") return cmd_replay(a);
    if (a.command == "oracle") return cmd_oracle(a);
    if (a.command == "rules") {
      expect_known_options(a, {"json"});
      return cli::rules_main(a.positional.empty() ? "*" : a.positional[0], a.has("json"));
    }
    throw UsageError{"unknown command " + quote_input(a.command)};
  } catch (const UsageError& e) {
    std::cerr << "layoutcheck: " << e.message << "\n";
    if (e.message.find("command") != std::string::npos) std::cerr << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "layoutcheck: " << e.what() << "\n";
    return 2;
  }
}

int main(int argc, char** argv) {
  // A write past a file-size limit fails with EFBIG (and is reported, the
  // temporary file removed) instead of killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  const int status = run_command(argc, argv);
  if (Status s = cli::flush_stdout(); !s.ok()) {
    std::cerr << "layoutcheck: " << s.message() << "\n";
    return status == 0 ? 2 : status;
  }
  return status;
}
