// Helpers shared by the fuzz harnesses.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "layoutcheck/checker.h"

namespace layoutcheck::fuzz {

// Reads the input as little-endian integers, then zeros once exhausted.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint64_t take(size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(pos_ < size_ ? data_[pos_++] : 0) << (8 * i);
    return v;
  }
  bool empty() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_, pos_ = 0;
};

// A text case "case: LAYOUT | DTYPE | SHAPE" (the form regressions are saved in).
inline bool parse_text_case(const std::string& text, Case* out) {
  const std::string prefix = "case:";
  if (text.compare(0, prefix.size(), prefix) != 0) return false;
  size_t a = text.find('|'), b = a == std::string::npos ? a : text.find('|', a + 1);
  if (b == std::string::npos) return false;
  std::string shape = text.substr(b + 1);
  if (size_t nl = shape.find('\n'); nl != std::string::npos) shape.resize(nl);
  auto c = parse_case(text.substr(prefix.size(), a - prefix.size()), text.substr(a + 1, b - a - 1), shape);
  if (!c.ok()) return false;
  *out = *c;
  return true;
}

// Aborts (a finding) when the check fails, printing the reproducer.
inline void require_agreement(const Case& c, const Impl& expected, const Impl& actual, uint64_t seed) {
  auto n = element_count(c.shape);
  if (n.ok() && *n > (1u << 16)) return;  // large tensors add time, not coverage
  CheckOptions o;
  o.seed = seed;
  o.max_physical_bytes = 16u << 20;
  o.max_offset_checks = 1u << 14;
  CheckReport r = check(c, expected, actual, o);
  if (r.verdict == Verdict::kFail || r.verdict == Verdict::kDeclined) {
    std::fprintf(stderr, "%s\nregression text: case: %s | %s | %s\n", r.message.c_str(), to_string(c.layout).c_str(),
                 dtype_name(c.dtype), shape_to_string(c.shape).c_str());
    std::abort();
  }
}

}  // namespace layoutcheck::fuzz
