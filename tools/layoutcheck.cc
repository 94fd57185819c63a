// layoutcheck — the command line.
//
//   layoutcheck list [--json]
//   layoutcheck list --coverage [--json | --markdown] [--items FILE]   (tools/coverage_cmd.cc)
//   layoutcheck describe LAYOUT --dtype D --shape a,b,c,d [--impl NAME] [--json]
//   layoutcheck offset   LAYOUT --dtype D --shape ... --at i,j,k,l [--at ...] [--impl NAME]
//   layoutcheck pack     LAYOUT --dtype D --shape ... [--impl NAME] [--in FILE] [--out FILE]
//   layoutcheck unpack   LAYOUT --dtype D --shape ... [--impl NAME] [--in FILE] [--out FILE]
//   layoutcheck check    [--impl NAME|PATH.so] [--layout GLOB] [--seconds N | --cases N] [--seed N]
//                        [--jobs N] [--timeout S] [--save DIR] [--json]
//   layoutcheck repro    LAYOUT --dtype D --shape ... [--impl NAME] [--seed N] [--timeout S]
//   layoutcheck replay   PATH... [--impl NAME] [--timeout S]
//   layoutcheck oracle   [--id GLOB] [--impl NAME|PATH.so] [--dir DIR] [--spec-dir DIR] [--json]
//   layoutcheck show     LAYOUT --dtype D --shape ... [--impl NAME] [--format text|svg|html] [--out FILE]
//                        [--max-rows N]   (tools/show.cc)
//   layoutcheck precision nvdla ..., layoutcheck convert ... (tools/precision_cli.cc)
//   layoutcheck okk      --lib PATH.so [--chip bm1684|bm1684x] [--npus X --eu-bytes B] [--json]   (tools/okk_cmd.cc)
//   layoutcheck tuple    --lib PATH.so [--json]   (tools/tuple_cmd.cc)
//   layoutcheck sparse   --lib PATH.so [--seed N] [--cases N] [--placement P] [--json]   (tools/sparse_cmd.cc)
// Every option of every command: kCommands below, and `layoutcheck COMMAND --help`.
//
// Exit status: 0 success, 1 a check or oracle failed, 2 bad input or a failed read
// or write (the message names the path and the reason).
#include <algorithm>
#include <chrono>
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
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "layoutcheck/byte_rules.h"
#include "layoutcheck/c_api.h"
#include "layoutcheck/checker.h"
#include "layoutcheck/impl.h"
#include "layoutcheck/int_tuple.h"
#include "layoutcheck/oracle.h"
#include "layoutcheck/plugin.h"
#include "layoutcheck/precision.h"
#include "layoutcheck/tla_api.h"
#include "optimized/threads.h"
#include "tools/cli_args.h"
#include "tools/cli_io.h"
#include "tools/cli_json.h"
#include "tools/cli_junit.h"
#include "tools/cli_progress.h"
#include "tools/coverage_cmd.h"
#include "tools/extension_cli.h"
#include "tools/okk_cmd.h"
#include "tools/precision_cli.h"
#include "tools/rules_cmd.h"
#include "tools/show.h"
#include "tools/tuple_cmd.h"
#include "tools/sparse_cmd.h"

using namespace layoutcheck;

