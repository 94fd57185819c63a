#include "tools/precision_lib_cmd.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "layoutcheck/isolate.h"
// For the function's type only: the expected answers come from the reference's tables.
#include "layoutcheck/nvdla_precision_compat.h"
#include "tools/cli_json.h"

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

// ---- the child: loads the library, asks it every question ---------------------

void child_main(const std::string& path, int fd) {
  std::string hello;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    put_str(&hello, "cannot load " + path + ": " + (err ? err : "unknown error"));
    Sandbox::child_send(fd, hello);
    return;
  }
  void* sym = dlsym(handle, NVDLA_PRECISION_SUPPORTED_SYMBOL);
  if (sym == nullptr) {
    put_str(&hello, std::string("exports no ") + NVDLA_PRECISION_SUPPORTED_SYMBOL +
                        " (include/layoutcheck/nvdla_precision_compat.h)");
    Sandbox::child_send(fd, hello);
    return;
  }
  if (std::string stray = Sandbox::child_stray_processes(); !stray.empty()) {
    put_str(&hello, "while loading " + path + " it " + stray);
    Sandbox::child_send(fd, hello);
    return;
  }
  nvdla_precision_supported_fn fn;
  static_assert(sizeof fn == sizeof sym, "function and object pointers differ in size");
  std::memcpy(&fn, &sym, sizeof fn);
  std::string reply;
  put_str(&reply, "");
  for (const Question& q : questions()) {
    const char* pipeline = nullptr;
    const int answer = fn(q.layer, q.input, q.output, &pipeline);
    put_u64(&reply, static_cast<uint64_t>(static_cast<int64_t>(answer)));
    put_str(&reply, pipeline ? std::string(pipeline, strnlen(pipeline, kPipelineMax)) : std::string());
  }
  if (std::string stray = Sandbox::child_stray_processes(); !stray.empty()) {
    reply.clear();
    put_str(&reply, std::string(NVDLA_PRECISION_SUPPORTED_SYMBOL) + " " + stray);
  }
  Sandbox::child_send(fd, reply);
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

int precision_lib_main(const Args& a) {
  for (const auto& [k, v] : a.options) {
    if (k != "lib" && k != "json") {
      throw UsageError{"--" + k.substr(0, 40) + " does not go with --lib (precision nvdla --lib PATH.so [--json])"};
    }
  }
  const std::string path = a.get("lib");
  struct stat st;
  if (stat(path.c_str(), &st) != 0) throw UsageError{"cannot read " + path + ": " + std::strerror(errno)};
  SandboxLimits limits;
  if (const char* t = std::getenv("LAYOUTCHECK_PLUGIN_TIMEOUT"); t && std::atof(t) > 0) limits.timeout_seconds = std::atof(t);
  Sandbox box(limits);
  auto bad_library = [&](const std::string& why) {
    std::cerr << "layoutcheck precision: bad library " << path << ": " << why << "\n";
    return 2;
  };
  if (Status s = box.start([path](int fd) { child_main(path, fd); }); !s.ok()) return bad_library(s.message());
  const std::vector<Question> qs = questions();
  auto reply = box.receive(qs.size() * (16 + kPipelineMax) + (1 << 12),
                           std::string("loading it and calling ") + NVDLA_PRECISION_SUPPORTED_SYMBOL);
  if (!reply.ok()) return bad_library(reply.status().message());
  Reader r{*reply};
  const std::string error = r.str(1 << 12);
  if (r.bad) return bad_library("sent a malformed answer");
  if (!error.empty()) return bad_library(error);

  TableResult tables[4];
  for (const Question& q : qs) {
    const int64_t answer = static_cast<int64_t>(r.u64());
    const std::string pipeline = r.str(kPipelineMax);
    if (r.bad) return bad_library("sent a malformed answer");
    std::string want_pipeline;
    const int want = expected(q, &want_pipeline);
    TableResult& t = tables[static_cast<size_t>(*parse_precision_layer(q.layer))];
    ++t.asked;
    if (answer == want && (want != 1 || pipeline == want_pipeline)) continue;
    if (t.failed++ == 0) {
      t.first = std::string(q.layer) + " " + q.input + " -> " + q.output + ": expected " +
                answer_text(want, want_pipeline) + ", got " + answer_text(answer, pipeline);
    }
  }
  int failed = 0;
  for (const TableResult& t : tables) failed += t.failed > 0;
  if (a.has("json")) {
    Json j = report_header("precision");
    j["lib"] = path;
    j["status"] = failed ? "failed" : "passed";
    Json list = Json::array();
    for (size_t l = 0; l < 4; ++l) {
      const TableResult& t = tables[l];
      list.push_back({{"table", precision_table_title(static_cast<PrecisionLayer>(l))},
                      {"layer", kLayers[l]},
                      {"status", t.failed ? "failed" : "passed"},
                      {"asked", t.asked},
                      {"failed", t.failed},
                      {"first_failure", t.failed ? Json(t.first) : Json(nullptr)}});
    }
    j["tables"] = list;
    j["totals"] = {{"tables", 4}, {"passed", 4 - failed}, {"failed", failed}};
    std::cout << dump_json(j);
  } else {
    std::printf("%s of %s against the reference's precision tables\n", NVDLA_PRECISION_SUPPORTED_SYMBOL, path.c_str());
    for (size_t l = 0; l < 4; ++l) {
      const TableResult& t = tables[l];
      const char* title = precision_table_title(static_cast<PrecisionLayer>(l));
      if (!t.failed) {
        std::printf("  %-50s passed (%d questions)\n", title, t.asked);
      } else {
        std::printf("  %-50s FAILED on %d of %d questions\n    first: %s\n", title, t.failed, t.asked, t.first.c_str());
      }
    }
    std::printf("precision tables: %d passed, %d failed\n", 4 - failed, failed);
  }
  return failed ? 1 : 0;
}

}  // namespace layoutcheck::cli
