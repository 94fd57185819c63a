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
#include <algorithm>

#include "core/families.h"

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
}

}  // namespace layoutcheck