namespace {

// The end of the man page (`layoutcheck --help-all`).
const char* kMoreHelp =
    "Files:\n"
    "  An input (--in) is read up to the size the case needs; one byte more is an error. An output\n"
    "  (--out) replaces a regular file atomically (temporary file beside it, fsync, rename), writes a\n"
    "  device or FIFO in place, and follows a symbolic link to its target; a failed write exits 2 and\n"
    "  leaves no file behind.\n"
    "\n"
    "Environment:\n"
    "  LAYOUTCHECK_PLUGIN_TIMEOUT  seconds each call of a plugin may take (default 10)\n"
    "  LAYOUTCHECK_DATA_DIR        the directory that holds oracles/, corpus/ and spec/\n"
    "                              (default: share/layoutcheck beside the executable's bin/)\n"
    "\n"
    "Exit status:\n"
    "  0 success, 1 a check or oracle failed, 2 bad input, a usage error or a failed read or write.\n";

using cli::Args;
using cli::CommandSpec;
using cli::OptionSpec;
using cli::UsageError;
using cli::parse_whole_number;
using cli::ranged_whole_number;

const char* kUsage =
    "usage: layoutcheck COMMAND [options]\n"
    "  list [--json]                                   every layout: name, family, document section\n"
    "  list --coverage [--json | --markdown]           every documented item and what checks it\n"
    "  describe LAYOUT --dtype D --shape S [--json]    size, strides, padding, rules\n"
    "  offset LAYOUT --dtype D --shape S --at C [--at C ...]   byte offset per coordinate\n"
    "  pack LAYOUT --dtype D --shape S [--in F] [--out F]      logical (row-major) -> physical\n"
    "  unpack LAYOUT --dtype D --shape S [--in F] [--out F]    physical -> logical\n"
    "  check [--layout GLOB] [--seconds N | --cases N] [--seed N] [--jobs N] [--timeout S] [--save DIR]\n"
    "        [--fail-fast] [--strict-padding] [--json]\n"
    "                                                  differential check vs the reference\n"
    "  repro LAYOUT --dtype D --shape S [--seed N] [--strict-padding] [--picture FILE]   replay one case of check\n"
    "  replay PATH... [--timeout S] [--strict-padding] [--picture DIR|FILE]\n"
    "                                                  replay regression files (or directories of them)\n"
    "  show LAYOUT --dtype D --shape S [--format text|svg|html] [--out F] [--max-rows N]\n"
    "                                                  the layout as a picture (default --impl reference)\n"
    "pictures of a failure: check --save DIR writes NAME.svg and NAME.html beside each regression file;\n"
    "  repro and replay write them with --picture\n"
    "  oracle [--id GLOB] [--dir DIR] [--spec-dir DIR] [--json]\n"
    "                                                  the documents' worked examples\n"
    "  rules [GLOB] [--json]                           the documents' rules: id, section, text\n"
    "  precision nvdla --layer conv|sdp|lrn|pdp --input FORMAT --output PRECISION   NVDLA precision tables\n"
    "  precision nvdla --lib PATH.so [--json]          a library's own precision tables and SDP layer rules\n"
    "                                                  vs the reference (--input/--output/--mode/--conv/--data:\n"
    "                                                  its layer function on that SDP layer alone)\n"
    "  convert --rule ieee|nvdla|nvdla-int --from D --to D [--unit U] [--flush-nan] [--offset X --scale Y]\n"
    "          [--truncate M] [--in F] [--out F]       convert raw little-endian values (NaN counts on stderr)\n"
    "  check --layout 'convert.*'|nvdla.sparse|nvdla.winograd.phase1   a plugin's ABI 1.1 entry points\n"
    "  okk --lib PATH.so [--chip bm1684|bm1684x] [--npus X --eu-bytes B] [--json]\n"
    "                                                  a library's own okk_* functions vs the reference\n"
    "  tuple --lib PATH.so [--json]                    a library's own IntTuple rank, get<I>, depth vs the reference\n"
    "  sparse --lib PATH.so [--seed N] [--cases N] [--placement P] [--json]\n"
    "                                                  a library's own NVDLA compressed-surface placement check vs the reference\n"
    "common: --impl reference|optimized|PATH.so (default optimized; a plugin runs isolated)\n"
    "help: layoutcheck COMMAND --help lists every option of a command; layoutcheck --version\n"
    "files: --in reads at most the size the case needs (one byte more is an error); --out replaces a\n"
    "  regular file atomically (temporary file beside it, fsync, rename), writes a device or FIFO in\n"
    "  place, follows a symbolic link to its target; a failed write exits 2 and leaves no file behind\n";

// The commands and every option they read. To add a command, add a row here
// and a branch in run_command(); to add an option, add it to its command's
// row (value: the placeholder of its value, or nullptr for a switch) and read
// it with a.get/a.has/a.all. The parser (tools/cli_args.cc, on CLI11), --help,
// the man page and the bash completion all come from this table.
const OptionSpec kImplOpt{"impl", "NAME|PATH.so", "reference, optimized (default) or a plugin's .so, run isolated"};
const OptionSpec kDtypeOpt{"dtype", "D", "element type (int8 uint8 ... fp32; see describe's errors for the list)"};
const OptionSpec kShapeOpt{"shape", "a,b,c,...", "logical extents separated by commas"};
const OptionSpec kJsonOpt{"json", nullptr, "print JSON instead of text"};
const OptionSpec kTimeoutOpt{"timeout", "S", "seconds each isolated case may take (1..2147483; default 10)"};
const OptionSpec kIsolateOpt{"isolate", nullptr, "run the cases in a sandboxed child process (always so for a plugin)"};
const OptionSpec kStrictOpt{"strict-padding", nullptr, "compare the bytes the document leaves free too"};
const OptionSpec kSeedOpt{"seed", "N", "random seed (default 1)"};
const OptionSpec kShardOpt{"shard", "i/n", "run shard i of n (1 <= i <= n): disjoint, deterministic, together the whole run"};
const OptionSpec kJunitOpt{"junit", "FILE", "also write a JUnit XML report to FILE (replaced atomically)"};

const OptionSpec kThreadsOpt{"threads", "N", "threads of the optimized implementation (default: every core from 16 MiB, else 1)"};

const std::vector<CommandSpec> kCommands = {
    {"list", "", 0, "every layout: name, family, document section",
     {kJsonOpt,
      {"coverage", nullptr, "every documented item instead: reference, optimized, oracles, property, fuzzer, plugin"},
      {"markdown", nullptr, "with --coverage: the table as Markdown (docs/coverage.md)"},
      {"items", "FILE", "with --coverage: read the items from FILE (default: the built-in docs/coverage_items.txt)"}}},
    {"describe", "LAYOUT", 1, "size, strides, padding and byte rules of one case",
     {kDtypeOpt, kShapeOpt, kImplOpt, kJsonOpt,
      {"get", "I0,I1,...", "TLA layouts: get<I0,I1,...> of the layout and its rank, depth, shape and stride (repeatable)"}}},
    {"offset", "LAYOUT", 1, "byte offset of each coordinate",
     {kDtypeOpt, kShapeOpt, kImplOpt,
      {"at", "i,j,...", "a logical coordinate (repeatable); TLA layouts also take nested ones, e.g. '((1,0),(1,1))'"}}},
    {"pack", "LAYOUT", 1, "logical (dense row-major) bytes to the physical layout",
     {kDtypeOpt, kShapeOpt, kImplOpt, {"in", "FILE", "input file (default: standard input)"},
      {"out", "FILE", "output file, replaced atomically (default: standard output)"}, kThreadsOpt}},
    {"unpack", "LAYOUT", 1, "physical bytes back to the logical layout",
     {kDtypeOpt, kShapeOpt, kImplOpt, {"in", "FILE", "input file (default: standard input)"},
      {"out", "FILE", "output file, replaced atomically (default: standard output)"}, kThreadsOpt}},
    {"check", "", 0, "differential check of an implementation against the reference",
     {kImplOpt,
      {"layout", "GLOB", "layouts to check (default *)"},
      {"seconds", "N", "time budget per layout (default 20)"},
      {"cases", "N", "exactly N cases per layout (no time budget)"},
      {"min-cases", "N", "at least N cases per layout within --seconds (default 20)"},
      {"max-cases", "N", "at most N cases per layout (default 0: no limit)"},
      kSeedOpt,
      {"jobs", "N", "parallel workers (1..1024, default 1)"},
      {"timeout", "S", "seconds each isolated case may take (default 10; none with --cases)"},
      {"save", "DIR", "save the smallest failing case of each layout as a regression file"},
      kIsolateOpt,
      {"fail-fast", nullptr, "stop a layout at its first failure"},
      kStrictOpt,
      kJsonOpt,
      kJunitOpt,
      kShardOpt}},
    {"repro", "LAYOUT", 1, "run one case of check again",
     {kDtypeOpt, kShapeOpt, kImplOpt, kSeedOpt, kTimeoutOpt, kIsolateOpt, kStrictOpt,
      {"picture", "FILE", "on failure, write the picture of the case to FILE (SVG, the HTML page beside it) and print the path"}}},
    {"replay", "PATH...", -1, "replay regression files (or directories of them)",
     {kImplOpt, kTimeoutOpt, kIsolateOpt, kStrictOpt, kJsonOpt, kJunitOpt, kShardOpt,
      {"picture", "DIR|FILE", "on failure, write pictures of the failing cases there and print the paths"}}},
    {"rules", "[GLOB]", 1, "the documents' rules by which a case is rejected: id, section, text", {kJsonOpt}},
    {"show", "LAYOUT", 1, "a case as a picture: byte offsets over the logical view and the physical memory",
     {kDtypeOpt, kShapeOpt,
      {"impl", "NAME|PATH.so", "reference (default), optimized or a plugin's .so, run isolated"},
      {"format", "text|svg|html", "text grids (default), an SVG drawn like the document's figures, or a self-contained page"},
      {"out", "FILE", "output file, replaced atomically (default: standard output)"},
      {"max-rows", "N", "physical rows drawn per column (default 64); larger cases are capped"}}},
    {"oracle", "", 0, "the documents' worked examples",
     {{"id", "GLOB", "oracle cases to run (default *)"},
      {"impl", "NAME|PATH.so", "implementation to test (default optimized)"},
      {"dir", "DIR", "directory of the oracle files (default: the installed ones)"},
      {"spec-dir", "DIR", "directory of the documents they cite"},
      kJsonOpt,
      kJunitOpt,
      kShardOpt}},
    {"precision", "nvdla", 1, "NVDLA precision tables: is a layer's input/output pair valid",
     {{"layer", "conv|sdp|lrn|pdp", "the layer"},
      {"input", "FORMAT", "image-uint8 image-int16 image-uint16 image-fp16 int8 int16 fp16"},
      {"output", "PRECISION", "int8 int16 fp16"},
      {"mode", "M", "SDP layer: offline (default) or on-flying; checks the layer and its SDP data"},
      {"conv", "MODE/IN/OUT", "SDP layer on-flying: the convolution in front, e.g. dc/int16/int16"},
      {"data", "LAYOUT@D@SHAPE", "SDP layer: SDP data it reads (repeatable)"},
      {"lib", "PATH.so", "a library's own nvdla_precision_supported against every row and nvdla_layer_supported against every SDP layer (nvdla_precision_compat.h), isolated; with the SDP layer options, that layer alone"},
      kJsonOpt}},
    {"convert", "", 0, "convert raw little-endian values (at most 256 MiB; NaN counts on standard error)",
     {{"rule", "ieee|nvdla|nvdla-int|nvdla-float", "conversion rule"},
      {"from", "D", "source type"},
      {"to", "D", "destination type"},
      {"unit", "U", "nvdla: conv conv-winograd sdp cdp pdp pdp-minmax; nvdla-float: conv sdp"},
      {"flush-nan", nullptr, "nvdla, nvdla-float: flush NaN"},
      {"offset", "X", "nvdla-int, nvdla-float: offset subtracted before scaling"},
      {"scale", "Y", "nvdla-int, nvdla-float: scaling factor (fp32)"},
      {"truncate", "M", "nvdla-int, nvdla-float: nearest-even (default) nearest-away toward-zero"},
      {"impl", "NAME|PATH.so", "converter: reference, optimized (default) or a plugin's .so (its convert member, run isolated)"},
      {"in", "FILE", "input file (default: standard input)"},
      {"out", "FILE", "output file, replaced atomically (default: standard output)"}}},
    {"okk", "", 0, "a library's own okk_* functions (okkernel_compat.h signatures) against the TPU reference",
     {{"lib", "PATH.so", "the library exporting the functions with C linkage; loaded and called in a child process"},
      {"chip", "bm1684|bm1684x", "NPU count and EU size of the chip (default bm1684: 64 NPUs, 128-byte EU)"},
      {"npus", "X", "the NPU count instead of the chip's (1..65536)"},
      {"eu-bytes", "B", "the EU size in bytes instead of the chip's (a multiple of 4, up to 65536)"},
      kJsonOpt}},
    {"tuple", "", 0, "a library's own IntTuple functions (tla_tuple.h: tla_rank, tla_get, tla_depth) against the TLA reference",
     {{"lib", "PATH.so", "the library exporting the functions with C linkage; loaded and called in a child process"},
      kJsonOpt}},
    {"sparse", "", 0,
     "a library's own placement check of the NVDLA compressed-weight surfaces (nvdla_surface.h: nvdla_sparse_surfaces_valid) "
     "against the reference",
     {{"lib", "PATH.so", "the library exporting the function with C linkage; loaded and called in a child process"},
      {"seed", "N", "seed of the random placements (default 1)"},
      {"cases", "N", "random placements after the boundary ones (default 2000, at most 1000000)"},
      {"placement", "P", "check only this placement: 'wgs=SIZE@ADDR wmb=SIZE@ADDR data=SIZE@ADDR' (repeatable)"},
      kJsonOpt}},
};

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

// Seconds since the process started (the reports' elapsed_seconds).
const auto kStart = std::chrono::steady_clock::now();
double elapsed_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kStart).count();
}

