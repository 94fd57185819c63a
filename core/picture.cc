// Pictures of a layout (layoutcheck/picture.h). Locating elements and choosing
// the view; the renderers are in picture_render.cc. No layout arithmetic here:
// offsets come from the implementation, byte kinds from the byte rules, and
// the row width and grouping of the view from describe()'s facts.
#include "layoutcheck/picture.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace layoutcheck {
namespace {

std::string fact(const std::vector<Fact>& facts, const std::string& key) {
  for (const auto& f : facts) {
    if (f.first == key) return f.second;
  }
  return "";
}

uint64_t fact_u64(const std::vector<Fact>& facts, const std::string& key) {
  const std::string v = fact(facts, key);
  if (v.empty() || v.size() > 18) return 0;
  uint64_t out = 0;
  for (char ch : v) {
    if (ch < '0' || ch > '9') return 0;
    out = out * 10 + static_cast<uint64_t>(ch - '0');
  }
  return out;
}

std::vector<uint64_t> fact_list(const std::vector<Fact>& facts, const std::string& key) {
  std::vector<uint64_t> out;
  auto s = parse_shape(fact(facts, key));
  if (!s.ok()) return out;
  for (int64_t v : *s) out.push_back(static_cast<uint64_t>(v));
  return out;
}

constexpr size_t kMaxColumns = 16;  // NPU columns drawn
constexpr uint64_t kMaxRowCells = 256;  // cells of a physical row

uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi) { return std::max(lo, std::min(hi, v)); }

// Locates elements by packing (see the header): passes of all-0, all-1 and one
// per bit of index + 1.
Status locate_by_pack(const Case& c, const Impl& impl, uint64_t n, uint64_t phys, std::vector<uint64_t>* offsets) {
  LC_ASSIGN_OR_RETURN(uint64_t logical_size, logical_bytes(c));
  const uint32_t bits = dtype_bits(c.dtype);
  std::vector<uint32_t> keep(n);
  for (uint64_t i = 0; i < n; ++i) keep[i] = std::min(bits, value_bits(c, coord_of_index(c.shape, i)));
  auto pack_with = [&](auto set, std::vector<uint8_t>* out) -> Status {
    std::vector<uint8_t> logical(logical_size, 0);
    for (uint64_t i = 0; i < n; ++i) {
      if (!set(i)) continue;
      for (uint64_t b = i * bits; b < i * bits + keep[i]; ++b) logical[b / 8] |= static_cast<uint8_t>(1u << (b % 8));
    }
    out->assign(phys, 0);
    Status s = impl.pack(c, logical.data(), logical.size(), out->data(), out->size());
    if (!s.ok()) return Status::invalid("pack (to locate elements without offset_bits): " + s.to_string());
    return Status();
  };
  std::vector<uint8_t> zero, ones, pass;
  LC_RETURN_IF_ERROR(pack_with([](uint64_t) { return false; }, &zero));
  LC_RETURN_IF_ERROR(pack_with([](uint64_t) { return true; }, &ones));
  std::vector<uint32_t> index(phys * 8, 0);
  uint32_t passes = 0;
  while (passes < 32 && (n + 1) >> passes) ++passes;
  for (uint32_t p = 0; p < passes; ++p) {
    LC_RETURN_IF_ERROR(pack_with([p](uint64_t i) { return ((i + 1) >> p) & 1; }, &pass));
    for (uint64_t byte = 0; byte < phys; ++byte) {
      const unsigned element_bits = static_cast<unsigned>(zero[byte] ^ ones[byte]);
      const unsigned set = static_cast<unsigned>(pass[byte] ^ zero[byte]) & element_bits;
      for (unsigned b = 0; set >> b; ++b) {
        if ((set >> b) & 1) index[byte * 8 + b] |= uint32_t{1} << p;
      }
    }
  }
  for (uint64_t bit = 0; bit < phys * 8; ++bit) {
    const uint32_t e = index[bit];
    if (e == 0 || e > n) continue;
    if ((*offsets)[e - 1] == UINT64_MAX) (*offsets)[e - 1] = bit;
  }
  return Status();
}

