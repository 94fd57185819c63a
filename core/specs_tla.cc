// Registration of the CATLASS TLA layouts: the shape:stride notation, the
// MakeLayoutTile notation and the named matrix formats (row-major,
// column-major and the in-core fractal formats zN, nZ, zZ, nN). Beyond the
// notation parser, the only arithmetic here is what the generators need to
// propose matching logical shapes (sizes of modes).
#include <algorithm>

#include "core/families.h"
#include "layoutcheck/int_tuple.h"

namespace layoutcheck {
namespace {

constexpr const char* kDoc = "catlass-tla-layouts.txt";
constexpr const char* kTilePrefix = "MakeLayoutTile(";

ParamSpec text_param(std::string key, std::string doc) {
  ParamSpec p;
  p.key = std::move(key);
  p.kind = ParamKind::kText;
  p.doc = std::move(doc);
  return p;
}

Result<IntTuple> parse_tile(std::string_view text) {
  auto tile = parse_int_tuple(text);
  if (!tile.ok()) return Status::invalid("MakeLayoutTile tile shape: " + tile.status().message());
  if (tile->is_integer() || tile->rank() != 2 || tile->depth() != 1) {
    return Status::invalid("MakeLayoutTile tile shape " + to_string(*tile) +
                           " must be a flat pair (rows,cols), as MakeShape(4, 4)");
  }
  for (int64_t v : tile->leaves()) {
    if (v <= 0) return Status::invalid("MakeLayoutTile tile shape " + to_string(*tile) + " has a zero extent");
  }
  return tile;
}

// Splits "MakeLayoutTile(S:D,(t0,t1))" at its last top-level comma.
Result<Layout> parse_tile_notation(std::string_view t) {
  if (t.back() != ')') return Status::invalid("MakeLayoutTile(...) is missing its closing ')'");
  std::string_view body = t.substr(std::char_traits<char>::length(kTilePrefix));
  body.remove_suffix(1);
  int depth = 0;
  size_t split = std::string_view::npos;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '(') ++depth;
    if (body[i] == ')') --depth;
    if (body[i] == ',' && depth == 0) split = i;
  }
  if (split == std::string_view::npos) {
    return Status::invalid("MakeLayoutTile takes (LAYOUT, (rows,cols)), e.g. "
                           "MakeLayoutTile(((4,2),(4,3)):((4,16),(1,32)),(4,4))");
  }
  // A layout of other than two modes parses (the text round-trips); the
  // reference rejects it by its rule, tla.layout/rank-2.
  LC_ASSIGN_OR_RETURN(TlaLayoutText l, parse_tla_layout(body.substr(0, split)));
  LC_ASSIGN_OR_RETURN(IntTuple tile, parse_tile(body.substr(split + 1)));
  return make_layout("tla.tile",
                     {{"shape", to_string(l.shape)}, {"stride", to_string(l.stride)}, {"tile", to_string(tile)}});
}

std::optional<Result<Layout>> parse_notation(std::string_view t) {
  if (t.substr(0, std::char_traits<char>::length(kTilePrefix)) == kTilePrefix) return parse_tile_notation(t);
  if (t.empty() || !(t[0] == '(' || t[0] == '_' || (t[0] >= '0' && t[0] <= '9'))) return std::nullopt;
  auto l = parse_tla_layout(t);
  if (!l.ok()) return Result<Layout>(l.status());
  return make_layout("tla.layout", {{"shape", to_string(l->shape)}, {"stride", to_string(l->stride)}});
}

std::string format_layout(const Layout& layout) {
  std::string text = layout.get("shape") + ":" + layout.get("stride");
  auto l = parse_tla_layout(text);
  if (l.ok()) text = to_string(*l);
  if (layout.name == "tla.tile") return kTilePrefix + text + "," + layout.get("tile") + ")";
  return text;
}

// ---- generators --------------------------------------------------------------

const DType kByteTypes[] = {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16, DType::kInt32,
                            DType::kUInt32, DType::kFp16, DType::kBf16, DType::kFp32};

DType draw_dtype(std::mt19937_64& rng) {
  if (pick(rng, 0, 60) == 0) return pick(rng, 0, 1) ? DType::kInt4 : DType::kUInt4;  // rejected
  return kByteTypes[pick(rng, 0, 8)];
}

// A mode tree whose leaves index into a table of (extent, stride) pairs.
struct Node {
  std::vector<Node> kids;
  size_t leaf = 0;
};

