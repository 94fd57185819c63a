// The IntTuple queries of catlass-tla-layouts.txt, as the document words them.
//
// "IntTuple 既可作为一个整数,也可作为一个 Tuple 类型": an IntTuple is an integer
// or a tuple of IntTuples. "IntTuple 的相关 API 操作":
//   rank(IntTuple):   返回IntTuple的元素个数          (the number of elements)
//   get<I>(IntTuple): 返回IntTuple的第Ith个元素       (the I-th element)
//   depth(IntTuple):  返回IntTuple的嵌套层数,整数为 0 (the nesting; 0 for an integer)
// "Layout 使用": get<I0,I1,...,IN>(x) := get<IN>(...(get<I1>(get<I0>(x)))...).
//
// An integer counts as a tuple of one element, itself, for rank and get
// (oracles/ERRATA.md, CATLASS TLA 12): rank(2) = 1, get<0>(2) = 2.
#include "layoutcheck/tla_api.h"

#include <algorithm>

namespace layoutcheck {
namespace {

class ReferenceTupleApi : public TupleApi {
 public:
  std::string name() const override { return "reference"; }

  // rank(IntTuple): the number of elements; an integer is one.
  Result<uint64_t> rank(const IntTuple& t) const override {
    if (t.is_integer()) return 1;
    return static_cast<uint64_t>(t.items().size());
  }

  // depth(IntTuple): 0 for an integer ("整数为 0"); a tuple is one level more
  // than its deepest element.
  Result<uint64_t> depth(const IntTuple& t) const override {
    if (t.is_integer()) return 0;
    uint64_t deepest = 0;
    for (const IntTuple& element : t.items()) {
      LC_ASSIGN_OR_RETURN(uint64_t d, depth(element));
      deepest = std::max(deepest, d);
    }
    return deepest + 1;
  }

  // get<I>(IntTuple): the I-th element, I < rank ("I < rank", Layout 使用).
  Result<IntTuple> get(const IntTuple& t, uint64_t i) const override {
    LC_ASSIGN_OR_RETURN(uint64_t r, rank(t));
    if (i >= r) {
      return Status::invalid("get<" + std::to_string(i) + "> of " + to_string(t) + ": I must be below its rank " +
                             std::to_string(r) + " (I < rank)");
    }
    if (t.is_integer()) return t;
    return t.items()[i];
  }

  // get<I0,I1,...,IN>(x) := get<IN>(...(get<I1>(get<I0>(x)))...).
  Result<IntTuple> get(const IntTuple& t, const std::vector<uint64_t>& path) const override {
    IntTuple x = t;
    for (uint64_t i : path) {
      LC_ASSIGN_OR_RETURN(x, get(x, i));
    }
    return x;
  }
};

}  // namespace

const TupleApi& reference_tuple_api() {
  static const ReferenceTupleApi api;
  return api;
}

}  // namespace layoutcheck
