#include "tools/tuple_cmd.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "layoutcheck/isolate.h"
#include "layoutcheck/tla_api.h"
#include "layoutcheck/tla_tuple.h"
#include "tools/cli_json.h"
#include "tools/function_lib.h"

namespace layoutcheck::cli {
namespace {

enum Fn : uint64_t { kRank, kDepth, kGet, kFnCount };
constexpr const char* kSymbols[kFnCount] = {LC_TUPLE_RANK_SYMBOL, LC_TUPLE_DEPTH_SYMBOL, LC_TUPLE_GET_SYMBOL};
constexpr uint64_t kNull = UINT64_MAX;            // tla_get returned NULL
constexpr uint64_t kOutside = UINT64_MAX - 1;     // tla_get returned a pointer outside the tuple
constexpr size_t kMaxNodes = IntTuple::kMaxLeaves * (IntTuple::kMaxDepth + 1);  // every integer under 8 tuples

// The document's IntTuples ("IntTuple", "Layout 构造", "Matrix examples", "获取 Tilelayout").
constexpr const char* kDocumentTuples[] = {
    "2", "_3", "(2,_3)", "(_2,4)", "(_12,_1)", "((16,2),(16,3))", "((16,256),(1,512))", "(2,3)", "(3,1)",
    "((4,2),(4,3))", "((4,16),(1,32))", "((_4,_2),(_4,_3))", "((_4,_16),(_1,_32))", "((4,1),(4,1))"};

// A random IntTuple within the notation's limits: `leaves` integers at most.
IntTuple random_tuple(std::mt19937_64& rng, int depth_left, size_t* leaves) {
  const bool tuple = depth_left > 0 && *leaves + 2 <= IntTuple::kMaxLeaves && rng() % 3 != 0;
  if (!tuple) {
    ++*leaves;
    const int64_t v = rng() % 4 == 0 ? static_cast<int64_t>(rng() % (uint64_t{1} << 20)) : static_cast<int64_t>(rng() % 17);
    return IntTuple(v, rng() % 2 == 0);
  }
  const size_t rank = 1 + rng() % 5;
  std::vector<IntTuple> items;
  for (size_t i = 0; i < rank && *leaves < IntTuple::kMaxLeaves; ++i) {
    items.push_back(random_tuple(rng, depth_left - 1, leaves));
  }
  return IntTuple(std::move(items));
}

void add_with_elements(const IntTuple& t, std::set<std::string>* seen, std::vector<IntTuple>* out) {
  if (seen->insert(to_string(t)).second) out->push_back(t);
  if (t.is_tuple()) {
    for (const IntTuple& item : t.items()) add_with_elements(item, seen, out);
  }
}

}  // namespace

std::vector<IntTuple> tuple_check_inputs() {
  std::vector<IntTuple> out;
  std::set<std::string> seen;
  for (const char* text : kDocumentTuples) add_with_elements(*parse_int_tuple(text), &seen, &out);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 300; ++i) {
    size_t leaves = 0;
    add_with_elements(random_tuple(rng, static_cast<int>(rng() % (IntTuple::kMaxDepth + 1)), &leaves), &seen, &out);
  }
  return out;
}