Node draw_node(std::mt19937_64& rng, int depth, size_t* leaves) {
  Node n;
  int64_t kind = depth >= 3 ? 0 : pick(rng, 0, 5);
  if (kind <= 1 || *leaves >= 12) {
    n.leaf = (*leaves)++;
    return n;
  }
  int64_t count = kind == 5 ? pick(rng, 1, 3) : 2;
  for (int64_t i = 0; i < count; ++i) n.kids.push_back(draw_node(rng, kind == 5 ? depth + 1 : 3, leaves));
  return n;
}

struct LeafValue {
  int64_t extent = 1, stride = 0;
  bool static_extent = false, static_stride = false;
};

void build(const Node& n, const std::vector<LeafValue>& v, IntTuple* shape, IntTuple* stride) {
  if (n.kids.empty()) {
    *shape = IntTuple(v[n.leaf].extent, v[n.leaf].static_extent);
    *stride = IntTuple(v[n.leaf].stride, v[n.leaf].static_stride);
    return;
  }
  std::vector<IntTuple> shapes(n.kids.size()), strides(n.kids.size());
  for (size_t i = 0; i < n.kids.size(); ++i) build(n.kids[i], v, &shapes[i], &strides[i]);
  *shape = IntTuple(std::move(shapes));
  *stride = IntTuple(std::move(strides));
}

// A random layout of `modes` top-level modes (0: an integer shape):
// compact strides over the leaves in a random order, sometimes with gaps, now
// and then overlapping (invalid unless injective).
TlaLayoutText draw_layout(std::mt19937_64& rng, int size_class, int modes = 2) {
  size_t leaves = 0;
  Node root;
  if (modes == 0) {
    root.leaf = leaves++;
  } else {
    for (int i = 0; i < modes; ++i) root.kids.push_back(draw_node(rng, 1, &leaves));
  }
  std::vector<LeafValue> v(leaves);
  const int64_t max_extent = 3 + 2 * size_class;
  for (auto& leaf : v) {
    leaf.extent = pick(rng, 0, 4) == 0 ? 1 : pick(rng, 1, max_extent);
    leaf.static_extent = pick(rng, 0, 4) == 0;
    leaf.static_stride = pick(rng, 0, 4) == 0;
  }
  std::vector<size_t> order(leaves);
  for (size_t i = 0; i < leaves; ++i) order[i] = i;
  if (pick(rng, 0, 3) != 0) std::shuffle(order.begin(), order.end(), rng);
  int64_t stride = pick(rng, 0, 5) == 0 ? pick(rng, 2, 3) : 1;
  for (size_t i : order) {
    v[i].stride = stride;
    stride = stride * v[i].extent + (pick(rng, 0, 3) == 0 ? pick(rng, 1, 5) : 0);
  }
  if (pick(rng, 0, 12) == 0) v[static_cast<size_t>(pick(rng, 0, static_cast<int64_t>(leaves) - 1))].stride = pick(rng, 0, 6);
  TlaLayoutText l;
  build(root, v, &l.shape, &l.stride);
  return l;
}

uint64_t mode_size(const IntTuple& mode) {
  uint64_t n = 1;
  for (int64_t e : mode.leaves()) n *= static_cast<uint64_t>(e);
  return n;
}

// The logical tensor of a notation layout: the size of each top-level mode
// (an integer shape is one mode).
Shape logical_of(const IntTuple& shape) {
  if (shape.is_integer()) return {shape.value()};
  Shape s;
  for (const IntTuple& mode : shape.items()) s.push_back(static_cast<int64_t>(mode_size(mode)));
  return s;
}

// Parameters that do not validate fall back to a plain row-major layout (the
// notation layouts have no defaults to fall back to).
Case make_tla_case(const std::string& name, const ParamMap& params, DType dtype, Shape shape) {
  Case c;
  auto layout = make_layout(name, params);
  if (layout.ok()) c.layout = *layout;
  else c.layout = *make_layout("tla.rowmajor");
  c.dtype = dtype;
  c.shape = std::move(shape);
  return c;
}

Shape maybe_wrong(std::mt19937_64& rng, Shape s) {
  if (pick(rng, 0, 25) == 0) s[static_cast<size_t>(pick(rng, 0, static_cast<int64_t>(s.size()) - 1))] += pick(rng, 0, 1) ? 1 : -1;
  if (pick(rng, 0, 40) == 0) {  // one dimension too many or too few
    if (s.size() > 1 && pick(rng, 0, 1)) s.pop_back();
    else s.push_back(1);
  }
  return s;
}

// Mostly the document's 2-D matrices; also an integer shape, (n):(d), and
// 3- and 4-mode layouts ("可以定义任意维度").
int draw_modes(std::mt19937_64& rng) {
  const int64_t k = pick(rng, 0, 11);
  if (k == 0) return 0;
  if (k == 1) return 1;
  if (k <= 3) return 3;
  if (k == 4) return 4;
  return 2;
}

