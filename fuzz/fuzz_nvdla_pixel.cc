// NVDLA pixel fuzzer on raw data: any format of the table, x offset and line
// strides near their limits, and logical values straight from the input, so
// values that do not fit a 2- or 10-bit field get through. Both
// implementations must accept or reject the same pack, write the same bytes
// when they accept, and unpack any physical bytes (padding included) alike.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fuzz_util.h"

using namespace layoutcheck;

namespace {

[[noreturn]] void differ(const Case& c, const char* what) {
  std::fprintf(stderr, "%s differs from the reference\ncase: %s | %s | %s\n", what, to_string(c.layout).c_str(),
               dtype_name(c.dtype), shape_to_string(c.shape).c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Bytes in(data, size);
  const LayoutSpec* spec = find_spec("nvdla.pixel");
  const std::vector<std::string>& formats = spec->params[0].choices;
  const std::string format = formats[in.take(1) % formats.size()];
  const bool planar = format.find("___") != std::string::npos;
  const int64_t channels = planar ? 3 : format.size() <= 7 ? 1 : 4;
  static const DType kTypes[] = {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16, DType::kFp16};
  Case c;
  c.dtype = kTypes[in.take(1) % 5];
  c.shape = {static_cast<int64_t>(in.take(1) % 6) + 1, static_cast<int64_t>(in.take(1) % 40) + 1, channels};
  ParamMap p = {{"format", format}, {"x_offset", std::to_string(in.take(1) % 34)}};
  if (const uint64_t ls = in.take(1); ls % 4 == 0) p["line_stride"] = std::to_string(ls / 4 * 32);
  auto layout = make_layout("nvdla.pixel", p);
  if (!layout.ok()) return 0;
  c.layout = *layout;
  const Impl& ref = reference_impl();
  const Impl& opt = optimized_impl();
  const Status sr = ref.supports(c), so = opt.supports(c);
  if (sr.code() != so.code()) differ(c, "supports");
  if (!sr.ok()) return 0;
  const uint64_t bytes = *logical_bytes(c), phys = *ref.size_bytes(c);
  std::vector<uint8_t> logical(bytes);
  for (auto& b : logical) b = static_cast<uint8_t>(in.take(1));
  std::vector<uint8_t> a(phys, 0xA5), b(phys, 0x5A);
  const Status pr = ref.pack(c, logical.data(), bytes, a.data(), phys);
  const Status po = opt.pack(c, logical.data(), bytes, b.data(), phys);
  if (pr.code() != po.code() || (pr.ok() && a != b)) differ(c, "pack");
  // Any physical bytes, not only packed ones: padding and high bits included.
  for (size_t i = 0; i < phys; ++i) a[i] = static_cast<uint8_t>(in.take(1) ^ (i * 0x9D));
  std::vector<uint8_t> ua(bytes, 1), ub(bytes, 2);
  if (!ref.unpack(c, a.data(), phys, ua.data(), bytes).ok() || !opt.unpack(c, a.data(), phys, ub.data(), bytes).ok() ||
      ua != ub) {
    differ(c, "unpack");
  }
  return 0;
}
