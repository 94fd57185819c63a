// Renderers of a Picture (layoutcheck/picture.h): text, SVG and HTML. Output
// is deterministic (integer geometry, no time or host in it) and
// self-contained (no network: styles and script are inline).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "layoutcheck/picture.h"

namespace layoutcheck {
namespace {

constexpr size_t kTextGrids = 4;     // logical grids printed in text
constexpr size_t kSvgGrids = 4;      // logical grids drawn side by side in SVG

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t') out += '?';
        else out += ch;
    }
  }
  return out;
}

std::string offset_text(uint64_t bits) {
  if (bits == UINT64_MAX) return "?";
  return std::to_string(bits / 8) + (bits % 8 ? "+" + std::to_string(bits % 8) + "b" : "");
}

char pad_char(const PhysCell& c) {
  if (c.element >= 0) return 0;
  if (!c.located) return '?';
  return c.kind == ByteKind::kFixed ? '.' : c.kind == ByteKind::kFree ? '~' : '?';
}

std::string rule_id(const Picture& p, const PhysCell& c) {
  if (!p.has_rules || c.rule >= p.rules.rules.size()) return "";
  return p.rules.rules[c.rule].id;
}

std::string header_line(const Picture& p) {
  return to_string(p.c);
}

std::string summary_line(const Picture& p) {
  return "impl " + p.impl + "; " + std::to_string(p.size_bytes) + " bytes; " + std::to_string(p.elements) +
         " elements of " + std::to_string(p.elem_bits) + " bits; located by " + p.located_by;
}

Coord grid_coord(const Picture& p, size_t g, int64_t r, int64_t col) {
  Coord at = p.grid_outer[g];
  if (p.row_dim >= 0) at[static_cast<size_t>(p.row_dim)] = r;
  at[static_cast<size_t>(p.col_dim)] = col;
  return at;
}

std::string outer_text(const Picture& p, size_t g) {
  if (p.row_dim <= 0) return "";
  std::string names, vals;
  for (int d = 0; d < p.row_dim; ++d) {
    names += (d ? "," : "") + p.dims[static_cast<size_t>(d)];
    vals += (d ? "," : "") + std::to_string(p.grid_outer[g][static_cast<size_t>(d)]);
  }
  return "(" + names + ") = (" + vals + ")";
}

// ---- colours ----------------------------------------------------------------
std::string hsl_hex(int h, int s, int l) {
  const double S = s / 100.0, L = l / 100.0;
  const double C = (1 - std::abs(2 * L - 1)) * S;
  const double Hp = (h % 360) / 60.0;
  const double X = C * (1 - std::abs(Hp - 2 * static_cast<int>(Hp / 2) - 1));
  double r = 0, g = 0, b = 0;
  if (Hp < 1) r = C, g = X;
  else if (Hp < 2) r = X, g = C;
  else if (Hp < 3) g = C, b = X;
  else if (Hp < 4) g = X, b = C;
  else if (Hp < 5) r = X, b = C;
  else r = C, b = X;
  const double m = L - C / 2;
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>((r + m) * 255 + 0.5),
                static_cast<int>((g + m) * 255 + 0.5), static_cast<int>((b + m) * 255 + 0.5));
  return buf;
}

// One hue per grid (channel block), shades by spatial position within it.
std::string element_colour(const Picture& p, int64_t e) {
  const Coord at = coord_of_index(p.c.shape, static_cast<uint64_t>(e));
  uint64_t g = 0;
  for (int d = 0; d < p.row_dim; ++d) g = g * static_cast<uint64_t>(p.c.shape[static_cast<size_t>(d)]) + static_cast<uint64_t>(at[static_cast<size_t>(d)]);
  const int64_t rows = p.row_dim >= 0 ? p.c.shape[static_cast<size_t>(p.row_dim)] : 1;
  const int64_t cols = p.c.shape[static_cast<size_t>(p.col_dim)];
  const int64_t r = p.row_dim >= 0 ? at[static_cast<size_t>(p.row_dim)] : 0;
  const int64_t c = at[static_cast<size_t>(p.col_dim)];
  int hue, light;
  if (p.grids_total > 1) {
    hue = static_cast<int>((g * 47) % 360);
    light = 42 + static_cast<int>(((r * cols + c) * 40) / std::max<int64_t>(1, rows * cols));
  } else {
    hue = static_cast<int>((r * 300) / std::max<int64_t>(1, rows));
    light = 45 + static_cast<int>((c * 35) / std::max<int64_t>(1, cols));
  }
  return hsl_hex(hue, 65, light);
}