Case notation_case(std::mt19937_64& rng, int size_class) {
  TlaLayoutText l = draw_layout(rng, size_class, draw_modes(rng));
  Shape s = logical_of(l.shape);
  return make_tla_case("tla.layout", {{"shape", to_string(l.shape)}, {"stride", to_string(l.stride)}}, draw_dtype(rng),
                   maybe_wrong(rng, s));
}

// The tile keeps every leaf of a mode but its last (outermost), which becomes
// ceil(tile / product of the others) ("获取 Tilelayout").
int64_t tiled_mode_size(const IntTuple& mode, int64_t tile) {
  std::vector<int64_t> l = mode.leaves();
  int64_t inner = 1;
  for (size_t i = 0; i + 1 < l.size(); ++i) inner *= l[i];
  return inner * ((tile + inner - 1) / inner);
}

Case tile_case(std::mt19937_64& rng, int size_class) {
  TlaLayoutText l = draw_layout(rng, size_class);
  int64_t t0 = pick(rng, 1, static_cast<int64_t>(mode_size(l.shape.items()[0])) + 2);
  int64_t t1 = pick(rng, 1, static_cast<int64_t>(mode_size(l.shape.items()[1])) + 2);
  // The origin shape (the tile itself), or the whole tiled layout (ERRATA.md, CATLASS TLA 6).
  Shape s = {t0, t1};
  if (pick(rng, 0, 3) == 0) s = {tiled_mode_size(l.shape.items()[0], t0), tiled_mode_size(l.shape.items()[1], t1)};
  if (pick(rng, 0, 40) == 0) l = draw_layout(rng, size_class, pick(rng, 0, 1) ? 1 : 3);  // not 2 modes
  return make_tla_case("tla.tile",
                   {{"shape", to_string(l.shape)}, {"stride", to_string(l.stride)},
                    {"tile", "(" + std::to_string(t0) + "," + std::to_string(t1) + ")"}},
                   draw_dtype(rng), maybe_wrong(rng, s));
}

std::function<Case(std::mt19937_64&, int)> matrix_generator(const std::string& name, bool fractal) {
  return [name, fractal](std::mt19937_64& rng, int size_class) {
    ParamMap p;
    if (fractal && pick(rng, 0, 6) == 0) {
      p["c0"] = std::to_string(pick(rng, 1, 8));
      p["c0_per_fractal"] = std::to_string(pick(rng, 1, 8));
    }
    const int64_t scale = int64_t{1} << size_class;
    Shape s = {pick(rng, 1, 20 * scale), pick(rng, 1, 40 * scale)};
    return make_tla_case(name, p, draw_dtype(rng), s);
  };
}

std::vector<Case> small_matrices(const std::string& name) {
  std::vector<Case> out;
  for (DType t : {DType::kInt8, DType::kFp16, DType::kFp32}) {
    for (int64_t rows : {1, 2, 3, 17}) {
      for (int64_t cols : {1, 3, 33}) out.push_back(make_tla_case(name, {}, t, {rows, cols}));
    }
  }
  return out;
}

// Rows around the 16-row fractal, columns around the C0 of each element size.
std::vector<Case> fractal_boundaries(const std::string& name) {
  std::vector<Case> out;
  for (DType t : {DType::kInt8, DType::kFp16, DType::kFp32}) {
    const int64_t c0 = 256 / dtype_bits(t);
    for (int64_t rows : {1, 15, 16, 17, 32, 33}) {
      for (int64_t cols : {c0 - 1, c0, c0 + 1, 2 * c0, 2 * c0 + 1}) out.push_back(make_tla_case(name, {}, t, {rows, cols}));
    }
  }
  return out;
}

}  // namespace

