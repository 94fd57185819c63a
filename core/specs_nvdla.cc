// Registration of the NVDLA in-memory data formats: names, parameters,
// document sections and case generators. No layout arithmetic lives here
// beyond what the generators need to propose mostly-valid cases.
#include <algorithm>

#include "core/families.h"

namespace layoutcheck {
namespace {

constexpr const char* kDoc = "nvdla-in-memory-data-formats.txt";
constexpr int64_t kAtomBytes = 32;  // nvdla feature data: 1x1x32-byte atom

ParamSpec int_param(std::string key, int64_t min, int64_t max, std::string def, std::string doc) {
  ParamSpec p;
  p.key = std::move(key);
  p.kind = ParamKind::kInt;
  p.min = min;
  p.max = max;
  p.default_value = [def](const ParamMap&) { return def; };
  p.doc = std::move(doc);
  return p;
}

int64_t pick(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

Case make_case(const std::string& name, const ParamMap& params, DType dtype, Shape shape) {
  Case c;
  auto layout = make_layout(name, params);
  c.layout = layout.ok() ? *layout : *make_layout(name);
  c.dtype = dtype;
  c.shape = std::move(shape);
  return c;
}

DType draw_precision(std::mt19937_64& rng) {
  static const DType kTypes[] = {DType::kInt8, DType::kInt16, DType::kFp16};
  if (pick(rng, 0, 40) == 0) return DType::kFp32;  // not an NVDLA precision
  return kTypes[pick(rng, 0, 2)];
}

int64_t elem_bytes(DType t) { return dtype_bits(t) / 8; }

// ---- feature data ------------------------------------------------------------

Case feature_case(std::mt19937_64& rng, int size_class) {
  const DType t = draw_precision(rng);
  const int64_t scale = size_class + 1;
  const int64_t epa = kAtomBytes / std::max<int64_t>(1, elem_bytes(t));
  Shape s = {pick(rng, 1, 3 * epa * scale), pick(rng, 1, 3 * scale), pick(rng, 1, 5 * scale)};
  if (pick(rng, 0, 6) == 0) s[1] = s[2] = 1;  // the 1x1xC cube
  ParamMap p;
  int64_t line = s[2] * kAtomBytes;
  if (pick(rng, 0, 2) == 0) {
    line += kAtomBytes * pick(rng, 0, 3);
    if (pick(rng, 0, 25) == 0) line += pick(rng, -40, 40);  // sometimes misaligned or too small
    p["line_stride"] = std::to_string(std::max<int64_t>(0, line));
  }
  if (pick(rng, 0, 2) == 0) {
    int64_t surface = s[1] * line + kAtomBytes * pick(rng, 0, 3);
    if (pick(rng, 0, 25) == 0) surface += pick(rng, -40, 40);
    p["surface_stride"] = std::to_string(std::max<int64_t>(0, surface));
  }
  if (pick(rng, 0, 4) == 0) p["addr"] = std::to_string(kAtomBytes * pick(rng, 0, 1000) + (pick(rng, 0, 20) == 0 ? 8 : 0));
  return make_case("nvdla.feature", p, t, s);
}

std::vector<Case> feature_boundaries() {
  std::vector<Case> out;
  for (DType t : {DType::kInt8, DType::kInt16, DType::kFp16}) {
    const int64_t epa = kAtomBytes / elem_bytes(t);
    for (int64_t c : {int64_t{1}, epa - 1, epa, epa + 1, 2 * epa, 2 * epa + 3}) {  // c_lt/eq/gt_atom
      out.push_back(make_case("nvdla.feature", {}, t, {c, 3, 5}));
      out.push_back(make_case("nvdla.feature", {}, t, {c, 1, 1}));
      out.push_back(make_case("nvdla.feature", {{"line_stride", "224"}, {"surface_stride", "800"}}, t, {c, 3, 5}));
    }
    out.push_back(make_case("nvdla.feature", {{"line_stride", "96"}}, t, {epa + 1, 4, 3}));
    out.push_back(make_case("nvdla.feature", {{"surface_stride", "512"}}, t, {2 * epa, 2, 7}));
  }
  return out;
}

// ---- weights -----------------------------------------------------------------

Case weight_dc_case(std::mt19937_64& rng, int size_class) {
  const DType t = draw_precision(rng);
  const int64_t group = dtype_bits(t) == 8 ? 32 : 16;
  const int64_t scale = size_class + 1;
  Shape s = {pick(rng, 1, 2 * group * scale), pick(rng, 1, 70 * scale), pick(rng, 1, 3 + size_class),
             pick(rng, 1, 3 + size_class)};
  if (size_class >= 2 && pick(rng, 0, 1)) s[1] = pick(rng, 1, 8);
  ParamMap p;
  if (pick(rng, 0, 4) == 0) p["addr"] = std::to_string(256 * pick(rng, 0, 100) + (pick(rng, 0, 20) == 0 ? 32 : 0));
  return make_case("nvdla.weight.dc", p, t, s);
}

std::vector<Case> weight_dc_boundaries() {
  std::vector<Case> out;
  for (DType t : {DType::kInt8, DType::kInt16, DType::kFp16}) {
    const int64_t group = dtype_bits(t) == 8 ? 32 : 16;
    for (int64_t k : {int64_t{1}, group - 1, group, group + 1, 2 * group + 5}) {   // k_lt/eq/gt_group
      for (int64_t c : {int64_t{3}, int64_t{63}, int64_t{64}, int64_t{65}, int64_t{130}}) {  // c_lt/eq/gt_cube
        out.push_back(make_case("nvdla.weight.dc", {}, t, {k, c, 3, 3}));
      }
    }
    out.push_back(make_case("nvdla.weight.dc", {}, t, {group, 192 / elem_bytes(t), 3, 3}));  // the 3x3x192-byte group
    out.push_back(make_case("nvdla.weight.dc", {}, t, {1, 1, 1, 1}));
    out.push_back(make_case("nvdla.weight.dc", {}, t, {group + 1, 5, 1, 7}));
  }
  return out;
}

}  // namespace

void add_nvdla_specs(std::vector<LayoutSpec>* specs) {
  LayoutSpec feature;
  feature.name = "nvdla.feature";
  feature.document = kDoc;
  feature.section = "Feature Data Format";
  feature.summary = "C,H,W cube in 1x1x32-byte atoms, C' -> W -> H -> C surfaces, pitch linear";
  feature.dims = {"C", "H", "W"};
  feature.params = {
      int_param("line_stride", 0, INT64_MAX, "0", "bytes from line h to h+1; 0 = packed (W * 32)"),
      int_param("surface_stride", 0, INT64_MAX, "0", "bytes from surface s to s+1; 0 = packed (H * line stride)"),
      int_param("addr", 0, INT64_MAX, "0", "start address (checked for its 32-byte alignment only)"),
  };
  feature.random_case = feature_case;
  feature.boundary_cases = feature_boundaries;
  specs->push_back(feature);

  LayoutSpec dc;
  dc.name = "nvdla.weight.dc";
  dc.document = kDoc;
  dc.section = "Basic Weight for Direct Convolution";
  dc.summary = "K,C,H,W kernels in groups of 32 (int8) / 16, 1x1x64-element cubes, C' -> K -> W -> H -> C";
  dc.dims = {"K", "C", "H", "W"};
  dc.params = {int_param("addr", 0, INT64_MAX, "0", "start address (checked for its 256-byte alignment only)")};
  dc.random_case = weight_dc_case;
  dc.boundary_cases = weight_dc_boundaries;
  specs->push_back(dc);
}

}  // namespace layoutcheck