// ---- text ---------------------------------------------------------------------
std::string pad_left(const std::string& s, size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }
std::string pad_right(const std::string& s, size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }

}  // namespace

std::string render_text(const Picture& p) {
  std::ostringstream out;
  out << "layoutcheck show: " << header_line(p) << "\n" << summary_line(p) << "\n";
  if (!p.elided.empty()) out << "capped: " << p.elided << "\n";
  // Logical grids.
  out << "\nlogical: " << p.view << "; each cell is the element's byte offset (+bits)\n";
  const int64_t full_rows = p.row_dim >= 0 ? p.c.shape[static_cast<size_t>(p.row_dim)] : 1;
  const int64_t full_cols = p.c.shape[static_cast<size_t>(p.col_dim)];
  const std::string rname = p.row_dim >= 0 ? p.dims[static_cast<size_t>(p.row_dim)] : "";
  const std::string cname = p.dims[static_cast<size_t>(p.col_dim)];
  for (size_t g = 0; g < std::min(kTextGrids, p.grid_outer.size()); ++g) {
    std::vector<std::vector<std::string>> cells(static_cast<size_t>(p.grid_rows));
    size_t w = std::to_string(p.grid_cols - 1).size();
    for (int64_t r = 0; r < p.grid_rows; ++r) {
      for (int64_t c = 0; c < p.grid_cols; ++c) {
        const uint64_t e = index_of_coord(p.c.shape, grid_coord(p, g, r, c));
        cells[static_cast<size_t>(r)].push_back(offset_text(p.offset_of(e)));
        w = std::max(w, cells[static_cast<size_t>(r)].back().size());
      }
    }
    const std::string outer = outer_text(p, g);
    if (!outer.empty()) out << outer << "\n";
    const std::string corner = rname.empty() ? "" : rname + "\\" + cname;
    const size_t lw = std::max({corner.size(), std::to_string(p.grid_rows - 1).size(), size_t{2}});
    out << pad_right(corner, lw);
    for (int64_t c = 0; c < p.grid_cols; ++c) out << " " << pad_left(std::to_string(c), w);
    if (p.grid_cols < full_cols) out << " ..";
    out << "\n";
    for (int64_t r = 0; r < p.grid_rows; ++r) {
      out << pad_right(rname.empty() ? "" : std::to_string(r), lw);
      for (const auto& s : cells[static_cast<size_t>(r)]) out << " " << pad_left(s, w);
      out << "\n";
    }
    if (p.grid_rows < full_rows) out << pad_right("..", lw) << " (rows " << p.grid_rows << ".." << full_rows - 1 << " not shown)\n";
    if (p.grid_cols < full_cols) out << "(columns " << p.grid_cols << ".." << full_cols - 1 << " not shown)\n";
  }
  if (p.grids_total > kTextGrids) out << "(" << p.grids_total - kTextGrids << " more grids not shown)\n";

  // Physical memory.
  out << "\nphysical: " << p.physical_view << "; rows of " << p.row_bytes << " bytes, one cell per " << p.cell_bits
      << " bits\n  cells: logical coordinate; . fixed padding, ~ free bytes, ? not located\n";
  bool shared = false;
  size_t w = 1;
  for (const auto& g : p.group_cells) {
    for (const auto& c : g) {
      w = std::max(w, p.cell_coord(c).size());
      shared |= c.sharers > 1;
    }
  }
  if (shared) out << "  * in a coordinate: several elements share the cell, differing there (a broadcast or overlapping view)\n";
  const uint64_t cells_per_row = p.row_bytes * 8 / p.cell_bits;
  const size_t aw = std::to_string(p.row_bytes * p.max_rows).size() + 1;
  for (size_t gi = 0; gi < p.groups.size(); ++gi) {
    const PhysGroup& g = p.groups[gi];
    const auto& cells = p.group_cells[gi];
    out << g.label << ": bytes " << g.first_byte << ".." << g.first_byte + g.bytes - 1;
    if (g.shown_bytes < g.bytes) out << " (first " << g.shown_bytes << " shown)";
    out << "\n";
    // Rows; a run of rows that hold only padding of one kind and rule is one line.
    const uint64_t rows = (cells.size() + cells_per_row - 1) / cells_per_row;
    auto uniform = [&](uint64_t r) -> std::string {
      char ch = 0;
      std::string rule;
      for (uint64_t k = r * cells_per_row; k < std::min<uint64_t>(cells.size(), (r + 1) * cells_per_row); ++k) {
        const char c = pad_char(cells[k]);
        if (c == 0 || (ch && (c != ch || rule_id(p, cells[k]) != rule))) return "";
        ch = c;
        rule = rule_id(p, cells[k]);
      }
      return std::string(1, ch) + rule;
    };
    for (uint64_t r = 0; r < rows; ++r) {
      const std::string u = uniform(r);
      uint64_t end = r;
      if (!u.empty()) {
        while (end + 1 < rows && uniform(end + 1) == u) ++end;
      }
      if (!u.empty() && end > r) {
        const char* what = u[0] == '.' ? "fixed padding" : u[0] == '~' ? "free bytes" : "not located";
        out << "  " << pad_right("+" + std::to_string(r * p.row_bytes), aw) << " .. +" << (end + 1) * p.row_bytes - 1
            << ": " << what << (u.size() > 1 ? " (" + u.substr(1) + ")" : "") << "\n";
        r = end;
        continue;
      }
      out << "  " << pad_right("+" + std::to_string(r * p.row_bytes), aw);
      for (uint64_t k = r * cells_per_row; k < std::min<uint64_t>(cells.size(), (r + 1) * cells_per_row); ++k) {
        const char c = pad_char(cells[k]);
        out << " " << pad_right(c ? std::string(1, c) : p.cell_coord(cells[k]), w);
      }
      out << "\n";
    }
  }
  // Trailing spaces carry nothing.
  std::string s = out.str(), clean;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find('\n', pos);
    if (end == std::string::npos) end = s.size();
    std::string line = s.substr(pos, end - pos);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    clean += line + "\n";
    pos = end + 1;
  }
  return clean;
}