namespace {

// One call: tuple index and, for tla_get, I.
struct Query {
  uint64_t tuple = 0, i = 0;
};

// ---- the child: loads the library, calls the functions --------------------------

std::string serve(void* sym, const std::string& request) {
  Reader r{request};
  const uint64_t fn = r.u64();
  const uint64_t tuple_count = r.u64();
  std::string reply;
  if (r.bad || fn >= kFnCount || sym == nullptr || tuple_count > (1u << 16)) {
    put_str(&reply, "a malformed request (function " + std::to_string(fn) + ")");
    return reply;
  }
  std::vector<std::vector<lc_tuple_node>> tuples(tuple_count);
  for (auto& t : tuples) {
    const uint64_t n = r.u64();
    if (r.bad || n == 0 || n > kMaxNodes) break;
    t.resize(n);
    for (lc_tuple_node& node : t) {
      node.items = static_cast<uint32_t>(r.u64());
      node.is_static = static_cast<uint32_t>(r.u64());
      node.value = static_cast<int64_t>(r.u64());
    }
  }
  const uint64_t query_count = r.u64();
  // The nodes end where a guard page begins: reading past `count` is reported.
  GuardedPages buf(kMaxNodes * sizeof(lc_tuple_node), "IntTuple nodes");
  if (r.bad || !buf.ok()) {
    put_str(&reply, r.bad ? "a malformed request" : "cannot map the argument buffer");
    return reply;
  }
  std::string outputs;
  for (uint64_t q = 0; q < query_count && !r.bad; ++q) {
    const uint64_t index = r.u64(), i = r.u64();
    if (index >= tuples.size() || tuples[index].empty()) {
      put_str(&reply, "a malformed request (tuple " + std::to_string(index) + ")");
      return reply;
    }
    const std::vector<lc_tuple_node>& t = tuples[index];
    auto* nodes = reinterpret_cast<lc_tuple_node*>(buf.data() + buf.size()) - t.size();
    std::memcpy(nodes, t.data(), t.size() * sizeof(lc_tuple_node));
    uint64_t v = 0;
    if (fn == kRank) {
      v = as_function<lc_tuple_rank_fn>(sym)(nodes, t.size());
    } else if (fn == kDepth) {
      v = as_function<lc_tuple_depth_fn>(sym)(nodes, t.size());
    } else {
      const lc_tuple_node* got = as_function<lc_tuple_get_fn>(sym)(nodes, t.size(), static_cast<uint32_t>(i));
      if (got == nullptr) v = kNull;
      else if (got < nodes || got >= nodes + t.size()) v = kOutside;
      else v = static_cast<uint64_t>(got - nodes);
    }
    if (Status s = buf.check_slack(kSymbols[fn]); !s.ok()) {
      put_str(&reply, s.message());
      return reply;
    }
    put_u64(&outputs, v);
    put_u64(&outputs, std::memcmp(nodes, t.data(), t.size() * sizeof(lc_tuple_node)) != 0 ? 1 : 0);
  }
  if (std::string stray = Sandbox::child_stray_processes(); !stray.empty()) {
    put_str(&reply, std::string(kSymbols[fn]) + " " + stray);
    return reply;
  }
  put_str(&reply, "");
  reply += outputs;
  return reply;
}

// ---- the parent: the expected values, the report --------------------------------

// What the reference says: rank or depth; for get<I>, the position of element
// I's first node in the tuple's nodes (after the root and the nodes of the
// elements before it; 0 for get<0> of an integer), or kNull when I >= rank.
Result<uint64_t> expected(Fn fn, const IntTuple& t, uint64_t i) {
  const TupleApi& ref = reference_tuple_api();
  if (fn == kRank) return ref.rank(t);
  if (fn == kDepth) return ref.depth(t);
  LC_ASSIGN_OR_RETURN(uint64_t rank, ref.rank(t));
  if (i >= rank) return kNull;
  if (t.is_integer()) return 0;
  uint64_t at = 1;
  for (uint64_t j = 0; j < i; ++j) {
    LC_ASSIGN_OR_RETURN(IntTuple element, ref.get(t, j));
    at += tuple_nodes(element).size();
  }
  return at;
}

std::string value_text(Fn fn, const IntTuple& t, uint64_t v) {
  if (fn != kGet) return std::to_string(v);
  if (v == kNull) return "NULL";
  if (v == kOutside) return "a pointer outside the tuple's nodes";
  const std::vector<lc_tuple_node> nodes = tuple_nodes(t);
  std::string element;
  if (v < nodes.size()) {
    // The element a pointer to node v starts, as far as the nodes read as one.
    for (size_t end = v + 1; end <= nodes.size(); ++end) {
      if (auto e = tuple_of_nodes(nodes.data() + v, end - v); e.ok()) {
        element = " (" + to_string(*e) + ")";
        break;
      }
    }
  }
  return "node " + std::to_string(v) + element;
}

}  // namespace

