// Pictures of a layout (layoutcheck/picture.h): elements located through pack
// agree with offset_bits on every registered layout, every located element is
// drawn, and a wrong placement shows up as outlined cells.
#include <fstream>
#include <sstream>

#include "layoutcheck/picture.h"
#include "support.h"

namespace layoutcheck {
namespace {

// The cases of tests/show/cases.txt: NAME|LAYOUT|DTYPE|SHAPE, one per registered layout.
std::vector<Case> show_cases() {
  std::ifstream in(std::string(LAYOUTCHECK_SOURCE_DIR) + "/tests/show/cases.txt");
  std::vector<Case> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string part; std::getline(ss, part, '|');) f.push_back(part);
    if (f.size() == 4) out.push_back(testing::must_case(f[1], f[2], f[3]));
  }
  return out;
}

// An implementation without offset_bits (and, optionally, with two elements swapped).
class Delegate : public Impl {
 public:
  explicit Delegate(const Impl& base, bool swap_first_two = false) : base_(base), swap_(swap_first_two) {}
  std::string name() const override { return "delegate"; }
  Status supports(const Case& c) const override { return base_.supports(c); }
  Result<uint64_t> size_bytes(const Case& c) const override { return base_.size_bytes(c); }
  Result<uint64_t> offset_bits(const Case&, const Coord&) const override {
    return Status::unsupported("no offset_bits");
  }
  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    if (!swap_) return base_.pack(c, logical, logical_size, physical, physical_size);
    // Exchange the first two elements (whole bytes) before packing.
    std::vector<uint8_t> x(static_cast<const uint8_t*>(logical), static_cast<const uint8_t*>(logical) + logical_size);
    const size_t b = dtype_bits(c.dtype) / 8;
    for (size_t i = 0; i < b && 2 * b <= x.size(); ++i) std::swap(x[i], x[b + i]);
    return base_.pack(c, x.data(), x.size(), physical, physical_size);
  }
  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    return base_.unpack(c, physical, physical_size, logical, logical_size);
  }

 private:
  const Impl& base_;
  bool swap_;
};

TEST(Picture, PackLocatesWhatOffsetBitsSaysOnEveryLayout) {
  const auto cases = show_cases();
  ASSERT_EQ(cases.size(), layout_specs().size());
  for (const Case& c : cases) {
    SCOPED_TRACE(to_string(c));
    auto by_offsets = make_picture(c, reference_impl());
    ASSERT_TRUE(by_offsets.ok()) << by_offsets.status().message();
    Delegate no_offsets(reference_impl());
    auto by_pack = make_picture(c, no_offsets);
    ASSERT_TRUE(by_pack.ok()) << by_pack.status().message();
    EXPECT_EQ(by_offsets->located_by, "offset_bits");
    EXPECT_EQ(by_pack->located_by, "pack");
    EXPECT_EQ(by_offsets->located, by_offsets->elements);
    EXPECT_EQ(by_pack->offsets, by_offsets->offsets);
    // Every element inside the window is drawn in exactly one cell.
    uint64_t drawn = 0;
    for (const auto& g : by_offsets->group_cells) {
      for (const auto& cell : g) drawn += cell.element >= 0;
    }
    uint64_t in_window = 0;
    for (const auto& [e, bit] : by_offsets->offsets) {
      for (const auto& g : by_offsets->groups) in_window += bit / 8 >= g.first_byte && bit / 8 < g.first_byte + g.shown_bytes;
    }
    EXPECT_EQ(drawn, in_window);
    const std::string svg = render_svg(*by_offsets);
    // data-cells counts the cell rectangles (a run of padding in a row is one).
    const size_t at = svg.find("data-cells=\"");
    ASSERT_NE(at, std::string::npos);
    size_t rects = 0;
    for (size_t r = svg.find("<rect class=\"cell"); r != std::string::npos; r = svg.find("<rect class=\"cell", r + 1)) ++rects;
    EXPECT_EQ(std::stoull(svg.substr(at + 12)), rects);
    EXPECT_LE(rects, by_offsets->cell_count());
    EXPECT_EQ(render_text(*by_offsets), render_text(*by_offsets));
  }
}

TEST(Picture, AWrongPlacementIsOutlined) {
  const Case c = testing::must_case("mge.nchw4", "int8", "1,6,2,3");
  auto expected = make_picture(c, reference_impl());
  ASSERT_TRUE(expected.ok());
  Delegate same(reference_impl()), swapped(reference_impl(), true);
  auto good = make_picture(c, same);
  auto bad = make_picture(c, swapped);
  ASSERT_TRUE(good.ok() && bad.ok());
  EXPECT_EQ(render_failure_svg(*expected, *good, "").find("cell differs"), std::string::npos);
  const std::string svg = render_failure_svg(*expected, *bad, "elements 0 and 1 swapped");
  size_t outlined = 0;
  for (size_t at = svg.find("cell differs"); at != std::string::npos; at = svg.find("cell differs", at + 1)) ++outlined;
  EXPECT_EQ(outlined, 4u);  // two cells in each of the two placements
  EXPECT_NE(svg.find("elements 0 and 1 swapped"), std::string::npos);
}

TEST(Picture, LargeCasesAreCappedAndSayWhat) {
  const Case c = testing::must_case("mge.nchw4", "int8", "1,64,1024,1024");
  PictureOptions o;
  o.max_rows = 8;
  auto p = make_picture(c, optimized_impl(), o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_LE(p->cell_count(), 8 * p->row_bytes);
  EXPECT_NE(p->elided.find("not drawn"), std::string::npos) << p->elided;
  EXPECT_LE(p->located, o.max_located + 64 * 32 * 32);
}

TEST(Picture, FailureCaptionIsTheDiagnosis) {
  EXPECT_EQ(failure_caption("FAIL x\n  offset of (0,0,0,1)\n  diagnosis: dimensions H and W look swapped\n  repro: y\n"),
            "dimensions H and W look swapped");
  EXPECT_EQ(failure_caption("FAIL x\n  size_bytes: expected 4, actual 8\n  repro: y\n"), "size_bytes: expected 4, actual 8");
}

}  // namespace
}  // namespace layoutcheck
