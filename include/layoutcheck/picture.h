// layoutcheck/picture.h — a layout as a picture: where every element of a case
// lands in physical memory, drawn as text, SVG or a self-contained HTML page.
//
//   Case c = *parse_case("nvdla.feature", "int8", "40,2,3");
//   Picture p = *make_picture(c, reference_impl());
//   std::string text = render_text(p);   // logical grids of byte offsets + physical rows
//   std::string svg = render_svg(p);     // physical memory the way the document draws it
//   std::string html = render_html(p);   // the SVG with hover, click and a slider
//
// Elements are located with the implementation's offset_bits, or, when it has
// none, by packing: the logical tensor is packed once with every element 0,
// once with every kept bit 1, and once per bit of the element's row-major index
// (the element is all ones when the bit is set); a physical bit that follows
// the element bits belongs to the element whose index it spells. The kind of
// every other byte (fixed or free padding) is the document's (byte_rules()).
//
// The view is presentation only: the row width and grouping come from facts
// describe() reports (NPU count and local memory size, atom and chunk bytes,
// channel blocks, fractals). Large cases are capped: the physical picture shows
// a window of the first rows of each column and states the bytes it elides,
// the logical grids show their first rows and columns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layoutcheck/byte_rules.h"
#include "layoutcheck/impl.h"
#include "layoutcheck/layout.h"
#include "layoutcheck/status.h"

namespace layoutcheck {

struct PictureOptions {
  uint64_t max_rows = 64;            // physical rows drawn per column
  uint64_t max_located = 1u << 18;   // elements located through offset_bits (a corner of larger cases)
  uint64_t max_pack_bytes = 1u << 20;   // largest case located through pack
  uint64_t max_rules_bytes = 32u << 20;  // largest case whose byte rules are read (a TPU image)
  int64_t max_grid = 32;             // logical grid rows and columns shown
  uint64_t max_grids = 64;           // logical grids (outer indices) kept
};

// One cell of the physical picture: `cell_bits` bits at `bit`.
struct PhysCell {
  uint64_t bit = 0;
  int64_t element = -1;  // row-major index of the (first) element it holds, -1 for none
  int64_t last_element = -1;  // the last of the elements it holds (a broadcast or overlapping view)
  uint64_t sharers = 0;       // how many elements it holds
  ByteKind kind = ByteKind::kFree;
  uint32_t rule = 0;     // index into Picture::rules.rules (valid when has_rules)
  bool located = true;   // false: an element byte whose element was not located (budget)
};

// A run of physical rows drawn together: a column of the picture (an NPU) or
// a group of rows (a chunk, a fractal, an atom line) stacked in address order.
struct PhysGroup {
  std::string label;     // "NPU 0", "chunk 3", "line 1"
  uint64_t first_byte = 0, bytes = 0;  // the group's address range
  uint64_t shown_bytes = 0;            // bytes of it drawn (the window)
};

struct Picture {
  Case c;
  std::string impl;
  std::string family;
  uint64_t size_bytes = 0;
  uint32_t elem_bits = 8;
  uint32_t cell_bits = 8;   // one physical cell per element slot (at least a byte)
  uint64_t elements = 0;
  std::vector<std::string> dims;

  // Logical view: grids of rows x cols over dims (row_dim, col_dim); the other
  // dims are the outer index of a grid.
  int row_dim = -1, col_dim = -1;  // -1: a dimension of extent 1 (a single row/column)
  std::string view;                // "one grid per (N,C) of H x W"
  std::vector<Coord> grid_outer;   // outer coordinate of each kept grid (col/row entries 0)
  uint64_t grids_total = 0;
  int64_t grid_rows = 1, grid_cols = 1;   // shown
  std::vector<std::pair<uint64_t, uint64_t>> offsets;  // (row-major index, bit offset), sorted by index
  std::string located_by;             // "offset_bits" or "pack"
  uint64_t located = 0;               // elements located

  // Physical view.
  std::string physical_view;       // "one column per NPU, addresses going down"
  bool columns = false;            // groups side by side (TPU) instead of stacked
  uint64_t row_bytes = 32;
  uint64_t max_rows = 64;          // rows drawn per column, or in all for stacked groups
  std::vector<PhysGroup> groups;
  std::vector<std::vector<PhysCell>> group_cells;  // per group, row-major cells of the window
  std::string elided;              // "" or what the window leaves out
  bool has_rules = false;
  ByteRules rules;
  std::vector<Fact> facts;         // describe's facts (when it answers)

  // The element's bit offset; UINT64_MAX when it was not located.
  uint64_t offset_of(uint64_t element) const;
  std::string coord_text(int64_t element) const;  // "(0,2,1,3)"
  // The coordinate a cell holds, with * in each dimension where the elements
  // sharing it differ ("*,0" for a row broadcast down dimension 0); "" for none.
  std::string cell_coord(const PhysCell& cell) const;
  uint64_t cell_count() const;                    // physical cells drawn
};

// Locates every element of the case in `impl` (supports() must be ok) and
// builds the views. The byte kinds are the reference's byte rules.
Result<Picture> make_picture(const Case& c, const Impl& impl, const PictureOptions& options = {});

std::string render_text(const Picture& p);
std::string render_svg(const Picture& p);
std::string render_html(const Picture& p);

// A failure: the expected and actual placement side by side, cells whose
// element differs outlined, the caption (the checker's diagnosis) on top.
std::string render_failure_svg(const Picture& expected, const Picture& actual, const std::string& caption);
std::string render_failure_html(const Picture& expected, const Picture& actual, const std::string& caption);

// The caption of a failure picture from a checker message: its diagnosis
// lines, else its first lines of findings.
std::string failure_caption(const std::string& check_message);

}  // namespace layoutcheck
