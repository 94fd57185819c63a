// layoutcheck/checker.h — one checker, many drivers.
//
// check() compares an implementation against an expected one (normally the
// reference) on a single case, the same way for gtest cases, RapidCheck
// properties, libFuzzer harnesses, corpus replay and the CLI:
//
//   CheckReport r = check(c, reference_impl(), optimized_impl());
//   if (r.verdict == Verdict::kFail) std::cerr << r.message;   // a reproducer
//
// It fills the logical tensor with position-unique values, pre-fills each
// physical buffer with a different poison byte and guard zones on both sides,
// compares every element's offset and every byte of the footprint the way the
// document's byte rules say (element and fixed bytes exactly, free bytes against
// their constraint, see layoutcheck/byte_rules.h), checks the guards, and checks
// that both implementations unpack the expected image, its free bytes filled
// with a non-zero pattern, back to x.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "layoutcheck/impl.h"
#include "layoutcheck/rules.h"

namespace layoutcheck {

enum class Verdict {
  kPass,         // both accept, identical bytes, offsets and round trips
  kBothInvalid,  // both reject the case (the reference names the rule)
  kDeclined,     // the implementation under test declines a valid case
  kSkipped,      // too large to check under the options, or the expected impl cannot
  kFail,
};
const char* verdict_name(Verdict v);

struct CheckOptions {
  uint64_t seed = 1;                          // salts the position-unique fill
  uint64_t max_physical_bytes = 256u << 20;   // larger cases are skipped
  uint64_t max_offset_checks = 1u << 18;      // offsets compared per case (strided sample)
  uint64_t max_nested_checks = 512;           // nested-coordinate offsets compared per TLA case
  size_t guard_bytes = 64;                    // poison zone on each side of every buffer
  // Compare every byte with the expected pack, the free bytes of the
  // document's byte rules (layoutcheck/byte_rules.h) included: for teams that
  // want deterministic padding. Off: free bytes are held only to their constraint.
  bool strict_padding = false;
};

struct CheckReport {
  Verdict verdict = Verdict::kPass;
  std::string message;  // multi-line; for kFail it ends with the repro line
  std::string repro;    // one line: `layoutcheck repro ...`
  std::map<std::string, uint64_t> broken_rules;  // byte rule id -> bytes of pack that broke it
  // The rule (layoutcheck/rules.h) by which the expected implementation rejects
  // the case, when it does; "" otherwise.
  std::string rule;
};

CheckReport check(const Case& c, const Impl& expected, const Impl& actual,
                  const CheckOptions& options = {});

// The command line that replays a case against an implementation with the
// options of the check (the seed of the position-unique fill, ...):
//   layoutcheck repro 'tpu.compact' --dtype fp32 --shape 1,2,3,4 --impl /abs/libmine.so --seed 7
// A plugin's name is the absolute path it was loaded from, so the line works
// from any directory.
std::string repro_command(const Case& c, const std::string& impl_name, const CheckOptions& options = {});

// Fills a dense logical buffer with values unique per position (within the
// period of the element width, 2^bits elements), salted by seed; elements m *
// 2^(k bits) apart (0 < m < 2^bits, any k) differ too, as long as adding
// leaves the higher digits of the index in base 2^bits alone. Elements of narrow fields
// (LayoutSpec::value_bits) get values that fit their field.
void fill_position_unique(const Case& c, uint64_t seed, std::vector<uint8_t>* logical);

// ---- many cases over the registry ------------------------------------------
struct LayoutTally {
  std::string layout;  // spec name
  uint64_t cases = 0, passed = 0, invalid = 0, declined = 0, skipped = 0, failed = 0;
  std::string first_failure;  // message of the first failure
  Case first_failing_case;    // valid when failed > 0
  uint64_t first_failing_seed = 0;  // CheckOptions::seed of that case
  std::map<std::string, uint64_t> passed_by_dtype;  // what was exercised
  // Rule coverage: cases the expected implementation rejects by each rule that
  // were checked on the implementation under test (invalid on both, or failed).
  std::map<std::string, uint64_t> rules_fired;
  ParamCoverage params;  // the parameter values the cases took
};

struct RunOptions {
  std::string layout_glob = "*";
  double seconds = 10;        // wall-clock budget over all layouts
  uint64_t seed = 1;
  uint64_t min_cases = 20;    // per layout, even if the budget runs out
  uint64_t max_cases = 0;     // per layout; 0 = no limit besides time
  // Per layout: when nonzero, exactly this many cases (boundary cases first,
  // then random ones) and no time budget at all, so the same seed gives the
  // same cases and the same verdicts on every machine. seconds, min_cases and
  // max_cases are then ignored.
  uint64_t cases = 0;
  CheckOptions check;
  unsigned jobs = 1;          // layouts checked in parallel
  bool fail_fast = false;     // stop at the first failure
  std::function<void(const std::string& line)> progress;  // optional
  // Optional: called after every case (serialized across jobs), for a live progress line.
  std::function<void(const std::string& layout, uint64_t cases_done, uint64_t failed)> on_case;
  // Shard `shard_index` (0-based) of `shard_count`: the matched layouts whose
  // position in the registry order is shard_index modulo shard_count. Each
  // layout's cases do not depend on the sharding, so the shards' union is the
  // unsharded run.
  uint64_t shard_index = 0, shard_count = 1;
  // How one case is checked (default: check() in this process).
  std::function<CheckReport(const Case&, const CheckOptions&)> runner;
  // Cases the implementation claims to support: declining one is a failure.
  std::function<bool(const Case&)> claimed;
  // Optional: runs between the boundary phase and the random phase (the CLI
  // replays the documents' examples there); returns false to stop the run.
  std::function<bool()> after_boundary;
};

// Three phases: first the boundary and rule cases of every matching layout
// (strength_cases, then the layout's boundary_cases), all layouts together,
// cheapest first; then options.after_boundary; then random cases shared across
// the layouts in turn until the time budget (or until options.cases per layout,
// boundary cases included). Every 8th random case has one extent drawn
// log-uniformly (stretch_case). fail_fast stops at the first failure.
std::vector<LayoutTally> run_checks(const Impl& expected, const Impl& actual,
                                    const RunOptions& options);

bool glob_match(const std::string& pattern, const std::string& text);

}  // namespace layoutcheck
