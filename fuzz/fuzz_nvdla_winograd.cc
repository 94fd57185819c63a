// NVDLA Winograd conversion fuzzer: the fixed-point transform must equal the
// exact rational reference on any (K, C, 3, 3) kernel bits, NaN and infinity
// included, and the result must map through nvdla.weight.winograd; the channel
// extension of strided kernels must equal its reference.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fuzz_util.h"
#include "layoutcheck/nvdla.h"

using namespace layoutcheck;

namespace {
constexpr int64_t kMaxKernels = 32;  // K x C bound of a fuzz input
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Bytes in(data, size);
  static const DType kTypes[] = {DType::kInt8, DType::kInt16, DType::kFp16};
  const DType t = kTypes[in.take(1) % 3];
  const Shape shape = {static_cast<int64_t>(in.take(1) % 40) + 1, static_cast<int64_t>(in.take(1) % 40) + 1, 3, 3};
  // The exact transform is rational arithmetic per tap: more than kMaxKernels
  // (K, C) pairs add time, not coverage (C reaches 32 with K = 1, and K with C = 1).
  if (shape[0] * shape[1] > kMaxKernels) return ++fuzz::not_checked, 0;
  const uint64_t eb = dtype_bits(t) / 8, n = static_cast<uint64_t>(shape[0] * shape[1] * 9);
  std::vector<uint8_t> w(n * eb);
  for (auto& b : w) b = static_cast<uint8_t>(in.take(1));
  auto fast = nvdla::winograd_transform(t, shape, w.data(), w.size());
  auto exact = nvdla::winograd_transform_reference(t, shape, w.data(), w.size());
  if (!fast.ok() || !exact.ok() || *fast != *exact) {
    std::fprintf(stderr, "winograd_transform differs from the reference: %s, shape %s\n", dtype_name(t),
                 shape_to_string(shape).c_str());
    std::abort();
  }
  // Channel extension of a strided kernel drawn from the same bytes.
  const int64_t stride = static_cast<int64_t>(in.take(1) % 3) + 2;
  const Shape strided = {shape[0], shape[1], static_cast<int64_t>(in.take(1)) % (3 * stride) + 1,
                         static_cast<int64_t>(in.take(1)) % (3 * stride) + 1};
  const uint64_t strided_bytes = static_cast<uint64_t>(strided[0] * strided[1] * strided[2] * strided[3]) * eb;
  std::vector<uint8_t> sw(strided_bytes);
  for (uint64_t i = 0; i < strided_bytes; ++i) sw[i] = w[i % w.size()];
  auto ea = nvdla::winograd_extend(t, strided, stride, sw.data(), sw.size());
  auto eb_ = nvdla::winograd_extend_reference(t, strided, stride, sw.data(), sw.size());
  if (!ea.ok() || !eb_.ok() || *ea != *eb_) {
    std::fprintf(stderr, "winograd_extend differs from the reference: stride %lld, shape %s\n",
                 static_cast<long long>(stride), shape_to_string(strided).c_str());
    std::abort();
  }
  auto layout = make_layout("nvdla.weight.winograd");
  const Case c{*layout, t, {shape[0], shape[1], 4, 4}};
  std::vector<uint8_t> a(*reference_impl().size_bytes(c)), b(a.size());
  if (!reference_impl().pack(c, fast->data(), fast->size(), a.data(), a.size()).ok() ||
      !optimized_impl().pack(c, fast->data(), fast->size(), b.data(), b.size()).ok() || a != b) {
    std::fprintf(stderr, "case: %s | %s | %s\n", to_string(c.layout).c_str(), dtype_name(t), shape_to_string(c.shape).c_str());
    std::abort();
  }
  return 0;
}
