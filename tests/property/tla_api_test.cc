#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "support.h"  // gtest before rapidcheck/gtest.h

#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "layoutcheck/int_tuple.h"
#include "layoutcheck/tla_api.h"

namespace layoutcheck {
namespace {

// An IntTuple within the notation's limits: at most `depth_left` levels, and
// *leaves integers so far of the 64 allowed.
IntTuple draw_tuple(int depth_left, size_t* leaves) {
  if (depth_left == 0 || *leaves + 2 > IntTuple::kMaxLeaves || *rc::gen::inRange(0, 3) == 0) {
    ++*leaves;
    return IntTuple(*rc::gen::inRange<int64_t>(0, 1 << 20), *rc::gen::arbitrary<bool>());
  }
  const int rank = *rc::gen::inRange(1, 5);
  std::vector<IntTuple> items;
  for (int i = 0; i < rank && *leaves < IntTuple::kMaxLeaves; ++i) items.push_back(draw_tuple(depth_left - 1, leaves));
  return IntTuple(std::move(items));
}

IntTuple draw_tuple() {
  size_t leaves = 0;
  return draw_tuple(*rc::gen::inRange(0, IntTuple::kMaxDepth + 1), &leaves);
}

// Every path to an element at any depth, the empty one first.
void paths_of(const IntTuple& t, std::vector<uint64_t>* path, std::vector<std::vector<uint64_t>>* out) {
  out->push_back(*path);
  if (t.is_integer()) return;
  for (size_t i = 0; i < t.rank(); ++i) {
    path->push_back(i);
    paths_of(t.items()[i], path, out);
    path->pop_back();
  }
}

std::vector<std::vector<uint64_t>> paths_of(const IntTuple& t) {
  std::vector<uint64_t> path;
  std::vector<std::vector<uint64_t>> out;
  paths_of(t, &path, &out);
  return out;
}

std::vector<size_t> as_size_path(const std::vector<uint64_t>& p) { return std::vector<size_t>(p.begin(), p.end()); }

RC_GTEST_PROP(TlaApiProperty, optimized_tuple_queries_equal_the_reference, ()) {
  const IntTuple t = draw_tuple();
  RC_LOG() << to_string(t);
  const TupleApi& ref = reference_tuple_api();
  const TupleApi& opt = optimized_tuple_api();
  RC_ASSERT(*ref.rank(t) == *opt.rank(t));
  RC_ASSERT(*ref.depth(t) == *opt.depth(t));
  for (uint64_t i = 0; i <= *ref.rank(t) + 1; ++i) {
    auto a = ref.get(t, i), b = opt.get(t, i);
    RC_ASSERT(a.ok() == b.ok());
    if (a.ok()) RC_ASSERT(*a == *b);
  }
  for (std::vector<uint64_t> path : paths_of(t)) {
    RC_ASSERT(*ref.get(t, path) == *opt.get(t, path));
    path.push_back(*rc::gen::inRange<uint64_t>(0, 6));
    auto a = ref.get(t, path), b = opt.get(t, path);
    RC_ASSERT(a.ok() == b.ok());
    if (a.ok()) RC_ASSERT(*a == *b);
  }
}

// rank, depth and get<I...> of both implementations agree with the parsed
// tuple's own structure, and with the node form a library receives.
RC_GTEST_PROP(TlaApiProperty, queries_agree_with_the_parsed_tuple, ()) {
  const IntTuple t = draw_tuple();
  RC_LOG() << to_string(t);
  const IntTuple parsed = *parse_int_tuple(to_string(t));
  RC_ASSERT(parsed == t);
  const std::vector<lc_tuple_node> nodes = tuple_nodes(t);
  RC_ASSERT(nodes.size() == paths_of(t).size());  // one node per element at any depth
  RC_ASSERT(*tuple_of_nodes(nodes.data(), nodes.size()) == t);
  for (const TupleApi* api : {&reference_tuple_api(), &optimized_tuple_api()}) {
    RC_ASSERT(*api->rank(t) == t.rank());
    RC_ASSERT(*api->depth(t) == static_cast<uint64_t>(t.depth()));
    for (const auto& path : paths_of(t)) {
      const IntTuple* walked = t.get(as_size_path(path));
      RC_ASSERT(walked != nullptr);
      RC_ASSERT(*api->get(t, path) == *walked);
    }
  }
}

// "Layout 使用": get<I...>, rank<I...>, depth<I...>, shape<I...> and stride<I...>
// of a layout at every path are those of walking its shape and stride there; a
// path one index past the rank is an error.
RC_GTEST_PROP(TlaApiProperty, hierarchical_accessors_walk_the_tuple, ()) {
  // A shape of positive extents and a stride congruent with it: each integer
  // of a drawn tuple replaced by a drawn one.
  std::function<IntTuple(const IntTuple&, int64_t, int64_t)> congruent = [&](const IntTuple& s, int64_t lo, int64_t hi) {
    if (s.is_integer()) return IntTuple(*rc::gen::inRange<int64_t>(lo, hi), *rc::gen::arbitrary<bool>());
    std::vector<IntTuple> items;
    for (const IntTuple& i : s.items()) items.push_back(congruent(i, lo, hi));
    return IntTuple(std::move(items));
  };
  const IntTuple shape = congruent(draw_tuple(), 1, 5);
  const TlaLayoutText l{shape, congruent(shape, 0, 1 << 16)};
  RC_LOG() << to_string(l);
  RC_PRE(parse_tla_layout(to_string(l)).ok());  // the size within the notation's 2^62
  for (const TupleApi* api : {&reference_tuple_api(), &optimized_tuple_api()}) {
    for (const auto& path : paths_of(shape)) {
      const IntTuple* s = l.shape.get(as_size_path(path));
      const IntTuple* d = l.stride.get(as_size_path(path));
      auto facts = layout_query(*api, l, path);
      RC_ASSERT(facts.ok());
      std::string at;
      for (uint64_t i : path) at += (at.empty() ? "" : ",") + std::to_string(i);
      at = path.empty() ? "" : "<" + at + ">";
      std::map<std::string, std::string> f(facts->begin(), facts->end());
      RC_ASSERT(f.at("get" + at) == to_string(*s) + ":" + to_string(*d));
      RC_ASSERT(f.at("rank" + at) == std::to_string(d->rank()));
      RC_ASSERT(f.at("depth" + at) == std::to_string(s->depth()));
      RC_ASSERT(f.at("shape" + at) == to_string(*s));
      RC_ASSERT(f.at("stride" + at) == to_string(*d));
      std::vector<uint64_t> past = path;
      past.push_back(s->rank());
      RC_ASSERT(!layout_query(*api, l, past).ok());
    }
  }
}

}  // namespace
}  // namespace layoutcheck
