// Registration of the MegEngine tensor layouts: names, document sections and
// case generators. No layout arithmetic lives here beyond what the generators
// need to propose cases around every channel block.
//
//   mge.nchw    [N, C, H, W]                 the logical order itself
//   mge.nhwc    [N, H, W, C]
//   mge.nchw4   [N, ceil(C/4), H, W, 4]      channel tail padded with 0
//   mge.nchw32  [N, ceil(C/32), H, W, 32]
//   mge.nchw64  [N, ceil(C/64), H, W, 64]    meant for 4-bit data
//   mge.chwn4   [ceil(C/4), H, W, N, 4]
//   mge.matrix(order=row|col)   the 2-D row-/column-major examples
//   mge.strided(strides=a:b:..,offset=o,storage=s,row_align=element|byte)
//               a view of any rank: explicit element strides and offset into
//               a block of s elements (broadcast, transpose, sub-tensor)
#include <algorithm>
#include <numeric>

#include "core/families.h"
#include "core/mge_strides.h"

namespace layoutcheck {
namespace {

constexpr const char* kDoc = "megengine-tensor-layout.txt";

DType draw_dtype(std::mt19937_64& rng, int64_t block) {
  static const DType kAll[] = {DType::kInt4, DType::kUInt4, DType::kInt8,  DType::kUInt8,
                               DType::kInt16, DType::kUInt16, DType::kInt32, DType::kUInt32,
                               DType::kFp16, DType::kBf16, DType::kFp32};
  // Mostly the types each format is meant for ("characteristic"): int8 for
  // NCHW4/NCHW32, int4 for NCHW64; now and then anything else.
  if (pick(rng, 0, 2) != 0) {
    if (block == 64) return pick(rng, 0, 2) == 0 ? DType::kInt8 : pick(rng, 0, 1) ? DType::kInt4 : DType::kUInt4;
    if (block == 32 || block == 4) return pick(rng, 0, 1) ? DType::kInt8 : DType::kFp32;
  }
  return kAll[pick(rng, 0, 10)];
}

// C around the channel block: below, equal, above, a multiple, a multiple plus
// a tail, or anything.
int64_t draw_channels(std::mt19937_64& rng, int64_t block, int size_class) {
  switch (pick(rng, 0, 5)) {
    case 0: return pick(rng, 1, std::max<int64_t>(1, block - 1));
    case 1: return block;
    case 2: return block + 1;
    case 3: return block * pick(rng, 1, 3);
    case 4: return block * pick(rng, 1, 3) + pick(rng, 1, block);
    default: return pick(rng, 1, 24 * (size_class + 1));
  }
}

std::function<Case(std::mt19937_64&, int)> nchw_generator(const std::string& name, int64_t block) {
  return [name, block](std::mt19937_64& rng, int size_class) {
    const int64_t scale = size_class + 1;
    Shape s = {pick(rng, 1, 2 * scale + 1), draw_channels(rng, block, size_class), pick(rng, 1, 3 * scale),
               pick(rng, 1, 5 * scale)};
    if (pick(rng, 0, 60) == 0) s[static_cast<size_t>(pick(rng, 0, 3))] = pick(rng, -1, 0);  // invalid extent
    return make_case(name, {}, draw_dtype(rng, block), s);
  };
}

// C in each boundary class of the block (c_lt_block, c_eq_block, c_gt_block,
// c_div_block, c_div_block plus a tail), N around CHWN4's inner N, odd and
// even element counts for the 4-bit types.
std::vector<Case> nchw_boundaries(const std::string& name, int64_t block) {
  std::vector<Case> out;
  const int64_t b = block;
  for (int64_t c : {int64_t{1}, b - 1, b, b + 1, 2 * b, 2 * b + 1, 3 * b - 1}) {
    if (c < 1) continue;
    for (int64_t n : {1, 2, 5}) {
      for (auto hw : {std::pair<int64_t, int64_t>{1, 1}, {3, 3}, {1, 17}, {5, 7}}) {
        for (DType t : {DType::kInt8, DType::kFp32, DType::kInt4, DType::kFp16}) {
          out.push_back(make_case(name, {}, t, {n, c, hw.first, hw.second}));
        }
      }
    }
  }
  return out;
}

LayoutSpec nchw_spec(const char* name, const char* section, const char* summary, int64_t block) {
  LayoutSpec s;
  s.name = name;
  s.document = kDoc;
  s.section = section;
  s.summary = summary;
  s.dims = {"N", "C", "H", "W"};
  s.random_case = nchw_generator(name, block);
  s.boundary_cases = [name = std::string(name), block] { return nchw_boundaries(name, block); };
  return s;
}

Case matrix_case(std::mt19937_64& rng, int size_class) {
  static const DType kTypes[] = {DType::kInt4, DType::kInt8, DType::kInt16, DType::kInt32, DType::kFp32};
  ParamMap p;
  if (pick(rng, 0, 1)) p["order"] = "col";
  const int64_t scale = 8 * (size_class + 1);
  return make_case("mge.matrix", p, kTypes[pick(rng, 0, 4)], {pick(rng, 1, scale), pick(rng, 1, scale)});
}


// ---- mge.strided ---------------------------------------------------------------

constexpr int kStridedMaxRank = 7;  // megdnn::TensorLayout::MAX_NDIM

std::string strides_text(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ":" : "") + std::to_string(s[i]);
  return out;
}

// Row-major element strides of `shape` (the document's s^row / itemsize).
std::vector<int64_t> row_strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) s[k - 1] = s[k] * shape[k];
  return s;
}