// ---- SVG ----------------------------------------------------------------------
namespace {

struct Svg {
  std::ostringstream body;
  int width = 0, height = 0;
  uint64_t cells = 0;  // physical cell rectangles drawn
  void grow(int x, int y) {
    width = std::max(width, x);
    height = std::max(height, y);
  }
  void text(int x, int y, const std::string& s, int size = 12, const char* extra = "") {
    body << "<text x=\"" << x << "\" y=\"" << y << "\" font-size=\"" << size << "\"" << extra << ">" << xml_escape(s)
         << "</text>\n";
    grow(x + static_cast<int>(s.size()) * size * 6 / 10, y + 4);
  }
};

const char* kDefs =
    "<defs>\n"
    "<pattern id=\"fixed\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
    "<rect width=\"6\" height=\"6\" fill=\"#eeeeee\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#888888\" "
    "stroke-width=\"2\"/></pattern>\n"
    "<pattern id=\"free\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
    "<rect width=\"6\" height=\"6\" fill=\"#fdf6e3\"/><circle cx=\"3\" cy=\"3\" r=\"1\" fill=\"#b58900\"/></pattern>\n"
    "<pattern id=\"unknown\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\">"
    "<rect width=\"8\" height=\"8\" fill=\"#ffffff\"/><path d=\"M0 0L8 8M8 0L0 8\" stroke=\"#cc3333\" "
    "stroke-width=\"1\"/></pattern>\n"
    "</defs>\n";

std::string cell_fill(const Picture& p, const PhysCell& c) {
  if (c.element >= 0) return element_colour(p, c.element);
  if (!c.located) return "url(#unknown)";
  return c.kind == ByteKind::kFixed ? "url(#fixed)" : "url(#free)";
}

std::string cell_title(const Picture& p, const PhysCell& c) {
  std::string t = "byte " + offset_text(c.bit) + ": ";
  if (c.sharers > 1) {
    t += std::to_string(c.sharers) + " elements, " + p.coord_text(c.element) + " to " + p.coord_text(c.last_element);
  } else if (c.element >= 0) {
    t += "element " + p.coord_text(c.element);
  } else if (!c.located) {
    t += "element byte, element not located";
  } else {
    t += c.kind == ByteKind::kFixed ? "fixed padding" : "free byte";
  }
  if (p.has_rules && c.rule < p.rules.rules.size()) {
    const ByteRule& r = p.rules.rules[c.rule];
    t += " (rule " + r.id + ", " + r.citation() + ")";
  }
  return t;
}

// The legend: case, implementation, view, cap, swatches.
int legend(const Picture& p, Svg* s, int y, const std::string& title_prefix = "") {
  s->text(8, y, title_prefix + header_line(p), 14, " font-weight=\"bold\"");
  y += 18;
  s->text(8, y, summary_line(p), 11);
  y += 15;
  s->text(8, y, "physical: " + p.physical_view + "; rows of " + std::to_string(p.row_bytes) + " bytes", 11);
  y += 15;
  if (!p.elided.empty()) {
    s->text(8, y, "capped: " + p.elided, 11, " fill=\"#aa0000\"");
    y += 15;
  }
  int x = 8;
  auto swatch = [&](const std::string& fill, const std::string& label) {
    s->body << "<rect x=\"" << x << "\" y=\"" << y - 10 << "\" width=\"14\" height=\"12\" fill=\"" << fill
            << "\" stroke=\"#444444\" stroke-width=\"0.5\"/>\n";
    s->text(x + 18, y, label, 11);
    x += 24 + static_cast<int>(label.size()) * 7;
  };
  swatch(hsl_hex(200, 65, 55), "element (hue per grid, shade per position)");
  swatch("url(#fixed)", "fixed padding");
  swatch("url(#free)", "free bytes");
  swatch("url(#unknown)", "not located");
  return y + 12;
}

// Logical grids; returns the bottom. `all`: every kept grid stacked on one spot
// (class "grid", for the HTML slider); otherwise up to kSvgGrids side by side.
int logical_panel(const Picture& p, Svg* s, int y, bool all, bool path) {
  const int cw = std::max(14, std::min(40, 560 / static_cast<int>(std::max<int64_t>(1, p.grid_cols))));
  const int ch = 14;
  s->text(8, y, "logical: " + p.view + " (labels: byte offset)", 11);
  y += 8;
  const size_t grids = all ? p.grid_outer.size() : std::min(kSvgGrids, p.grid_outer.size());
  const int gw = cw * static_cast<int>(p.grid_cols) + 24;
  int bottom = y;
  for (size_t g = 0; g < grids; ++g) {
    const int x0 = all ? 8 : 8 + static_cast<int>(g) * gw;
    const int y0 = y + 14;
    s->body << "<g class=\"grid\" data-g=\"" << g << "\"" << (all && g ? " style=\"display:none\"" : "") << ">\n";
    const std::string outer = outer_text(p, g);
    if (!outer.empty()) s->text(x0, y0 - 2, outer, 10);
    for (int64_t r = 0; r < p.grid_rows; ++r) {
      for (int64_t c = 0; c < p.grid_cols; ++c) {
        const uint64_t e = index_of_coord(p.c.shape, grid_coord(p, g, r, c));
        const int x = x0 + static_cast<int>(c) * cw, yy = y0 + 4 + static_cast<int>(r) * ch;
        s->body << "<rect class=\"lcell\" data-e=\"" << e << "\" x=\"" << x << "\" y=\"" << yy << "\" width=\"" << cw
                << "\" height=\"" << ch << "\" fill=\"" << element_colour(p, static_cast<int64_t>(e))
                << "\" stroke=\"#ffffff\" stroke-width=\"0.5\"><title>" << xml_escape(p.coord_text(static_cast<int64_t>(e)))
                << " at byte " << offset_text(p.offset_of(e)) << "</title></rect>\n";
        const std::string label = offset_text(p.offset_of(e));
        if (static_cast<int>(label.size()) * 5 + 2 <= cw) {
          s->body << "<text x=\"" << x + cw / 2 << "\" y=\"" << yy + 10 << "\" font-size=\"8\" text-anchor=\"middle\" "
                  << "pointer-events=\"none\">" << xml_escape(label) << "</text>\n";
        }
      }
    }
    // The path through the groups (fractals, chunks) in address order.
    if (path && g == 0 && p.groups.size() > 1 && p.groups.size() <= 4096) {
      std::string points;
      for (size_t gi = 0; gi < p.groups.size(); ++gi) {
        int64_t sx = 0, sy = 0, n = 0;
        for (const auto& cell : p.group_cells[gi]) {
          if (cell.element < 0) continue;
          const Coord at = coord_of_index(p.c.shape, static_cast<uint64_t>(cell.element));
          bool in = true;
          for (int d = 0; d < p.row_dim; ++d) in &= at[static_cast<size_t>(d)] == p.grid_outer[g][static_cast<size_t>(d)];
          const int64_t r = p.row_dim >= 0 ? at[static_cast<size_t>(p.row_dim)] : 0;
          const int64_t c = at[static_cast<size_t>(p.col_dim)];
          if (!in || r >= p.grid_rows || c >= p.grid_cols) continue;
          sx += x0 + c * cw + cw / 2;
          sy += y0 + 4 + r * ch + ch / 2;
          ++n;
        }
        if (n) points += (points.empty() ? "" : " ") + std::to_string(sx / n) + "," + std::to_string(sy / n);
      }
      if (points.find(' ') != std::string::npos) {
        s->body << "<polyline class=\"path\" points=\"" << points
                << "\" fill=\"none\" stroke=\"#000000\" stroke-width=\"2.5\" stroke-opacity=\"0.75\" "
                   "stroke-linejoin=\"round\" pointer-events=\"none\"/>\n";
        const std::string first = points.substr(0, points.find(' '));
        s->body << "<circle cx=\"" << first.substr(0, first.find(',')) << "\" cy=\"" << first.substr(first.find(',') + 1)
                << "\" r=\"4\" fill=\"#000000\" pointer-events=\"none\"/>\n";
      }
    }
    s->body << "</g>\n";
    s->grow(x0 + gw, y0 + 4 + static_cast<int>(p.grid_rows) * ch);
    bottom = std::max(bottom, y0 + 4 + static_cast<int>(p.grid_rows) * ch);
  }
  if (!all && p.grid_outer.size() > grids) {
    s->text(8, bottom + 14, std::to_string(p.grids_total - grids) + " more grids not drawn", 10);
    bottom += 14;
  }
  return bottom + 16;
}

// The physical memory at (x0, y). `other`: the picture to compare with (cells
// whose element differs are outlined). Returns {right, bottom}.
std::pair<int, int> physical_panel(const Picture& p, Svg* s, int x0, int y, const Picture* other,
                                   const std::string& title, int max_width) {
  const uint64_t cpr = p.row_bytes * 8 / p.cell_bits;
  const int ncol = p.columns ? static_cast<int>(p.groups.size()) : 1;
  const int cw = std::max(4, std::min(36, max_width / std::max(1, ncol * static_cast<int>(cpr) + (ncol - 1))));
  const int ch = cw >= 10 ? 14 : 8;
  s->text(x0, y, title, 12, " font-weight=\"bold\"");
  y += 10;
  int right = x0, bottom = y;
  int gy = y;
  for (size_t gi = 0; gi < p.groups.size(); ++gi) {
    const PhysGroup& g = p.groups[gi];
    const auto& cells = p.group_cells[gi];
    const int gx = p.columns ? x0 + static_cast<int>(gi) * (static_cast<int>(cpr) * cw + cw) : x0;
    int top = p.columns ? y : gy;
    s->text(gx, top + 10, g.label + " @" + std::to_string(g.first_byte), 9);
    top += 14;
    s->body << "<g class=\"group\">\n";
    auto differs_at = [&](size_t k) {
      if (!other) return false;
      const PhysCell* o = gi < other->group_cells.size() && k < other->group_cells[gi].size()
                              ? &other->group_cells[gi][k] : nullptr;
      return !o || o->element != cells[k].element;
    };
    for (size_t k = 0; k < cells.size(); ++k) {
      const PhysCell& c = cells[k];
      const int x = gx + static_cast<int>(k % cpr) * cw;
      const int yy = top + static_cast<int>(k / cpr) * ch;
      const bool differs = differs_at(k);
      // A run of padding cells of one kind and rule within a row is one rectangle.
      size_t run = 1;
      while (c.element < 0 && !differs && k + run < cells.size() && (k + run) % cpr != 0 &&
             cells[k + run].element < 0 && cells[k + run].kind == c.kind && cells[k + run].rule == c.rule &&
             cells[k + run].located == c.located && !differs_at(k + run)) {
        ++run;
      }
      ++s->cells;
      s->body << "<rect class=\"cell" << (differs ? " differs" : "") << "\" data-e=\"" << c.element
              << "\" data-o=\"" << offset_text(c.bit) << "\" x=\"" << x << "\" y=\"" << yy << "\" width=\""
              << cw * static_cast<int>(run) << "\" height=\"" << ch << "\" fill=\"" << cell_fill(p, c)
              << "\" stroke=\"" << (differs ? "#ff0000" : "#ffffff") << "\" stroke-width=\"" << (differs ? "2" : "0.5")
              << "\"><title>" << xml_escape(cell_title(p, c))
              << (run > 1 ? " and the next " + std::to_string(run - 1) + " cell(s)" : "") << "</title></rect>\n";
      k += run - 1;
      const std::string label = p.cell_coord(c);
      if (c.element >= 0 && static_cast<int>(label.size()) * 5 + 2 <= cw) {
        s->body << "<text x=\"" << x + cw / 2 << "\" y=\"" << yy + 10 << "\" font-size=\"8\" text-anchor=\"middle\" "
                << "pointer-events=\"none\">" << xml_escape(label) << "</text>\n";
      }
    }
    s->body << "</g>\n";
    const int rows = static_cast<int>((cells.size() + cpr - 1) / cpr);
    const int gb = top + rows * ch;
    bottom = std::max(bottom, gb);
    right = std::max(right, gx + static_cast<int>(cpr) * cw);
    if (!p.columns) gy = gb + 6;
  }
  s->grow(right + 8, bottom + 8);
  return {right, bottom + 12};
}

std::string svg_document(const Svg& s, const std::string& extra_attrs) {
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << s.width + 8 << "\" height=\"" << s.height + 8
      << "\" viewBox=\"0 0 " << s.width + 8 << " " << s.height + 8 << "\" font-family=\"monospace\" data-cells=\""
      << s.cells << "\"" << extra_attrs << ">\n"
      << kDefs << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
      << s.body.str() << "</svg>\n";
  return out.str();
}

bool draws_path(const Picture& p) { return p.family == "tla" || p.family == "htp"; }

std::string svg_of(const Picture& p, bool all_grids) {
  Svg s;
  int y = legend(p, &s, 20);
  y = logical_panel(p, &s, y + 8, all_grids, draws_path(p));
  physical_panel(p, &s, 8, y + 4, nullptr,
                 "physical memory" + std::string(draws_path(p) && p.groups.size() > 1
                                                     ? " (the line above joins the " + p.groups[0].label.substr(0, p.groups[0].label.find(' ')) + "s in address order, from the dot)"
                                                     : ""),
                 p.columns ? 1400 : 900);
  return svg_document(s, "");
}

const char* kStyle =
    "body{font-family:monospace;margin:12px;background:#fafafa}"
    "#info{position:sticky;top:0;background:#ffffe0;border:1px solid #ccc;padding:4px;min-height:1.2em}"
    ".cell:hover,.lcell:hover{stroke:#000000;stroke-width:2}"
    ".cell.hl{stroke:#000000;stroke-width:3}.lcell.hl{stroke:#000000;stroke-width:3}";

const char* kScript =
    "(function(){\n"
    "var info=document.getElementById('info');\n"
    "function title(el){var t=el.querySelector('title');return t?t.textContent:'';}\n"
    "document.querySelectorAll('.cell,.lcell').forEach(function(el){\n"
    "  el.addEventListener('mouseover',function(){info.textContent=title(el);});\n"
    "  el.addEventListener('click',function(){\n"
    "    var e=el.getAttribute('data-e');var n=0;\n"
    "    document.querySelectorAll('.hl').forEach(function(h){h.classList.remove('hl');});\n"
    "    if(e==='-1')return;\n"
    "    document.querySelectorAll('[data-e=\"'+e+'\"]').forEach(function(h){h.classList.add('hl');n++;});\n"
    "    info.textContent=title(el)+' \\u2014 '+(n-1)+' physical cell(s) highlighted';\n"
    "  });\n"
    "});\n"
    "var slider=document.getElementById('grid');\n"
    "if(slider){slider.addEventListener('input',function(){\n"
    "  document.querySelectorAll('.grid').forEach(function(g){\n"
    "    g.style.display=g.getAttribute('data-g')===slider.value?'':'none';});\n"
    "  document.getElementById('gridlabel').textContent='grid '+slider.value;\n"
    "});}\n"
    "})();\n";

std::string html_page(const std::string& title, const std::string& svg, size_t grids, const std::string& note) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>" << xml_escape(title)
      << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n<div id=\"info\">" << xml_escape(note)
      << "</div>\n";
  if (grids > 1) {
    out << "<p>outer index: <input type=\"range\" id=\"grid\" min=\"0\" max=\"" << grids - 1
        << "\" value=\"0\"/> <span id=\"gridlabel\">grid 0</span></p>\n";
  }
  out << svg << "<script>\n" << kScript << "</script>\n</body>\n</html>\n";
  return out.str();
}

}  // namespace

