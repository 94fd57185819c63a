#include "tools/precision_lib_cmd.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "layoutcheck/isolate.h"
// For the functions' types only: the expected answers come from the reference's tables and check_sdp_layer.
#include "layoutcheck/nvdla_precision_compat.h"
#include "tools/cli_args.h"
#include "tools/cli_json.h"
#include "tools/function_lib.h"

namespace layoutcheck::cli {
namespace {

const char* const kLayers[] = {"conv", "sdp", "lrn", "pdp"};
// The inputs asked: every pixel type of the image row group, then feature data.
const char* const kInputs[] = {"image-uint8", "image-int16", "image-uint16", "image-fp16", "int8", "int16", "fp16"};
const char* const kOutputs[] = {"int8", "int16", "fp16"};
constexpr size_t kPipelineMax = 32;  // bytes of *pipeline the child copies

struct Question {
  const char *layer, *input, *output;
};

std::vector<Question> questions() {
  std::vector<Question> out;
  for (const char* l : kLayers) {
    for (const char* i : kInputs) {
      for (const char* o : kOutputs) out.push_back({l, i, o});
    }
  }
  return out;
}

// ---- the layer questions ----------------------------------------------------------

const char* const kConvModes[] = {"dc", "winograd", "image"};
constexpr size_t kRuleMax = 96;         // bytes of *rule the child copies
constexpr size_t kShownFailures = 20;   // layer disagreements printed (all are counted)
constexpr size_t kJsonFailures = 200;   // ... and listed in --json

struct LayerQuestion {
  bool on_flying = false;
  std::string input, output;
  std::string conv_mode, conv_input, conv_output;  // on-flying only
  std::vector<std::string> data;                   // LAYOUT@DTYPE@SHAPE, one per surface
};

// The SDP data surfaces asked, as the `--data` option writes them: every use of
// the two SDP data layouts with every (component type, PROC_PRECISION) pair the
// layouts accept, and feature data, which is not SDP data.
std::vector<std::string> surface_choices() {
  struct TypePair {
    const char *dtype, *proc;
  };
  const TypePair pairs[] = {{"int8", "int8"}, {"int16", "int8"}, {"int8", "int16"}, {"int16", "int16"}, {"fp16", "fp16"}};
  std::vector<std::string> out;
  for (const char* use : {"bias", "prelu", "bn"}) {
    for (const TypePair& t : pairs) {
      out.push_back(std::string("nvdla.sdp.channel(use=") + use + ",proc=" + t.proc + ")@" + t.dtype + "@8," +
                    (std::string(use) == "bn" ? "2" : "1"));
    }
  }
  for (const char* use : {"bias", "ew", "ew2"}) {
    for (const TypePair& t : pairs) {
      out.push_back(std::string("nvdla.sdp.element(use=") + use + ",proc=" + t.proc + ")@" + t.dtype + "@4,2,3," +
                    (std::string(use) == "ew2" ? "2" : "1"));
    }
  }
  for (const char* dtype : {"int8", "int16", "fp16"}) out.push_back(std::string("nvdla.feature@") + dtype + "@8,2,2");
  return out;
}

// Every layer the command asks: each (input, output) offline and each (input,
// output, convolution mode, input, output) on-flying, with no surface and with
// each surface; offline also with each ordered pair of surfaces (which one is
// checked first). Every processing-precision case is an offline layer.
std::vector<LayerQuestion> layer_questions() {
  const std::vector<std::string> surfaces = surface_choices();
  std::vector<LayerQuestion> out;
  auto with_surfaces = [&](const LayerQuestion& q) {
    out.push_back(q);
    for (const std::string& a : surfaces) {
      LayerQuestion one = q;
      one.data = {a};
      out.push_back(one);
    }
    for (const std::string& a : surfaces) {
      for (const std::string& b : surfaces) {
        if (q.on_flying) break;
        LayerQuestion two = q;
        two.data = {a, b};
        out.push_back(two);
      }
    }
  };
  for (const char* in : kInputs) {
    for (const char* o : kOutputs) {
      LayerQuestion q;
      q.input = in;
      q.output = o;
      with_surfaces(q);
      q.on_flying = true;
      for (const char* m : kConvModes) {
        for (const char* ci : kInputs) {
          for (const char* co : kOutputs) {
            q.conv_mode = m;
            q.conv_input = ci;
            q.conv_output = co;
            with_surfaces(q);
          }
        }
      }
    }
  }
  return out;
}

// The layer as an oracle's `layer` line writes it (core/oracle.cc, parse_sdp_layer).
std::string layer_text(const LayerQuestion& q) {
  std::string s = std::string(q.on_flying ? "on-flying " : "offline ") + q.input + " " + q.output;
  if (q.on_flying) s += " conv=" + q.conv_mode + "/" + q.conv_input + "/" + q.conv_output;
  for (const std::string& d : q.data) s += " data=" + d;
  return s;
}

// The command that asks the library this layer alone.
std::string layer_repro(const std::string& path, const LayerQuestion& q) {
  std::string s = "layoutcheck precision nvdla --lib " + shell_quote(path) + " --mode " +
                  (q.on_flying ? "on-flying" : "offline") + " --input " + shell_quote(q.input) + " --output " +
                  shell_quote(q.output);
  if (q.on_flying) s += " --conv " + shell_quote(q.conv_mode + "/" + q.conv_input + "/" + q.conv_output);
  for (const std::string& d : q.data) s += " --data " + shell_quote(d);
  return s;
}

// The parsed SDP data cases, each parsed once.
class SurfaceCases {
 public:
  Result<const Case*> get(const std::string& data) {
    if (auto it = cases_.find(data); it != cases_.end()) return &it->second;
    const size_t a = data.find('@'), b = a == std::string::npos ? a : data.find('@', a + 1);
    if (b == std::string::npos) return Status::invalid("--data " + quote_input(data) + ": expected LAYOUT@DTYPE@SHAPE");
    LC_ASSIGN_OR_RETURN(Case c, parse_case(data.substr(0, a), data.substr(a + 1, b - a - 1), data.substr(b + 1)));
    return &(cases_[data] = std::move(c));
  }

