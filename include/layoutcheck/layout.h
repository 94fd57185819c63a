// layoutcheck/layout.h — a layout is a value with one text form.
//
// A layout descriptor names a registered layout and its parameters:
//
//   tpu.aligned(npus=4,lmem=1024,addr=256)
//   family.name(key=value,...)
//
// Parameters absent from the text take their defaults; to_string() prints the
// parameters that differ from their defaults, in the layout's declared order,
// so parse(to_string(d)) == d and to_string(parse(s)) is the canonical text.
// A family may also accept a vendor notation (e.g. ChunkedMemoryLayout<...>)
// through LayoutSpec::parse_notation.
//
// A Case is what every implementation is asked about: a layout, the logical
// element type and the logical shape (dense row-major on the logical side).
//
//   auto c = parse_case("tpu.compact(npus=4,lmem=1024)", "fp32", "2,3,4,5");
//   to_string(*c) == "tpu.compact(npus=4,lmem=1024) --dtype fp32 --shape 2,3,4,5"
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "layoutcheck/dtype.h"
#include "layoutcheck/status.h"

namespace layoutcheck {

using Shape = std::vector<int64_t>;
using Coord = std::vector<int64_t>;

// Parameters, resolved (defaults filled in), keyed by name.
using ParamMap = std::map<std::string, std::string>;

struct Layout {
  std::string name;  // "tpu.aligned"
  ParamMap params;   // every declared parameter, resolved
  bool operator==(const Layout& o) const { return name == o.name && params == o.params; }
  bool operator!=(const Layout& o) const { return !(*this == o); }

  // Typed access to resolved parameters (the spec validated them on parse).
  int64_t get_int(const std::string& key) const;
  const std::string& get(const std::string& key) const;
  std::string family() const { return name.substr(0, name.find('.')); }
};

enum class ParamKind { kInt, kEnum, kText };

struct ParamSpec {
  std::string key;
  ParamKind kind = ParamKind::kInt;
  // Default value; may depend on other resolved parameters (e.g. a chip preset).
  std::function<std::string(const ParamMap&)> default_value;
  std::vector<std::string> choices;  // kEnum
  int64_t min = INT64_MIN, max = INT64_MAX;  // kInt
  std::string doc;
};

// What a registered layout is: its name, the document section it comes from,
// its parameters and its logical dimensions.
struct LayoutSpec {
  std::string name;          // "tpu.aligned"
  std::string document;      // "sophgo-tpu-okkernel-local-memory.txt"
  std::string section;       // "128-Byte Aligned Layout"
  std::string summary;       // one line for `layoutcheck list`
  std::vector<std::string> dims;  // logical dimension names, e.g. {"N","C","H","W"}
  std::vector<ParamSpec> params;  // in canonical order
  // Optional vendor notation: returns nullopt when the text is not of this
  // notation, a Layout or an error otherwise.
  std::function<std::optional<Result<Layout>>(std::string_view)> parse_notation;
  // Optional printer for layouts that have a vendor notation.
  std::function<std::string(const Layout&)> format;
  // Draws a random case for checks, properties and fuzzers. Cases need not all
  // be valid; the reference decides. `size_class` 0 = tiny .. 3 = large.
  std::function<struct Case(std::mt19937_64&, int size_class)> random_case;
  // Boundary-class shapes around every block size of this layout (for check).
  std::function<std::vector<struct Case>()> boundary_cases;
  // Optional: the bits of a logical element that the physical form keeps, when
  // a format stores elements in fields narrower than the dtype (the 2- and
  // 10-bit fields of packed pixel words). Values must fit their field: pack
  // rejects the others, unpack zero-extends. Absent: every bit of the dtype.
  std::function<uint32_t(const struct Case&, const Coord&)> value_bits;
  // Optional: shapes of any rank from 1 to dims.size() (a layout of any
  // dimension; dims name the dimensions of the largest rank).
  bool any_rank = false;
  // Optional: for layouts that read one physical element at several logical
  // coordinates (a broadcast view, stride 0), the row-major index of the
  // element whose value the element at `index` must carry (at most `index`).
  // Test inputs give such elements one value; absent: every element is its own.
  std::function<uint64_t(const struct Case&, uint64_t index)> value_source;
};

struct Case {
  Layout layout;
  DType dtype = DType::kInt8;
  Shape shape;
  bool operator==(const Case& o) const {
    return layout == o.layout && dtype == o.dtype && shape == o.shape;
  }
};

// ---- registry -------------------------------------------------------------
// All layouts of all families, in registration order.
const std::vector<LayoutSpec>& layout_specs();
const LayoutSpec* find_spec(std::string_view name);

// ---- text ------------------------------------------------------------------
Result<Layout> parse_layout(std::string_view text);
std::string to_string(const Layout& layout);
Result<Shape> parse_shape(std::string_view text, std::string_view what = "shape");  // "2,3,4,5"; `what` names it in errors
std::string shape_to_string(const Shape& shape);    // "2,3,4,5"
Result<Case> parse_case(std::string_view layout, std::string_view dtype, std::string_view shape);
// "LAYOUT --dtype D --shape a,b,c" (the CLI's argument form)
std::string to_string(const Case& c);
// Builds a Layout from a name and explicit parameters (unlisted = defaults).
Result<Layout> make_layout(std::string_view name, const ParamMap& given = {});

// ---- logical tensor --------------------------------------------------------
// Number of elements (checked), and the dense row-major logical buffer size.
Result<uint64_t> element_count(const Shape& shape);
Result<uint64_t> logical_bytes(const Case& c);
// Row-major index <-> coordinate.
Coord coord_of_index(const Shape& shape, uint64_t index);
uint64_t index_of_coord(const Shape& shape, const Coord& coord);
// Checks the shape has the layout's rank and positive extents.
Status check_shape(const LayoutSpec& spec, const Shape& shape);
// Checks a logical coordinate has the shape's rank and lies inside it.
Status check_coord(const Case& c, const Coord& at);
// Bits of the element at `at` that the physical form keeps (LayoutSpec::value_bits),
// dtype_bits(c.dtype) for layouts that keep every bit.
uint32_t value_bits(const Case& c, const Coord& at);

}  // namespace layoutcheck
