// Registration of the NVDLA in-memory data formats: names, parameters,
// document sections and case generators. No layout arithmetic lives here
// beyond what the generators need to propose mostly-valid cases.
#include <algorithm>

#include "core/families.h"

namespace layoutcheck {
namespace {

constexpr const char* kDoc = "nvdla-in-memory-data-formats.txt";
constexpr int64_t kAtomBytes = 32;  // nvdla feature data: 1x1x32-byte atom

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
    // A line stride 16 bytes past the line, breaking only its 32-byte alignment:
    // the surface stride given, aligned and large enough.
    out.push_back(make_case("nvdla.feature", {{"line_stride", "176"}, {"surface_stride", "544"}}, t, {epa, 3, 5}));
  }
  return out;
}

// A multi-batch cube: feature data of N batches, a batch (cube) stride.
Case feature_batch_case(std::mt19937_64& rng, int size_class) {
  Case one = feature_case(rng, size_class);
  ParamMap p;
  for (const char* key : {"line_stride", "surface_stride", "addr"}) {
    if (one.layout.get(key) != "0") p[key] = one.layout.get(key);
  }
  const int64_t epa = kAtomBytes / std::max<int64_t>(1, elem_bytes(one.dtype));
  const int64_t C = one.shape[0], H = one.shape[1], W = one.shape[2];
  const int64_t ls = one.layout.get_int("line_stride") ? one.layout.get_int("line_stride") : W * kAtomBytes;
  const int64_t ss = one.layout.get_int("surface_stride") ? one.layout.get_int("surface_stride") : H * ls;
  if (pick(rng, 0, 1) == 0) {
    int64_t batch = (C + epa - 1) / epa * ss + kAtomBytes * pick(rng, 0, 3);
    if (pick(rng, 0, 20) == 0) batch += pick(rng, -40, 40);  // sometimes misaligned or too small
    p["batch_stride"] = std::to_string(std::max<int64_t>(0, batch));
  }
  return make_case("nvdla.feature.batch", p, one.dtype, {pick(rng, 1, 3 + 2 * size_class), C, H, W});
}

