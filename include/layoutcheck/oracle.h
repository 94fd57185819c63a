// layoutcheck/oracle.h — golden cases from the documents, as data.
//
// An oracle file (oracles/<family>/*.oracle) holds cases; each cites the
// document and section it comes from. A case without a source is rejected.
//
//   source: sophgo-tpu-okkernel-local-memory.txt § Address of Tensor in Local Memory
//
//   case: tpu/address/B
//   layout: tpu.compact(npus=4,lmem=1024,addr=1472)
//   dtype: fp32
//   shape: 1,1,1,1
//   offset 0,0,0,0 = 1472          # byte offset of a logical coordinate
//   offset ((1,0),(1,1)) = 37      # of a nested coordinate (TLA; Impl::offset_bits_nested)
//   fact start_npu = 1             # a value reported by describe
//   size = 4096                    # size_bytes
//   order = 0,0,0,0; 0,0,0,1       # coordinates in increasing physical order
//   error ~ not divisible by 128   # the case must be rejected; the reference's message
//                                  # must contain this text (others need only reject)
//
// A `source:` line before the first case applies to every case of the file; one
// inside a case applies to that case. `note:` lines are free text.
//
// Loading a file or directory checks every source against the documents: the
// document must be a file of the spec directory and the section heading one of
// its headings (document_has_heading). Case ids are unique across the files.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "layoutcheck/impl.h"

