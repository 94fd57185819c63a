// MegEngine differential fuzzer: optimized against reference with arbitrary
// buffer contents, which the generic checker (position-unique values) does not
// try: garbage in the spare nibble of odd 4-bit tensors on the logical side,
// garbage in the padding channels on the physical side, equal values.
// Input: a text case ("case: LAYOUT | DTYPE | SHAPE"), or bytes choosing the
// layout, dtype and shape; the rest of the input is the buffer contents.
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "input_scope.h"

using namespace layoutcheck;

namespace {

const char* const kLayouts[] = {"mge.nchw",  "mge.nhwc",  "mge.nchw4",  "mge.nchw32",
                                "mge.nchw64", "mge.chwn4", "mge.matrix", "mge.matrix(order=col)",
                                "mge.strided"};

void fill(std::vector<uint8_t>* buf, fuzz::Bytes* in, uint64_t salt) {
  for (size_t i = 0; i < buf->size(); ++i) {
    (*buf)[i] = in->empty() ? static_cast<uint8_t>((i * 0x9E3779B1u + salt) >> 13) : static_cast<uint8_t>(in->take(1));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputScope scope;
  Case c;
  fuzz::Bytes in(data, size);
  if (!fuzz::parse_text_case(std::string(reinterpret_cast<const char*>(data), size), &c)) {
    size_t ndtypes = 0;
    const DType* dtypes = logical_dtypes(&ndtypes);
    auto layout = parse_layout(kLayouts[in.take(1) % std::size(kLayouts)]);
    if (!layout.ok()) return 0;
    c.layout = *layout;
    c.dtype = dtypes[in.take(1) % ndtypes];
    if (c.layout.name == "mge.strided") {
      // A view of rank 1..4 with strides in [0, 12] (0: a broadcast, where
      // arbitrary contents make the last writer in logical order win).
      const size_t rank = in.take(1) % 4 + 1;
      std::string strides;
      for (size_t k = 0; k < rank; ++k) {
        c.shape.push_back(static_cast<int64_t>(in.take(1) % 6) + 1);
        strides += (k ? ":" : "") + std::to_string(in.take(1) % 13);
      }
      ParamMap p{{"strides", strides}, {"offset", std::to_string(in.take(1) % 5)}};
      if (in.take(1) % 2) p["row_align"] = "byte";
      auto view = make_layout("mge.strided", p);
      if (!view.ok()) return 0;
      c.layout = *view;
    } else if (c.layout.name == "mge.matrix") {
      c.shape = {static_cast<int64_t>(in.take(1) % 40) + 1, static_cast<int64_t>(in.take(1) % 40) + 1};
    } else {
      c.shape = {static_cast<int64_t>(in.take(1) % 3) + 1, static_cast<int64_t>(in.take(1) % 130) + 1,
                 static_cast<int64_t>(in.take(1) % 3) + 1, static_cast<int64_t>(in.take(1) % 20) + 1};
    }
  } else {
    in = fuzz::Bytes(nullptr, 0);
  }
  if (c.layout.family() != "mge") return 0;
  if (!fuzz::require_agreement(c, reference_impl(), optimized_impl(), size)) return 0;

  const Impl& ref = reference_impl();
  const Impl& opt = optimized_impl();
  if (!ref.supports(c).ok()) return 0;
  std::vector<uint8_t> logical(*logical_bytes(c)), physical(*ref.size_bytes(c));
  fill(&logical, &in, size);
  fill(&physical, &in, size + 1);

  std::vector<uint8_t> pr(physical.size(), 0xA5), po(physical.size(), 0x5A);
  if (!ref.pack(c, logical.data(), logical.size(), pr.data(), pr.size()).ok() ||
      !opt.pack(c, logical.data(), logical.size(), po.data(), po.size()).ok() || pr != po) {
    std::fprintf(stderr, "pack of arbitrary contents differs: case: %s | %s | %s\n", to_string(c.layout).c_str(),
                 dtype_name(c.dtype), shape_to_string(c.shape).c_str());
    std::abort();
  }
  std::vector<uint8_t> lr(logical.size(), 0xA5), lo(logical.size(), 0x5A);
  if (!ref.unpack(c, physical.data(), physical.size(), lr.data(), lr.size()).ok() ||
      !opt.unpack(c, physical.data(), physical.size(), lo.data(), lo.size()).ok() || lr != lo) {
    std::fprintf(stderr, "unpack of arbitrary contents differs: case: %s | %s | %s\n", to_string(c.layout).c_str(),
                 dtype_name(c.dtype), shape_to_string(c.shape).c_str());
    std::abort();
  }
  return 0;
}
