// The CATLASS TLA layout document in executable form.
// Document: ../shared/spec/catlass-tla-layouts.txt
//
// A layout is a pair (Shape, Stride) of congruent IntTuples ("Layout"). The
// logical tensor of a notation layout has one dimension per top-level mode,
// of that mode's size ("可以定义任意维度": (8):(1) is a vector of 8, the
// document's matrices are (size of mode 0) x (size of mode 1)); a named format
// or a tile is the rows x cols matrix it pads. Element (i, j, ...) lives at
// crd2offset((i, j, ...), shape, stride) elements from the start. pack and
// unpack walk the logical tensor element by element and do exactly that.
#include "core/case_cache.h"
#include "reference/tla.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "layoutcheck/byte_rules.h"
#include "layoutcheck/checked.h"
#include "reference/families.h"

namespace layoutcheck {
namespace tla_ref {
namespace {

std::string num(uint64_t v) { return std::to_string(v); }

}  // namespace

// "Layout 坐标与索引": tla::crd2offset(c, shape, stride). A tuple coordinate
// is the sum of its parts' offsets in the matching modes. An integer
// coordinate against an integer mode is coordinate * stride. An integer
// against a nested mode is first split into that mode's coordinates,
// colexicographically (the first sub-mode varies fastest): the zN example
// ((4,2),(4,3)):((4,16),(1,32)) puts row 5 at (5 mod 4, 5 div 4) = (1, 1),
// offset 1*4 + 1*16.
Result<uint64_t> crd2offset(const IntTuple& coord, const IntTuple& shape, const IntTuple& stride) {
  if (coord.is_tuple()) {
    if (shape.is_integer() || coord.rank() != shape.rank()) {
      return Status::invalid("coordinate " + to_string(coord) + " does not match the shape " + to_string(shape));
    }
    Checked offset = 0;
    for (size_t i = 0; i < coord.rank(); ++i) {
      LC_ASSIGN_OR_RETURN(uint64_t part, crd2offset(coord.items()[i], shape.items()[i], stride.items()[i]));
      offset += part;
    }
    if (!offset.ok()) return Status::invalid("offset of " + to_string(coord) + " overflows").with_rule("tla/size-overflow");
    return offset.value();
  }
  LC_ASSIGN_OR_RETURN(uint64_t extent, shape.product());
  if (coord.value() < 0 || static_cast<uint64_t>(coord.value()) >= extent) {
    return Status::invalid("coordinate " + to_string(coord) + " is outside the mode " + to_string(shape) +
                           " of size " + num(extent));
  }
  if (shape.is_integer()) {
    Checked offset = Checked(static_cast<uint64_t>(coord.value())) * static_cast<uint64_t>(stride.value());
    if (!offset.ok()) return Status::invalid("offset " + to_string(coord) + " * " + to_string(stride) + " overflows").with_rule("tla/size-overflow");
    return offset.value();
  }
  uint64_t rest = static_cast<uint64_t>(coord.value());
  Checked offset = 0;
  for (size_t i = 0; i < shape.rank(); ++i) {
    LC_ASSIGN_OR_RETURN(uint64_t sub_size, shape.items()[i].product());
    IntTuple sub(static_cast<int64_t>(rest % sub_size));
    rest /= sub_size;
    LC_ASSIGN_OR_RETURN(uint64_t part, crd2offset(sub, shape.items()[i], stride.items()[i]));
    offset += part;
  }
  if (!offset.ok()) return Status::invalid("offset of " + to_string(coord) + " overflows").with_rule("tla/size-overflow");
  return offset.value();
}

// The inverse of the split above: an integer is its own index (inside the
// mode); a tuple's parts count colexicographically, part i in units of the
// sizes of the parts before it.
Result<uint64_t> crd2idx(const IntTuple& coord, const IntTuple& shape) {
  LC_ASSIGN_OR_RETURN(uint64_t extent, shape.product());
  if (coord.is_integer()) {
    if (coord.value() < 0 || static_cast<uint64_t>(coord.value()) >= extent) {
      return Status::invalid("coordinate " + to_string(coord) + " is outside the mode " + to_string(shape) +
                             " of size " + num(extent));
    }
    return static_cast<uint64_t>(coord.value());
  }
  if (shape.is_integer() || coord.rank() != shape.rank()) {
    return Status::invalid("coordinate " + to_string(coord) + " does not match the shape " + to_string(shape));
  }
  uint64_t index = 0, below = 1;
  for (size_t i = 0; i < coord.rank(); ++i) {
    LC_ASSIGN_OR_RETURN(uint64_t part, crd2idx(coord.items()[i], shape.items()[i]));
    LC_ASSIGN_OR_RETURN(uint64_t sub_size, shape.items()[i].product());
    index += part * below;  // < extent <= 2^62
    below *= sub_size;
  }
  return index;
}

Result<uint64_t> size(const TlaLayoutText& layout) { return layout.shape.product(); }

// cosize: one past the offset of the last coordinate (size - 1).
Result<uint64_t> cosize(const TlaLayoutText& layout) {
  LC_ASSIGN_OR_RETURN(uint64_t n, size(layout));
  LC_ASSIGN_OR_RETURN(uint64_t last, crd2offset(IntTuple(static_cast<int64_t>(n - 1)), layout.shape, layout.stride));
  Checked end = Checked(last) + 1;
  if (!end.ok()) return Status::invalid("cosize overflows").with_rule("tla/size-overflow");
  return end.value();
}

namespace {

// The new shape of one mode: an integer mode takes the tile extent; a nested
// mode keeps its inner extents and its last (outermost) extent becomes the
// number of inner blocks the tile needs, ceil(tile / inner): the document's
// (4,2) under a tile of 4 becomes (4,1).
Result<IntTuple> tile_mode(const IntTuple& mode, uint64_t tile, uint64_t inner_before) {
  if (mode.is_integer()) {
    return IntTuple(static_cast<int64_t>(ceil_div(tile, inner_before)));  // from the runtime tile: dynamic
  }
  std::vector<IntTuple> items = mode.items();
  Checked inner = inner_before;
  for (size_t i = 0; i + 1 < items.size(); ++i) {
    LC_ASSIGN_OR_RETURN(uint64_t p, items[i].product());
    inner *= p;
  }
  if (!inner.ok()) return Status::invalid("tile: the inner extents of " + to_string(mode) + " overflow").with_rule("tla/size-overflow");
  LC_ASSIGN_OR_RETURN(items.back(), tile_mode(items.back(), tile, inner.value()));
  return IntTuple(std::move(items));
}

}  // namespace

Result<TlaLayoutText> make_layout_tile(const TlaLayoutText& layout, const IntTuple& tile) {
  if (layout.shape.is_integer() || tile.is_integer() || tile.rank() != layout.shape.rank() || tile.depth() != 1) {
    return Status::invalid("MakeLayoutTile: tile " + to_string(tile) + " does not give one extent per mode of " +
                           to_string(layout.shape)).with_rule("tla.tile/tile-rank");
  }
  std::vector<IntTuple> modes;
  for (size_t i = 0; i < tile.rank(); ++i) {
    const int64_t t = tile.items()[i].value();
    if (t <= 0) return Status::invalid("MakeLayoutTile: tile " + to_string(tile) + " has a zero extent").with_rule("tla.tile/tile-positive");
    LC_ASSIGN_OR_RETURN(IntTuple m, tile_mode(layout.shape.items()[i], static_cast<uint64_t>(t), 1));
    modes.push_back(std::move(m));
  }
  // "MakeLayoutTile接口改变了原本layout的shape,不改变stride."
  return TlaLayoutText{IntTuple(std::move(modes)), layout.stride};
}

}  // namespace tla_ref

namespace {

using tla_ref::crd2offset;

std::string num(uint64_t v) { return std::to_string(v); }

constexpr uint64_t kC0Bytes = 32;          // "16x(32/sizeof(ElemType))": a C0 row is 32 bytes
constexpr uint64_t kC0PerFractal = 16;     // 16 C0s per fractal
constexpr uint64_t kEnumerateLimit = 1u << 20;
constexpr uint64_t kMaxPhysicalBytes = uint64_t{1} << 60;

struct TlaModel {
  TlaLayoutText layout;       // the layout in effect (after the tile, for tla.tile)
  TlaLayoutText parent;       // tla.tile: the layout before the tile
  Shape logical;              // the logical tensor: one extent per top-level mode
  Shape extents;              // the layout's own extents (size of each top-level mode)
  uint64_t rows = 0, cols = 0;
  uint64_t element_bytes = 0;
  uint64_t cosize = 0;
  uint64_t c0 = 0, fractal_c0s = 0;  // named fractal formats
};

IntTuple I(uint64_t v, bool is_static = false) { return IntTuple(static_cast<int64_t>(v), is_static); }
IntTuple T(IntTuple a, IntTuple b) { return IntTuple(std::vector<IntTuple>{std::move(a), std::move(b)}); }

// The top-level modes of a layout ("rank(Layout)"): an integer shape is one mode.
size_t top_rank(const IntTuple& shape) { return shape.is_integer() ? 1 : shape.rank(); }
const IntTuple& top_mode(const IntTuple& t, size_t i) { return t.is_integer() ? t : t.items()[i]; }

// A logical coordinate as the layout's coordinate: one integer per top-level
// mode (just the integer for an integer shape).
IntTuple coord_tuple(const IntTuple& shape, const Coord& at) {
  if (shape.is_integer()) return I(static_cast<uint64_t>(at[0]));
  std::vector<IntTuple> parts;
  parts.reserve(at.size());
  for (int64_t v : at) parts.push_back(I(static_cast<uint64_t>(v)));
  return IntTuple(std::move(parts));
}

// The named formats. "Matrix examples": row-major (2,3):(3,1), column-major
// (2,3):(1,2). zN is drawn there with 4x4 fractals, "实际核内为
// 16x(32/sizeof(ElemType))": each fractal is 16 rows of one C0 (32 bytes),
// rows of a fractal c0 apart, fractals stacked down the columns (N); the other
// three are read from their names (oracles/ERRATA.md, CATLASS TLA): the lower
// case letter is the order inside a fractal, the upper case one the order of
// the fractals; z/Z = row by row, n/N = column by column. An n-fractal holds
// its C0s as columns: c0 rows x 16 columns.
Result<TlaLayoutText> named_format(const std::string& kind, uint64_t rows, uint64_t cols, uint64_t c0,
                                   uint64_t n16) {
  if (kind == "rowmajor") return TlaLayoutText{T(I(rows), I(cols)), T(I(cols), I(1, true))};
  if (kind == "colmajor") return TlaLayoutText{T(I(rows), I(cols)), T(I(1, true), I(rows))};
  const bool z_inside = kind[0] == 'z';
  const bool z_outside = kind[1] == 'Z';
  // Fractal height x width: 16 x c0 (z inside) or c0 x 16 (n inside).
  const uint64_t fh = z_inside ? n16 : c0, fw = z_inside ? c0 : n16;
  const uint64_t R = ceil_div(rows, fh), C = ceil_div(cols, fw);
  Checked fractal = Checked(fh) * fw;
  Checked all = fractal * R * C;
  if (!all.ok() || all.value() > (uint64_t{1} << 62)) {
    return Status::invalid("tla." + kind + ": " + num(rows) + "x" + num(cols) + " padded to fractals overflows").with_rule("tla/size-overflow");
  }
  const uint64_t f = fractal.value();
  // Strides inside a fractal: z = row by row (row stride fw, column stride 1),
  // n = column by column (row stride 1, column stride fh).
  IntTuple in_row = z_inside ? I(fw, true) : I(1, true);
  IntTuple in_col = z_inside ? I(1, true) : I(fh, true);
  // Strides between fractals: Z = fractal rows of C fractals, N = fractal columns of R fractals.
  IntTuple out_row = z_outside ? I(f * C) : I(f, true);
  IntTuple out_col = z_outside ? I(f, true) : I(f * R);
  return TlaLayoutText{T(T(I(fh, true), I(R)), T(I(fw, true), I(C))), T(T(in_row, out_row), T(in_col, out_col))};
}

// Every coordinate must have its own offset, or pack would be ambiguous
// (oracles/ERRATA.md, CATLASS TLA, non-injective layouts). Strides that do not
// interleave (sorted by stride, each at or past the span of the smaller ones)
// make the offset a mixed-radix number, which is injective; layouts whose
// strides interleave are enumerated when small and rejected otherwise.
Status check_injective(const TlaLayoutText& l, uint64_t size) {
  std::vector<int64_t> extents = l.shape.leaves(), strides = l.stride.leaves();
  std::vector<std::pair<uint64_t, uint64_t>> modes;  // (stride, extent)
  for (size_t i = 0; i < extents.size(); ++i) {
    if (extents[i] > 1) modes.push_back({static_cast<uint64_t>(strides[i]), static_cast<uint64_t>(extents[i])});
  }
  std::sort(modes.begin(), modes.end());
  Checked reach = 1;
  uint64_t interleaved_stride = 0;
  bool interleaved = false;
  for (const auto& [stride, extent] : modes) {
    if (!reach.ok() || stride < reach.value()) {
      interleaved = true;
      interleaved_stride = stride;
      break;
    }
    reach = Checked(stride) * extent;
  }
  if (!interleaved) return Status();
  if (size <= kEnumerateLimit) {
    std::vector<std::pair<uint64_t, uint64_t>> offsets;  // (offset, index)
    offsets.reserve(size);
    for (uint64_t i = 0; i < size; ++i) {
      LC_ASSIGN_OR_RETURN(uint64_t off, crd2offset(I(i), l.shape, l.stride));
      offsets.push_back({off, i});
    }
    std::sort(offsets.begin(), offsets.end());
    for (size_t k = 1; k < offsets.size(); ++k) {
      if (offsets[k].first == offsets[k - 1].first) {
        return Status::invalid("TLA layout " + to_string(l) + " is not injective: linear coordinates " +
                               num(offsets[k - 1].second) + " and " + num(offsets[k].second) +
                               " both map to offset " + num(offsets[k].first)).with_rule("tla/injective");
      }
    }
    return Status();
  }
  return Status::invalid("TLA layout " + to_string(l) + " has " + num(size) + " elements, more than the " +
                         num(kEnumerateLimit) + " checked one by one, and its strides interleave (stride " +
                         num(interleaved_stride) + " < span " + (reach.ok() ? num(reach.value()) : std::string("past 2^64")) +
                         "): that it is injective is not established").with_rule("tla/injective");
}

// A parameter that is not an IntTuple breaks the notation rule.
template <typename T>
Result<T> notation_rule(Result<T> r) {
  if (r.ok() || r.status().code() != StatusCode::kInvalid || !r.status().rule().empty()) return r;
  return r.status().with_rule("tla/notation");
}

Result<TlaModel> model(const Case& c) {
  const LayoutSpec* spec = find_spec(c.layout.name);
  if (spec == nullptr) return Status::invalid("unknown layout " + c.layout.name).with_rule("layout/unknown");
  const uint32_t bits = dtype_bits(c.dtype);
  if (bits % 8 != 0 || !dtype_info(c.dtype).logical) {
    return Status::invalid(std::string("TLA layouts count whole elements of sizeof(ElemType) bytes; ") +
                           dtype_name(c.dtype) + " has " + std::to_string(bits) + " bits").with_rule("tla/dtype");
  }
  TlaModel m;
  m.element_bytes = bits / 8;
  const std::string kind = c.layout.name.substr(4);
  if (kind == "layout" || kind == "tile") {
    LC_ASSIGN_OR_RETURN(m.layout, notation_rule(parse_tla_layout(c.layout.get("shape") + ":" + c.layout.get("stride"))));
    // "可以定义任意维度": a layout of any number of top-level modes; its logical
    // tensor has one dimension per mode, of the mode's size. MakeLayoutTile takes
    // a (rows, cols) tile of a 2-D layout (oracles/ERRATA.md, CATLASS TLA 7).
    if (kind == "tile" && top_rank(m.layout.shape) != 2) {
      return Status::invalid("MakeLayoutTile of " + to_string(m.layout) + ": the layout has rank " +
                             num(top_rank(m.layout.shape)) + "; a tile (rows,cols) needs 2 modes (Layout 坐标与索引)")
          .with_rule("tla.layout/rank-2");
    }
    // "layout/rank": one logical dimension per top-level mode (2 for a tile).
    const size_t rank = kind == "tile" ? 2 : top_rank(m.layout.shape);
    if (c.shape.size() != rank) {
      return Status::invalid(c.layout.name + ": shape " + clip_input(shape_to_string(c.shape)) + " has rank " +
                             num(c.shape.size()) + "; " + to_string(m.layout) + " has " + num(rank) +
                             " top-level mode" + (rank == 1 ? "" : "s") + ", one logical dimension each")
          .with_rule("layout/rank");
    }
    LC_RETURN_IF_ERROR(element_count(c.shape).status());
    Shape origin;
    if (kind == "tile") {
      m.parent = m.layout;
      LC_ASSIGN_OR_RETURN(IntTuple tile, notation_rule(parse_int_tuple(c.layout.get("tile"))));
      LC_ASSIGN_OR_RETURN(m.layout, tla_ref::make_layout_tile(m.parent, tile));
      origin = {tile.items()[0].value(), tile.items()[1].value()};
    }
    for (size_t i = 0; i < top_rank(m.layout.shape); ++i) {
      LC_ASSIGN_OR_RETURN(uint64_t e, top_mode(m.layout.shape, i).product());
      m.extents.push_back(static_cast<int64_t>(e));
    }
    // The logical tensor: (size of mode 0) x (size of mode 1) x ...; under a
    // tile also the tile itself, the origin shape, whose partial blocks are
    // padding (oracles/ERRATA.md, CATLASS TLA 6).
    if (c.shape != m.extents && (origin.empty() || c.shape != origin)) {
      return Status::invalid("shape " + shape_to_string(c.shape) + " is not the layout's logical tensor: " +
                             to_string(m.layout) + " is " + shape_to_string(m.extents) +
                             " (the size of each top-level mode)" +
                             (origin.empty() ? std::string() : ", or the tile's origin shape " + shape_to_string(origin)))
          .with_rule("tla.layout/shape-matches");
    }
    m.logical = c.shape;
  } else {
    LC_RETURN_IF_ERROR(check_shape(*spec, c.shape));
    m.rows = static_cast<uint64_t>(c.shape[0]);
    m.cols = static_cast<uint64_t>(c.shape[1]);
    if (kind != "rowmajor" && kind != "colmajor") {
      m.c0 = c.layout.params.count("c0") ? static_cast<uint64_t>(c.layout.get_int("c0")) : 0;
      if (m.c0 == 0) m.c0 = kC0Bytes / m.element_bytes;
      m.fractal_c0s = c.layout.params.count("c0_per_fractal")
                          ? static_cast<uint64_t>(c.layout.get_int("c0_per_fractal")) : kC0PerFractal;
    }
    LC_ASSIGN_OR_RETURN(m.layout, named_format(kind, m.rows, m.cols, m.c0, m.fractal_c0s));
    m.logical = c.shape;
    m.extents = {static_cast<int64_t>(*m.layout.shape.items()[0].product()),
                 static_cast<int64_t>(*m.layout.shape.items()[1].product())};
  }
  LC_ASSIGN_OR_RETURN(uint64_t n, tla_ref::size(m.layout));
  LC_RETURN_IF_ERROR(check_injective(m.layout, n));
  LC_ASSIGN_OR_RETURN(m.cosize, tla_ref::cosize(m.layout));
  // Physical size: cosize elements of sizeof(ElemType) bytes.
  Checked bytes = Checked(m.cosize) * m.element_bytes;
  if (!bytes.ok() || bytes.value() > kMaxPhysicalBytes) {
    return Status::invalid("TLA layout " + to_string(m.layout) + ": cosize " + num(m.cosize) + " x " +
                           num(m.element_bytes) + " bytes overflows 2^60 bytes").with_rule("tla/size-overflow");
  }
  return m;
}

// The model of the last case asked about: the checker asks for many offsets
// of one case, and the injectivity check enumerates the layout (core/case_cache.h).
Result<std::shared_ptr<const TlaModel>> cached_model(const Case& c) {
  thread_local CaseCache<TlaModel> cache;
  return cache.get(c, model);
}

class TlaReference : public Impl {
 public:
  std::string name() const override { return "reference"; }
  Status supports(const Case& c) const override { return cached_model(c).status(); }

  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const TlaModel& m = *m_ptr;
    return m.cosize * m.element_bytes;
  }

  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const TlaModel& m = *m_ptr;
    LC_RETURN_IF_ERROR(check_coord(c, at));
    LC_ASSIGN_OR_RETURN(uint64_t off, crd2offset(coord_tuple(m.layout.shape, at), m.layout.shape, m.layout.stride));
    return off * m.element_bytes * 8;
  }

