// Helpers shared by the fuzz harnesses.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "layoutcheck/checker.h"
#include "layoutcheck/int_tuple.h"

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

// How large a case a fuzz input may ask for. Under ASan and UBSan a check
// costs about a microsecond per physical byte and per element (the
// references walk every padded element for pack, unpack and the byte rules),
// while the coverage comes from block edges and tails, which small cases
// reach: a channel tail past 64, two HTP chunks of 2 KiB, a TPU image of four
// NPUs with 1 KiB of local memory each. Larger cases are rejected, not shrunk,
// so an input always means the same case.
constexpr uint64_t kMaxElements = 256;
constexpr uint64_t kMaxPhysicalBytes = 4u << 10;

// The coordinates of a TLA notation layout (tla.layout, tla.tile): the
// reference walks each of them when it checks that the layout is injective
// (strides that interleave are enumerated) and when it maps the bytes, at
// tens of microseconds per nested coordinate under ASan. A tile of a few
// elements may ask for a tiled layout of millions (a nested mode keeps every
// leaf but its last), so the layout's own size is bounded too, not only the
// logical shape's. The named fractal formats are bounded by their physical
// bytes: their strides never interleave.
constexpr uint64_t kMaxTlaCoordinates = 256;

// min(a * b, UINT64_MAX).
inline uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

// The size of one mode of a tla.tile: every leaf but the last (outermost)
// kept, the last ceil(tile / product of the others) ("获取 Tilelayout").
inline uint64_t tla_tiled_mode_size(const IntTuple& mode, uint64_t tile) {
  const std::vector<int64_t> l = mode.leaves();
  uint64_t inner = 1;
  for (size_t i = 0; i + 1 < l.size(); ++i) inner = saturating_mul(inner, static_cast<uint64_t>(l[i]));
  if (inner == 0) return 0;
  return saturating_mul(inner, tile / inner + (tile % inner != 0));
}

// The number of coordinates of a tla.layout or tla.tile case (after the tile);
// 0 for other layouts and for parameters that do not parse, which the
// references reject before they walk anything.
inline uint64_t tla_coordinates(const Case& c) {
  if (c.layout.name != "tla.layout" && c.layout.name != "tla.tile") return 0;
  auto shape = parse_int_tuple(c.layout.get("shape"));
  if (!shape.ok()) return 0;
  if (c.layout.name == "tla.layout") {
    uint64_t n = 1;
    for (int64_t e : shape->leaves()) n = saturating_mul(n, static_cast<uint64_t>(e));
    return n;
  }
  auto tile = parse_int_tuple(c.layout.get("tile"));
  if (!tile.ok() || shape->is_integer() || tile->is_integer() || shape->rank() != tile->rank()) return 0;
  uint64_t n = 1;
  for (size_t i = 0; i < shape->rank(); ++i) {
    const IntTuple& t = tile->items()[i];
    if (!t.is_integer() || t.value() <= 0) return 0;
    n = saturating_mul(n, tla_tiled_mode_size(shape->items()[i], static_cast<uint64_t>(t.value())));
  }
  return n;
}

// Checker options for cases within those bounds: larger physical images are
// skipped by the checker before any buffer is allocated.
inline CheckOptions check_options(uint64_t seed) {
  CheckOptions o;
  o.seed = seed;
  o.max_physical_bytes = kMaxPhysicalBytes;
  o.max_offset_checks = 64;  // every offset of 127 elements or fewer, a strided sample beyond
  o.max_nested_checks = 8;   // TLA nested coordinates, three spellings each: a few per input
  o.guard_bytes = 16;
  return o;
}

// Inputs whose case was not checked: above the bounds, or skipped by the
// checker. The replay main reports them and fails on them in regressions.
inline uint64_t not_checked = 0;

// Aborts (a finding) when the check fails, printing the reproducer. Returns
// false, having checked nothing, when the case has more than max_elements
// elements, its TLA layout more than kMaxTlaCoordinates coordinates, or the
// checker skips it (physical size above kMaxPhysicalBytes).
inline bool require_agreement(const Case& c, const Impl& expected, const Impl& actual, uint64_t seed,
                              uint64_t max_elements = kMaxElements) {
  auto n = element_count(c.shape);
  if (n.ok() && *n > max_elements) return ++not_checked, false;
  if (tla_coordinates(c) > kMaxTlaCoordinates) return ++not_checked, false;
  CheckReport r = check(c, expected, actual, check_options(seed));
  if (r.verdict == Verdict::kFail || r.verdict == Verdict::kDeclined) {
    std::fprintf(stderr, "%s\nregression text: case: %s | %s | %s\n", r.message.c_str(), to_string(c.layout).c_str(),
                 dtype_name(c.dtype), shape_to_string(c.shape).c_str());
    std::abort();
  }
  if (r.verdict == Verdict::kSkipped) return ++not_checked, false;
  return true;
}

}  // namespace layoutcheck::fuzz