// The views the document names: the dense tensor ("Generalize"), a sub-tensor
// of a larger one, a transpose by a change of strides, a broadcast (stride 0),
// nested strides with gaps; now and then a view that overlaps, leaves its
// block or does not match the rank.
Case strided_case(std::mt19937_64& rng, int size_class) {
  static const DType kTypes[] = {DType::kInt4, DType::kUInt4, DType::kInt8, DType::kUInt8, DType::kInt16,
                                 DType::kFp16, DType::kInt32, DType::kFp32};
  const DType t = kTypes[pick(rng, 0, 7)];
  const int rank = static_cast<int>(pick(rng, 1, size_class >= 2 ? kStridedMaxRank : 4));
  const int64_t scale = size_class + 1;
  Shape shape(static_cast<size_t>(rank));
  for (auto& d : shape) d = pick(rng, 1, rank > 4 ? 3 : 3 * scale + 1);
  ParamMap p;
  if (t == DType::kInt4 || t == DType::kUInt4 || pick(rng, 0, 5) == 0) {
    if (pick(rng, 0, 1)) p["row_align"] = "byte";
  }
  std::vector<int64_t> strides;
  int64_t offset = 0, storage = 0;
  switch (pick(rng, 0, 5)) {
    case 0:  // the dense layout of "Generalize"
      return make_case("mge.strided", p, t, shape);
    case 1: {  // a sub-tensor: a block of a larger parent, at a start coordinate
      Shape parent = shape;
      std::vector<int64_t> start(shape.size());
      for (size_t k = 0; k < shape.size(); ++k) {
        parent[k] += pick(rng, 0, 3);
        start[k] = pick(rng, 0, parent[k] - shape[k]);
      }
      strides = row_strides(parent);
      for (size_t k = 0; k < shape.size(); ++k) offset += start[k] * strides[k];
      storage = std::accumulate(parent.begin(), parent.end(), int64_t{1}, std::multiplies<int64_t>());
      break;
    }
    case 2: {  // a transpose: the strides of a row-major parent, permuted
      std::vector<size_t> perm(shape.size());
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      Shape parent(shape.size());
      for (size_t k = 0; k < shape.size(); ++k) parent[k] = shape[perm[k]];
      const std::vector<int64_t> ps = row_strides(parent);
      strides.assign(shape.size(), 0);
      for (size_t k = 0; k < shape.size(); ++k) strides[perm[k]] = ps[k];
      break;
    }
    case 3: {  // a broadcast: some dimensions read one element (stride 0)
      strides = row_strides(shape);
      for (auto& s : strides) {
        if (pick(rng, 0, 2) == 0) s = 0;
      }
      break;
    }
    default: {  // nested strides with gaps, in a random dimension order
      std::vector<size_t> order(shape.size());
      std::iota(order.begin(), order.end(), 0);
      if (pick(rng, 0, 1)) std::shuffle(order.begin(), order.end(), rng);
      strides.assign(shape.size(), 0);
      int64_t stride = pick(rng, 1, 2);
      for (size_t k = shape.size(); k-- > 0;) {
        strides[order[k]] = stride;
        stride = stride * shape[order[k]] + (pick(rng, 0, 1) ? pick(rng, 0, 5) : 0);
      }
      offset = pick(rng, 0, 1) ? pick(rng, 0, 9) : 0;
      if (pick(rng, 0, 1)) storage = offset + stride + pick(rng, 0, 3);
      break;
    }
  }
  // Now and then one rule broken: an overlap, a block too small, a wrong rank.
  switch (pick(rng, 0, 12)) {
    case 0: strides[static_cast<size_t>(pick(rng, 0, rank - 1))] = pick(rng, 1, 3); break;
    case 1: if (storage > 0) storage = pick(rng, 1, storage); break;
    case 2: strides.push_back(1); break;
    default: break;
  }
  p["strides"] = strides_text(strides);
  if (offset != 0) p["offset"] = std::to_string(offset);
  if (storage != 0) p["storage"] = std::to_string(storage);
  return make_case("mge.strided", p, t, shape);
}