// The physical view: the row width and groups, from describe()'s facts.
void choose_physical_view(Picture* p) {
  const auto& f = p->facts;
  const uint64_t cell_bytes = std::max<uint64_t>(1, p->cell_bits / 8);
  const uint64_t elem_bytes = std::max<uint64_t>(1, p->elem_bits / 8);
  const std::string& fam = p->family;
  uint64_t group = 0;
  std::string group_name = "group";
  p->row_bytes = 32;
  p->physical_view = "addresses in rows";
  if (fam == "tpu" && p->c.layout.params.count("npus") && p->c.layout.params.count("lmem")) {
    const uint64_t npus = static_cast<uint64_t>(p->c.layout.get_int("npus"));
    if (npus > 0 && p->size_bytes % npus == 0 && npus <= 64) {
      p->columns = true;
      group = p->size_bytes / npus;
      group_name = "NPU";
      const uint64_t c_stride = fact_u64(f, "c_stride") * elem_bytes;
      p->row_bytes = c_stride >= 16 && c_stride <= 128 ? c_stride : 64;
      p->physical_view = "one column per NPU, local memory addresses going down";
    }
  } else if (fam == "tpu") {
    p->row_bytes = clamp_u64(fact_u64(f, "h_stride") * elem_bytes, 16, 128);
    p->physical_view = "system memory, one row per line of W";
  } else if (fam == "nvdla") {
    const uint64_t atom = fact_u64(f, "atom_bytes");
    p->row_bytes = atom ? atom : 32;
    if (uint64_t line = fact_u64(f, "line_stride"); line >= p->row_bytes) {
      group = line;
      group_name = "line";
      p->physical_view = "32-byte atoms in scan order, one row per atom, grouped by line";
    } else if (uint64_t cube = fact_u64(f, "cube_bytes"); cube >= p->row_bytes) {
      group = cube;
      group_name = "cube";
      p->physical_view = "atoms in scan order, grouped by cube";
    } else {
      p->physical_view = "32-byte atoms in scan order";
    }
  } else if (fam == "htp") {
    const auto chunk_shape = fact_list(f, "chunk_shape");
    const auto padded = fact_list(f, "padded_shape");
    const uint64_t chunk = fact_u64(f, "chunk_bytes");
    if (!chunk_shape.empty() && chunk_shape.back() > 1) {
      p->row_bytes = clamp_u64(chunk_shape.back() * elem_bytes, 4, 128);
    } else if (!padded.empty()) {
      p->row_bytes = clamp_u64(padded.back() * elem_bytes, 4, 128);
    }
    if (chunk >= 2 * p->row_bytes) {
      group = chunk;
      group_name = "chunk";
      p->physical_view = "chunks in chunk order, one row per innermost run";
    } else {
      p->physical_view = "flat, one row per innermost dimension";
    }
  } else if (fam == "tla") {
    const uint64_t c0 = fact_u64(f, "c0_elements");
    const std::string fractal = fact(f, "fractal");
    if (c0 && !fractal.empty()) {
      p->row_bytes = c0 * elem_bytes;
      group = 16 * c0 * elem_bytes;
      group_name = "fractal";
      p->physical_view = "fractals in address order (" + fractal + "), one row per C0";
    } else {
      const uint64_t cols = p->c.shape.size() == 2 ? static_cast<uint64_t>(p->c.shape[1]) : 0;
      p->row_bytes = clamp_u64(cols * elem_bytes, 4, 128);
      p->physical_view = "addresses in rows";
    }
  } else if (fam == "mge") {
    const auto pshape = fact_list(f, "physical_shape");
    const uint64_t blocks = fact_u64(f, "channel_blocks");
    const uint64_t item = std::max<uint64_t>(1, fact_u64(f, "itemsize"));
    if (pshape.size() >= 2) {
      const uint64_t inner = pshape.back() * item;
      const uint64_t two = inner * pshape[pshape.size() - 2];
      p->row_bytes = two <= 128 ? two : inner * std::min(pshape[pshape.size() - 2], std::max<uint64_t>(1, 64 / inner));
      if (blocks) {
        p->physical_view = "blocks of " + std::to_string(pshape.back()) + " channels, one row per " +
                           std::to_string(p->row_bytes / std::max<uint64_t>(1, inner)) + " block(s)";
        if (pshape.size() >= 3) group = two * pshape[pshape.size() - 3];
        group_name = "rows";
      } else {
        p->physical_view = "one row per innermost dimension";
      }
    }
    if (p->row_bytes < 4 * cell_bytes) p->row_bytes = 4 * cell_bytes;
  }
  p->row_bytes = std::max<uint64_t>(cell_bytes, (p->row_bytes + cell_bytes - 1) / cell_bytes * cell_bytes);
  // A row that wide (a long innermost dimension) wraps: at most kMaxRowCells cells a row.
  p->row_bytes = std::min<uint64_t>(p->row_bytes, kMaxRowCells * cell_bytes);
  if (group && group % p->row_bytes != 0) group = 0;
  if (group > p->size_bytes) group = 0;
  if (!group) {
    group = p->size_bytes;
    group_name = "";
  }
  // Groups and their windows.
  const uint64_t count = p->size_bytes == 0 ? 0 : (p->size_bytes + group - 1) / group;
  uint64_t rows_left = p->columns ? UINT64_MAX : p->max_rows;
  uint64_t first_elided = p->size_bytes;
  for (uint64_t g = 0; g < count; ++g) {
    PhysGroup pg;
    pg.first_byte = g * group;
    pg.bytes = std::min(group, p->size_bytes - pg.first_byte);
    pg.label = group_name.empty() ? "bytes" : group_name + " " + std::to_string(g);
    const uint64_t rows = (pg.bytes + p->row_bytes - 1) / p->row_bytes;
    const uint64_t shown_rows = p->columns ? std::min(rows, p->max_rows) : std::min(rows, rows_left);
    pg.shown_bytes = std::min(pg.bytes, shown_rows * p->row_bytes);
    if (!p->columns) rows_left -= shown_rows;
    if (pg.shown_bytes < pg.bytes && first_elided == p->size_bytes) first_elided = pg.first_byte + pg.shown_bytes;
    if (pg.shown_bytes == 0) break;
    if (p->columns && p->groups.size() == kMaxColumns) {
      p->elided = group_name + "s " + std::to_string(kMaxColumns) + ".." + std::to_string(count - 1) + " not drawn";
      break;
    }
    p->groups.push_back(pg);
  }
  if (p->columns) {
    for (const auto& g : p->groups) {
      if (g.shown_bytes < g.bytes) {
        p->elided += std::string(p->elided.empty() ? "" : "; ") + "bytes " + std::to_string(g.shown_bytes) + ".." + std::to_string(g.bytes - 1) + " of each " +
                    group_name + " not drawn (" + std::to_string(p->max_rows) + " rows per column shown)";
        break;
      }
    }
  } else if (first_elided < p->size_bytes) {
    p->elided = "bytes " + std::to_string(first_elided) + ".." + std::to_string(p->size_bytes - 1) + " of " +
                std::to_string(p->size_bytes) + " not drawn (first " + std::to_string(p->max_rows) + " rows shown)";
  }
}

}  // namespace