namespace layoutcheck {

struct OracleExpect {
  enum Kind { kOffset, kOffsetBits, kSize, kFact, kError, kOrder } kind;
  int line = 0;
  Coord at;                  // kOffset, kOffsetBits
  std::vector<Coord> order;  // kOrder
  std::string tuple;         // kOffset, kOffsetBits: a nested coordinate (IntTuple text), else empty
  std::string key;           // kFact
  std::string value;         // kFact value, kError substring
  uint64_t number = 0;       // kOffset, kOffsetBits, kSize
};

struct OracleCase {
  std::string id, source, file;
  int line = 0;
  int source_line = 0;  // the line of `file` holding the source: that applies
  std::string layout, dtype, shape;  // as written
  std::vector<std::string> notes;
  std::vector<OracleExpect> expects;
};

// Parses one file's text; checks its syntax and that ids are unique within it,
// not the documents.
Result<std::vector<OracleCase>> parse_oracles(const std::string& text, const std::string& file);
// Loads and checks the sources against the documents in spec_dir.
Result<std::vector<OracleCase>> load_oracle_file(const std::string& path, const std::string& spec_dir);
// Every *.oracle file below dir, sorted by path; ids unique across the files.
Result<std::vector<OracleCase>> load_oracle_dir(const std::string& dir, const std::string& spec_dir);

// A heading of a document is a line that equals it once whitespace is
// collapsed, a trailing pilcrow (¶) and a leading section number ("3.2 ") are
// dropped; or, in a reStructuredText document flattened to one line, the
// heading followed by an underline of at least as many =, -, ~, ^, ", ', `, *,
// + or # (there the words a heading starts with cannot be told from the text
// before it, so a heading's trailing words also match).
bool document_has_heading(const std::string& document_text, const std::string& heading);
// Each case's source: names a file of spec_dir and a heading of that file.
Status check_oracle_sources(const std::vector<OracleCase>& cases, const std::string& spec_dir);
// No two cases share an id; the error names both file:line.
Status check_unique_ids(const std::vector<OracleCase>& cases);

// One line of an oracle file: the text before any '#', trimmed, and its head
// and rest around the first ':' (both trimmed; empty when there is no ':').
struct OracleLine {
  std::string text, head, rest;
};
OracleLine split_oracle_line(const std::string& raw);

// The `case: ID` and `source: DOCUMENT § SECTION` lines (the source's form
// already checked): a source before the first case is every case's default,
// after it the last case's. Returns whether `l` is one of them.
template <typename Case>
bool take_case_or_source(const OracleLine& l, const std::string& file, int lineno, std::string* file_source,
                         int* file_source_line, std::vector<Case>* cases) {
  if (l.head == "source") {
    if (cases->empty()) {
      *file_source = l.rest;
      *file_source_line = lineno;
    } else {
      cases->back().source = l.rest;
      cases->back().source_line = lineno;
    }
    return true;
  }
  if (l.head != "case") return false;
  Case c;
  c.id = l.rest;
  c.file = file;
  c.line = lineno;
  c.source = *file_source;
  c.source_line = *file_source_line;
  cases->push_back(c);
  return true;
}
// Each `fact KEY` is a key the describer (the reference) reports for the case;
// the error names file:line and the keys it reports.
Status check_oracle_facts(const std::vector<OracleCase>& cases, const Impl& describer);

struct OracleOptions {
  // Cases for which this is false are skipped (a plugin's capabilities); empty = all claimed.
  std::function<bool(const Case&)> claimed;
  // Answers `fact` lines when the implementation does not describe the case
  // (the reference); nullptr = such facts fail.
  const Impl* describer = nullptr;
  // Largest physical or logical buffer (bytes) materialized to find offsets
  // through pack when the implementation has no offset_bits.
  uint64_t max_pack_bytes = uint64_t{256} << 20;
};

struct OracleResult {
  enum Outcome { kPassed, kFailed, kSkipped } outcome = kPassed;
  std::vector<std::string> failures;  // "file:line: id: what"
  std::string skip_reason;            // kSkipped
  std::string facts_from;             // name of the implementation whose describe answered; empty if no facts
  bool offsets_from_pack = false;     // offsets and orders were found by packing
  // Lines not checked because the implementation lacks the entry that answers them
  // (a nested TLA coordinate without offset_bits_tuple), "file:line: why".
  std::vector<std::string> unchecked;
};

// Runs one case. Every expectation is checked or the case fails: offsets and
// orders through offset_bits, or, when the implementation has none, by packing
// position-unique values and finding where the element's bits landed; facts
// through the implementation's describe, or the describer's.
OracleResult run_oracle_case(const OracleCase& oc, const Impl& impl, const OracleOptions& options);

// run_oracle_case with impl as its own describer; returns the failures (empty = pass).
std::vector<std::string> run_oracle(const OracleCase& oc, const Impl& impl);

// "passed", "failed" or "skipped".
const char* outcome_name(OracleResult::Outcome outcome);

// ---- precision oracles: oracles/<dir>/*.precision ----------------------------
//
//   case: table/conv/1
//   source: nvdla-in-memory-data-formats.txt § Precision Conversion   # each case its own
//   table conv image-uint8 int8 = int8 weight int8     # = PIPELINE [weight W] | = invalid | = error ~ TEXT
//   convert nvdla fp32 fp16 unit=conv 0x7f800000 -> 0x7bff nan 0/0   # or -> error ~ TEXT
//
// convert options: unit=U, flush-nan, offset=N, scale=X, truncate=M; values are
// bit patterns (0x...) or signed decimals; `nan I/O` are the NaN counts.
struct PrecisionOracleCase {
  std::string id, source, file;
  int line = 0, source_line = 0;
  std::vector<std::pair<int, std::string>> checks;  // line, "table ..." or "convert ..."
};

Result<std::vector<PrecisionOracleCase>> parse_precision_oracles(const std::string& text, const std::string& file);
// Every *.precision file below dir, sorted by path; sources checked against the
// documents in spec_dir, ids unique across the files.
Result<std::vector<PrecisionOracleCase>> load_precision_oracle_dir(const std::string& dir,
                                                                   const std::string& spec_dir);
class Converter;
// Runs one case's table and convert lines (conversions through `converter`);
// returns the failures (empty = pass).
std::vector<std::string> run_precision_oracle(const PrecisionOracleCase& pc, const Converter& converter);

// ---- value oracles: oracles/<dir>/*.values -----------------------------------
//
// The NVDLA steps that change values (Winograd phase 1, sparse compression and
// the placement of its surfaces), which a layout oracle cannot hold:
//
//   case: nvdla/figures/g_matrix_column_0
//   source: nvdla-in-memory-data-formats.txt § Basic Weight for Winograd Convolution
//   transform fp16 1,1,3,3 = 0x3c00 0 0 0 0 0 0 0 0 -> 0x3c00 0x3800 ...
//
// A check line starts with one of kValuesVerbs; tests/oracle/nvdla_values_test.cc
// runs every check of every file on the reference and the optimized functions.
inline constexpr const char* kValuesVerbs[] = {"extend", "transform", "compress", "surfaces", "decompress"};
struct ValuesOracleCase {
  std::string id, source, file;
  int line = 0, source_line = 0;
  std::vector<std::pair<int, std::string>> checks;  // line, text
};
// Parses one file's text: each case has a source and at least one check, and a
// check starts with a known verb.
Result<std::vector<ValuesOracleCase>> parse_values_oracles(const std::string& text, const std::string& file);
// Every *.values file below dir, sorted by path; sources checked against the
// documents in spec_dir, ids unique across the files.
Result<std::vector<ValuesOracleCase>> load_values_oracle_dir(const std::string& dir, const std::string& spec_dir);

}  // namespace layoutcheck