std::vector<Case> feature_batch_boundaries() {
  std::vector<Case> out;
  for (DType t : {DType::kInt8, DType::kInt16, DType::kFp16}) {
    const int64_t epa = kAtomBytes / elem_bytes(t);
    for (int64_t c : {epa - 1, epa, epa + 1}) {  // c_lt/eq/gt_atom
      for (int64_t n : {1, 2, 5}) {
        out.push_back(make_case("nvdla.feature.batch", {}, t, {n, c, 3, 5}));
        out.push_back(make_case("nvdla.feature.batch", {{"batch_stride", "1024"}}, t, {n, c, 1, 1}));
      }
    }
    out.push_back(make_case("nvdla.feature.batch", {{"line_stride", "224"}, {"surface_stride", "800"}, {"batch_stride", "1632"}},
                            t, {3, 2 * epa, 3, 5}));
    // A batch stride 16 bytes past the cube: only its 32-byte alignment broken.
    out.push_back(make_case("nvdla.feature.batch", {{"batch_stride", "496"}}, t, {2, epa, 3, 5}));
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

Case weight_image_case(std::mt19937_64& rng, int size_class) {
  const DType t = draw_precision(rng);
  const int64_t group = dtype_bits(t) == 8 ? 32 : 16;
  const int64_t ext = std::vector<int64_t>{1, 1, 2, 4}[pick(rng, 0, 3)];
  const int64_t limit = ext == 4 ? 16 : ext == 2 ? 32 : 80;
  Shape s = {pick(rng, 1, group * (size_class + 1) + 3), pick(rng, 1, 4), pick(rng, 1, 3 + 2 * size_class), 1};
  s[3] = pick(rng, 1, std::max<int64_t>(1, std::min<int64_t>(11, limit / s[1])));
  if (pick(rng, 0, 30) == 0) s[3] = 12;  // sometimes past the post-extension limit
  ParamMap p;
  if (ext != 1) p["post_extension"] = std::to_string(ext);
  if (pick(rng, 0, 40) == 0) p["post_extension"] = "3";
  return make_case("nvdla.weight.image", p, t, s);
}

std::vector<Case> weight_image_boundaries() {
  std::vector<Case> out;
  for (DType t : {DType::kInt8, DType::kInt16, DType::kFp16}) {
    const int64_t group = dtype_bits(t) == 8 ? 32 : 16;
    for (int64_t k : {int64_t{1}, group, group + 1}) {
      out.push_back(make_case("nvdla.weight.image", {}, t, {k, 3, 3, 3}));
      out.push_back(make_case("nvdla.weight.image", {}, t, {k, 4, 2, 17}));  // 68 channels: two cubes
      for (int64_t h : {1, 2, 3, 4, 5, 7, 8}) {                               // h_lt/eq/gt_ext
        out.push_back(make_case("nvdla.weight.image", {{"post_extension", "2"}}, t, {k, 3, h, 3}));
        out.push_back(make_case("nvdla.weight.image", {{"post_extension", "4"}}, t, {k, 4, h, 4}));
      }
    }
  }
  return out;
}

Case weight_winograd_case(std::mt19937_64& rng, int size_class) {
  const DType t = draw_precision(rng);
  const int64_t group = dtype_bits(t) == 8 ? 32 : 16;
  Shape s = {pick(rng, 1, group * (size_class + 1) + 5), pick(rng, 1, 40 * (size_class + 1)), 4, 4};
  if (pick(rng, 0, 30) == 0) s[2] = s[3] = 3;  // not converted yet
  return make_case("nvdla.weight.winograd", {}, t, s);
}

std::vector<Case> weight_winograd_boundaries() {
  std::vector<Case> out;
  for (DType t : {DType::kInt8, DType::kInt16, DType::kFp16}) {
    const int64_t group = dtype_bits(t) == 8 ? 32 : 16, pad = 32 / (dtype_bits(t) / 8);
    for (int64_t k : {int64_t{1}, group - 1, group, group + 1}) {
      for (int64_t c : {int64_t{1}, int64_t{3}, int64_t{4}, pad - 1, pad, pad + 1}) out.push_back(make_case("nvdla.weight.winograd", {}, t, {k, c, 4, 4}));
    }
  }
  return out;
}

Case weight_deconv_case(std::mt19937_64& rng, int size_class) {
  const DType t = draw_precision(rng);
  const int64_t group = dtype_bits(t) == 8 ? 32 : 16;
  const int64_t scale = size_class + 1;
  ParamMap p;
  const int64_t sx = pick(rng, 1, 2 + size_class), sy = pick(rng, 1, 2 + size_class);
  if (sx != 1) p["stride_x"] = std::to_string(sx);
  if (sy != 1) p["stride_y"] = std::to_string(sy);
  Shape s = {pick(rng, 1, group * scale + 3), pick(rng, 1, 70 * scale), pick(rng, 1, 2 * sy + 1), pick(rng, 1, 2 * sx + 1)};
  if (pick(rng, 0, 4) == 0) p["addr"] = std::to_string(256 * pick(rng, 0, 100) + (pick(rng, 0, 20) == 0 ? 128 : 0));
  if (pick(rng, 0, 40) == 0) p["post_extension"] = "2";
  return make_case("nvdla.weight.deconv", p, t, s);
}

std::vector<Case> weight_deconv_boundaries() {
  std::vector<Case> out;
  for (DType t : {DType::kInt8, DType::kInt16, DType::kFp16}) {
    const int64_t group = dtype_bits(t) == 8 ? 32 : 16;
    for (int64_t st : {1, 2, 3}) {
      for (int64_t r : {st - 1, st, st + 1, 2 * st + 1}) {  // kernel lt/eq/gt the stride
        if (r < 1) continue;
        ParamMap p{{"stride_x", std::to_string(st)}, {"stride_y", std::to_string(st)}};
        out.push_back(make_case("nvdla.weight.deconv", p, t, {group + 1, 3, r, r}));
        out.push_back(make_case("nvdla.weight.deconv", p, t, {1, 65, r, 1}));
      }
    }
    out.push_back(make_case("nvdla.weight.deconv", {{"stride_x", "2"}}, t, {group, 5, 3, 4}));
    out.push_back(make_case("nvdla.weight.deconv", {{"stride_y", "4"}}, t, {2, 64, 5, 2}));
  }
  return out;
}

// ---- pixel data ------------------------------------------------------------------

const std::vector<std::string>& pixel_formats() {
  static const std::vector<std::string> kFormats = {
      "T_R8", "T_R10", "T_R12", "T_R16", "T_R16_I", "T_R16_F",
      "T_A16B16G16R16", "T_X16B16G16R16", "T_A16B16G16R16_F", "T_A16Y16U16V16", "T_V16U16Y16A16", "T_A16Y16U16V16_F",
      "T_A8B8G8R8", "T_A8R8G8B8", "T_B8G8R8A8", "T_R8G8B8A8", "T_X8B8G8R8", "T_X8R8G8B8", "T_B8G8R8X8", "T_R8G8B8X8",
      "T_A2B10G10R10", "T_A2R10G10B10", "T_B10G10R10A2", "T_R10G10B10A2", "T_A2Y10U10V10", "T_V10U10Y10A2",
      "T_A8Y8U8V8", "T_V8U8Y8A8",
      "T_Y8___U8V8_N444", "T_Y8___V8U8_N444", "T_Y10___U10V10_N444", "T_Y10___V10U10_N444",
      "T_Y12___U12V12_N444", "T_Y12___V12U12_N444", "T_Y16___U16V16_N444", "T_Y16___V16U16_N444"};
  return kFormats;
}

// Generator-side facts of a format name: channels, bytes per Y pixel, dtype.
void pixel_traits(const std::string& f, int64_t* channels, int64_t* pixel_bytes, DType* t) {
  const bool planar = f.find("___") != std::string::npos;
  const bool wide = f.find("16") != std::string::npos || f.find("10") != std::string::npos ||
                    f.find("12") != std::string::npos;
  const bool packed10 = f.find("A2") != std::string::npos || f.find("10A2") != std::string::npos;
  *channels = planar ? 3 : (f.size() <= 7 ? 1 : 4);
  const int64_t component = wide && !packed10 ? 2 : 1;
  *pixel_bytes = packed10 ? 4 : planar ? component : component * *channels;
  *t = f.size() > 2 && f.substr(f.size() - 2) == "_F" && *channels == 4 ? DType::kFp16
       : component == 2 || packed10                                      ? DType::kInt16
                                                                         : DType::kInt8;
}

// The packed 2+10+10+10 formats keep, of each int16 component, the bits the
// name gives it (T_A2B10G10R10: A 2, B, G and R 10); other formats keep all.
uint32_t pixel_value_bits(const Case& c, const Coord& at) {
  const std::string& f = c.layout.get("format");
  std::vector<uint32_t> widths;
  for (size_t i = 2; i < f.size() && f[i] != '_'; ++i) {
    if (f[i] < 'A' || f[i] > 'Z') continue;
    uint32_t bits = 0;
    while (i + 1 < f.size() && f[i + 1] >= '0' && f[i + 1] <= '9') bits = bits * 10 + static_cast<uint32_t>(f[++i] - '0');
    widths.push_back(bits);
  }
  const bool packed = std::find(widths.begin(), widths.end(), 2u) != widths.end();
  const size_t ch = at.size() == 3 ? static_cast<size_t>(at[2]) : widths.size();
  if (packed) return ch < widths.size() ? widths[ch] : dtype_bits(c.dtype);
  // 10- and 12-bit components (T_R10, T_Y12___U12V12_N444, ...) are the low bits
  // of 16-bit containers; every component of such a format has that width.
  if (!widths.empty() && (widths[0] == 10 || widths[0] == 12)) return widths[0];
  return dtype_bits(c.dtype);
}

Case pixel_case(std::mt19937_64& rng, int size_class) {
  const auto& formats = pixel_formats();
  const std::string f = formats[pick(rng, 0, static_cast<int64_t>(formats.size()) - 1)];
  int64_t channels = 1, pixel_bytes = 1;
  DType t = DType::kInt8;
  pixel_traits(f, &channels, &pixel_bytes, &t);
  if (t != DType::kFp16 && pick(rng, 0, 1)) t = t == DType::kInt8 ? DType::kUInt8 : DType::kUInt16;
  if (pick(rng, 0, 40) == 0) t = DType::kFp32;
  ParamMap p{{"format", f}};
  const int64_t x_max = 32 / pixel_bytes - 1;
  const int64_t x = pick(rng, 0, 2) == 0 ? pick(rng, 0, x_max + (pick(rng, 0, 20) == 0 ? 2 : 0)) : 0;
  if (x) p["x_offset"] = std::to_string(x);
  const int64_t scale = size_class + 1;
  Shape s = {pick(rng, 1, 4 * scale), pick(rng, 1, 20 * scale), channels};
  if (pick(rng, 0, 3) == 0) p["line_stride"] = std::to_string(32 * ((x + s[1]) * pixel_bytes / 32 + pick(rng, 1, 3)));
  if (pick(rng, 0, 30) == 0) p["line_stride"] = std::to_string(pick(rng, 1, 200));
  if (pick(rng, 0, 30) == 0) s[2] = pick(rng, 1, 4);
  return make_case("nvdla.pixel", p, t, s);
}

std::vector<Case> pixel_boundaries() {
  std::vector<Case> out;
  for (const std::string& f : pixel_formats()) {
    int64_t channels = 1, pixel_bytes = 1;
    DType t = DType::kInt8;
    pixel_traits(f, &channels, &pixel_bytes, &t);
    const int64_t per_line = 32 / pixel_bytes;
    for (int64_t w : {per_line - 1, per_line, per_line + 1}) {  // w_lt/eq/gt_32_bytes
      out.push_back(make_case("nvdla.pixel", {{"format", f}}, t, {3, w, channels}));
      out.push_back(make_case("nvdla.pixel", {{"format", f}, {"x_offset", std::to_string(per_line - 1)}}, t, {2, w, channels}));
    }
  }
  return out;
}

// ---- SDP auxiliary data -------------------------------------------------------

ParamSpec enum_param(std::string key, std::vector<std::string> choices, std::string doc) {
  ParamSpec p;
  p.key = std::move(key);
  p.kind = ParamKind::kEnum;
  std::string def = choices.front();
  p.choices = std::move(choices);
  p.default_value = [def](const ParamMap&) { return def; };
  p.doc = std::move(doc);
  return p;
}

int64_t components_of(const std::string& use) { return use == "bn" || use == "ew2" ? 2 : 1; }

// A component dtype and a processing precision that mostly go together.
void draw_sdp_types(std::mt19937_64& rng, ParamMap* p, DType* t) {
  static const char* kProcs[] = {"int8", "int16", "fp16"};
  const int64_t proc = pick(rng, 0, 2);
  const bool explicit_proc = pick(rng, 0, 1) == 1;
  if (explicit_proc) (*p)["proc"] = kProcs[proc];
  if (proc == 2) *t = DType::kFp16;
  else if (!explicit_proc) *t = proc == 0 ? DType::kInt8 : DType::kInt16;
  else *t = pick(rng, 0, 1) ? DType::kInt8 : DType::kInt16;  // 1 or 2 bytes per component
  if (pick(rng, 0, 40) == 0) *t = DType::kFp32;
}

Case sdp_channel_case(std::mt19937_64& rng, int size_class) {
  static const char* kUses[] = {"bias", "prelu", "bn"};
  ParamMap p;
  const std::string use = kUses[pick(rng, 0, 2)];
  p["use"] = use;
  DType t = DType::kInt8;
  draw_sdp_types(rng, &p, &t);
  int64_t comps = components_of(use);
  if (pick(rng, 0, 30) == 0) comps = 3 - comps;  // the wrong component count
  return make_case("nvdla.sdp.channel", p, t, {pick(rng, 1, 80 * (size_class + 1)), comps});
}

Case sdp_element_case(std::mt19937_64& rng, int size_class) {
  static const char* kUses[] = {"bias", "ew", "ew2"};
  ParamMap p;
  const std::string use = kUses[pick(rng, 0, 2)];
  p["use"] = use;
  DType t = DType::kInt8;
  draw_sdp_types(rng, &p, &t);
  const int64_t scale = size_class + 1;
  Shape s = {pick(rng, 1, 40 * scale), pick(rng, 1, 3 * scale), pick(rng, 1, 5 * scale), components_of(use)};
  if (pick(rng, 0, 3) == 0) p["line_stride"] = std::to_string(32 * pick(rng, 1, 4) * s[2]);
  if (pick(rng, 0, 30) == 0) p["line_stride"] = std::to_string(pick(rng, 1, 100));
  return make_case("nvdla.sdp.element", p, t, s);
}

std::vector<Case> sdp_boundaries(const std::string& name, std::vector<std::string> uses) {
  std::vector<Case> out;
  struct T { const char* proc; DType t; };
  for (const std::string& use : uses) {
    for (T tp : {T{"int8", DType::kInt8}, T{"int8", DType::kInt16}, T{"int16", DType::kInt16}, T{"int16", DType::kInt8},
                 T{"fp16", DType::kFp16}}) {
      const int64_t epa = std::string(tp.proc) == "int8" ? 32 : 16;
      for (int64_t c : {int64_t{1}, epa - 1, epa, epa + 1, 2 * epa + 3}) {  // c_lt/eq/gt_atom
        ParamMap p{{"use", use}, {"proc", tp.proc}};
        if (name == "nvdla.sdp.channel") out.push_back(make_case(name, p, tp.t, {c, components_of(use)}));
        else out.push_back(make_case(name, p, tp.t, {c, 2, 3, components_of(use)}));
      }
    }
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

  LayoutSpec batch;
  batch.name = "nvdla.feature.batch";
  batch.document = kDoc;
  batch.section = "Feature Data Format";
  batch.summary = "multi-batch feature data: N cubes of C,H,W feature data, a 32-byte aligned batch (cube) stride apart";
  batch.dims = {"N", "C", "H", "W"};
  batch.params = feature.params;
  batch.params.push_back(
      int_param("batch_stride", 0, INT64_MAX, "0", "bytes from batch n's cube to n+1's; 0 = packed (surfaces * surface stride)"));
  batch.random_case = feature_batch_case;
  batch.boundary_cases = feature_batch_boundaries;
  specs->push_back(batch);

  LayoutSpec dc;
  dc.name = "nvdla.weight.dc";
  dc.document = kDoc;
  dc.section = "Basic Weight for Direct Convolution";
  dc.summary = "K,C,H,W kernels in groups of 32 (int8) / 16, 1x1x64-element cubes, C' -> K -> W -> H -> C";
  dc.dims = {"K", "C", "H", "W"};
  dc.params = {int_param("addr", 0, INT64_MAX, "0", "start address (checked for its 256-byte alignment only)"),
               int_param("post_extension", 1, 4, "1", "channel post-extension: not supported for DC weights (only 1)")};
  dc.random_case = weight_dc_case;
  dc.boundary_cases = weight_dc_boundaries;
  specs->push_back(dc);

  LayoutSpec image;
  image.name = "nvdla.weight.image";
  image.document = kDoc;
  image.section = "Basic Weight for image input";
  image.summary = "image-input weights: channel pre-extension (a line becomes W*C channels), optional post-extension, DC mapping";
  image.dims = {"K", "C", "H", "W"};
  image.params = {int_param("addr", 0, INT64_MAX, "0", "start address (checked for its 256-byte alignment only)"),
                  int_param("post_extension", 1, 4, "1", "channel post-extension: 1 (none), 2 or 4 lines")};
  image.random_case = weight_image_case;
  image.boundary_cases = weight_image_boundaries;
  specs->push_back(image);

  const std::vector<ParamSpec> sdp_common = {
      enum_param("proc", {"same", "int8", "int16", "fp16"},
                 "PROC_PRECISION of the SDP pipeline; same = the component dtype"),
      int_param("addr", 0, INT64_MAX, "0", "start address (checked for its 32-byte alignment only)"),
  };
  LayoutSpec winograd;
  winograd.name = "nvdla.weight.winograd";
  winograd.document = kDoc;
  winograd.section = "Basic Weight for Winograd Convolution";
  winograd.summary = "converted 4x4 Winograd kernels: C padded to 32 bytes, 4x4x4-element cubes, K -> C scan in groups";
  winograd.dims = {"K", "C", "H", "W"};
  winograd.params = {int_param("addr", 0, INT64_MAX, "0", "start address (checked for its 256-byte alignment only)"),
                     int_param("post_extension", 1, 4, "1", "channel post-extension: not supported for Winograd weights (only 1)")};
  winograd.random_case = weight_winograd_case;
  winograd.boundary_cases = weight_winograd_boundaries;
  specs->push_back(winograd);

  LayoutSpec deconv;
  deconv.name = "nvdla.weight.deconv";
  deconv.document = kDoc;
  deconv.section = "Weight Format";
  deconv.summary = "deconvolution weights, set split: stride_x*stride_y sets of every sy-th row and sx-th column, each mapped as DC weights, 256-byte aligned";
  deconv.dims = {"K", "C", "H", "W"};
  deconv.params = {int_param("stride_x", 1, 32, "1", "deconvolution stride in x: sets split along W"),
                   int_param("stride_y", 1, 32, "1", "deconvolution stride in y: sets split along H"),
                   int_param("addr", 0, INT64_MAX, "0", "start address (checked for its 256-byte alignment only)"),
                   int_param("post_extension", 1, 4, "1", "channel post-extension: not supported for deconvolution weights (only 1)")};
  deconv.random_case = weight_deconv_case;
  deconv.boundary_cases = weight_deconv_boundaries;
  specs->push_back(deconv);

  LayoutSpec pixel;
  pixel.name = "nvdla.pixel";
  pixel.document = kDoc;
  pixel.section = "Pixel Format";
  pixel.summary = "H,W,C image in a pixel format of the table: pitch linear, 32-byte line stride, x offset, Y + UV planes";
  pixel.dims = {"H", "W", "C"};
  ParamSpec format;
  format.key = "format";
  format.kind = ParamKind::kEnum;
  format.choices = pixel_formats();
  format.default_value = [](const ParamMap&) { return std::string("T_R8"); };
  format.doc = "pixel format (table Pixel formats and valid setting)";
  pixel.params = {format,
                  int_param("x_offset", 0, INT64_MAX, "0", "pixels of redundant data before the first pixel of a line"),
                  int_param("line_stride", 0, INT64_MAX, "0", "bytes between lines; 0 = the line rounded up to 32"),
                  int_param("uv_line_stride", 0, INT64_MAX, "0", "semi-planar: bytes between UV lines; 0 = rounded up line"),
                  int_param("uv_offset", 0, INT64_MAX, "0", "semi-planar: bytes from the Y plane to the UV plane; 0 = H * line stride"),
                  int_param("addr", 0, INT64_MAX, "0", "start address (checked for its 32-byte alignment only)")};
  pixel.random_case = pixel_case;
  pixel.boundary_cases = pixel_boundaries;
  pixel.value_bits = pixel_value_bits;
  specs->push_back(pixel);

  LayoutSpec channel;
  channel.name = "nvdla.sdp.channel";
  channel.document = kDoc;
  channel.section = "Bias Data Format";
  channel.summary = "per-channel bias / PReLU / batch-normalization pairs: continuous 1x1xC, BytesPerAtom atoms";
  channel.dims = {"C", "P"};
  channel.params = {enum_param("use", {"bias", "prelu", "bn"}, "data use: P = 1 component (bias, prelu) or 2 (bn)")};
  channel.params.insert(channel.params.end(), sdp_common.begin(), sdp_common.end());
  channel.random_case = sdp_channel_case;
  channel.boundary_cases = [] { return sdp_boundaries("nvdla.sdp.channel", {"bias", "prelu", "bn"}); };
  specs->push_back(channel);

  LayoutSpec element;
  element.name = "nvdla.sdp.element";
  element.document = kDoc;
  element.section = "Element-Wise Data Format";
  element.summary = "per-element bias / element-wise data: C,H,W,P cube in BytesPerAtom atoms, C' -> W -> H -> C";
  element.dims = {"C", "H", "W", "P"};
  element.params = {enum_param("use", {"bias", "ew", "ew2"},
                               "data use: bias or ew (ALU or MUL, P = 1), ew2 (ALU and MUL, P = 2)")};
  element.params.insert(element.params.end(), sdp_common.begin(), sdp_common.end());
  element.params.push_back(int_param("line_stride", 0, INT64_MAX, "0", "bytes between lines; 0 = packed"));
  element.params.push_back(int_param("surface_stride", 0, INT64_MAX, "0", "bytes between surfaces; 0 = packed"));
  element.random_case = sdp_element_case;
  element.boundary_cases = [] { return sdp_boundaries("nvdla.sdp.element", {"bias", "ew", "ew2"}); };
  specs->push_back(element);
}

}  // namespace layoutcheck