std::string render_svg(const Picture& p) { return svg_of(p, false); }

std::string render_html(const Picture& p) {
  return html_page("layoutcheck show: " + header_line(p), svg_of(p, true), p.grid_outer.size(),
                   "hover a cell: its coordinate, byte offset and rule; click an element to highlight its bytes");
}

namespace {

std::string failure_svg(const Picture& e, const Picture& a, const std::string& caption) {
  Svg s;
  s.text(8, 20, "FAIL " + header_line(e), 14, " font-weight=\"bold\" fill=\"#aa0000\"");
  s.text(8, 38, caption.empty() ? "placements differ" : caption, 12);
  s.text(8, 54, "cells outlined in red hold a different element in the two placements", 11);
  int y = 64;
  int x = 8;
  {
    Svg probe;
    auto r = physical_panel(e, &probe, 8, y + 12, &a, "", 560);
    x = r.first + 24;
  }
  auto left = physical_panel(e, &s, 8, y + 12, &a, "expected: " + e.impl, 560);
  auto right = physical_panel(a, &s, x, y + 12, &e, "actual: " + a.impl, 560);
  int bottom = std::max(left.second, right.second);
  s.text(8, bottom + 10, "physical: " + e.physical_view + "; rows of " + std::to_string(e.row_bytes) + " bytes", 10);
  if (!e.elided.empty()) s.text(8, bottom + 24, "capped: " + e.elided, 10);
  return svg_document(s, "");
}

}  // namespace

std::string render_failure_svg(const Picture& expected, const Picture& actual, const std::string& caption) {
  return failure_svg(expected, actual, caption);
}

std::string render_failure_html(const Picture& expected, const Picture& actual, const std::string& caption) {
  return html_page("layoutcheck failure: " + header_line(expected), failure_svg(expected, actual, caption), 1,
                   caption);
}

}  // namespace layoutcheck
