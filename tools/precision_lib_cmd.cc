#include "tools/precision_lib_cmd.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "layoutcheck/isolate.h"
// For the function's type only: the expected answers come from the reference's tables.
#include "layoutcheck/nvdla_precision_compat.h"
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

// ---- the child: loads the library, asks it every question ---------------------

void child_main(const std::string& path, int fd) {
  void* handle = child_open_library(path, fd);
  if (!handle) return;
  std::string hello;
  void* sym = dlsym(handle, NVDLA_PRECISION_SUPPORTED_SYMBOL);
  if (sym == nullptr) {
    put_str(&hello, std::string("exports no ") + NVDLA_PRECISION_SUPPORTED_SYMBOL +
                        " (include/layoutcheck/nvdla_precision_compat.h)");
    Sandbox::child_send(fd, hello);
    return;
  }
  if (child_reported_stray(path, fd)) return;
  const auto fn = as_function<nvdla_precision_supported_fn>(sym);
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
  LibraryChild lib("precision", path);
  if (Status s = lib.box().start([path](int fd) { child_main(path, fd); }); !s.ok()) return lib.bad_library(s.message());
  const std::vector<Question> qs = questions();
  std::optional<Reader> r = lib.receive(qs.size() * (16 + kPipelineMax) + (1 << 12),
                                        std::string("loading it and calling ") + NVDLA_PRECISION_SUPPORTED_SYMBOL,
                                        "sent a malformed answer");
  if (!r) return 2;

  TableResult tables[4];
  for (const Question& q : qs) {
    const int64_t answer = static_cast<int64_t>(r->u64());
    const std::string pipeline = r->str(kPipelineMax);
    if (r->bad) return lib.bad_library("sent a malformed answer");
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