 private:
  std::map<std::string, Case> cases_;
};

// What the library is handed for an SDP data case: the layout's name, its use
// ("" when it has none), the component type and PROC_PRECISION ("same" and none:
// the component type); by the case's --data text.
using SurfaceFields = std::map<std::string, std::array<std::string, 4>>;

std::array<std::string, 4> surface_fields(const Case& c) {
  auto use = c.layout.params.find("use");
  auto proc = c.layout.params.find("proc");
  const std::string dtype = dtype_name(c.dtype);
  return {c.layout.name, use == c.layout.params.end() ? std::string() : use->second, dtype,
          proc == c.layout.params.end() || proc->second == "same" ? dtype : proc->second};
}

// The reference's verdict: "" valid, else the id of the rule check_sdp_layer names.
Result<std::string> expected_rule(const LayerQuestion& q, SurfaceCases* cases) {
  SdpLayer l;
  l.on_flying = q.on_flying;
  LC_ASSIGN_OR_RETURN(l.input, parse_precision_input(q.input));
  LC_ASSIGN_OR_RETURN(l.output, parse_dtype(q.output));
  if (q.on_flying) {
    LC_ASSIGN_OR_RETURN(l.conv_mode, parse_conv_mode(q.conv_mode));
    LC_ASSIGN_OR_RETURN(l.conv_input, parse_precision_input(q.conv_input));
    LC_ASSIGN_OR_RETURN(l.conv_output, parse_dtype(q.conv_output));
  }
  for (const std::string& d : q.data) {
    LC_ASSIGN_OR_RETURN(const Case* c, cases->get(d));
    l.data.push_back(*c);
  }
  const Status s = check_sdp_layer(l);
  return s.ok() ? std::string() : s.rule();
}

// ---- the child: loads the library, asks it every question ---------------------

// *rule as text, read without trusting the pointer: a byte of each page it
// touches is first written to a pipe, which fails (EFAULT) where it cannot be read.
bool read_rule(const int pipe_fds[2], const char* rule, std::string* out) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t base = reinterpret_cast<uintptr_t>(rule);
  for (size_t i = 0; i < kRuleMax; ++i) {
    const uintptr_t at = base + i;
    if (at < base) return false;  // wraps around the address space
    if (i == 0 || at % page == 0) {
      char probe = 0;
      if (write(pipe_fds[1], reinterpret_cast<const void*>(at), 1) != 1) return false;
      if (read(pipe_fds[0], &probe, 1) != 1) return false;
    }
    const char ch = *reinterpret_cast<const char*>(at);
    if (ch == '\0') return true;
    out->push_back(ch);
  }
  return true;
}

// The reply to the layer questions: per question the answer, whether *rule was
// set (0 no or not asked, 1 its text follows, 2 it cannot be read: the address follows).
// A word shared with the child: 1 + the index of the layer it is asking, so that
// the parent can name the layer a crash or a hang happened on.
class SharedProgress {
 public:
  SharedProgress() {
    void* p = mmap(nullptr, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    word_ = p == MAP_FAILED ? nullptr : static_cast<volatile uint64_t*>(p);
    if (word_) *word_ = 0;
  }
  ~SharedProgress() {
    if (word_) munmap(const_cast<uint64_t*>(word_), sizeof(uint64_t));
  }
  SharedProgress(const SharedProgress&) = delete;
  SharedProgress& operator=(const SharedProgress&) = delete;
  void set(uint64_t v) {
    if (word_) *word_ = v;
  }
  uint64_t get() const { return word_ ? *word_ : 0; }

 private:
  volatile uint64_t* word_ = nullptr;
};

std::string ask_layers(void* sym, const std::vector<LayerQuestion>& qs, const SurfaceFields& fields,
                       SharedProgress* progress) {
  std::string reply;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    put_str(&reply, std::string("cannot create a pipe to read *rule: ") + std::strerror(errno));
    return reply;
  }
  const auto fn = as_function<nvdla_layer_supported_fn>(sym);
  put_str(&reply, "");
  std::vector<nvdla_sdp_surface> surfaces;
  for (size_t i = 0; i < qs.size(); ++i) {
    const LayerQuestion& q = qs[i];
    progress->set(i + 1);
    surfaces.clear();
    for (const std::string& d : q.data) {
      const auto& f = fields.at(d);
      surfaces.push_back({f[0].c_str(), f[1].c_str(), f[2].c_str(), f[3].c_str()});
    }
    nvdla_layer layer;
    layer.on_flying = q.on_flying ? 1 : 0;
    layer.input = q.input.c_str();
    layer.output = q.output.c_str();
    layer.conv_mode = q.on_flying ? q.conv_mode.c_str() : nullptr;
    layer.conv_input = q.on_flying ? q.conv_input.c_str() : nullptr;
    layer.conv_output = q.on_flying ? q.conv_output.c_str() : nullptr;
    layer.surface_count = static_cast<unsigned>(surfaces.size());
    layer.surfaces = surfaces.empty() ? nullptr : surfaces.data();
    const char* rule = nullptr;
    const int answer = fn(&layer, &rule);
    put_u64(&reply, static_cast<uint64_t>(static_cast<int64_t>(answer)));
    std::string text;
    if (answer == 1 || rule == nullptr) {
      put_u64(&reply, 0);
      put_str(&reply, "");
    } else if (read_rule(pipe_fds, rule, &text)) {
      put_u64(&reply, 1);
      put_str(&reply, text);
    } else {
      char address[32];
      std::snprintf(address, sizeof address, "%p", static_cast<const void*>(rule));
      put_u64(&reply, 2);
      put_str(&reply, address);
    }
  }
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  return reply;
}

std::string ask_tables(void* sym) {
  const auto fn = as_function<nvdla_precision_supported_fn>(sym);
  std::string reply;
  put_str(&reply, "");
  for (const Question& q : questions()) {
    const char* pipeline = nullptr;
    const int answer = fn(q.layer, q.input, q.output, &pipeline);
    put_u64(&reply, static_cast<uint64_t>(static_cast<int64_t>(answer)));
    put_str(&reply, pipeline ? std::string(pipeline, strnlen(pipeline, kPipelineMax)) : std::string());
  }
  return reply;
}

// Sends a reply, or what the calls left behind instead.
void send_checked(int fd, const char* symbol, std::string reply) {
  if (std::string stray = Sandbox::child_stray_processes(); !stray.empty()) {
    reply.clear();
    put_str(&reply, std::string(symbol) + " " + stray);
  }
  Sandbox::child_send(fd, reply);
}

// Replies: which functions the library exports (bit 0 the tables', bit 1 the
// layers'), then the tables' answers (when exported and asked), then the layers'.
void child_main(const std::string& path, int fd, bool ask_table_fn, const std::vector<LayerQuestion>& layers,
                const SurfaceFields& fields, SharedProgress* progress) {
  void* handle = child_open_library(path, fd);
  if (!handle) return;
  if (child_reported_stray(path, fd)) return;
  void* tables = dlsym(handle, NVDLA_PRECISION_SUPPORTED_SYMBOL);
  void* layer = dlsym(handle, NVDLA_LAYER_SUPPORTED_SYMBOL);
  std::string hello;
  if (tables == nullptr && layer == nullptr) {
    put_str(&hello, std::string("exports neither ") + NVDLA_PRECISION_SUPPORTED_SYMBOL + " nor " +
                        NVDLA_LAYER_SUPPORTED_SYMBOL + " (include/layoutcheck/nvdla_precision_compat.h)");
    Sandbox::child_send(fd, hello);
    return;
  }
  put_str(&hello, "");
  put_u64(&hello, (tables ? 1u : 0u) | (layer ? 2u : 0u));
  if (!Sandbox::child_send(fd, hello)) return;
  if (tables && ask_table_fn) send_checked(fd, NVDLA_PRECISION_SUPPORTED_SYMBOL, ask_tables(tables));
  if (layer && !layers.empty()) {
    Sandbox::child_allow(layers.size() * (32 + kRuleMax));
    send_checked(fd, NVDLA_LAYER_SUPPORTED_SYMBOL, ask_layers(layer, layers, fields, progress));
  }
}

// ---- the parent ------------------------------------------------------------------

// The reference's answer: 1 valid (and the pipeline precision), 0 invalid, -1 no row.
int expected(const Question& q, std::string* pipeline) {
  auto row = nvdla_precision(*parse_precision_layer(q.layer), *parse_precision_input(q.input), *parse_dtype(q.output));
  if (!row.ok()) return -1;
  if (!(*row)->valid) return 0;
  *pipeline = dtype_name((*row)->pipeline);
  return 1;
}

std::string answer_text(int64_t answer, const std::string& pipeline) {
  if (answer == 1) return "valid, real precision in pipeline " + (pipeline.empty() ? std::string("(not set)") : pipeline);
  if (answer == 0) return "Invalid case";
  if (answer == -1) return "no such row";
  return "an answer of " + std::to_string(answer) + " (1, 0 or -1 expected)";
}

struct TableResult {
  int asked = 0, failed = 0;
  std::string first;  // the first difference
};

struct LayerFailure {
  std::string layer, expected, got, repro;
};

struct LayerResult {
  std::string status = "not provided";  // passed, failed, not provided
  uint64_t asked = 0, failed = 0;
  std::vector<LayerFailure> failures;           // the first kJsonFailures
  std::map<std::string, uint64_t> by_expected;  // disagreements by the expected verdict
};

std::string verdict_text(const std::string& rule) { return rule.empty() ? "valid" : "invalid by " + rule; }

// What the library answered, as text; `same` when it agrees with `want` ("" valid, else a rule).
std::string got_text(int64_t answer, uint64_t rule_state, const std::string& rule, const std::string& want, bool* same) {
  *same = false;
  if (answer == 1) {
    *same = want.empty();
    return "valid";
  }
  if (answer != 0) return "an answer of " + std::to_string(answer) + " (1 valid or 0 invalid expected)";
  if (rule_state == 0) return "invalid without a rule (*rule not set)";
  if (rule_state == 2) return "invalid, *rule set to " + rule + ", which cannot be read";
  *same = rule == want;
  std::string shown;  // the library's bytes, printable
  for (char ch : rule) shown += ch >= 0x20 && ch < 0x7f ? ch : '?';
  return "invalid by " + (rule.empty() ? std::string("\"\"") : shown);
}

// The SDP layer of the --mode, --input, --output, --conv and --data options.
LayerQuestion layer_of_options(const Args& a) {
  LayerQuestion q;
  const std::string mode = a.get("mode", "offline");
  if (mode != "offline" && mode != "on-flying") throw UsageError{"--mode " + quote_input(mode) + ": offline or on-flying"};
  q.on_flying = mode == "on-flying";
  if (!a.has("input") || !a.has("output")) throw UsageError{"an SDP layer with --lib needs --input and --output"};
  q.input = a.get("input");
  q.output = a.get("output");
  if (a.has("conv") != q.on_flying) {
    throw UsageError{q.on_flying ? "--mode on-flying needs --conv MODE/INPUT/OUTPUT, the convolution in front of the SDP"
                                 : "--conv describes the convolution in front of an on-flying SDP (--mode on-flying)"};
  }
  if (q.on_flying) {
    const std::string w = a.get("conv");
    const size_t x = w.find('/'), y = x == std::string::npos ? x : w.find('/', x + 1);
    if (y == std::string::npos) throw UsageError{"--conv " + quote_input(w) + ": expected MODE/INPUT/OUTPUT (dc/int16/int16)"};
    q.conv_mode = w.substr(0, x);
    q.conv_input = w.substr(x + 1, y - x - 1);
    q.conv_output = w.substr(y + 1);
  }
  q.data = a.all("data");
  return q;
}

void print_layer(const LayerResult& r, const std::string& path, bool one) {
  std::printf("%s of %s against the reference's SDP layer rules\n", NVDLA_LAYER_SUPPORTED_SYMBOL, path.c_str());
  if (r.status == "not provided") {
    std::printf("  not exported (skipped): the layer rules are not checked\n");
  } else if (r.status == "passed") {
    std::printf("  passed (%llu %s)\n", static_cast<unsigned long long>(r.asked), one ? "layer" : "layers");
  } else {
    std::printf("  FAILED on %llu of %llu layers\n", static_cast<unsigned long long>(r.failed),
                static_cast<unsigned long long>(r.asked));
    for (size_t i = 0; i < r.failures.size() && i < kShownFailures; ++i) {
      const LayerFailure& f = r.failures[i];
      std::printf("    layer %s: expected %s, got %s\n      repro: %s\n", f.layer.c_str(), f.expected.c_str(),
                  f.got.c_str(), f.repro.c_str());
    }
    if (r.failed > kShownFailures) {
      std::printf("    ... %llu more; the disagreements by expected verdict:\n",
                  static_cast<unsigned long long>(r.failed - kShownFailures));
      for (const auto& [want, n] : r.by_expected) {
        std::printf("      expected %s: %llu\n", want.c_str(), static_cast<unsigned long long>(n));
      }
    }
  }
  std::printf("layer rules: %s\n", r.status.c_str());
}

}  // namespace

