#include "tools/cli_progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace layoutcheck::cli {

namespace {

std::string duration(double s) {
  char buf[32];
  const long v = static_cast<long>(s + 0.5);
  if (v >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", v / 60, v % 60);
  return buf;
}

}  // namespace

ProgressLine::ProgressLine(std::string command, bool enabled, double budget_seconds)
    : command_(std::move(command)),
      enabled_(enabled),
      tty_(isatty(STDERR_FILENO) == 1),
      budget_(budget_seconds),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

std::string ProgressLine::text(double elapsed) const {
  const double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0;
  std::string eta = "?";
  if (total_ > done_ && rate > 0) eta = duration(static_cast<double>(total_ - done_) / rate);
  else if (total_ && done_ >= total_) eta = "0:00";
  if (budget_ > 0) {
    const double left = std::max(0.0, budget_ - elapsed);
    eta = eta == "?" ? duration(left) : eta;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "%llu%s%s cases, %.1f/s, elapsed %s, ETA %s, %llu failed",
                static_cast<unsigned long long>(done_), total_ ? "/" : "",
                total_ ? std::to_string(total_).c_str() : "", rate, duration(elapsed).c_str(), eta.c_str(),
                static_cast<unsigned long long>(failures_));
  return "layoutcheck " + command_ + ": " + what_ + " " + buf;
}

void ProgressLine::update(const std::string& what, uint64_t done, uint64_t total, uint64_t failures) {
  if (!enabled_) return;
  what_ = what;
  done_ = done;
  total_ = total;
  failures_ = failures;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  // The first case shows at once, then at most every 0.1 s (terminal) or 10 s.
  if (updated_ && since < (tty_ ? 0.1 : 10.0)) return;
  updated_ = true;
  last_ = now;
  const std::string line = text(std::chrono::duration<double>(now - start_).count());
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    shown_ = true;
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

void ProgressLine::print(const std::string& line) {
  if (shown_) std::fputs("\r\033[K", stderr);
  shown_ = false;
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

void ProgressLine::finish() {
  if (!shown_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace layoutcheck::cli
