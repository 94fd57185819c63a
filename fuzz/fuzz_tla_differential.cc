// Differential fuzzer for TLA notation layouts: the bytes build a nested
// shape:stride layout (structure, extents, strides, static marks), an
// optional MakeLayoutTile and a dtype. The layout has 1 to 4 top-level modes
// (or an integer shape); the logical shape is the layout's own tensor, or a
// tile's origin shape, so most inputs reach pack/unpack rather than the shape check.
// Input may also be a text case "case: LAYOUT | DTYPE | SHAPE".
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "input_scope.h"
#include "layoutcheck/int_tuple.h"

using namespace layoutcheck;

namespace {

// A nested layout's offsets cost tens of microseconds per element under ASan;
// 64 elements still take every leaf extent (1..7) and nesting depth.
constexpr uint64_t kMaxElements = 64;

struct Builder {
  fuzz::Bytes* in;
  std::vector<int64_t> extents;
  int leaves = 0;

  // Returns the shape; records leaf slots in order.
  IntTuple shape(int depth) {
    const uint64_t b = in->take(1);
    if (depth < 3 && b % 3 == 0 && leaves < 12) {
      std::vector<IntTuple> items;
      const uint64_t n = 1 + (b / 3) % 3;
      for (uint64_t i = 0; i < n; ++i) items.push_back(shape(depth + 1));
      return IntTuple(std::move(items));
    }
    ++leaves;
    extents.push_back(static_cast<int64_t>(1 + (b / 3) % 7));
    return IntTuple(extents.back(), (b & 0x80) != 0);
  }
};

// Rebuilds the shape tree with strides in place of extents.
IntTuple strides_like(const IntTuple& shape, const std::vector<int64_t>& strides, size_t* next, fuzz::Bytes* in) {
  if (shape.is_integer()) return IntTuple(strides[(*next)++], (in->take(1) & 1) != 0);
  std::vector<IntTuple> items;
  for (const auto& item : shape.items()) items.push_back(strides_like(item, strides, next, in));
  return IntTuple(std::move(items));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputScope scope;
  Case c;
  if (!fuzz::parse_text_case(std::string(reinterpret_cast<const char*>(data), size), &c)) {
    fuzz::Bytes in(data, size);
    Builder b{&in, {}, 0};
    IntTuple m0 = b.shape(1), m1 = b.shape(1);
    std::vector<IntTuple> modes = {m0, m1};
    // The number of top-level modes: mostly 2; 1, 3, 4, or an integer shape.
    const uint64_t rank_byte = in.take(1);
    const uint64_t kind = rank_byte % 8;
    if (kind == 1) modes = {m0};
    if (kind == 2 || kind == 3) modes.push_back(b.shape(1));
    if (kind == 3) modes.push_back(b.shape(1));
    const bool integer = kind == 4 && m0.is_integer();
    IntTuple shape = integer ? m0 : IntTuple(modes);
    b.extents.resize(shape.leaf_count());
    // Strides: compact over a byte-chosen order of the leaves, gaps and
    // now and then a raw stride (overlaps are then rejected by both).
    const size_t n = b.extents.size();
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[in.take(1) % i]);
    std::vector<int64_t> strides(n);
    int64_t next = 1;
    for (size_t i : order) {
      const uint64_t g = in.take(1);
      strides[i] = g % 17 == 0 ? static_cast<int64_t>(g % 5) : next;
      next = next * b.extents[i] + static_cast<int64_t>(g % 4 == 0 ? g % 3 : 0);
    }
    size_t k = 0;
    IntTuple stride = strides_like(shape, strides, &k, &in);
    static const DType kTypes[] = {DType::kInt8, DType::kFp16, DType::kFp32, DType::kBf16, DType::kUInt32};
    c.dtype = kTypes[in.take(1) % 5];
    const uint64_t tile_flag = in.take(1);
    ParamMap p = {{"shape", to_string(shape)}, {"stride", to_string(stride)}};
    std::string name = "tla.layout";
    uint64_t rows = *m0.product(), cols = *m1.product();
    Shape logical;
    for (const IntTuple& m : modes) logical.push_back(static_cast<int64_t>(*m.product()));
    if (integer) logical.resize(1);
    if (tile_flag % 4 == 0 && modes.size() == 2 && !integer) {
      const int64_t t0 = static_cast<int64_t>(1 + in.take(1) % 40), t1 = static_cast<int64_t>(1 + in.take(1) % 40);
      name = "tla.tile";
      p["tile"] = "(" + std::to_string(t0) + "," + std::to_string(t1) + ")";
      auto tiled = [](const IntTuple& mode, int64_t t) {
        std::vector<int64_t> l = mode.leaves();
        int64_t inner = 1;
        for (size_t i = 0; i + 1 < l.size(); ++i) inner *= l[i];
        return static_cast<uint64_t>(inner * ((t + inner - 1) / inner));
      };
      rows = tiled(m0, t0), cols = tiled(m1, t1);
      logical = {static_cast<int64_t>(rows), static_cast<int64_t>(cols)};
      if (tile_flag & 0x10) logical = {t0, t1};  // the tile's origin shape
    }
    auto layout = make_layout(name, p);
    if (!layout.ok()) return 0;
    c.layout = *layout;
    c.shape = logical;
  }
  fuzz::require_agreement(c, reference_impl(), optimized_impl(), size, kMaxElements);
  return 0;
}
