// Parser fuzzer for the CATLASS TLA notation: IntTuples, SHAPE:STRIDE layouts
// and MakeLayoutTile(...). Any text either fails with a message or parses to
// a value whose canonical text parses back to the same value; a parsed layout
// is then judged the same way (valid or invalid) by both implementations, and
// checked byte for byte when valid and small. A parsed IntTuple and a parsed
// SHAPE:STRIDE get the same rank, depth and get<I...> from the reference's and
// the optimized implementation's tuple queries (layoutcheck/tla_api.h), at
// every element and one index past each rank.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "layoutcheck/int_tuple.h"
#include "layoutcheck/tla_api.h"
#include "reference/tla.h"

using namespace layoutcheck;

namespace {

// As in fuzz_tla_differential: nested layouts are checked up to 64 elements.
constexpr uint64_t kMaxElements = 64;

void fail(const std::string& why) {
  std::fprintf(stderr, "%s\n", why.c_str());
  std::abort();
}

// The logical tensor of a TLA layout: the size of each top-level mode (an
// integer shape is one mode); a tile's tiled layout is 2-D.
bool matrix_of(const Layout& layout, Shape* shape) {
  auto l = parse_tla_layout(layout.get("shape") + ":" + layout.get("stride"));
  if (!l.ok()) return false;
  TlaLayoutText t = *l;
  if (layout.name == "tla.tile") {
    auto tile = parse_int_tuple(layout.get("tile"));
    if (!tile.ok()) return false;
    auto tiled = tla_ref::make_layout_tile(t, *tile);
    if (!tiled.ok()) return false;
    t = *tiled;
  }
  shape->clear();
  const size_t modes = t.shape.is_integer() ? 1 : t.shape.rank();
  for (size_t m = 0; m < modes; ++m) {
    auto n = (t.shape.is_integer() ? t.shape : t.shape.items()[m]).product();
    if (!n.ok() || *n > (1u << 20)) return false;
    shape->push_back(static_cast<int64_t>(*n));
  }
  return true;
}

// Both implementations' queries at every path below `path` in t.
void compare_queries(const IntTuple& root, const IntTuple& t, std::vector<uint64_t>* path) {
  const TupleApi& ref = reference_tuple_api();
  const TupleApi& opt = optimized_tuple_api();
  auto rr = ref.rank(t), orr = opt.rank(t), rd = ref.depth(t), od = opt.depth(t);
  if (!rr.ok() || !orr.ok() || *rr != *orr || !rd.ok() || !od.ok() || *rd != *od) {
    fail("rank or depth of " + to_string(t) + " in " + to_string(root) + " differ");
  }
  for (uint64_t i = 0; i <= *rr; ++i) {
    path->push_back(i);
    auto a = ref.get(root, *path), b = opt.get(root, *path);
    if (a.ok() != b.ok() || (a.ok() && *a != *b)) fail("get<...," + std::to_string(i) + "> of " + to_string(root) + " differs");
    if (a.ok() && i < *rr && t.is_tuple()) compare_queries(root, *a, path);
    path->pop_back();
  }
}

void compare_queries(const IntTuple& t) {
  std::vector<uint64_t> path;
  compare_queries(t, t, &path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);

  auto tuple = parse_int_tuple(text);
  if (tuple.ok()) {
    if (tuple->depth() > IntTuple::kMaxDepth || tuple->leaf_count() > IntTuple::kMaxLeaves) fail("limits not enforced");
    auto again = parse_int_tuple(to_string(*tuple));
    if (!again.ok() || *again != *tuple) fail("IntTuple round trip failed: " + text);
    compare_queries(*tuple);
  } else if (tuple.status().message().empty()) {
    fail("empty error message");
  }

  if (auto l = parse_tla_layout(text); l.ok()) {
    compare_queries(l->shape);
    compare_queries(l->stride);
    for (const TupleApi* api : {&reference_tuple_api(), &optimized_tuple_api()}) {
      auto q = layout_query(*api, *l, {});
      if (!q.ok()) fail(api->name() + " cannot query the layout " + text + ": " + q.status().message());
    }
  }

  auto layout = parse_layout(text);
  if (!layout.ok()) {
    if (layout.status().message().empty()) fail("empty error message");
    return 0;
  }
  const std::string canonical = to_string(*layout);
  auto again = parse_layout(canonical);
  if (!again.ok() || !(*again == *layout) || to_string(*again) != canonical) {
    fail("round trip failed: '" + text + "' -> '" + canonical + "'");
  }
  if (layout->family() != "tla") return 0;
  Shape shape = {3, 5};
  if (layout->name == "tla.layout" || layout->name == "tla.tile") {
    if (!matrix_of(*layout, &shape)) return 0;
  }
  for (DType t : {DType::kInt8, DType::kFp16}) {
    Case c{*layout, t, shape};
    // supports() walks every coordinate of a TLA layout (the injectivity
    // rule): the 34 bytes "((127,4),(16,61)):((16,6),(1,511))" ask for
    // 495,808 of them, 4 s under ASan.
    if (fuzz::tla_coordinates(c) > fuzz::kMaxTlaCoordinates) {
      ++fuzz::not_checked;
      continue;
    }
    Status ref = reference_impl().supports(c), opt = optimized_impl().supports(c);
    if (ref.code() != opt.code()) {
      fail("reference and optimized disagree on " + to_string(c) + ": " + ref.to_string() + " / " + opt.to_string());
    }
    if (ref.ok()) fuzz::require_agreement(c, reference_impl(), optimized_impl(), size, kMaxElements);
  }
  return 0;
}