std::vector<Case> strided_boundaries() {
  std::vector<Case> out;
  auto add = [&](ParamMap p, DType t, Shape s) { out.push_back(make_case("mge.strided", p, t, s)); };
  // "Take the 2-dimensional case as an example": int32 2x5, strides (20, 4) bytes.
  add({}, DType::kInt32, {2, 5});
  add({{"strides", "5:1"}}, DType::kInt32, {2, 5});
  add({{"strides", "1:5"}}, DType::kInt32, {5, 2});              // its transpose, by strides
  add({{"strides", "5:1"}, {"offset", "6"}, {"storage", "10"}}, DType::kInt32, {1, 3});  // a sub-tensor
  add({{"strides", "0:1"}}, DType::kInt32, {4, 5});              // a broadcast row
  add({{"strides", "1:0"}}, DType::kInt8, {3, 4});               // a broadcast column
  add({{"strides", "0:0"}}, DType::kFp16, {3, 4});               // one element everywhere
  for (int rank = 1; rank <= kStridedMaxRank; ++rank) add({}, DType::kUInt8, Shape(static_cast<size_t>(rank), 2));
  // 4-bit rows below, at and above a byte, dense and byte-rounded.
  for (int64_t w : {1, 2, 7, 8, 9}) {
    add({}, DType::kInt4, {3, w});
    add({{"row_align", "byte"}}, DType::kInt4, {3, w});
    add({{"row_align", "byte"}}, DType::kUInt4, {2, 2, w});
  }
  add({{"strides", "8:1"}, {"row_align", "byte"}}, DType::kInt4, {2, 7});
  add({{"strides", "7:1"}, {"row_align", "byte"}}, DType::kInt4, {2, 7});  // a row on a half byte
  add({{"strides", "3:1"}, {"offset", "1"}}, DType::kUInt4, {3, 3});
  return out;
}

// Elements along a broadcast dimension (stride 0) read the element at 0.
uint64_t strided_value_source(const Case& c, uint64_t index) {
  auto parsed = parse_mge_strides(c.layout.get("strides"));
  if (!parsed.ok() || !parsed->has_value() || (*parsed)->size() != c.shape.size()) return index;
  Coord at = coord_of_index(c.shape, index);
  for (size_t k = 0; k < at.size(); ++k) {
    if ((**parsed)[k] == 0) at[k] = 0;
  }
  return index_of_coord(c.shape, at);
}

}  // namespace