// --shard i/n as {i - 1, n}; {0, 1} without it.
std::pair<uint64_t, uint64_t> shard_of(const Args& a) {
  if (!a.has("shard")) return {0, 1};
  const std::string text = a.get("shard");
  const size_t slash = text.find('/');
  auto number = [](const std::string& t, uint64_t* v) {
    const std::optional<uint64_t> n = parse_whole_number(t);
    if (!n || *n > 999'999'999) return false;
    *v = *n;
    return true;
  };
  uint64_t i = 0, n = 0;
  if (slash == std::string::npos || !number(text.substr(0, slash), &i) || !number(text.substr(slash + 1), &n) ||
      i < 1 || i > n) {
    throw UsageError{"--shard " + quote_input(text) + " is not i/n with 1 <= i <= n (e.g. 2/4)"};
  }
  return {i - 1, n};
}

// Writes the --junit report, if asked for; a failed write is exit status 2.
void write_junit_of(const Args& a, const std::string& suite, const std::vector<cli::JunitCase>& cases) {
  if (!a.has("junit")) return;
  if (a.get("junit").empty()) throw UsageError{"--junit takes a file name"};
  or_fail(cli::write_junit(a.get("junit"), suite, cases, elapsed_seconds()));
}

// The line of a failure message that says what failed: its "FAIL ..." line, else its first.
std::string first_line(const std::string& text) {
  size_t at = text.rfind("FAIL ", 0) == 0 ? 0 : text.find("\nFAIL ");
  at = at == std::string::npos ? 0 : at + (at ? 1 : 0);
  return text.substr(at, text.find('\n', at) - at);
}

// Defined below, with the commands that read the data directory.
std::string data_dir(const char* what);

int cmd_list(const Args& a) {
  expect_known_options(a, {"json", "coverage", "markdown", "items"});
  if (a.has("coverage")) {
    if (a.has("json") && a.has("markdown")) throw UsageError{"list --coverage takes --json or --markdown, not both"};
    cli::CoverageRequest request;
    request.items_path = a.get("items", "");
    if (a.has("items") && request.items_path.empty()) throw UsageError{"--items takes a file name"};
    request.oracle_dir = data_dir("oracles") + "/oracles";
    request.spec_dir = data_dir("spec") + "/spec";
    request.format = a.has("json")       ? cli::CoverageRequest::Format::kJson
                     : a.has("markdown") ? cli::CoverageRequest::Format::kMarkdown
                                         : cli::CoverageRequest::Format::kText;
    return cli::coverage_main(request);
  }
  if (a.has("markdown") || a.has("items")) throw UsageError{"--markdown and --items go with list --coverage"};
  // A layout's parameters with the values they take when left out (a
  // default may follow another parameter, as a chip's preset: these are the
  // values with every parameter left out).
  const auto defaults = [](const LayoutSpec& s) {
    auto layout = make_layout(s.name);
    return layout.ok() ? layout->params : ParamMap{};
  };
  if (a.has("json")) {
    cli::Json j = cli::report_header("list");
    j["layouts"] = cli::Json::array();
    for (const auto& s : layout_specs()) {
      cli::Json params = cli::Json::array();
      for (const auto& p : s.params) params.push_back(p.key);
      j["layouts"].push_back({{"name", s.name},
                              {"family", s.name.substr(0, s.name.find('.'))},
                              {"document", s.document},
                              {"section", s.section},
                              {"dims", s.dims},
                              {"parameters", params},
                              {"defaults", defaults(s)},
                              {"summary", s.summary}});
    }
    std::cout << cli::dump_json(j);
    return 0;
  }
  for (const auto& s : layout_specs()) {
    std::string dims;
    for (const auto& d : s.dims) dims += (dims.empty() ? "" : ",") + d;
    std::string params;
    const ParamMap values = defaults(s);
    for (const auto& p : s.params) {
      const auto v = values.find(p.key);
      params += (params.empty() ? "" : ",") + p.key + (v == values.end() ? "" : "=" + v->second);
    }
    std::printf("%-18s %-6s (%s) %s\n    %s § %s\n    parameters: %s\n", s.name.c_str(),
                s.name.substr(0, s.name.find('.')).c_str(), dims.c_str(), s.summary.c_str(), s.document.c_str(),
                s.section.c_str(), params.empty() ? "none" : params.c_str());
  }
  return 0;
}

