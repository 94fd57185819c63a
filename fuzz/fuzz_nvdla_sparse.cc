// NVDLA sparse weight compression fuzzer. The input chooses a weight case and
// its values (with a zero density); compress must agree between the optimized
// and reference versions, decompress must invert it, and decompressing
// corrupted surfaces must be rejected or accepted alike by both, never crash;
// the surfaces placed by the alignment table pass nvdla::check_surfaces.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fuzz_util.h"
#include "layoutcheck/nvdla.h"

using namespace layoutcheck;

namespace {

[[noreturn]] void finding(const Case& c, const char* what) {
  std::fprintf(stderr, "%s\ncase: %s | %s | %s\n", what, to_string(c.layout).c_str(), dtype_name(c.dtype),
               shape_to_string(c.shape).c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Bytes in(data, size);
  static const DType kTypes[] = {DType::kInt8, DType::kInt16, DType::kFp16};
  const DType t = kTypes[in.take(1) % 3];
  Shape shape = {static_cast<int64_t>(in.take(1) % 70) + 1, static_cast<int64_t>(in.take(1) % 140) + 1,
                 static_cast<int64_t>(in.take(1) % 3) + 1, static_cast<int64_t>(in.take(1) % 3) + 1};
  // The next byte picks the weight format: DC (twice as likely), image input, Winograd.
  const uint64_t format = in.take(1) % 4;
  ParamMap params;
  const char* name = "nvdla.weight.dc";
  if (format == 1) {
    name = "nvdla.weight.image";
    shape[1] = shape[1] % 4 + 1;
    shape[3] = static_cast<int64_t>(in.take(1) % 8) + 1;
    const int64_t ext = shape[1] * shape[3] <= 16 ? 4 : shape[1] * shape[3] <= 32 ? 2 : 1;
    params["post_extension"] = std::to_string(in.take(1) % 2 ? ext : 1);
  } else if (format == 2) {
    name = "nvdla.weight.winograd";
    shape[2] = shape[3] = 4;
  }
  auto layout = make_layout(name, params);
  if (!layout.ok()) std::abort();
  const Case c{*layout, t, shape};
  const unsigned zero_percent = static_cast<unsigned>(in.take(1) % 101);
  const uint64_t eb = dtype_bits(t) / 8, n = *element_count(shape);
  if (n > 20000) return ++fuzz::not_checked, 0;  // large weights add time, not coverage
  std::vector<uint8_t> logical(n * eb, 0);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t v = in.take(3);
    if ((v >> 16) % 100 < zero_percent) continue;
    logical[i * eb] = static_cast<uint8_t>(v);
    if (eb == 2) logical[i * eb + 1] = static_cast<uint8_t>(v >> 8);
  }
  std::vector<uint8_t> phys(*optimized_impl().size_bytes(c));
  if (!optimized_impl().pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok()) finding(c, "pack failed");
  auto z = nvdla::compress(c, phys.data(), phys.size());
  auto zr = nvdla::compress_reference(c, phys.data(), phys.size());
  if (!z.ok() || !zr.ok()) finding(c, "compress failed");
  if (!(*z == *zr)) finding(c, "compress: optimized and reference differ");
  std::vector<uint8_t> a(phys.size()), b(phys.size());
  if (!nvdla::decompress(c, *z, a.data(), a.size()).ok() || a != phys) finding(c, "decompress does not invert compress");
  if (!nvdla::decompress_reference(c, *z, b.data(), b.size()).ok() || b != phys) {
    finding(c, "decompress_reference does not invert compress");
  }
  // Placed one after another at 256-byte boundaries, the surfaces compress
  // returns are a valid placement; one moved off its boundary breaks its start rule.
  if (!in.empty()) {
    const nvdla::SurfaceAddresses at{256 * in.take(6), 0, 0};
    nvdla::SurfaceAddresses placed = at;
    placed.wmb = placed.wgs + (z->wgs.size() + 255) / 256 * 256;
    placed.data = placed.wmb + (z->wmb.size() + 255) / 256 * 256;
    if (!nvdla::check_surfaces(*z, placed).ok()) finding(c, "compressed surfaces placed by the alignment table rejected");
    const uint64_t which = in.take(1) % 3, by = in.take(1) % 255 + 1;
    static const char* const kStartRule[] = {"nvdla.sparse/wgs-start-address-align-256",
                                             "nvdla.sparse/wmb-start-address-align-256",
                                             "nvdla.weight/start-address-align-256"};
    (which == 0 ? placed.wgs : which == 1 ? placed.wmb : placed.data) += by;
    if (nvdla::check_surfaces(*z, placed).rule() != kStartRule[which]) {
      finding(c, "a surface off its 256-byte boundary is not rejected by its start rule");
    }
  }
  // Corrupt one byte of one surface: both versions agree on the verdict and output.
  if (!in.empty()) {
    nvdla::CompressedWeights bad = *z;
    std::vector<uint8_t>* surfaces[] = {&bad.wgs, &bad.wmb, &bad.data};
    std::vector<uint8_t>& s = *surfaces[in.take(1) % 3];
    if (s.empty()) return 0;  // an all-zero weight has an empty data surface
    s[in.take(2) % s.size()] ^= static_cast<uint8_t>(in.take(1) | 1);
    const bool ok_a = nvdla::decompress(c, bad, a.data(), a.size()).ok();
    const bool ok_b = nvdla::decompress_reference(c, bad, b.data(), b.size()).ok();
    if (ok_a != ok_b) finding(c, "decompress of a corrupted surface: verdicts differ");
    if (ok_a && a != b) finding(c, "decompress of a corrupted surface: outputs differ");
  }
  return 0;
}
