// JUnit XML reports for CI systems (tools/cli_junit.cc): `--junit FILE` of
// check (one testcase per layout), oracle and replay (one per case).
//
//   JunitCase c{"check.tpu", "tpu.compact"};           // passed unless outcome says otherwise
//   c.outcome = JunitCase::kFailed; c.message = "FAIL ..."; c.details = "...\nrepro: ...";
//   Status s = write_junit(path, "layoutcheck check", {c}, elapsed_seconds);
//
// The file is written like --out (tools/cli_io.h): atomically over a regular
// file. Text that is not UTF-8, or holds characters XML 1.0 does not allow, is
// replaced by U+FFFD.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "layoutcheck/status.h"

namespace layoutcheck::cli {

struct JunitCase {
  enum Outcome { kPassed, kFailed, kSkipped };
  JunitCase(std::string classname_, std::string name_) : classname(std::move(classname_)), name(std::move(name_)) {}
  std::string classname;
  std::string name;
  Outcome outcome = kPassed;
  std::string message;  // failed: the first line of the failure; skipped: the reason
  std::string details;  // failed: the whole message and the repro line
};

std::string junit_xml(const std::string& suite, const std::vector<JunitCase>& cases, double elapsed_seconds);

Status write_junit(const std::string& path, const std::string& suite, const std::vector<JunitCase>& cases,
                   double elapsed_seconds);

}  // namespace layoutcheck::cli
