// Registration of the Sophgo TPU layouts: names, parameters, document
// sections and case generators. No layout arithmetic lives here beyond what
// the generators need to propose mostly-valid cases.
#include <algorithm>

#include "core/families.h"

namespace layoutcheck {
namespace {

constexpr const char* kDoc = "sophgo-tpu-okkernel-local-memory.txt";

struct ChipPreset {
  const char* name;
  int64_t npus, lmem, eu;
};
constexpr ChipPreset kChips[] = {{"bm1684", 64, 512 * 1024, 128}, {"bm1684x", 64, 256 * 1024, 64}};

const ChipPreset& chip_of(const ParamMap& p) {
  auto it = p.find("chip");
  for (const auto& c : kChips) {
    if (it != p.end() && it->second == c.name) return c;
  }
  return kChips[0];
}

std::vector<ParamSpec> local_params(bool with_mode) {
  std::vector<ParamSpec> ps;
  ParamSpec chip;
  chip.key = "chip";
  chip.kind = ParamKind::kEnum;
  chip.choices = {"bm1684", "bm1684x"};
  chip.default_value = [](const ParamMap&) { return std::string("bm1684"); };
  chip.doc = "preset for npus, lmem and eu";
  ps.push_back(chip);
  ParamSpec npus = int_param("npus", 1, 1 << 16, "", "X, the number of NPUs");
  npus.default_value = [](const ParamMap& p) { return std::to_string(chip_of(p).npus); };
  ps.push_back(npus);
  ParamSpec lmem = int_param("lmem", 1, int64_t{1} << 40, "", "S, local memory bytes per NPU");
  lmem.default_value = [](const ParamMap& p) { return std::to_string(chip_of(p).lmem); };
  ps.push_back(lmem);
  ParamSpec eu = int_param("eu", 1, 1 << 16, "", "EU bytes: the C-stride alignment unit of the aligned layout");
  eu.default_value = [](const ParamMap& p) { return std::to_string(chip_of(p).eu); };
  ps.push_back(eu);
  ps.push_back(int_param("addr", 0, INT64_MAX, "0", "A, the start address in local memory"));
  if (with_mode) {
    ParamSpec mode;
    mode.key = "mode";
    mode.kind = ParamKind::kEnum;
    mode.choices = {"1n", "4n", "2n", "2ic"};
    mode.default_value = [](const ParamMap&) { return std::string("1n"); };
    mode.doc = "storage mode (Storage Modes)";
    ps.push_back(mode);
  }
  return ps;
}

// ---- generators --------------------------------------------------------------

struct Draw {
  ParamMap params;
  DType dtype = DType::kFp32;
  int lanes = 1;
  int64_t storage_bytes = 4;
};

// Draws chip geometry, an address of the alignment the layout wants (now and
// then a wrong one), a storage mode and a dtype that mostly fits it.
Draw draw_local(std::mt19937_64& rng, int64_t align, bool with_mode, int size_class) {
  Draw d;
  const bool real_chip = size_class >= 3 && pick(rng, 0, 1);
  int64_t npus = real_chip ? 64 : pick(rng, 0, 3) == 0 ? pick(rng, 1, 9) : 4;
  int64_t lmem = real_chip ? 256 * 1024 : (int64_t{1} << pick(rng, 10, 14)) + (pick(rng, 0, 5) == 0 ? 128 * pick(rng, 1, 3) : 0);
  if (real_chip) d.params["chip"] = "bm1684x";
  else {
    d.params["npus"] = std::to_string(npus);
    d.params["lmem"] = std::to_string(lmem);
    if (pick(rng, 0, 4) == 0) d.params["eu"] = std::to_string(int64_t{16} << pick(rng, 0, 3));
  }
  static const char* kModes[] = {"1n", "4n", "2n", "2ic"};
  const char* mode = with_mode && pick(rng, 0, 2) == 0 ? kModes[pick(rng, 1, 3)] : "1n";
  if (std::string(mode) != "1n") d.params["mode"] = mode;
  static const DType k1n[] = {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16, DType::kInt32,
                              DType::kUInt32, DType::kFp16, DType::kBf16, DType::kFp32};
  std::string m = mode;
  if (m == "4n") d.dtype = pick(rng, 0, 1) ? DType::kInt8 : DType::kUInt8, d.lanes = 4;
  else if (m == "2n") d.dtype = pick(rng, 0, 1) ? DType::kInt16 : DType::kUInt16, d.lanes = 2;
  else if (m == "2ic") d.dtype = DType::kFp32, d.lanes = 2;
  else d.dtype = k1n[pick(rng, 0, 8)];
  if (pick(rng, 0, 40) == 0) d.dtype = k1n[pick(rng, 0, 8)];  // sometimes not allowed by the mode
  d.storage_bytes = dtype_bits(d.dtype) / 8 * d.lanes;
  // Start in the first quarter of some NPU, aligned, so most tensors fit.
  int64_t npu = pick(rng, 0, npus - 1);
  int64_t within = pick(rng, 0, lmem / 4) / align * align;
  int64_t addr = npu * lmem + within;
  if (pick(rng, 0, 30) == 0) addr += pick(rng, 1, align);  // occasionally misaligned
  if (addr != 0) d.params["addr"] = std::to_string(addr);
  return d;
}

Shape draw_nchw(std::mt19937_64& rng, int size_class, int64_t npus) {
  int64_t scale = size_class + 1;
  return {pick(rng, 1, 3 * scale), pick(rng, 1, std::max<int64_t>(2, npus * 2 + 3)),
          pick(rng, 1, 3 * scale), pick(rng, 1, 6 * scale)};
}

int64_t npus_of(const ParamMap& p) {
  auto it = p.find("npus");
  return it == p.end() ? 64 : std::stoll(it->second);
}

std::function<Case(std::mt19937_64&, int)> local_generator(const std::string& name, int64_t align) {
  return [name, align](std::mt19937_64& rng, int size_class) {
    Draw d = draw_local(rng, align, true, size_class);
    return make_case(name, d.params, d.dtype, draw_nchw(rng, size_class, npus_of(d.params)));
  };
}

Case strided_case(std::mt19937_64& rng, int size_class) {
  Draw d = draw_local(rng, 1, true, size_class);
  int64_t npus = npus_of(d.params);
  Shape s = draw_nchw(rng, size_class, npus);
  // Element strides nested in a random dimension order, sometimes with gaps.
  int64_t lmem = d.params.count("lmem") ? std::stoll(d.params["lmem"]) : 256 * 1024;
  int64_t addr = d.params.count("addr") ? std::stoll(d.params["addr"]) : 0;
  int64_t q = addr / lmem;
  int64_t lanes = d.lanes;
  int64_t extent[4] = {(s[0] + lanes - 1) / lanes, (q % npus + s[1] + npus - 1) / npus, s[2], s[3]};
  int order[4] = {0, 1, 2, 3};
  if (pick(rng, 0, 2) == 0) std::shuffle(order, order + 4, rng);
  int64_t stride = pick(rng, 1, 2);
  static const char* kKeys[] = {"n", "c", "h", "w"};
  for (int k = 3; k >= 0; --k) {
    int dim = order[k];
    d.params[kKeys[dim]] = std::to_string(stride);
    stride = stride * extent[dim] + (pick(rng, 0, 1) ? pick(rng, 0, 8) : 0);
  }
  if (pick(rng, 0, 30) == 0) d.params[kKeys[pick(rng, 0, 3)]] = std::to_string(pick(rng, 0, 3));
  // Align the address to the storage element.
  if (addr % d.storage_bytes != 0 && pick(rng, 0, 5) != 0) {
    d.params["addr"] = std::to_string(addr / d.storage_bytes * d.storage_bytes);
  }
  return make_case("tpu.strided", d.params, d.dtype, s);
}

Case matrix_case(std::mt19937_64& rng, int size_class) {
  Draw d = draw_local(rng, 128, false, size_class);
  int64_t cols = pick(rng, 1, 20 * (size_class + 1));
  int64_t w = pick(rng, 0, 10) == 0 ? cols + 1 : pick(rng, 1, cols);
  d.params["w"] = std::to_string(w);
  // Now and then rows packed by a storage mode (4N int8, 2N int16), sometimes of the wrong type.
  if (pick(rng, 0, 3) == 0) {
    const bool four = pick(rng, 0, 1);
    d.params["mode"] = four ? "4n" : "2n";
    if (pick(rng, 0, 15) != 0) {
      d.dtype = four ? (pick(rng, 0, 1) ? DType::kInt8 : DType::kUInt8) : (pick(rng, 0, 1) ? DType::kInt16 : DType::kUInt16);
    }
  }
  return make_case("tpu.matrix", d.params, d.dtype, {pick(rng, 1, 4 * (size_class + 1)), cols});
}

// Boundary classes: C around the NPU count, H*W around the alignment block,
// N around the storage-mode lane count, start NPU 0 / 1 / X-1.
std::vector<Case> local_boundaries(const std::string& name) {
  std::vector<Case> out;
  const int64_t x = 4, s = 4096;
  for (int64_t q : {int64_t{0}, int64_t{1}, x - 1}) {
    for (int64_t c : {x - 1, x, x + 1, 2 * x, 2 * x + 2}) {
      for (int64_t hw : {31, 32, 33, 64}) {
        ParamMap p{{"npus", std::to_string(x)}, {"lmem", std::to_string(s)}, {"addr", std::to_string(q * s + 128)}};
        out.push_back(make_case(name, p, DType::kFp32, {2, c, 1, hw}));
      }
    }
  }
  struct M { const char* mode; DType t; int lanes; };
  for (M m : {M{"4n", DType::kInt8, 4}, M{"2n", DType::kUInt16, 2}, M{"2ic", DType::kFp32, 2}}) {
    for (int64_t n : {int64_t{m.lanes - 1}, int64_t{m.lanes}, int64_t{m.lanes + 1}, int64_t{2 * m.lanes + 1}}) {
      ParamMap p{{"npus", "4"}, {"lmem", "4096"}, {"mode", m.mode}, {"addr", "4224"}};
      out.push_back(make_case(name, p, m.t, {n, 5, 3, 5}));
      out.push_back(make_case(name, p, m.t, {n, 3, 3, 13}));  // vector body and a tail
    }
  }
  return out;
}

std::vector<Case> continuous_boundaries() {
  std::vector<Case> out;
  for (DType t : {DType::kInt8, DType::kFp16, DType::kFp32}) {
    out.push_back(make_case("tpu.continuous", {}, t, {1, 1, 1, 1}));
    out.push_back(make_case("tpu.continuous", {}, t, {2, 3, 5, 7}));
  }
  return out;
}

// Strides nested in each order the document's examples use, and "makes no sense"
// strides left at 0 where the extent is 1.
std::vector<Case> strided_boundaries() {
  ParamMap base{{"npus", "4"}, {"lmem", "1024"}};
  auto with = [&](ParamMap extra) {
    ParamMap p = base;
    p.insert(extra.begin(), extra.end());
    return p;
  };
  return {make_case("tpu.strided", with({{"n", "120"}, {"c", "56"}, {"h", "16"}, {"w", "2"}}), DType::kFp32, {2, 5, 3, 4}),
          make_case("tpu.strided", with({{"addr", "1024"}, {"n", "120"}, {"w", "2"}}), DType::kFp32, {2, 3, 1, 10}),
          make_case("tpu.strided", with({{"n", "1"}, {"c", "64"}, {"h", "8"}, {"w", "2"}}), DType::kInt16, {2, 6, 3, 4}),
          make_case("tpu.strided", with({{"n", "30"}, {"c", "1"}, {"h", "10"}, {"w", "2"}, {"mode", "4n"}}), DType::kInt8,
                    {5, 8, 3, 4})};
}

// System-memory strides nested in a random dimension order, sometimes with
// gaps or the continuous values; now and then one that overlaps.
Case system_case(std::mt19937_64& rng, int size_class) {
  static const DType kTypes[] = {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kFp16, DType::kBf16,
                                 DType::kInt32, DType::kFp32};
  Shape s = draw_nchw(rng, size_class, 4);
  int order[4] = {0, 1, 2, 3};
  if (pick(rng, 0, 2) != 0) std::shuffle(order, order + 4, rng);
  static const char* kKeys[] = {"n", "c", "h", "w"};
  ParamMap p;
  int64_t stride = pick(rng, 0, 3) == 0 ? pick(rng, 2, 3) : 1;
  for (int k = 3; k >= 0; --k) {
    const int dim = order[k];
    p[kKeys[dim]] = std::to_string(stride);
    stride = stride * s[static_cast<size_t>(dim)] + (pick(rng, 0, 1) ? pick(rng, 0, 7) : 0);
  }
  if (pick(rng, 0, 12) == 0) p[kKeys[pick(rng, 0, 3)]] = std::to_string(pick(rng, 0, 3));
  return make_case("tpu.system", p, kTypes[pick(rng, 0, 6)], s);
}

// The document's system-memory definitions: continuous strides, strides of
// other orders (NHWC), padded rows, and "makes no sense" strides at extent 1.
std::vector<Case> system_boundaries() {
  return {make_case("tpu.system", {{"n", "60"}, {"c", "20"}, {"h", "5"}, {"w", "1"}}, DType::kFp32, {2, 3, 4, 5}),
          make_case("tpu.system", {{"n", "60"}, {"c", "1"}, {"h", "15"}, {"w", "3"}}, DType::kInt8, {2, 3, 4, 5}),
          make_case("tpu.system", {{"n", "100"}, {"c", "32"}, {"h", "8"}, {"w", "1"}}, DType::kFp16, {2, 3, 4, 5}),
          make_case("tpu.system", {{"n", "0"}, {"c", "0"}, {"h", "0"}, {"w", "0"}}, DType::kInt16, {1, 1, 1, 1}),
          make_case("tpu.system", {{"n", "7"}, {"c", "0"}, {"h", "0"}, {"w", "1"}}, DType::kUInt32, {3, 1, 1, 7})};
}

// W below, at and dividing the column count, with and without a short last channel.
std::vector<Case> matrix_boundaries() {
  std::vector<Case> out;
  for (int64_t w : {1, 6, 8, 10, 15, 20, 40}) {
    out.push_back(make_case("tpu.matrix", {{"npus", "4"}, {"lmem", "1024"}, {"w", std::to_string(w)}}, DType::kFp32, {2, 40}));
  }
  out.push_back(make_case("tpu.matrix", {{"npus", "4"}, {"lmem", "4096"}, {"w", "7"}, {"addr", "3200"}}, DType::kInt8, {3, 41}));
  for (int64_t rows : {1, 3, 4, 5, 9}) {
    out.push_back(make_case("tpu.matrix", {{"npus", "4"}, {"lmem", "4096"}, {"w", "10"}, {"mode", "4n"}}, DType::kInt8, {rows, 40}));
    out.push_back(make_case("tpu.matrix", {{"npus", "4"}, {"lmem", "4096"}, {"w", "15"}, {"mode", "2n"}}, DType::kUInt16, {rows, 40}));
  }
  return out;
}

}  // namespace

void add_tpu_specs(std::vector<LayoutSpec>* specs) {
  LayoutSpec cont;
  cont.name = "tpu.continuous";
  cont.document = kDoc;
  cont.section = "Continuous Layout";
  cont.summary = "system memory, strides (C*H*W, H*W, W, 1)";
  cont.dims = {"N", "C", "H", "W"};
  cont.random_case = [](std::mt19937_64& rng, int size_class) {
    static const DType kTypes[] = {DType::kInt8, DType::kInt16, DType::kFp16, DType::kFp32, DType::kUInt32};
    return make_case("tpu.continuous", {}, kTypes[pick(rng, 0, 4)], draw_nchw(rng, size_class, 4));
  };
  cont.boundary_cases = continuous_boundaries;
  specs->push_back(cont);

  LayoutSpec aligned;
  aligned.name = "tpu.aligned";
  aligned.document = kDoc;
  aligned.section = "128-Byte Aligned Layout";
  aligned.summary = "local memory, C stride aligned to EU bytes, N stride = C stride x channels per NPU";
  aligned.dims = {"N", "C", "H", "W"};
  aligned.params = local_params(true);
  aligned.random_case = local_generator("tpu.aligned", 128);
  aligned.boundary_cases = [] { return local_boundaries("tpu.aligned"); };
  specs->push_back(aligned);

  LayoutSpec compact = aligned;
  compact.name = "tpu.compact";
  compact.section = "Compact Layout";
  compact.summary = "local memory, C stride = H*W, N stride = C stride x channels per NPU";
  compact.random_case = local_generator("tpu.compact", 4);
  compact.boundary_cases = [] { return local_boundaries("tpu.compact"); };
  specs->push_back(compact);

  LayoutSpec strided = aligned;
  strided.name = "tpu.strided";
  strided.section = "Strides in Local Memory";
  strided.summary = "local memory with explicit element strides n, c (between NPU slots), h, w";
  for (const char* k : {"n", "c", "h", "w"}) {
    strided.params.push_back(int_param(k, 0, INT64_MAX, "0", std::string(k) + " stride in elements"));
  }
  strided.random_case = strided_case;
  strided.boundary_cases = strided_boundaries;
  specs->push_back(strided);

  LayoutSpec matrix;
  matrix.name = "tpu.matrix";
  matrix.document = kDoc;
  matrix.section = "Matrix Layout";
  matrix.summary = "rows x cols matrix as (rows, ceil(cols/w), 1, w) in the aligned layout";
  matrix.dims = {"rows", "cols"};
  matrix.params = local_params(false);
  ParamSpec w = int_param("w", 1, INT64_MAX, "", "W, columns per channel, in [1, cols]");
  w.default_value = nullptr;
  matrix.params.push_back(w);
  // "Storage Modes" are for tensors (N, C, H, W) in local memory; the matrix is
  // one, (N, ceil(M/W), 1, W), so 4N and 2N pack rows. 2IC is for convolution
  // weights only (oracles/ERRATA.md, TPU 10).
  ParamSpec matrix_mode;
  matrix_mode.key = "mode";
  matrix_mode.kind = ParamKind::kEnum;
  matrix_mode.choices = {"1n", "4n", "2n"};
  matrix_mode.default_value = [](const ParamMap&) { return std::string("1n"); };
  matrix_mode.doc = "storage mode (Storage Modes): 4n packs 4 int8 rows, 2n 2 int16 rows";
  matrix.params.push_back(matrix_mode);
  matrix.random_case = matrix_case;
  matrix.boundary_cases = matrix_boundaries;
  specs->push_back(matrix);

  LayoutSpec system;
  system.name = "tpu.system";
  system.document = kDoc;
  system.section = "Strides in System Memory";
  system.summary = "system memory with explicit element strides n, c, h, w (c steps c to c + 1)";
  system.dims = {"N", "C", "H", "W"};
  for (const char* k : {"n", "c", "h", "w"}) {
    system.params.push_back(int_param(k, 0, INT64_MAX, "0", std::string(k) + " stride in elements"));
  }
  system.random_case = system_case;
  system.boundary_cases = system_boundaries;
  specs->push_back(system);
}

}  // namespace layoutcheck