  // "tla::crd2offset(c, shape, stride)" with c as the document writes it: one
  // part per top-level mode ("目前坐标需为二维" for the 2-D layouts), each an
  // integer or a tuple matching its mode, ((1,0),(1,1)) for (1,5) of the zN
  // example. The coordinate must name an element of the logical tensor.
  Result<uint64_t> offset_bits_nested(const Case& c, const IntTuple& at) const override {
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const TlaModel& m = *m_ptr;
    const size_t modes = top_rank(m.layout.shape);
    if (m.layout.shape.is_tuple() && (at.is_integer() || at.rank() != modes)) {
      return Status::invalid("coordinate " + to_string(at) + " has " + num(at.rank()) + " part" +
                             (at.rank() == 1 ? "" : "s") + "; " + to_string(m.layout) + " has " + num(modes) +
                             " top-level modes, one part each (Layout 坐标与索引)");
    }
    for (size_t i = 0; i < modes; ++i) {
      const IntTuple& part = m.layout.shape.is_tuple() ? at.items()[i] : at;
      LC_ASSIGN_OR_RETURN(uint64_t index, tla_ref::crd2idx(part, top_mode(m.layout.shape, i)));
      if (index >= static_cast<uint64_t>(m.logical[i])) {
        return Status::invalid("coordinate " + to_string(at) + " is index " + num(index) + " of mode " + num(i) +
                               ", outside the logical tensor " + shape_to_string(m.logical) + " (padding of the tile)");
      }
    }
    LC_ASSIGN_OR_RETURN(uint64_t off, crd2offset(at, m.layout.shape, m.layout.stride));
    return off * m.element_bytes * 8;
  }

