// Parser fuzzer for the CATLASS TLA notation: IntTuples, SHAPE:STRIDE layouts
// and MakeLayoutTile(...). Any text either fails with a message or parses to
// a value whose canonical text parses back to the same value; a parsed layout
// is then judged the same way (valid or invalid) by both implementations, and
// checked byte for byte when valid and small.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include "layoutcheck/int_tuple.h"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);

  auto tuple = parse_int_tuple(text);
  if (tuple.ok()) {
    if (tuple->depth() > IntTuple::kMaxDepth || tuple->leaf_count() > IntTuple::kMaxLeaves) fail("limits not enforced");
    auto again = parse_int_tuple(to_string(*tuple));
    if (!again.ok() || *again != *tuple) fail("IntTuple round trip failed: " + text);
  } else if (tuple.status().message().empty()) {
    fail("empty error message");
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
    Status ref = reference_impl().supports(c), opt = optimized_impl().supports(c);
    if (ref.code() != opt.code()) {
      fail("reference and optimized disagree on " + to_string(c) + ": " + ref.to_string() + " / " + opt.to_string());
    }
    if (ref.ok()) fuzz::require_agreement(c, reference_impl(), optimized_impl(), size, kMaxElements);
  }
  return 0;
}
