// layoutcheck/tla_api.h — the IntTuple and Layout queries of the CATLASS TLA
// document, as an interface with independent implementations.
//
// "IntTuple": rank(IntTuple), get<I>(IntTuple), depth(IntTuple). "Layout 使用":
// rank, get<I>, depth, shape, stride of a layout, and the hierarchical forms
// get<I0,...,IN>(x) := get<IN>(...(get<I0>(x))...), rank<I...>(x) :=
// rank(get<I...>(x)), depth<I...>, shape<I...>, stride<I...>.
//
//   const TupleApi& api = reference_tuple_api();      // or optimized_tuple_api()
//   IntTuple t = *parse_int_tuple("(2,(_3,4))");
//   *api.rank(t) == 2;  *api.depth(t) == 2;  to_string(*api.get(t, {1, 0})) == "_3"
//   auto l = *parse_tla_layout("((4,2),(4,3)):((4,16),(1,32))");
//   layout_query(api, l, {1, 0})  // get<1,0> 4:1, rank<1,0> 1, depth<1,0> 0, shape<1,0> 4, ...
//
// The reference (reference/tla_api.cc) walks the tuple as the document words
// it; the optimized one (optimized/tla_api.cc) scans the flat preorder form of
// layoutcheck/tla_tuple.h, the form a user's library receives. Oracles:
// oracles/tla/*.tuple (run_tuple_oracle).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layoutcheck/impl.h"
#include "layoutcheck/int_tuple.h"
#include "layoutcheck/tla_tuple.h"

namespace layoutcheck {

class TupleApi {
 public:
  virtual ~TupleApi() = default;
  virtual std::string name() const = 0;
  virtual Result<uint64_t> rank(const IntTuple& t) const = 0;
  virtual Result<uint64_t> depth(const IntTuple& t) const = 0;
  // get<I>; an index at or past the rank is an error ("I < rank").
  virtual Result<IntTuple> get(const IntTuple& t, uint64_t i) const = 0;
  // get<I0,...,IN>; the empty path is t itself.
  virtual Result<IntTuple> get(const IntTuple& t, const std::vector<uint64_t>& path) const = 0;
};

const TupleApi& reference_tuple_api();
const TupleApi& optimized_tuple_api();
// "reference" or "optimized" (the implementations --impl names), else nullptr.
const TupleApi* tuple_api_named(const std::string& name);

// The preorder node form of layoutcheck/tla_tuple.h and back (the nodes must
// form exactly one tuple).
std::vector<lc_tuple_node> tuple_nodes(const IntTuple& t);
Result<IntTuple> tuple_of_nodes(const lc_tuple_node* nodes, size_t count);

// The Layout 使用 queries at a path (empty: the layout itself), through `api`:
// {get<P>, S:D}, {rank<P>, ...}, {depth<P>, ...}, {shape<P>, S}, {stride<P>, D},
// {size<P>, product of S}; P printed "1,0" ("get<1,0>"), "" for the empty path
// ("get", "rank", ...). rank is that of the stride ("等同于Stride的 rank"),
// depth that of the shape. Fails when the path leaves the layout.
Result<std::vector<Fact>> layout_query(const TupleApi& api, const TlaLayoutText& layout,
                                       const std::vector<uint64_t>& path);

// ---- oracles/tla/*.tuple ---------------------------------------------------
//
//   source: catlass-tla-layouts.txt § IntTuple
//   case: tla/inttuple/make_tuple
//   tuple: (2,_3)              # or  layout: SHAPE:STRIDE  (then shape and stride lines too)
//   rank = 2                   # FUNCTION [I0,I1,...] = VALUE, or = error
//   depth = 1
//   get 1 = _3
//   get 2 = error
//
// For a tuple, FUNCTION P is FUNCTION(get<P>(t)) (get P is get<P>(t)); for a
// layout it is the layout_query fact of that name at P.
struct TupleOracleLine {
  int line = 0;
  std::string function;        // rank, depth, get, shape, stride, size
  std::vector<uint64_t> path;
  std::string value;           // canonical text, or "error"
};

struct TupleOracleCase {
  std::string id, source, file;
  int line = 0, source_line = 0;
  std::string tuple, layout;   // one of them
  std::vector<std::string> notes;
  std::vector<TupleOracleLine> lines;
};

Result<std::vector<TupleOracleCase>> parse_tuple_oracles(const std::string& text, const std::string& file);
// Every *.tuple file below dir, sorted by path; sources checked against the
// documents in spec_dir, ids unique across the files.
Result<std::vector<TupleOracleCase>> load_tuple_oracle_dir(const std::string& dir, const std::string& spec_dir);
// The failures of `api` on the case ("file:line: id: what"); empty = pass.
std::vector<std::string> run_tuple_oracle(const TupleOracleCase& oc, const TupleApi& api);

}  // namespace layoutcheck
