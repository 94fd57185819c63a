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
//   fact start_npu = 1             # a value reported by describe
//   size = 4096                    # size_bytes
//   order = 0,0,0,0; 0,0,0,1       # coordinates in increasing physical order
//   error ~ not divisible by 128   # the case must be rejected; the reference's message
//                                  # must contain this text (others need only reject)
//
// A `source:` line before the first case applies to every case of the file; one
// inside a case applies to that case. `note:` lines are free text.
#pragma once

#include <string>
#include <vector>

#include "layoutcheck/impl.h"

namespace layoutcheck {

struct OracleExpect {
  enum Kind { kOffset, kOffsetBits, kSize, kFact, kError, kOrder } kind;
  int line = 0;
  Coord at;                  // kOffset, kOffsetBits
  std::vector<Coord> order;  // kOrder
  std::string key;           // kFact
  std::string value;         // kFact value, kError substring
  uint64_t number = 0;       // kOffset, kOffsetBits, kSize
};

struct OracleCase {
  std::string id, source, file;
  int line = 0;
  std::string layout, dtype, shape;  // as written
  std::vector<std::string> notes;
  std::vector<OracleExpect> expects;
};

Result<std::vector<OracleCase>> parse_oracles(const std::string& text, const std::string& file);
Result<std::vector<OracleCase>> load_oracle_file(const std::string& path);
// Every *.oracle file below dir, sorted by path.
Result<std::vector<OracleCase>> load_oracle_dir(const std::string& dir);

// Runs one case against an implementation; returns the failures (empty = pass).
// Facts are checked only where the implementation describes the case.
std::vector<std::string> run_oracle(const OracleCase& oc, const Impl& impl);

}  // namespace layoutcheck
