// Running a user's function library in a child process (tuple, okk and
// precision --lib): the child loads the library and calls its functions; the
// parent sends requests, reads the replies, and reports a library that cannot
// be loaded, crashes or hangs as a bad library (exit status 2).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "layoutcheck/isolate.h"
#include "tools/cli_args.h"
#include "tools/cli_json.h"

namespace layoutcheck::cli {

template <typename F>
F as_function(void* sym) {
  F f;
  static_assert(sizeof f == sizeof sym, "function and object pointers differ in size");
  std::memcpy(&f, &sym, sizeof f);
  return f;
}

// ---- the child ------------------------------------------------------------------

// Loads `path`; when it cannot, sends the reason as the first reply and returns nullptr.
void* child_open_library(const std::string& path, int fd);

// Whether loading `path` left processes behind; if so, sends that as the first reply.
bool child_reported_stray(const std::string& path, int fd);

// Answers one request to the function `sym` (nullptr for a request naming no
// provided function): the reply's first field is an error text, empty when none.
using ServeFn = std::string (*)(void* sym, const std::string& request);

// The child of a library with several optional functions: loads it, replies
// with which of `symbols` it exports (bit f for symbols[f]), then answers each
// request, whose first field is the function's index, with `serve`.
void child_serve_library(const std::string& path, int fd, const std::vector<const char*>& symbols, ServeFn serve);

// ---- the parent -----------------------------------------------------------------

// The sandbox limits, with the timeout of LAYOUTCHECK_PLUGIN_TIMEOUT when set.
SandboxLimits library_limits();

class LibraryChild {
 public:
  // `command` names the messages ("layoutcheck tuple: bad library ...").
  LibraryChild(std::string command, std::string path);

  Sandbox& box() { return box_; }

  // Says on stderr that the library is bad and why; returns the exit status 2.
  int bad_library(const std::string& why) const;

  // Receives one reply, whose first field is the child's error text. Returns a
  // Reader after that field (valid until the next receive), or nullopt when the
  // library is bad (said on stderr by bad_library).
  std::optional<Reader> receive(uint64_t max_bytes, const std::string& during, const std::string& malformed);

  // Starts child_serve_library's child and reads which of `symbols` the library
  // exports; nullopt (said on stderr) when it cannot start, is bad or exports none.
  std::optional<uint64_t> start_serving(const std::vector<const char*>& symbols, ServeFn serve);

  // Sends `request` for the function `symbol` over `inputs` inputs and receives
  // the reply, as receive.
  std::optional<Reader> call(const std::string& request, const char* symbol, uint64_t inputs, uint64_t max_bytes);

 private:
  std::string command_, path_;
  Sandbox box_;
  std::string reply_;
};

// One function's outcome over its inputs, and its first difference.
struct FnResult {
  std::string status;  // passed, failed, not provided
  uint64_t inputs = 0, failed = 0;
  std::string input, expected, actual, note;
};

// Each function's result: "not provided" when bit f of `provided` is clear,
// else check(f, result) counts its inputs and failures and returns 0, or the
// exit status to stop with (the library or the reference failed, said on
// stderr), which check_functions returns.
template <typename Check>
int check_functions(uint64_t provided, std::vector<FnResult>* results, Check check) {
  for (uint64_t f = 0; f < results->size(); ++f) {
    FnResult& res = (*results)[f];
    if (!(provided & (uint64_t{1} << f))) {
      res.status = "not provided";
      continue;
    }
    if (int status = check(f, res)) return status;
    res.status = res.failed ? "failed" : "passed";
  }
  return 0;
}

// The report of a library with several optional functions: `j` (the --json
// header and the command's own fields) gets the status, totals and functions;
// the text gives `title`, a line per function (names `width` wide) and a
// `command:` summary. Returns the exit status: 1 when a function failed.
int report_functions(const Args& a, Json j, const std::string& title, const std::string& command,
                     const std::vector<const char*>& symbols, const std::vector<FnResult>& results, int width);

}  // namespace layoutcheck::cli