bool precision_lib_covers(const PrecisionRow& row) {
  for (const Question& q : questions()) {
    if (*parse_precision_layer(q.layer) == row.layer && *parse_precision_input(q.input) == row.input &&
        *parse_dtype(q.output) == row.output) {
      return true;
    }
  }
  return false;
}

bool precision_lib_layer_reaches(const std::string& rule) {
  static const std::set<std::string> reached = [] {
    std::set<std::string> out;
    SurfaceCases cases;
    for (const LayerQuestion& q : layer_questions()) {
      auto want = expected_rule(q, &cases);
      if (want.ok() && !want->empty()) out.insert(*want);
    }
    return out;
  }();
  return reached.count(rule) > 0;
}

int precision_lib_main(const Args& a) {
  bool one = false;  // the SDP layer of the options only
  for (const auto& [k, v] : a.options) {
    const bool layer_option = k == "mode" || k == "input" || k == "output" || k == "conv" || k == "data";
    if (k != "lib" && k != "json" && !layer_option) {
      throw UsageError{"--" + k.substr(0, 40) +
                       " does not go with --lib (precision nvdla --lib PATH.so [--mode M --input I --output O "
                       "[--conv MODE/IN/OUT] [--data LAYOUT@D@SHAPE]...] [--json])"};
    }
    one = one || layer_option;
  }
  const std::string path = a.get("lib");
  struct stat st;
  if (stat(path.c_str(), &st) != 0) throw UsageError{"cannot read " + path + ": " + std::strerror(errno)};

  // The layers to ask and the reference's verdict on each, before the child starts.
  std::vector<LayerQuestion> layers = one ? std::vector<LayerQuestion>{layer_of_options(a)} : layer_questions();
  SurfaceCases cases;
  SurfaceFields fields;
  std::vector<std::string> want(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    auto rule = expected_rule(layers[i], &cases);
    if (!rule.ok()) throw UsageError{"SDP layer " + quote_input(layer_text(layers[i])) + ": " + rule.status().message()};
    want[i] = *rule;
    for (const std::string& d : layers[i].data) {
      if (!fields.count(d)) fields[d] = surface_fields(**cases.get(d));
    }
  }

  LibraryChild lib("precision", path);
  SharedProgress progress;
  if (Status s = lib.box().start([&](int fd) { child_main(path, fd, !one, layers, fields, &progress); }); !s.ok()) {
    return lib.bad_library(s.message());
  }
  std::optional<Reader> hello = lib.receive(1 << 12, "loading it (its constructors)", "sent a malformed answer while loading");
  if (!hello) return 2;
  const uint64_t provided = hello->u64();
  if (hello->bad) return lib.bad_library("sent a malformed answer while loading");
  const bool has_tables = provided & 1, has_layer = provided & 2;
  if (one && !has_layer) {
    return lib.bad_library(std::string("exports no ") + NVDLA_LAYER_SUPPORTED_SYMBOL +
                           " (include/layoutcheck/nvdla_precision_compat.h), which the SDP layer options ask");
  }

  TableResult tables[4];
  if (has_tables && !one) {
    const std::vector<Question> qs = questions();
    std::optional<Reader> r = lib.receive(qs.size() * (16 + kPipelineMax) + (1 << 12),
                                          std::string(NVDLA_PRECISION_SUPPORTED_SYMBOL) + " (over the four tables)",
                                          "sent a malformed answer");
    if (!r) return 2;
    for (const Question& q : qs) {
      const int64_t answer = static_cast<int64_t>(r->u64());
      const std::string pipeline = r->str(kPipelineMax);
      if (r->bad) return lib.bad_library("sent a malformed answer");
      std::string want_pipeline;
      const int expect = expected(q, &want_pipeline);
      TableResult& t = tables[static_cast<size_t>(*parse_precision_layer(q.layer))];
      ++t.asked;
      if (answer == expect && (expect != 1 || pipeline == want_pipeline)) continue;
      if (t.failed++ == 0) {
        t.first = std::string(q.layer) + " " + q.input + " -> " + q.output + ": expected " +
                  answer_text(expect, want_pipeline) + ", got " + answer_text(answer, pipeline);
      }
    }
  }

  LayerResult layer;
  if (has_layer) {
    std::optional<Reader> r = lib.receive(layers.size() * (32 + kRuleMax) + (1 << 12),
                                          std::string(NVDLA_LAYER_SUPPORTED_SYMBOL) + " (over " +
                                              std::to_string(layers.size()) + (layers.size() == 1 ? " layer)" : " layers)"),
                                          std::string("sent a malformed answer during ") + NVDLA_LAYER_SUPPORTED_SYMBOL);
    if (!r) {
      if (const uint64_t at = progress.get(); at > 0 && at <= layers.size()) {
        std::cerr << "layoutcheck precision: it was asking layer " << layer_text(layers[at - 1])
                  << "\n  repro: " << layer_repro(path, layers[at - 1]) << "\n";
      }
      return 2;
    }
    for (size_t i = 0; i < layers.size(); ++i) {
      const int64_t answer = static_cast<int64_t>(r->u64());
      const uint64_t rule_state = r->u64();
      const std::string rule = r->str(kRuleMax + 32);
      if (r->bad || rule_state > 2) return lib.bad_library(std::string("sent a malformed answer during ") + NVDLA_LAYER_SUPPORTED_SYMBOL);
      ++layer.asked;
      bool same = false;
      const std::string got = got_text(answer, rule_state, rule, want[i], &same);
      if (same) continue;
      ++layer.failed;
      ++layer.by_expected[verdict_text(want[i])];
      if (layer.failures.size() < kJsonFailures) {
        layer.failures.push_back({layer_text(layers[i]), verdict_text(want[i]), got, layer_repro(path, layers[i])});
      }
    }
    layer.status = layer.failed ? "failed" : "passed";
  }

  int failed = 0;
  for (const TableResult& t : tables) failed += t.failed > 0;
  const char* table_status = one ? "not asked" : has_tables ? nullptr : "not provided";
  const bool any_failed = failed > 0 || layer.failed > 0;
  if (a.has("json")) {
    Json j = report_header("precision");
    j["lib"] = path;
    j["status"] = any_failed ? "failed" : "passed";
    Json list = Json::array();
    for (size_t l = 0; l < 4; ++l) {
      const TableResult& t = tables[l];
      list.push_back({{"table", precision_table_title(static_cast<PrecisionLayer>(l))},
                      {"layer", kLayers[l]},
                      {"status", table_status ? table_status : t.failed ? "failed" : "passed"},
                      {"asked", t.asked},
                      {"failed", t.failed},
                      {"first_failure", t.failed ? Json(t.first) : Json(nullptr)}});
    }
    j["tables"] = list;
    j["totals"] = {{"tables", 4}, {"passed", table_status ? 0 : 4 - failed}, {"failed", failed}};
    Json failures = Json::array();
    for (const LayerFailure& f : layer.failures) {
      failures.push_back({{"layer", f.layer}, {"expected", f.expected}, {"actual", f.got}, {"repro", f.repro}});
    }
    Json by = Json::object();
    for (const auto& [w, n] : layer.by_expected) by[w] = n;
    j["layer"] = {{"function", NVDLA_LAYER_SUPPORTED_SYMBOL},
                  {"status", layer.status},
                  {"asked", layer.asked},
                  {"failed", layer.failed},
                  {"failures", failures},
                  {"failed_by_expected", by}};
    std::cout << dump_json(j);
  } else {
    if (!one) {
      std::printf("%s of %s against the reference's precision tables\n", NVDLA_PRECISION_SUPPORTED_SYMBOL, path.c_str());
      if (!has_tables) std::printf("  not exported (skipped): the tables are not checked\n");
      for (size_t l = 0; l < 4 && has_tables; ++l) {
        const TableResult& t = tables[l];
        const char* title = precision_table_title(static_cast<PrecisionLayer>(l));
        if (!t.failed) {
          std::printf("  %-50s passed (%d questions)\n", title, t.asked);
        } else {
          std::printf("  %-50s FAILED on %d of %d questions\n    first: %s\n", title, t.failed, t.asked, t.first.c_str());
        }
      }
      if (has_tables) std::printf("precision tables: %d passed, %d failed\n", 4 - failed, failed);
    }
    print_layer(layer, path, one);
  }
  return any_failed ? 1 : 0;
}

}  // namespace layoutcheck::cli
