#include <algorithm>
#include <numeric>
#include <set>

#include "support.h"  // gtest before rapidcheck/gtest.h

#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

namespace layoutcheck {
namespace {

DType draw_dtype() {
  return *rc::gen::element(DType::kInt4, DType::kUInt4, DType::kInt8, DType::kInt16, DType::kFp16, DType::kInt32,
                           DType::kFp32);
}

Shape draw_shape() {
  const size_t rank = *rc::gen::inRange<size_t>(1, 5);
  Shape s(rank);
  for (auto& d : s) d = *rc::gen::inRange<int64_t>(1, 5);
  return s;
}

std::string text(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ":" : "") + std::to_string(v[i]);
  return out;
}

std::vector<int64_t> row_major(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t k = s.size(); k-- > 1;) st[k - 1] = st[k] * s[k];
  return st;
}

Case view(const ParamMap& p, DType t, const Shape& s) { return Case{*make_layout("mge.strided", p), t, s}; }

uint64_t offset(const Impl& impl, const Case& c, const Coord& at) {
  auto o = impl.offset_bits(c, at);
  RC_ASSERT(o.ok());
  return *o;
}

// Any strides in [0, 12]: optimized and reference agree on validity, rule and every byte.
RC_GTEST_PROP(MgeStridedProperty, optimized_equals_reference, ()) {
  const Shape s = draw_shape();
  std::vector<int64_t> st(s.size());
  for (auto& x : st) x = *rc::gen::inRange<int64_t>(0, 13);
  ParamMap p{{"strides", text(st)}, {"offset", std::to_string(*rc::gen::inRange<int64_t>(0, 4))}};
  if (*rc::gen::arbitrary<bool>()) p["row_align"] = "byte";
  const Case c = view(p, draw_dtype(), s);
  const Status ref = reference_impl().supports(c), opt = optimized_impl().supports(c);
  RC_ASSERT(ref.code() == opt.code());
  RC_ASSERT(ref.rule() == opt.rule());
  if (!ref.ok()) return;
  CheckReport r = check(c, reference_impl(), optimized_impl());
  RC_LOG() << r.message;
  RC_ASSERT(r.verdict == Verdict::kPass);
}

// A transpose by strides reads the element of the parent at the permuted coordinate.
RC_GTEST_PROP(MgeStridedProperty, transpose_reads_the_parent, ()) {
  const Shape parent = draw_shape();
  std::vector<size_t> perm(parent.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::vector<size_t> shuffled = *rc::gen::container<std::vector<size_t>>(perm.size(), rc::gen::inRange<size_t>(0, 1000));
  std::stable_sort(perm.begin(), perm.end(), [&](size_t a, size_t b) { return shuffled[a] < shuffled[b]; });
  const DType t = draw_dtype();
  const std::vector<int64_t> ps = row_major(parent);
  Shape shape(parent.size());
  std::vector<int64_t> st(parent.size());
  for (size_t k = 0; k < parent.size(); ++k) shape[k] = parent[perm[k]], st[k] = ps[perm[k]];
  const Case base = view({}, t, parent), tr = view({{"strides", text(st)}}, t, shape);
  RC_ASSERT(reference_impl().supports(tr).ok());
  for (uint64_t i = 0; i < *element_count(shape); ++i) {
    const Coord at = coord_of_index(shape, i);
    Coord from(parent.size());
    for (size_t k = 0; k < parent.size(); ++k) from[perm[k]] = at[k];
    RC_ASSERT(offset(reference_impl(), tr, at) == offset(reference_impl(), base, from));
    RC_ASSERT(offset(optimized_impl(), tr, at) == offset(reference_impl(), base, from));
  }
}

// A sub-tensor reads the parent at start + coordinate and stays in the parent's bytes.
RC_GTEST_PROP(MgeStridedProperty, sub_tensor_reads_the_parent, ()) {
  const Shape parent = draw_shape();
  const DType t = draw_dtype();
  Shape shape(parent.size());
  Coord start(parent.size());
  for (size_t k = 0; k < parent.size(); ++k) {
    start[k] = *rc::gen::inRange<int64_t>(0, parent[k]);
    shape[k] = *rc::gen::inRange<int64_t>(1, parent[k] - start[k] + 1);
  }
  const std::vector<int64_t> ps = row_major(parent);
  int64_t off = 0;
  for (size_t k = 0; k < parent.size(); ++k) off += start[k] * ps[k];
  const Case base = view({}, t, parent);
  const Case sub = view({{"strides", text(ps)}, {"offset", std::to_string(off)},
                         {"storage", std::to_string(*element_count(parent))}}, t, shape);
  RC_ASSERT(reference_impl().supports(sub).ok());
  RC_ASSERT(*reference_impl().size_bytes(sub) == *reference_impl().size_bytes(base));
  for (uint64_t i = 0; i < *element_count(shape); ++i) {
    const Coord at = coord_of_index(shape, i);
    Coord from = at;
    for (size_t k = 0; k < at.size(); ++k) from[k] += start[k];
    RC_ASSERT(offset(optimized_impl(), sub, at) == offset(reference_impl(), base, from));
  }
  CheckReport r = check(sub, reference_impl(), optimized_impl());
  RC_ASSERT(r.verdict == Verdict::kPass);
}

// A valid view's elements lie in its block and have offsets of their own, broadcast dimensions aside;
// is_contiguous says that they are the block's first elements in row-major order.
RC_GTEST_PROP(MgeStridedProperty, valid_views_are_in_bounds_and_disjoint, ()) {
  const Shape s = draw_shape();
  // Nested strides in a random order with gaps, some broadcast, some arbitrary.
  std::vector<size_t> order(s.size());
  std::iota(order.begin(), order.end(), 0);
  const std::vector<size_t> keys = *rc::gen::container<std::vector<size_t>>(s.size(), rc::gen::inRange<size_t>(0, 100));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  std::vector<int64_t> st(s.size());
  int64_t next = 1;
  for (size_t k : order) {
    st[k] = next;
    next = next * s[k] + *rc::gen::inRange<int64_t>(0, 3);
  }
  for (auto& x : st) {
    const int kind = *rc::gen::inRange(0, 6);
    if (kind == 0) x = 0;
    if (kind == 1) x = *rc::gen::inRange<int64_t>(0, 10);
  }
  const DType t = draw_dtype();
  const Case c = view({{"strides", text(st)}}, t, s);
  RC_CLASSIFY(reference_impl().supports(c).ok(), "valid");
  if (!reference_impl().supports(c).ok()) return;
  const uint64_t bits = dtype_bits(t), size = *reference_impl().size_bytes(c) * 8;
  std::set<uint64_t> seen;
  bool dense = true;
  for (uint64_t i = 0; i < *element_count(s); ++i) {
    Coord at = coord_of_index(s, i);
    const uint64_t o = offset(reference_impl(), c, at);
    RC_ASSERT(o + bits <= size);
    dense = dense && o == i * bits;
    bool broadcast_repeat = false;
    for (size_t k = 0; k < s.size(); ++k) broadcast_repeat = broadcast_repeat || (st[k] == 0 && at[k] > 0);
    if (!broadcast_repeat) RC_ASSERT(seen.insert(o).second);
  }
  auto facts = reference_impl().describe(c);
  RC_ASSERT(facts.ok());
  for (const auto& [k, v] : *facts) {
    if (k == "is_contiguous") RC_ASSERT((v == "yes") == dense);
  }
}

}  // namespace
}  // namespace layoutcheck
