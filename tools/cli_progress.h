// The live progress line of check, oracle and replay (tools/cli_progress.cc),
// on standard error: on a terminal one line rewritten in place ("\r") at most
// ten times a second; otherwise a plain line every 10 seconds. Off with --json.
//
//   ProgressLine p("check", enabled);
//   p.update("tpu.compact", done, total, failures);   // total 0: unknown
//   p.print("a line of its own");                     // clears the live line first
//   p.finish();
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace layoutcheck::cli {

class ProgressLine {
 public:
  // budget_seconds > 0: the run stops by then, which bounds the ETA.
  ProgressLine(std::string command, bool enabled, double budget_seconds = 0);
  ~ProgressLine() { finish(); }
  void update(const std::string& what, uint64_t done, uint64_t total, uint64_t failures);
  void print(const std::string& line);
  void finish();

 private:
  std::string text(double elapsed) const;
  std::string command_;
  bool enabled_, tty_;
  double budget_;
  std::chrono::steady_clock::time_point start_, last_;
  bool shown_ = false, updated_ = false;
  std::string what_;
  uint64_t done_ = 0, total_ = 0, failures_ = 0;
};

}  // namespace layoutcheck::cli
