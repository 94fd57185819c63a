// rank, depth and get<I...> of an IntTuple by scanning its preorder nodes
// (layoutcheck/tla_tuple.h), without building sub-tuples along a path.
//
// Equal to the reference because the preorder form is the tuple: the root
// node's item count is the rank (an integer node counts as one element); the
// depth is the largest number of tuple nodes open at once; the I-th element
// starts after the root and the whole subtrees of elements 0..I-1, and a
// subtree ends where the number of nodes still owed reaches zero.
#include "layoutcheck/tla_api.h"

#include <algorithm>

namespace layoutcheck {
namespace {

// One past the last node of the subtree starting at `at`.
size_t subtree_end(const std::vector<lc_tuple_node>& n, size_t at) {
  uint64_t owed = 1;
  while (owed > 0 && at < n.size()) {
    owed += n[at].items;
    --owed;
    ++at;
  }
  return at;
}

// The first node of element i of the subtree at `at`, or npos.
size_t element_start(const std::vector<lc_tuple_node>& n, size_t at, uint64_t i) {
  if (n[at].items == 0) return i == 0 ? at : std::string::npos;
  if (i >= n[at].items) return std::string::npos;
  size_t p = at + 1;
  for (uint64_t k = 0; k < i; ++k) p = subtree_end(n, p);
  return p;
}

class OptimizedTupleApi : public TupleApi {
 public:
  std::string name() const override { return "optimized"; }

  Result<uint64_t> rank(const IntTuple& t) const override {
    const std::vector<lc_tuple_node> n = tuple_nodes(t);
    return n[0].items == 0 ? 1 : uint64_t{n[0].items};
  }

  Result<uint64_t> depth(const IntTuple& t) const override {
    const std::vector<lc_tuple_node> n = tuple_nodes(t);
    std::vector<uint32_t> open;  // elements still owed by each open tuple node
    uint64_t deepest = 0;
    for (const lc_tuple_node& node : n) {
      if (!open.empty()) --open.back();
      if (node.items > 0) {
        open.push_back(node.items);
        deepest = std::max<uint64_t>(deepest, open.size());
      }
      while (!open.empty() && open.back() == 0) open.pop_back();
    }
    return deepest;
  }

  Result<IntTuple> get(const IntTuple& t, uint64_t i) const override { return get(t, std::vector<uint64_t>{i}); }

  Result<IntTuple> get(const IntTuple& t, const std::vector<uint64_t>& path) const override {
    const std::vector<lc_tuple_node> n = tuple_nodes(t);
    size_t at = 0;
    for (size_t k = 0; k < path.size(); ++k) {
      const size_t next = element_start(n, at, path[k]);
      if (next == std::string::npos) {
        std::string p;
        for (size_t j = 0; j <= k; ++j) p += (j ? "," : "") + std::to_string(path[j]);
        return Status::invalid("get<" + p + "> of " + to_string(t) + ": index " + std::to_string(path[k]) +
                               " is not below the rank of the element it selects (I < rank)");
      }
      at = next;
    }
    return tuple_of_nodes(n.data() + at, subtree_end(n, at) - at);
  }
};

}  // namespace

const TupleApi& optimized_tuple_api() {
  static const OptimizedTupleApi api;
  return api;
}

}  // namespace layoutcheck