const char* tuple_symbol(const std::string& function) {
  if (function == "rank") return LC_TUPLE_RANK_SYMBOL;
  if (function == "depth") return LC_TUPLE_DEPTH_SYMBOL;
  if (function == "get" || function == "shape" || function == "stride") return LC_TUPLE_GET_SYMBOL;
  return nullptr;
}

int tuple_main(const Args& a) {
  for (const auto& [k, v] : a.options) {
    if (k != "lib" && k != "json") throw UsageError{"unknown option --" + k.substr(0, 40) + " for 'tuple'"};
  }
  if (!a.has("lib")) throw UsageError{"tuple needs --lib PATH.so, a library exporting tla_rank, tla_depth or tla_get"};
  const std::string path = a.get("lib");
  struct stat st;
  if (stat(path.c_str(), &st) != 0) throw UsageError{"cannot read " + path + ": " + std::strerror(errno)};

  LibraryChild lib("tuple", path);
  const std::vector<const char*> symbols(std::begin(kSymbols), std::end(kSymbols));
  const std::optional<uint64_t> provided = lib.start_serving(symbols, serve);
  if (!provided) return 2;

  const std::vector<IntTuple> tuples = tuple_check_inputs();
  std::vector<FnResult> results(kFnCount);
  auto check = [&](uint64_t f, FnResult& res) {
    const Fn fn = static_cast<Fn>(f);
    std::vector<Query> queries;
    std::vector<uint64_t> want;
    for (uint64_t t = 0; t < tuples.size(); ++t) {
      const uint64_t rank = *reference_tuple_api().rank(tuples[t]);
      const uint64_t last = fn == kGet ? rank : 0;  // get<rank> must be NULL
      for (uint64_t i = 0; i <= last; ++i) {
        auto e = expected(fn, tuples[t], i);
        if (!e.ok()) {
          std::cerr << "layoutcheck tuple: the reference fails on " << to_string(tuples[t]) << ": " << e.status().message() << "\n";
          return 2;
        }
        queries.push_back({t, i});
        want.push_back(*e);
      }
    }
    std::string request;
    put_u64(&request, f);
    put_u64(&request, tuples.size());
    for (const IntTuple& t : tuples) {
      const std::vector<lc_tuple_node> nodes = tuple_nodes(t);
      put_u64(&request, nodes.size());
      for (const lc_tuple_node& n : nodes) {
        put_u64(&request, n.items);
        put_u64(&request, n.is_static);
        put_u64(&request, static_cast<uint64_t>(n.value));
      }
    }
    put_u64(&request, queries.size());
    for (const Query& q : queries) {
      put_u64(&request, q.tuple);
      put_u64(&request, q.i);
    }
    std::optional<Reader> r = lib.call(request, kSymbols[f], queries.size(), queries.size() * 16 + (1 << 14));
    if (!r) return 2;
    res.inputs = queries.size();
    for (size_t q = 0; q < queries.size(); ++q) {
      const uint64_t got = r->u64();
      const bool changed = r->u64() != 0;
      if (r->bad) return lib.bad_library(std::string("sent a malformed answer during ") + kSymbols[f]);
      if (got == want[q] && !changed) continue;
      if (res.failed++ == 0) {
        const IntTuple& t = tuples[queries[q].tuple];
        res.input = to_string(t) + (fn == kGet ? ", I = " + std::to_string(queries[q].i) : "");
        res.expected = value_text(fn, t, want[q]);
        res.actual = value_text(fn, t, got);
        if (changed) res.note = "it modified the const nodes of its argument";
      }
    }
    return 0;
  };
  if (int status = check_functions(*provided, &results, check)) return status;

  Json j = report_header("tuple");
  j["lib"] = path;
  return report_functions(a, j, "IntTuple functions of " + path + " against the reference (catlass-tla-layouts.txt § IntTuple)",
                          "tuple", symbols, results, 10);
}

}  // namespace layoutcheck::cli