void add_tla_specs(std::vector<LayoutSpec>* specs) {
  LayoutSpec layout;
  layout.name = "tla.layout";
  layout.document = kDoc;
  layout.section = "Layout 构造";
  layout.summary = "a nested shape:stride layout in the document's notation, e.g. ((4,2),(4,3)):((4,16),(1,32))";
  layout.dims = {"rows", "cols"};
  layout.params = {text_param("shape", "the Shape IntTuple, e.g. ((4,2),(4,3))"),
                   text_param("stride", "the Stride IntTuple, congruent with the shape")};
  layout.parse_notation = parse_notation;
  layout.format = format_layout;
  layout.random_case = notation_case;
  layout.boundary_cases = [] {
    std::vector<Case> out;
    for (const char* text : {"((4,2),(4,3)):((4,16),(1,32))", "(_2,4):(_12,_1)", "(2,3):(3,1)", "(2,3):(1,2)",
                             "((16,2),(16,3)):((16,256),(1,512))", "(1,1):(0,0)", "((2,2),3):((1,6),2)",
                             "(8):(1)", "8:1", "(_8):(_2)", "(2,3,4):(12,4,1)", "(2,(2,2),3):(1,(2,12),4)",
                             "(2,3,4,5):(1,2,6,24)"}) {
      auto l = *parse_tla_layout(text);
      out.push_back(make_tla_case("tla.layout", {{"shape", to_string(l.shape)}, {"stride", to_string(l.stride)}},
                              DType::kFp16, logical_of(l.shape)));
    }
    // The largest stride an IntTuple holds, 2^48, over 2049 rows: a cosize past 2^60 bytes.
    out.push_back(make_tla_case("tla.layout", {{"shape", "(2049,2)"}, {"stride", "(281474976710656,1)"}}, DType::kFp16,
                                {2049, 2}));
    return out;
  };
  specs->push_back(layout);

  LayoutSpec tile = layout;
  tile.name = "tla.tile";
  tile.section = "获取 Tilelayout";
  tile.summary = "MakeLayoutTile(LAYOUT,(rows,cols)): the tile's shape over the parent's strides";
  tile.params.push_back(text_param("tile", "the tile shape (rows,cols)"));
  tile.parse_notation = nullptr;
  tile.random_case = tile_case;
  tile.boundary_cases = [] {
    std::vector<Case> out;
    const ParamMap doc = {{"shape", "((4,2),(4,3))"}, {"stride", "((4,16),(1,32))"}};
    for (int64_t t0 : {1, 3, 4, 5, 8}) {
      for (int64_t t1 : {1, 4, 7, 12}) {
        ParamMap p = doc;
        p["tile"] = "(" + std::to_string(t0) + "," + std::to_string(t1) + ")";
        out.push_back(make_tla_case("tla.tile", p, DType::kFp16, {(t0 + 3) / 4 * 4, (t1 + 3) / 4 * 4}));
        out.push_back(make_tla_case("tla.tile", p, DType::kFp16, {t0, t1}));  // the origin shape
      }
    }
    // A 30 x 43 fp16 tile of the document's 32 x 48 zN-like image, by its origin shape.
    out.push_back(make_tla_case("tla.tile",
                                {{"shape", "((16,2),(16,3))"}, {"stride", "((16,256),(1,512))"}, {"tile", "(30,43)"}},
                                DType::kFp16, {30, 43}));
    out.push_back(make_tla_case("tla.tile", {{"shape", "(4096,2)"}, {"stride", "(281474976710656,1)"}, {"tile", "(2049,2)"}},
                                DType::kFp16, {2049, 2}));
    return out;
  };
  specs->push_back(tile);

  LayoutSpec row;
  row.name = "tla.rowmajor";
  row.document = kDoc;
  row.section = "Matrix examples";
  row.summary = "rows x cols matrix, (rows,cols):(cols,1)";
  row.dims = {"rows", "cols"};
  row.random_case = matrix_generator(row.name, false);
  row.boundary_cases = [] { return small_matrices("tla.rowmajor"); };
  specs->push_back(row);

  LayoutSpec col = row;
  col.name = "tla.colmajor";
  col.summary = "rows x cols matrix, (rows,cols):(1,rows)";
  col.random_case = matrix_generator(col.name, false);
  col.boundary_cases = [] { return small_matrices("tla.colmajor"); };
  specs->push_back(col);

  struct Fractal {
    const char* name;
    const char* summary;
  };
  const Fractal kFractals[] = {
      {"tla.zN", "fractals of 16 x C0 stored row by row, fractals down the columns (N)"},
      {"tla.nZ", "fractals of C0 x 16 stored column by column, fractals along the rows (Z)"},
      {"tla.zZ", "fractals of 16 x C0 stored row by row, fractals along the rows (Z)"},
      {"tla.nN", "fractals of C0 x 16 stored column by column, fractals down the columns (N)"},
  };
  for (const Fractal& f : kFractals) {
    LayoutSpec s = row;
    s.name = f.name;
    s.summary = std::string(f.summary) + "; C0 = 32 bytes, padded with 0";
    s.params = {int_param("c0", 0, 4096, "0", "elements per C0 (0: 32 bytes / element size)"),
                int_param("c0_per_fractal", 1, 4096, "16", "C0s per fractal (16 in the core)")};
    s.random_case = matrix_generator(s.name, true);
    s.boundary_cases = [name = s.name] { return fractal_boundaries(name); };
    specs->push_back(s);
  }
}

}  // namespace layoutcheck