void add_mge_specs(std::vector<LayoutSpec>* specs) {
  specs->push_back(nchw_spec("mge.nchw", "NCHW and NHWC", "physical [N, C, H, W]: W first, then H, C, N", 1));
  specs->push_back(nchw_spec("mge.nhwc", "NCHW and NHWC", "physical [N, H, W, C]: C first, then W, H, N", 1));
  specs->push_back(nchw_spec("mge.nchw4", "NCHWX",
                             "physical [N, ceil(C/4), H, W, 4]: 4 channels first, tail padded with 0", 4));
  specs->push_back(nchw_spec("mge.nchw32", "NCHWX",
                             "physical [N, ceil(C/32), H, W, 32]: 32 channels first, tail padded with 0", 32));
  specs->push_back(nchw_spec("mge.nchw64", "NCHWX",
                             "physical [N, ceil(C/64), H, W, 64]: 64 channels first (4-bit data), tail padded with 0",
                             64));
  specs->push_back(nchw_spec("mge.chwn4", "CHWN4",
                             "physical [ceil(C/4), H, W, N, 4]: 4 channels, then N, W, H; tail padded with 0", 4));

  LayoutSpec matrix;
  matrix.name = "mge.matrix";
  matrix.document = kDoc;
  matrix.section = "How Tensor values are stored in memory";
  matrix.summary = "2-D tensor in row-major (strides (itemsize*cols, itemsize)) or column-major order";
  matrix.dims = {"rows", "cols"};
  ParamSpec order;
  order.key = "order";
  order.kind = ParamKind::kEnum;
  order.choices = {"row", "col"};
  order.default_value = [](const ParamMap&) { return std::string("row"); };
  order.doc = "row: the last index varies fastest; col: the first index varies fastest";
  matrix.params.push_back(order);
  matrix.random_case = matrix_case;
  matrix.boundary_cases = [] {
    std::vector<Case> out;
    for (const char* o : {"row", "col"}) {
      for (auto rc : {std::pair<int64_t, int64_t>{1, 1}, {3, 3}, {2, 5}, {1, 33}, {17, 1}, {15, 17}}) {
        for (DType t : {DType::kInt32, DType::kInt8, DType::kUInt4}) {
          out.push_back(make_case("mge.matrix", {{"order", o}}, t, {rc.first, rc.second}));
        }
      }
    }
    return out;
  };
  specs->push_back(matrix);

  LayoutSpec strided;
  strided.name = "mge.strided";
  strided.document = kDoc;
  strided.section = "Tensor stride";
  strided.summary = "a view of any rank: explicit element strides and offset (broadcast, transpose, sub-tensor)";
  strided.dims = {"d0", "d1", "d2", "d3", "d4", "d5", "d6"};
  strided.any_rank = true;
  ParamSpec strides;
  strides.key = "strides";
  strides.kind = ParamKind::kText;
  strides.default_value = [](const ParamMap&) { return std::string("row"); };
  strides.doc = "element strides, outermost first, as 'a:b:...'; 'row' for the dense row-major strides of Generalize";
  strided.params.push_back(strides);
  strided.params.push_back(int_param("offset", 0, INT64_MAX, "0", "offset of element (0,...,0) in elements"));
  strided.params.push_back(
      int_param("storage", 0, INT64_MAX, "0", "elements of the memory block the view lies in; 0: the view's own span"));
  ParamSpec row_align;
  row_align.key = "row_align";
  row_align.kind = ParamKind::kEnum;
  row_align.choices = {"element", "byte"};
  row_align.default_value = [](const ParamMap&) { return std::string("element"); };
  row_align.doc = "element: the document's dense formula; byte: each innermost row starts on a byte (4-bit types)";
  strided.params.push_back(row_align);
  strided.random_case = strided_case;
  strided.boundary_cases = strided_boundaries;
  strided.value_source = strided_value_source;
  specs->push_back(strided);
}

}  // namespace layoutcheck
