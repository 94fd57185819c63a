// layoutcheck/int_tuple.h — CATLASS TLA IntTuples and the shape:stride notation.
//
// An IntTuple is an integer or a tuple of IntTuples (catlass-tla-layouts.txt,
// "IntTuple"). A TLA layout is a pair of congruent IntTuples, Shape and
// Stride, written SHAPE:STRIDE. A leading '_' marks a static (compile-time)
// integer, as the document prints `_2` for Int<2>{}:
//
//   auto l = parse_tla_layout("((4,2),(4,3)):((4,16),(1,32))");
//   l->shape.rank() == 2;  l->shape.depth() == 2;  *l->shape.get({1, 1}) == IntTuple(3)
//   to_string(*l) == "((4,2),(4,3)):((4,16),(1,32))"
//   parse_tla_layout("(_2,4):(_12,_1)")->stride.get({0})->is_static() == true
//
// This is types and parsing only: the coordinate -> offset arithmetic lives
// separately in reference/tla.cc and optimized/tla_layout.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "layoutcheck/status.h"

namespace layoutcheck {

class IntTuple {
 public:
  // Bounds on what the parser accepts (adversarial text must not recurse
  // deeply or build huge trees).
  static constexpr int kMaxDepth = 8;
  static constexpr size_t kMaxLeaves = 64;
  static constexpr int64_t kMaxValue = int64_t{1} << 48;

  IntTuple() = default;  // the integer 0
  explicit IntTuple(int64_t value, bool is_static = false) : value_(value), static_(is_static) {}
  explicit IntTuple(std::vector<IntTuple> items) : tuple_(true), items_(std::move(items)) {}

  bool is_integer() const { return !tuple_; }
  bool is_tuple() const { return tuple_; }
  int64_t value() const { return value_; }        // integers only
  bool is_static() const { return static_; }      // integers only
  const std::vector<IntTuple>& items() const { return items_; }

  // rank: number of elements (1 for an integer); depth: nesting (0 for an integer).
  size_t rank() const { return tuple_ ? items_.size() : 1; }
  int depth() const;
  // get<I0,I1,...>: element I0 of ..., nullptr when the path leaves the tuple.
  // For an integer, get(0) is the integer itself (as in CuTe/TLA).
  const IntTuple* get(std::initializer_list<size_t> path) const;
  const IntTuple* get(const std::vector<size_t>& path) const;
  // The integers, depth first (left to right).
  std::vector<int64_t> leaves() const;
  size_t leaf_count() const;
  // Product of the integers; fails on overflow past 2^62.
  Result<uint64_t> product() const;

  bool operator==(const IntTuple& o) const;
  bool operator!=(const IntTuple& o) const { return !(*this == o); }

 private:
  bool tuple_ = false;
  int64_t value_ = 0;
  bool static_ = false;
  std::vector<IntTuple> items_;
};

// "(4,(2,_3))" -> IntTuple; errors name the position and the rule.
Result<IntTuple> parse_int_tuple(std::string_view text);
std::string to_string(const IntTuple& t);
// Same nesting structure (an integer matches an integer, a tuple of rank r a
// tuple of rank r whose elements match); the message names the first mismatch.
Status check_congruent(const IntTuple& shape, const IntTuple& stride);

struct TlaLayoutText {
  IntTuple shape, stride;
  bool operator==(const TlaLayoutText& o) const { return shape == o.shape && stride == o.stride; }
};

// "SHAPE:STRIDE". Checks the notation's rules: balanced parentheses, congruent
// shape and stride, positive shape extents, no overflow of size.
Result<TlaLayoutText> parse_tla_layout(std::string_view text);
std::string to_string(const TlaLayoutText& l);

}  // namespace layoutcheck