std::string Picture::coord_text(int64_t element) const {
  if (element < 0) return "";
  return "(" + shape_to_string(coord_of_index(c.shape, static_cast<uint64_t>(element))) + ")";
}

std::string Picture::cell_coord(const PhysCell& cell) const {
  if (cell.element < 0) return "";
  const Coord first = coord_of_index(c.shape, static_cast<uint64_t>(cell.element));
  if (cell.sharers <= 1) return shape_to_string(first);
  const Coord last = coord_of_index(c.shape, static_cast<uint64_t>(cell.last_element));
  std::string out;
  for (size_t d = 0; d < first.size(); ++d) {
    out += (d ? "," : "") + (first[d] == last[d] ? std::to_string(first[d]) : std::string("*"));
  }
  return out;
}

uint64_t Picture::offset_of(uint64_t element) const {
  auto it = std::lower_bound(offsets.begin(), offsets.end(), std::make_pair(element, uint64_t{0}));
  return it != offsets.end() && it->first == element ? it->second : UINT64_MAX;
}

uint64_t Picture::cell_count() const {
  uint64_t n = 0;
  for (const auto& g : group_cells) n += g.size();
  return n;
}

Result<Picture> make_picture(const Case& c, const Impl& impl, const PictureOptions& options) {
  LC_RETURN_IF_ERROR(impl.supports(c));
  if (c.shape.empty()) return Status::invalid("a picture needs a shape of rank 1 or more");
  Picture p;
  p.c = c;
  p.impl = impl.name();
  p.family = c.layout.family();
  p.max_rows = std::max<uint64_t>(1, options.max_rows);
  LC_ASSIGN_OR_RETURN(p.size_bytes, impl.size_bytes(c));
  LC_ASSIGN_OR_RETURN(p.elements, element_count(c.shape));
  p.elem_bits = dtype_bits(c.dtype);
  p.cell_bits = p.elem_bits % 8 == 0 || 8 % p.elem_bits == 0 ? p.elem_bits : 8;
  if (const LayoutSpec* spec = find_spec(c.layout.name)) p.dims = spec->dims;
  while (p.dims.size() < c.shape.size()) p.dims.push_back(std::to_string(p.dims.size()));
  if (auto facts = impl.describe(c); facts.ok()) {
    p.facts = *facts;
  } else if (auto ref = reference_impl().describe(c); ref.ok()) {
    p.facts = *ref;
  }
  if (p.size_bytes <= options.max_rules_bytes) {
    if (auto rules = byte_rules(c); rules.ok() && rules->size_bytes == p.size_bytes) {
      p.has_rules = true;
      p.rules = std::move(rules).value();
    }
  }

  // Logical view: the last two dimensions form a grid, the others index grids.
  const int rank = static_cast<int>(c.shape.size());
  p.col_dim = rank - 1;
  p.row_dim = rank >= 2 ? rank - 2 : -1;
  p.grid_cols = std::min<int64_t>(c.shape[static_cast<size_t>(p.col_dim)], options.max_grid);
  p.grid_rows = p.row_dim >= 0 ? std::min<int64_t>(c.shape[static_cast<size_t>(p.row_dim)], options.max_grid) : 1;
  std::string outer;
  p.grids_total = 1;
  for (int d = 0; d < p.row_dim; ++d) {
    outer += (outer.empty() ? "" : ",") + p.dims[static_cast<size_t>(d)];
    p.grids_total *= static_cast<uint64_t>(c.shape[static_cast<size_t>(d)]);
  }
  const std::string rows = p.row_dim >= 0 ? p.dims[static_cast<size_t>(p.row_dim)] : "1";
  p.view = (outer.empty() ? std::string("one grid") : "one grid per (" + outer + ")") + " of " + rows + " x " +
           p.dims[static_cast<size_t>(p.col_dim)];
  {
    Coord o(c.shape.size(), 0);
    for (uint64_t g = 0; g < std::min(p.grids_total, options.max_grids); ++g) {
      p.grid_outer.push_back(o);
      for (int d = p.row_dim - 1; d >= 0; --d) {
        if (++o[static_cast<size_t>(d)] < c.shape[static_cast<size_t>(d)]) break;
        o[static_cast<size_t>(d)] = 0;
      }
    }
  }

  // Locate the elements.
  // Large cases: a corner of the tensor (indices below `corner`, the extents
  // doubled innermost first while the box holds at most max_located elements).
  Coord corner = c.shape;
  if (p.elements > options.max_located) {
    corner.assign(c.shape.size(), 1);
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t d = c.shape.size(); d-- > 0;) {
        uint64_t box = 1;
        for (size_t k = 0; k < corner.size(); ++k) box *= static_cast<uint64_t>(k == d ? std::min(corner[k] * 2, c.shape[k]) : corner[k]);
        if (corner[d] < c.shape[d] && box <= options.max_located) {
          corner[d] = std::min(corner[d] * 2, c.shape[d]);
          grew = true;
        }
      }
    }
  }
  std::vector<uint64_t> wanted;  // row-major indices to locate
  {
    uint64_t box = 1;
    for (int64_t v : corner) box *= static_cast<uint64_t>(v);
    Coord at(c.shape.size(), 0);
    for (uint64_t k = 0; k < box; ++k) {
      wanted.push_back(index_of_coord(c.shape, at));
      for (size_t d = at.size(); d-- > 0;) {
        if (++at[d] < corner[d]) break;
        at[d] = 0;
      }
    }
    for (size_t g = 0; g < p.grid_outer.size(); ++g) {
      for (int64_t r = 0; r < p.grid_rows; ++r) {
        for (int64_t col = 0; col < p.grid_cols; ++col) {
          Coord e = p.grid_outer[g];
          if (p.row_dim >= 0) e[static_cast<size_t>(p.row_dim)] = r;
          e[static_cast<size_t>(p.col_dim)] = col;
          wanted.push_back(index_of_coord(c.shape, e));
        }
      }
    }
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  }
  auto origin = impl.offset_bits(c, Coord(c.shape.size(), 0));
  if (origin.ok() || origin.status().code() != StatusCode::kUnsupported) {
    p.located_by = "offset_bits";
    for (uint64_t i : wanted) {
      auto b = impl.offset_bits(c, coord_of_index(c.shape, i));
      if (b.ok() && *b / 8 < p.size_bytes) p.offsets.emplace_back(i, *b);
    }
  } else {
    p.located_by = "pack";
    LC_ASSIGN_OR_RETURN(uint64_t logical, logical_bytes(c));
    if (p.size_bytes <= options.max_pack_bytes && logical <= options.max_pack_bytes) {
      std::vector<uint64_t> all(p.elements, UINT64_MAX);
      LC_RETURN_IF_ERROR(locate_by_pack(c, impl, p.elements, p.size_bytes, &all));
      for (uint64_t i = 0; i < p.elements; ++i) {
        if (all[i] != UINT64_MAX) p.offsets.emplace_back(i, all[i]);
      }
    }
  }
  p.located = p.offsets.size();

  choose_physical_view(&p);
  // Cells of the window.
  std::map<uint64_t, size_t> group_of;  // first byte -> group
  for (size_t g = 0; g < p.groups.size(); ++g) {
    const auto& pg = p.groups[g];
    std::vector<PhysCell> cells(pg.shown_bytes * 8 / p.cell_bits + (pg.shown_bytes * 8 % p.cell_bits ? 1 : 0));
    for (size_t k = 0; k < cells.size(); ++k) {
      PhysCell& cell = cells[k];
      cell.bit = pg.first_byte * 8 + k * p.cell_bits;
      const ByteRegion* r = p.has_rules ? p.rules.find(cell.bit / 8) : nullptr;
      cell.located = false;
      if (r) {
        cell.kind = r->kind;
        cell.rule = r->rule;
        cell.located = r->kind != ByteKind::kElement;
      }
    }
    p.group_cells.push_back(std::move(cells));
    group_of[pg.first_byte] = g;
  }
  for (const auto& [i, b] : p.offsets) {
    auto it = group_of.upper_bound(b / 8);
    if (it == group_of.begin()) continue;
    --it;
    const auto& pg = p.groups[it->second];
    if (b / 8 >= pg.first_byte + pg.shown_bytes) continue;
    PhysCell& cell = p.group_cells[it->second][(b - pg.first_byte * 8) / p.cell_bits];
    if (cell.element < 0) cell.element = static_cast<int64_t>(i);  // offsets go by element: the first stays
    cell.last_element = static_cast<int64_t>(i);
    ++cell.sharers;
    cell.kind = ByteKind::kElement;
    cell.located = true;
  }
  if (p.located < p.elements) {
    const std::string why = p.located_by == "pack"
                                ? "the case is too large to locate through pack (limit " +
                                      std::to_string(options.max_pack_bytes) + " bytes)"
                                : "located: the corner below (" + shape_to_string(corner) + ") and the grids shown";
    p.elided += (p.elided.empty() ? "" : "; ") + std::to_string(p.elements - p.located) + " of " +
                std::to_string(p.elements) + " elements not located (" + why + "), drawn as ?";
  }
  if (!p.has_rules) {
    p.elided += std::string(p.elided.empty() ? "" : "; ") + "bytes that hold no located element drawn as ? (" +
                (p.size_bytes > options.max_rules_bytes
                     ? "byte rules not read for cases over " + std::to_string(options.max_rules_bytes) + " bytes)"
                     : "the reference has no byte rules for this case)");
  }
  return p;
}

std::string failure_caption(const std::string& message) {
  std::string diag, findings;
  size_t pos = 0;
  int lines = 0;
  while (pos < message.size()) {
    size_t end = message.find('\n', pos);
    if (end == std::string::npos) end = message.size();
    std::string line = message.substr(pos, end - pos);
    pos = end + 1;
    size_t s = line.find_first_not_of(' ');
    if (s == std::string::npos) continue;
    line = line.substr(s);
    if (line.rfind("diagnosis: ", 0) == 0) {
      diag += (diag.empty() ? "" : "; ") + line.substr(11);
    } else if (line.rfind("repro:", 0) != 0 && line.rfind("FAIL ", 0) != 0 && lines < 3) {
      findings += (findings.empty() ? "" : "; ") + line;
      ++lines;
    }
  }
  return diag.empty() ? findings : diag;
}

}  // namespace layoutcheck