  // Logical element i (row-major over the logical shape) <-> crd2offset of its coordinate.
  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const TlaModel& m = *m_ptr;
    // Offsets no element maps to (fractal and tile padding, stride gaps) are 0.
    std::memset(physical, 0, physical_size);
    const uint64_t n = *element_count(m.logical);
    for (uint64_t i = 0; i < n; ++i) {
      LC_ASSIGN_OR_RETURN(uint64_t off, crd2offset(coord_tuple(m.layout.shape, coord_of_index(m.logical, i)),
                                                   m.layout.shape, m.layout.stride));
      std::memcpy(static_cast<uint8_t*>(physical) + off * m.element_bytes,
                  static_cast<const uint8_t*>(logical) + i * m.element_bytes, m.element_bytes);
    }
    return Status();
  }

  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const TlaModel& m = *m_ptr;
    const uint64_t n = *element_count(m.logical);
    for (uint64_t i = 0; i < n; ++i) {
      LC_ASSIGN_OR_RETURN(uint64_t off, crd2offset(coord_tuple(m.layout.shape, coord_of_index(m.logical, i)),
                                                   m.layout.shape, m.layout.stride));
      std::memcpy(static_cast<uint8_t*>(logical) + i * m.element_bytes,
                  static_cast<const uint8_t*>(physical) + off * m.element_bytes, m.element_bytes);
    }
    return Status();
  }

  // "Layout提供了多维坐标与内存的映射关系" (a layout maps coordinates to memory):
  // an offset no coordinate maps to (the gaps of (_2,4):(_12,_1)) holds nothing of
  // the tensor and is free. The fractal formats pad the matrix to whole fractals
  // ("在昇腾CUBE核内部,存在 zN 、 nZ 、 zZ 、 nN 格式"): the cube unit reads whole
  // fractals and sums along them, so their padding is fixed to 0 (the document
  // gives no value; oracles/ERRATA.md, CATLASS TLA 3); so is the padding of a
  // tile given by its origin shape (CATLASS TLA 6).
  Result<ByteRules> byte_rules(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const TlaModel& m = *m_ptr;
    const uint64_t size = m.cosize * m.element_bytes;
    if (size > (uint64_t{1} << 30)) return Status::unsupported("byte rules are mapped for buffers of up to 1 GiB");
    const char* doc = "catlass-tla-layouts.txt";
    const LayoutSpec* spec = find_spec(c.layout.name);
    const std::string section = spec ? spec->section : "Layout 构造";
    ByteRulesBuilder b(size, {"tla.stride-gap", doc, "Layout", "an offset no coordinate maps to",
                              "Layout提供了多维坐标与内存的映射关系"},
                       ByteKind::kFree);
    const uint8_t padding = b.add({"tla.fractal-padding", doc, "Layout 构造", "padding of a partial fractal",
                                   "在昇腾CUBE核内部,存在 zN 、 nZ 、 zZ 、 nN 格式"},
                                  ByteKind::kFixed, 0);
    const uint8_t element = b.add(element_rule(doc, section), ByteKind::kElement);
    const uint64_t n = *element_count(m.extents);
    for (uint64_t i = 0; i < n; ++i) {
      const Coord at = coord_of_index(m.extents, i);
      bool inside = true;
      for (size_t d = 0; d < at.size(); ++d) inside = inside && at[d] < m.logical[d];
      LC_ASSIGN_OR_RETURN(uint64_t off, crd2offset(coord_tuple(m.layout.shape, at), m.layout.shape, m.layout.stride));
      b.paint(off * m.element_bytes, m.element_bytes, inside ? element : padding);
    }
    return std::move(b).finish();
  }

  Result<std::vector<Fact>> describe(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const TlaModel& m = *m_ptr;
    std::vector<Fact> f;
    const TlaLayoutText& l = m.layout;
    f.push_back({"tla", to_string(l)});
    f.push_back({"tla_shape", to_string(l.shape)});
    f.push_back({"tla_stride", to_string(l.stride)});
    f.push_back({"rank", num(l.shape.rank())});
    f.push_back({"depth", num(static_cast<uint64_t>(l.shape.depth()))});
    for (size_t i = 0; i < top_rank(l.shape); ++i) {
      const std::string mode = "mode" + num(i);
      f.push_back({mode, to_string(top_mode(l.shape, i)) + ":" + to_string(top_mode(l.stride, i))});
      f.push_back({"rank_" + num(i), num(top_mode(l.shape, i).rank())});
      f.push_back({"depth_" + num(i), num(static_cast<uint64_t>(top_mode(l.shape, i).depth()))});
    }
    f.push_back({"size", num(*tla_ref::size(l))});
    f.push_back({"cosize", num(m.cosize)});
    f.push_back({"size_bytes", num(m.cosize * m.element_bytes)});
    if (m.parent.shape.is_tuple()) {
      f.push_back({"parent", to_string(m.parent)});
      if (m.logical != m.extents) f.push_back({"padded_shape", shape_to_string(m.extents)});
    }
    if (m.c0 != 0) {
      f.push_back({"c0_elements", num(m.c0)});
      f.push_back({"fractal", num(static_cast<uint64_t>(l.shape.items()[0].items()[0].value())) + "x" +
                                  num(static_cast<uint64_t>(l.shape.items()[1].items()[0].value()))});
      f.push_back({"padded_shape", num(*l.shape.items()[0].product()) + "," + num(*l.shape.items()[1].product())});
    }
    return f;
  }
};

}  // namespace

const Impl& tla_reference() {
  static const TlaReference impl;
  return impl;
}

}  // namespace layoutcheck