// "get<I0,I1,...,IN>(x) := get<IN>(...(get<I1>(get<I0>(x)))...)" and
// rank<I...>, depth<I...>, shape<I...>, stride<I...> of it (catlass-tla-layouts.txt,
// "Layout 使用"), over the layout in effect as the implementation describes it
// (its tla_shape and tla_stride facts), through that implementation's tuple
// functions (layoutcheck/tla_api.h; the reference's for a plugin).
std::vector<Fact> tla_get_facts(const std::vector<Fact>& facts, const std::string& path_text, const std::string& impl) {
  std::string shape_text, stride_text;
  for (const auto& [k, v] : facts) {
    if (k == "tla_shape") shape_text = v;
    if (k == "tla_stride") stride_text = v;
  }
  if (shape_text.empty() || stride_text.empty()) {
    throw UsageError{"--get takes the modes of a CATLASS TLA layout (tla.*); this case has none"};
  }
  const TlaLayoutText layout{or_fail(parse_int_tuple(shape_text)), or_fail(parse_int_tuple(stride_text))};
  std::vector<uint64_t> path;
  std::vector<std::string> parts;
  for (size_t from = 0;;) {
    const size_t comma = path_text.find(',', from);
    parts.push_back(path_text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  for (const std::string& part : parts) {
    const std::optional<uint64_t> i = parse_whole_number(part);
    if (!i || *i > IntTuple::kMaxLeaves) {
      throw UsageError{"--get " + quote_input(path_text) + " is not a list of mode indices I0,I1,... (e.g. 1,0)"};
    }
    path.push_back(*i);
  }
  const TupleApi* api = tuple_api_named(impl);
  auto query = layout_query(api ? *api : reference_tuple_api(), layout, path);
  if (!query.ok()) throw UsageError{query.status().message()};
  return *query;
}

int cmd_describe(const Args& a) {
  expect_known_options(a, {"dtype", "shape", "impl", "json", "get"});
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
  for (const std::string& path : a.all("get")) {
    for (Fact& f : tla_get_facts(more.ok() ? *more : std::vector<Fact>{}, path, ref.name())) facts.push_back(std::move(f));
  }
  if (a.has("json")) {
    cli::Json j = cli::report_header("describe");
    cli::Json f = cli::Json::object();
    for (const auto& [k, v] : facts) f[k] = cli::number_or_string(v);
    j["facts"] = f;
    std::cout << cli::dump_json(j);
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
    uint64_t bits = 0;
    if (at.find('(') != std::string::npos) {
      // A nested coordinate of a TLA layout: "((1,0),(1,1))", or "(1,0),(1,1)" without the outer pair.
      auto tuple = parse_int_tuple(at);
      if (!tuple.ok() || tuple->is_integer()) tuple = parse_int_tuple("(" + at + ")");
      bits = or_fail(impl.offset_bits_nested(c, or_fail(std::move(tuple))));
    } else {
      auto coord = parse_shape(at, "coordinate");
      if (!coord.ok()) throw UsageError{"--at: " + coord.status().message()};
      bits = or_fail(impl.offset_bits(c, *coord));
    }
    if (bits % 8 == 0) std::cout << bits / 8 << "\n";
    else std::cout << bits / 8 << "+" << bits % 8 << "b\n";
  }
  return 0;
}

int cmd_pack(const Args& a, bool pack) {
  expect_known_options(a, {"dtype", "shape", "impl", "in", "out", "threads"});
  Case c = case_of(a);
  const Impl& impl = impl_of(a);
  const ThreadCountScope threads(cli::thread_count(a));
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
  // The children that check the cases, one per thread of the run (the runner is copied, they are shared).
  std::shared_ptr<ReusedChildren> children = std::make_shared<ReusedChildren>();
  CheckReport operator()(const Case& c, const CheckOptions& co) const {
    return isolate ? check_isolated_reused(c, reference_impl(), impl, co, timeout, *children)
                   : check(c, reference_impl(), impl, co);
  }
};

CaseRunner runner_of(const Args& a, const Impl& impl, double default_timeout) {
  CaseRunner r{impl};
  r.isolate = dynamic_cast<const PluginImpl*>(&impl) != nullptr || a.has("isolate");
  r.timeout = a.has("timeout") ? static_cast<double>(ranged_whole_number(a, "timeout", 10, 1, kMaxSeconds, " seconds"))
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

int cmd_show(const Args& a) {
  expect_known_options(a, {"dtype", "shape", "impl", "format", "out", "max-rows"});
  Case c = case_of(a);
  const Impl& impl = a.has("impl") ? impl_of(a) : reference_impl();
  require_supported(impl, c);
  cli::ShowRequest request;
  request.format = a.get("format", "text");
  request.out = a.get("out", "-");
  request.max_rows = ranged_whole_number(a, "max-rows", 64, 1, 4096);
  or_fail(cli::show(c, impl, request));
  return 0;
}

// Writes the picture of a failure and says where (or why not).
std::string failure_picture(const Case& c, const Impl& impl, const std::string& message, const std::string& svg) {
  auto written = cli::write_failure_picture(c, impl, message, svg);
  return written.ok() ? "  picture: " + *written + "\n" : "  picture not written: " + written.status().message() + "\n";
}

int cmd_check(const Args& a) {
  expect_known_options(a, {"impl", "layout", "seconds", "seed", "json", "min-cases", "max-cases", "cases", "jobs",
                           "timeout", "save", "isolate", "fail-fast", "strict-padding", "junit", "shard"});
  RunOptions opt;
  opt.layout_glob = a.get("layout", "*");
  opt.cases = ranged_whole_number(a, "cases", 0, 1, UINT64_MAX);
  if (opt.cases && (a.has("seconds") || a.has("min-cases") || a.has("max-cases"))) {
    throw UsageError{"--cases fixes the number of cases per layout; it does not combine with --seconds, --min-cases "
                     "or --max-cases"};
  }
  opt.seconds = static_cast<double>(ranged_whole_number(a, "seconds", 20, 0, kMaxSeconds, " seconds"));
  opt.seed = ranged_whole_number(a, "seed", 1, 0, UINT64_MAX);
  opt.min_cases = ranged_whole_number(a, "min-cases", 20, 0, UINT64_MAX);
  opt.max_cases = ranged_whole_number(a, "max-cases", 0, 0, UINT64_MAX);
  if (opt.max_cases != 0 && opt.min_cases > opt.max_cases) {
    throw UsageError{"--min-cases " + std::to_string(opt.min_cases) + " is more than --max-cases " +
                     std::to_string(opt.max_cases)};
  }
  opt.jobs = static_cast<unsigned>(ranged_whole_number(a, "jobs", 1, 1, kMaxJobs));
  opt.check = check_options_of(a);
  opt.fail_fast = a.has("fail-fast");
  if (a.has("save") && a.get("save").empty()) throw UsageError{"--save takes a directory"};
  // Regression files go only where --save says.
  const std::string save_dir = a.get("save", "");
  // Conversions, sparse compression, Winograd phase 1 (tools/extension_cli.cc).
  if (cli::is_extension_glob(opt.layout_glob)) {
    return cli::check_extensions(impl_of(a), {opt.layout_glob, opt.seed, opt.cases, opt.seconds, opt.fail_fast, a.has("json")});
  }
  bool matched = false;
  for (const auto& s : layout_specs()) matched |= glob_match(opt.layout_glob, s.name);
  if (!matched) throw UsageError{"--layout '" + opt.layout_glob + "' matches no registered layout"};
  const Impl& impl = impl_of(a);
  const auto* plugin = dynamic_cast<const PluginImpl*>(&impl);
  // Plugins run the cases in a child process: a crash or hang fails that case
  // only. A fixed case count has no time limit unless --timeout sets one.
  const CaseRunner run_one = runner_of(a, impl, opt.cases ? kNoTimeLimit : 10);
  opt.runner = run_one;
  if (plugin && !plugin->capabilities().empty()) opt.claimed = [plugin](const Case& c) { return plugin->claims(c); };
  std::tie(opt.shard_index, opt.shard_count) = shard_of(a);
  uint64_t shard_layouts = 0, matched_layouts = 0;
  for (const auto& s : layout_specs()) {
    if (glob_match(opt.layout_glob, s.name) && matched_layouts++ % opt.shard_count == opt.shard_index) ++shard_layouts;
  }
  cli::ProgressLine live("check", !a.has("json"), opt.cases ? 0 : opt.seconds);
  opt.progress = [&live](const std::string& line) { live.print(line); };
  std::map<std::string, std::pair<uint64_t, uint64_t>> live_counts;  // layout -> cases, failures
  opt.on_case = [&](const std::string& layout, uint64_t done, uint64_t failures) {
    live_counts[layout] = {done, failures};
    uint64_t all = 0, failed_all = 0;
    for (const auto& [name, n] : live_counts) all += n.first, failed_all += n.second;
    live.update(layout, all, opt.cases * shard_layouts, failed_all);
  };
  if (!save_dir.empty()) {
    auto removed = remove_stale_regression_temporaries(save_dir);
    if (!removed.ok()) throw UsageError{removed.status().message()};
    if (*removed) std::cerr << "layoutcheck check: removed " << *removed << " unfinished file(s) of an earlier run from " << save_dir << std::endl;
  }
  std::cerr << "layoutcheck check: " << impl.name() << " vs reference, layouts '" << opt.layout_glob << "', ";
  if (opt.cases) std::cerr << opt.cases << " cases per layout";
  else std::cerr << opt.seconds << " s";
  std::cerr << ", seed " << opt.seed << ", " << opt.jobs << " job(s)"
            << (run_one.isolate ? ", the cases in a child process" : "") << std::endl;
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
  live.finish();

  // Shrink each layout's first failure, print its reproducer and save it.
  std::vector<std::string> saved_paths;
  std::map<std::string, std::string> repro_of;  // layout -> the repro line of its smallest failing case
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
    repro_of[t.layout] = repro_command(small, impl.name(), co);
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
      if (saved.ok()) text += failure_picture(small, impl, r.message, cli::picture_path_beside(*saved));
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
  if (a.has("junit")) {
    std::vector<cli::JunitCase> cases;
    for (const auto& t : tallies) {
      cli::JunitCase c{"check." + t.layout.substr(0, t.layout.find('.')), t.layout};
      if (t.failed) {
        auto it = repro_of.find(t.layout);
        c.outcome = cli::JunitCase::kFailed;
        c.message = first_line(t.first_failure);
        c.details = t.first_failure + (it == repro_of.end() ? "" : "repro: " + it->second + "\n");
      } else if (t.passed + t.invalid == 0) {
        c.outcome = cli::JunitCase::kSkipped;
        c.message = std::to_string(t.declined) + " declined, " + std::to_string(t.skipped) + " skipped";
      }
      cases.push_back(c);
    }
    if (plugin) {
      cli::JunitCase c{"check.oracle", "documents' examples of the claimed layouts"};
      if (oracle_failed) {
        c.outcome = cli::JunitCase::kFailed;
        c.message = std::to_string(oracle_failed) + " failed";
        for (const auto& f : oracle_failures) c.details += f + "\n";
      }
      cases.push_back(c);
    }
    write_junit_of(a, "layoutcheck check " + impl.name(), cases);
  }
  if (a.has("json")) {
    cli::Json j = cli::report_header("check");
    j["impl"] = impl.name();
    j["seed"] = opt.seed;
    j["layout_glob"] = opt.layout_glob;
    uint64_t cases = 0, passed = 0, invalid = 0, declined = 0, skipped = 0, failures = 0;
    cli::Json layouts = cli::Json::array();
    for (const auto& t : tallies) {
      cli::Json grid = cli::Json::object();
      for (const auto& [dt, n] : t.passed_by_dtype) grid[dt] = n;
      cli::Json l = {{"layout", t.layout}, {"status", status_of(t)}, {"cases", t.cases},     {"passed", t.passed},
                     {"invalid", t.invalid}, {"declined", t.declined}, {"skipped", t.skipped}, {"failed", t.failed},
                     {"passed_by_dtype", grid}};
      if (t.failed) {
        auto it = repro_of.find(t.layout);
        l["failure"] = {{"message", t.first_failure}, {"repro", it == repro_of.end() ? "" : it->second}};
      } else {
        l["failure"] = nullptr;
      }
      layouts.push_back(l);
      cases += t.cases;
      passed += t.passed;
      invalid += t.invalid;
      declined += t.declined;
      skipped += t.skipped;
      failures += t.failed;
      failed |= t.failed > 0;
    }
    failed |= oracle_failed > 0;
    j["status"] = failed ? "failed" : "passed";
    j["totals"] = {{"layouts", tallies.size()}, {"cases", cases},       {"passed", passed},   {"invalid", invalid},
                   {"declined", declined},       {"skipped", skipped}, {"failed", failures}};
    j["elapsed_seconds"] = elapsed_seconds();
    j["oracle"] = {{"passed", oracle_passed}, {"failed", oracle_failed}, {"failures", oracle_failures}};
    j["layouts"] = layouts;
    j["saved"] = saved_paths;
    j["replay"] = replay_line;
    j["coverage"] = nlohmann::json::parse(cli::coverage_json(tallies));
    std::cout << cli::dump_json(j);
    if (!saved_paths.empty()) std::cerr << "layoutcheck check: regression files saved; replay: " << replay_line << std::endl;
    return failed ? 1 : 0;
  }
  // The layout column is as wide as the longest name (20 at least).
  int name_width = 20;
  for (const auto& t : tallies) name_width = std::max(name_width, static_cast<int>(t.layout.size()));
  std::printf("%-*s %8s %8s %8s %8s %8s %8s  %s\n", name_width, "layout", "cases", "passed", "invalid", "declined",
              "skipped", "failed", "status");
  uint64_t total = 0, total_failed = 0, total_passed = 0;
  for (const auto& t : tallies) {
    std::printf("%-*s %8llu %8llu %8llu %8llu %8llu %8llu  %s\n", name_width, t.layout.c_str(),
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
    std::printf("\ncoverage (passed cases)\n%-*s", name_width, "layout");
    for (const auto& dt : dtypes) std::printf(" %7s", dt.c_str());
    std::printf("\n");
    for (const auto& t : tallies) {
      std::printf("%-*s", name_width, t.layout.c_str());
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
  expect_known_options(a, {"dtype", "shape", "impl", "seed", "timeout", "isolate", "strict-padding", "picture"});
  if (a.has("picture") && a.get("picture").empty()) throw UsageError{"--picture takes a file name"};
  Case c = case_of(a);
  CheckOptions co = check_options_of(a);
  co.seed = ranged_whole_number(a, "seed", 1, 0, UINT64_MAX);
  const Impl& impl = impl_of(a);
  const CaseRunner run_one = runner_of(a, impl, 10);
  CheckReport r = claimed_decline(impl, c, run_one(c, co));
  std::cout << r.message;
  if (r.verdict == Verdict::kFail && a.has("picture")) std::cout << failure_picture(c, impl, r.message, a.get("picture"));
  return r.verdict == Verdict::kFail ? 1 : 0;
}

// The regression files under a path: the file itself, or every file of a
// directory tree but hidden ones (unfinished saves) and those that are not
// regression files (fuzzer byte inputs, READMEs), which are counted.
void collect_regressions(const std::string& path, std::vector<std::pair<std::string, std::string>>* files,
                         uint64_t* ignored) {
  namespace fs = std::filesystem;
  // A regression file is a few lines: one past kMaxRegressionBytes is none
  // (a directory's big files are ignored; a file named so is an error).
  constexpr uint64_t kMaxRegressionBytes = 1u << 20;
  auto read = [](const fs::path& p) {
    auto text = cli::read_text_file(p.string(), kMaxRegressionBytes, "a regression file");
    if (!text.ok()) throw UsageError{text.status().message()};
    return *text;
  };
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> found;
    std::set<std::string> walked;  // canonical paths of the directories walked
    std::error_code root_ec;
    walked.insert(fs::canonical(path, root_ec).string());
    fs::recursive_directory_iterator it(path, fs::directory_options::follow_directory_symlink, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      std::error_code kind_ec;  // a link that leads nowhere (or in a loop) is no regression file
      if (!name.empty() && name[0] == '.') {
        if (it->is_directory(kind_ec)) it.disable_recursion_pending();
        continue;
      }
      if (it->is_directory(kind_ec)) {
        // A directory reached again through a link (a link to a parent, a
        // loop) is not walked twice.
        std::error_code real_ec;
        const fs::path real = fs::canonical(it->path(), real_ec);
        if (real_ec || !walked.insert(real.string()).second) it.disable_recursion_pending();
      } else if (it->is_regular_file(kind_ec)) {
        found.push_back(it->path());
      } else if (kind_ec) {
        ++*ignored;
      }
    }
    if (ec) throw UsageError{"cannot list " + path + ": " + ec.message()};
    std::sort(found.begin(), found.end());
    for (const auto& p : found) {
      std::error_code size_ec;
      if (fs::file_size(p, size_ec) > kMaxRegressionBytes && !size_ec) {
        ++*ignored;
        continue;
      }
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

// A report's lines after its header ("skipped 'LAYOUT' ...: A vs B"): why a
// case was skipped, declined or rejected by both.
std::string reason_lines(const std::string& message) {
  const size_t eol = message.find('\n');
  return eol == std::string::npos ? "" : message.substr(eol + 1);
}

int cmd_replay(const Args& a) {
  expect_known_options(a, {"impl", "timeout", "isolate", "strict-padding", "json", "junit", "shard", "picture"});
  if (a.has("picture") && a.get("picture").empty()) throw UsageError{"--picture takes a directory or a file name"};
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
  // --shard i/n: the files whose position in the sorted list is i - 1 modulo n.
  uint64_t shard = 0, shards = 1;  // plain variables: lambdas below capture them
  std::tie(shard, shards) = shard_of(a);
  {
    std::vector<std::pair<std::string, Regression>> mine;
    for (size_t k = 0; k < regressions.size(); ++k) {
      if (k % shards == shard) mine.push_back(std::move(regressions[k]));
    }
    regressions = std::move(mine);
  }
  cli::ProgressLine live("replay", !a.has("json"));
  uint64_t replayed = 0;
  const Impl& impl = impl_of(a);
  const CaseRunner run_one = runner_of(a, impl, 10);
  const CheckOptions base = check_options_of(a);
  std::map<Verdict, uint64_t> count;
  const bool json = a.has("json");
  cli::Json json_cases = cli::Json::array();
  std::vector<cli::JunitCase> junit_cases;
  for (const auto& [path, reg] : regressions) {
    CheckOptions co = base;
    co.seed = reg.seed;
    CheckReport r = claimed_decline(impl, reg.c, run_one(reg.c, co));
    ++count[r.verdict];
    live.update(path, ++replayed, regressions.size(), count[Verdict::kFail]);
    const bool ok = r.verdict == Verdict::kPass || r.verdict == Verdict::kBothInvalid;
    if (a.has("junit")) {
      cli::JunitCase c{"replay." + reg.c.layout.name, path};
      if (r.verdict == Verdict::kFail) {
        c.outcome = cli::JunitCase::kFailed;
        c.message = first_line(r.message);
        c.details = r.message + "repro: " + repro_command(reg.c, impl.name(), co) + "\n";
      } else if (!ok) {
        c.outcome = cli::JunitCase::kSkipped;
        const std::string why = first_line(reason_lines(r.message));
        c.message = std::string(verdict_name(r.verdict)) + ": " + why.substr(std::min(why.size(), why.find_first_not_of(' ')));
      }
      junit_cases.push_back(c);
    }
    if (json) {
      const bool fail = r.verdict == Verdict::kFail;
      json_cases.push_back({{"path", path},
                            {"case", to_string(reg.c)},
                            {"seed", reg.seed},
                            {"status", ok ? "passed" : fail ? "failed" : verdict_name(r.verdict)},
                            {"message", r.verdict == Verdict::kPass ? "" : r.message},
                            {"repro", fail ? repro_command(reg.c, impl.name(), co) : ""}});
      continue;
    }
    live.finish();  // the terminal shows this line instead
    std::printf("%-8s %s\n", ok ? "ok" : verdict_name(r.verdict), path.c_str());
    if (r.verdict == Verdict::kFail) std::printf("%s", r.message.c_str());
    else if (r.verdict != Verdict::kPass) std::printf("%s", reason_lines(r.message).c_str());
    if (r.verdict == Verdict::kFail && a.has("picture")) {
      // A directory gets NAME.svg per regression file; a file the first failure's picture.
      const std::string to = a.get("picture");
      const bool dir = std::filesystem::is_directory(to) || (!to.empty() && to.back() == '/');
      if (dir || count[Verdict::kFail] == 1) {
        const std::string svg =
            dir ? (std::filesystem::path(to) / std::filesystem::path(cli::picture_path_beside(path)).filename()).string() : to;
        if (dir) std::filesystem::create_directories(to);
        std::printf("%s", failure_picture(reg.c, impl, r.message, svg).c_str());
      }
    }
  }
  live.finish();
  write_junit_of(a, "layoutcheck replay " + impl.name(), junit_cases);
  if (json) {
    cli::Json j = cli::report_header("replay");
    j["impl"] = impl.name();
    j["seed"] = nullptr;  // each case carries the seed of its file
    j["status"] = count[Verdict::kFail] ? "failed" : "passed";
    j["totals"] = {{"cases", regressions.size()},
                   {"passed", count[Verdict::kPass] + count[Verdict::kBothInvalid]},
                   {"failed", count[Verdict::kFail]},
                   {"declined", count[Verdict::kDeclined]},
                   {"skipped", count[Verdict::kSkipped]},
                   {"ignored_files", ignored}};
    j["elapsed_seconds"] = elapsed_seconds();
    j["cases"] = json_cases;
    std::cout << cli::dump_json(j);
    return count[Verdict::kFail] ? 1 : 0;
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
  expect_known_options(a, {"id", "impl", "dir", "spec-dir", "json", "junit", "shard"});
  const Impl& impl = a.has("impl") ? impl_of(a) : optimized_impl();
  const auto* plugin = dynamic_cast<const PluginImpl*>(&impl);
  const std::string dir = a.has("dir") ? a.get("dir") : data_dir("oracles") + "/oracles";
  const std::string spec_dir = a.has("spec-dir") ? a.get("spec-dir") : data_dir("spec") + "/spec";
  auto cases = or_fail(load_oracle_dir(dir, spec_dir));
  // A fact the reference does not report for its case is a mistake of the file.
  or_fail(check_oracle_facts(cases, reference_impl()));
  auto precision_cases = or_fail(load_precision_oracle_dir(dir, spec_dir));
  auto tuple_cases = or_fail(load_tuple_oracle_dir(dir, spec_dir));
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
  // --shard i/n: the matching cases whose position (layout cases, then precision
  // cases, then tuple cases, in file order) is i - 1 modulo n.
  uint64_t shard = 0, shards = 1;  // plain variables: lambdas below capture them
  std::tie(shard, shards) = shard_of(a);
  uint64_t matched = 0, total = 0;
  for (const auto& oc : cases) total += glob_match(glob, oc.id) && matched++ % shards == shard;
  for (const auto& pc : precision_cases) total += glob_match(glob, pc.id) && matched++ % shards == shard;
  for (const auto& tc : tuple_cases) total += glob_match(glob, tc.id) && matched++ % shards == shard;
  matched = 0;
  auto in_shard = [&] { return matched++ % shards == shard; };
  cli::ProgressLine live("oracle", !a.has("json"));
  cli::Json json_cases = cli::Json::array();
  std::vector<cli::JunitCase> junit_cases;
  // The command line that runs one case again.
  auto repro_of = [&](const std::string& id) {
    std::string line =
        "layoutcheck oracle --id " + cli::shell_quote(id) + " --impl " + cli::shell_quote(impl.name());
    if (a.has("dir")) line += " --dir " + cli::shell_quote(dir);
    if (a.has("spec-dir")) line += " --spec-dir " + cli::shell_quote(spec_dir);
    return line;
  };
  for (const auto& oc : cases) {
    if (!glob_match(glob, oc.id) || !in_shard()) continue;
    ++run;
    OracleResult r = run_oracle_case(oc, impl, options);
    ++counts[r.outcome];
    live.update(oc.id, run, total, counts[OracleResult::kFailed]);
    std::string how;
    if (!r.facts_from.empty()) how += "facts from " + r.facts_from;
    if (r.offsets_from_pack) how += std::string(how.empty() ? "" : ", ") + "offsets through pack";
    if (!r.unchecked.empty()) how += std::string(how.empty() ? "" : ", ") + std::to_string(r.unchecked.size()) + " line(s) not checked";
    if (a.has("junit")) {
      cli::JunitCase c{"oracle." + oc.id.substr(0, oc.id.find('/')), oc.id};
      if (r.outcome == OracleResult::kFailed) {
        c.outcome = cli::JunitCase::kFailed;
        c.message = r.failures.empty() ? "failed" : first_line(r.failures.front());
        for (const auto& f : r.failures) c.details += f + "\n";
        c.details += "repro: " + repro_of(oc.id) + "\n";
      } else if (r.outcome == OracleResult::kSkipped) {
        c.outcome = cli::JunitCase::kSkipped;
        c.message = r.skip_reason;
      }
      junit_cases.push_back(c);
    }
    if (a.has("json")) {
      json_cases.push_back({{"id", oc.id},
                            {"source", oc.source},
                            {"status", outcome_name(r.outcome)},
                            {"passed", r.outcome == OracleResult::kPassed},
                            {"facts_from", r.facts_from},
                            {"offsets_from", r.offsets_from_pack ? "pack" : "offset_bits"},
                            {"skip_reason", r.skip_reason},
                            {"failures", r.failures},
                            {"unchecked", r.unchecked},
                            {"repro", r.outcome == OracleResult::kFailed ? repro_of(oc.id) : ""}});
    } else {
      const char* status = r.outcome == OracleResult::kPassed   ? "ok"
                           : r.outcome == OracleResult::kFailed ? "FAILED"
                                                                : "skipped";
      live.finish();  // the terminal shows this line instead
      std::printf("%-44s %s  (%s)%s\n", oc.id.c_str(), status, oc.source.c_str(),
                  how.empty() ? "" : ("  [" + how + "]").c_str());
      for (const auto& s : r.failures) std::printf("    %s\n", s.c_str());
      for (const auto& s : r.unchecked) std::printf("    %s\n", s.c_str());
    }
  }
  // The precision oracles (*.precision): conversions of the implementation's
  // converter; for a plugin, the cases whose conversions it claims.
  for (const auto& pc : precision_cases) {
    if (!glob_match(glob, pc.id) || !in_shard()) continue;
    ++run;
    // A plugin's convert member runs the cases whose conversions it claims (tools/extension_cli.cc).
    const Converter* converter = cli::claims_precision_case(impl, pc) ? cli::converter_of(impl) : nullptr;
    std::vector<std::string> failures;
    if (converter) failures = run_precision_oracle(pc, *converter);
    const OracleResult::Outcome outcome = !converter          ? OracleResult::kSkipped
                                          : failures.empty() ? OracleResult::kPassed
                                                             : OracleResult::kFailed;
    ++counts[outcome];
    const std::string skip_reason = converter ? "" : impl.name() + " does not claim the case's conversions";
    if (a.has("junit")) {
      cli::JunitCase c{"oracle." + pc.id.substr(0, pc.id.find('/')), pc.id};
      if (outcome == OracleResult::kFailed) {
        c.outcome = cli::JunitCase::kFailed;
        c.message = first_line(failures.front());
        for (const auto& f : failures) c.details += f + "\n";
        c.details += "repro: " + repro_of(pc.id) + "\n";
      } else if (outcome == OracleResult::kSkipped) {
        c.outcome = cli::JunitCase::kSkipped;
        c.message = skip_reason;
      }
      junit_cases.push_back(c);
    }
    if (a.has("json")) {
      json_cases.push_back({{"id", pc.id},
                            {"source", pc.source},
                            {"status", outcome_name(outcome)},
                            {"passed", outcome == OracleResult::kPassed},
                            {"converter", converter ? converter->name() : ""},
                            {"skip_reason", skip_reason},
                            {"failures", failures},
                            {"repro", outcome == OracleResult::kFailed ? repro_of(pc.id) : ""}});
    } else {
      const char* status = outcome == OracleResult::kPassed ? "ok" : outcome == OracleResult::kFailed ? "FAILED" : "skipped";
      std::printf("%-44s %s  (%s)%s\n", pc.id.c_str(), status, pc.source.c_str(),
                  converter ? ("  [converter " + converter->name() + "]").c_str() : "");
      for (const auto& s : failures) std::printf("    %s\n", s.c_str());
    }
  }
  // The IntTuple and Layout query oracles (*.tuple): the implementation's tuple
  // queries (layoutcheck/tla_api.h); a plugin's are checked by `layoutcheck tuple --lib`.
  for (const auto& tc : tuple_cases) {
    if (!glob_match(glob, tc.id) || !in_shard()) continue;
    ++run;
    const TupleApi* api = tuple_api_named(impl.name());
    std::vector<std::string> failures;
    if (api) failures = run_tuple_oracle(tc, *api);
    const OracleResult::Outcome outcome = !api               ? OracleResult::kSkipped
                                          : failures.empty() ? OracleResult::kPassed
                                                             : OracleResult::kFailed;
    ++counts[outcome];
    const std::string skip_reason =
        api ? "" : "a library's IntTuple functions are checked by `layoutcheck tuple --lib` (include/layoutcheck/tla_tuple.h)";
    if (a.has("junit")) {
      cli::JunitCase c{"oracle." + tc.id.substr(0, tc.id.find('/')), tc.id};
      if (outcome == OracleResult::kFailed) {
        c.outcome = cli::JunitCase::kFailed;
        c.message = first_line(failures.front());
        for (const auto& f : failures) c.details += f + "\n";
        c.details += "repro: " + repro_of(tc.id) + "\n";
      } else if (outcome == OracleResult::kSkipped) {
        c.outcome = cli::JunitCase::kSkipped;
        c.message = skip_reason;
      }
      junit_cases.push_back(c);
    }
    if (a.has("json")) {
      json_cases.push_back({{"id", tc.id},
                            {"source", tc.source},
                            {"status", outcome_name(outcome)},
                            {"passed", outcome == OracleResult::kPassed},
                            {"skip_reason", skip_reason},
                            {"failures", failures},
                            {"repro", outcome == OracleResult::kFailed ? repro_of(tc.id) : ""}});
    } else {
      const char* status = outcome == OracleResult::kPassed ? "ok" : outcome == OracleResult::kFailed ? "FAILED" : "skipped";
      live.finish();
      std::printf("%-44s %s  (%s)%s\n", tc.id.c_str(), status, tc.source.c_str(),
                  api ? ("  [tuple queries of " + api->name() + "]").c_str() : "");
      for (const auto& f : failures) std::printf("    %s\n", f.c_str());
    }
  }
  if (matched == 0) throw UsageError{"no oracle case matches --id '" + glob + "'"};
  const auto passed = static_cast<unsigned long long>(counts[OracleResult::kPassed]);
  const auto failed = static_cast<unsigned long long>(counts[OracleResult::kFailed]);
  const auto skipped = static_cast<unsigned long long>(counts[OracleResult::kSkipped]);
  write_junit_of(a, "layoutcheck oracle " + impl.name(), junit_cases);
  if (a.has("json")) {
    cli::Json j = cli::report_header("oracle");
    j["impl"] = impl.name();
    j["seed"] = nullptr;  // the oracle cases are fixed
    j["status"] = failed ? "failed" : "passed";
    j["totals"] = {{"cases", run}, {"passed", passed}, {"failed", failed}, {"skipped", skipped}};
    j["elapsed_seconds"] = elapsed_seconds();
    j["cases"] = json_cases;
    std::cout << cli::dump_json(j);
  } else {
    std::printf("%llu passed, %llu failed, %llu skipped\n", passed, failed, skipped);
  }
  return failed ? 1 : 0;
}

}  // namespace

int run_command(int argc, char** argv) {
  try {
    const std::string first = argc >= 2 ? argv[1] : "";
    if (first == "--help" || first == "-h" || first == "help") {
      if (argc >= 3) {
        char help[] = "--help";
        char* args[] = {argv[0], argv[2], help};
        Args ignored;
        cli::parse_command(kCommands, 3, args, &ignored);
        return 0;
      }
      std::cout << kUsage;
      return 0;
    }
    if (first == "--version") {
      std::cout << "layoutcheck " << LAYOUTCHECK_VERSION << " (plugin ABI " << LC_ABI_MAJOR << "." << LC_ABI_MINOR
                << ")\n";
      return 0;
    }
    if (first == "--help-all") {
      std::cout << cli::help_all(kCommands, kMoreHelp);
      return 0;
    }
    if (first == "--bash-completion") {
      std::cout << cli::bash_completion(kCommands);
      return 0;
    }
    Args a;
    if (cli::parse_command(kCommands, argc, argv, &a) == cli::Parsed::kHelpShown) return 0;
    if (a.command == "precision") return cli::precision_main(a);
    if (a.command == "convert") return cli::convert_main(a);
    if (a.command == "list") return cmd_list(a);
    if (a.command == "describe") return cmd_describe(a);
    if (a.command == "offset") return cmd_offset(a);
    if (a.command == "pack") return cmd_pack(a, true);
    if (a.command == "unpack") return cmd_pack(a, false);
    if (a.command == "check") return cmd_check(a);
    if (a.command == "repro") return cmd_repro(a);
    if (a.command == "replay") return cmd_replay(a);
    if (a.command == "oracle") return cmd_oracle(a);
    if (a.command == "show") return cmd_show(a);
    if (a.command == "okk") return cli::okk_main(a);
    if (a.command == "tuple") return cli::tuple_main(a);
    if (a.command == "sparse") return cli::sparse_main(a);
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
