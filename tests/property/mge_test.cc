#include <algorithm>
#include <cstring>
#include <set>

#include "support.h"  // gtest before rapidcheck/gtest.h
#include "property/round_trip.h"

#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

namespace layoutcheck {
namespace {

int64_t block_of(const std::string& layout) {
  if (layout == "mge.nchw4" || layout == "mge.chwn4") return 4;
  if (layout == "mge.nchw32") return 32;
  if (layout == "mge.nchw64") return 64;
  return 1;
}

DType draw_dtype() {
  return *rc::gen::element(DType::kInt4, DType::kUInt4, DType::kInt8, DType::kUInt8, DType::kInt16, DType::kFp16,
                           DType::kBf16, DType::kInt32, DType::kFp32);
}

Case draw_nchw_case(const std::string& layout, DType dtype) {
  const int64_t x = block_of(layout);
  const int64_t c = *rc::gen::oneOf(rc::gen::inRange<int64_t>(1, x + 2), rc::gen::inRange<int64_t>(1, 3 * x + 2));
  return Case{*make_layout(layout), dtype,
              {*rc::gen::inRange<int64_t>(1, 4), c, *rc::gen::inRange<int64_t>(1, 5), *rc::gen::inRange<int64_t>(1, 20)}};
}

Case draw_any() {
  const std::string layout = *rc::gen::element<std::string>("mge.nchw", "mge.nhwc", "mge.nchw4", "mge.nchw32",
                                                            "mge.nchw64", "mge.chwn4", "mge.matrix");
  if (layout == "mge.matrix") {
    return Case{*make_layout(layout, {{"order", *rc::gen::element<std::string>("row", "col")}}), draw_dtype(),
                {*rc::gen::inRange<int64_t>(1, 40), *rc::gen::inRange<int64_t>(1, 40)}};
  }
  return draw_nchw_case(layout, draw_dtype());
}

std::vector<uint64_t> all_offsets(const Impl& impl, const Case& c) {
  std::vector<uint64_t> out;
  for (uint64_t i = 0; i < *element_count(c.shape); ++i) out.push_back(*impl.offset_bits(c, coord_of_index(c.shape, i)));
  return out;
}

std::vector<uint8_t> pack(const Impl& impl, const Case& c, const std::vector<uint8_t>& logical) {
  std::vector<uint8_t> phys(*impl.size_bytes(c), 0x77);
  RC_ASSERT(impl.pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
  return phys;
}

RC_GTEST_PROP(MgeProperty, optimized_equals_reference, ()) {
  const Case c = draw_any();
  CheckReport r = check(c, reference_impl(), optimized_impl());
  RC_LOG() << r.message;
  RC_ASSERT(r.verdict == Verdict::kPass);
}

RC_GTEST_PROP(MgeProperty, offsets_are_injective_and_inside_the_buffer, ()) {
  const Case c = draw_any();
  const uint64_t size_bits = *reference_impl().size_bytes(c) * 8, elem_bits = dtype_bits(c.dtype);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::set<uint64_t> seen;
    for (uint64_t bit : all_offsets(*impl, c)) {
      RC_ASSERT(bit % elem_bits == 0);
      RC_ASSERT(bit + elem_bits <= size_bits);
      RC_ASSERT(seen.insert(bit).second);
    }
  }
}

// With C a multiple of X, NCHWX holds exactly the NCHW elements (no padding),
// and element (n, c, h, w) sits at ((n*C/X + c/X)*H*W + h*W + w)*X + c%X.
RC_GTEST_PROP(MgeProperty, nchwx_with_c_multiple_of_x_is_a_permutation_of_nchw, ()) {
  const std::string layout = *rc::gen::element<std::string>("mge.nchw4", "mge.nchw32", "mge.nchw64");
  const int64_t x = block_of(layout);
  const DType t = *rc::gen::element(DType::kInt8, DType::kFp16, DType::kFp32, DType::kInt32);
  const int64_t n = *rc::gen::inRange<int64_t>(1, 4), c = x * *rc::gen::inRange<int64_t>(1, 4);
  const int64_t h = *rc::gen::inRange<int64_t>(1, 5), w = *rc::gen::inRange<int64_t>(1, 20);
  const Case blocked{*make_layout(layout), t, {n, c, h, w}};
  const Case plain{*make_layout("mge.nchw"), t, {n, c, h, w}};
  std::vector<uint8_t> logical;
  fill_position_unique(blocked, *rc::gen::arbitrary<uint64_t>(), &logical);
  const size_t e = dtype_bits(t) / 8;
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    const std::vector<uint8_t> nchw = pack(*impl, plain, logical), nchwx = pack(*impl, blocked, logical);
    RC_ASSERT(nchw == logical);
    RC_ASSERT(nchwx.size() == nchw.size());
    for (int64_t i = 0; i < n * c * h * w; ++i) {
      const int64_t nn = i / (c * h * w), cc = i / (h * w) % c, hw = i % (h * w);
      const int64_t j = ((nn * (c / x) + cc / x) * h * w + hw) * x + cc % x;
      RC_ASSERT(std::memcmp(&nchwx[j * e], &nchw[i * e], e) == 0);
    }
  }
}

RC_GTEST_PROP(MgeProperty, chwn4_with_one_batch_is_nchw4, ()) {
  Case a = draw_nchw_case("mge.chwn4", draw_dtype());
  a.shape[0] = 1;
  Case b = a;
  b.layout = *make_layout("mge.nchw4");
  std::vector<uint8_t> logical;
  fill_position_unique(a, *rc::gen::arbitrary<uint64_t>(), &logical);
  RC_ASSERT(pack(optimized_impl(), a, logical) == pack(reference_impl(), b, logical));
}

RC_GTEST_PROP(MgeProperty, unpack_inverts_pack, ()) {
  const Case c = draw_any();
  testing::assert_unpack_inverts_pack(c);
}

// Every bit that holds no element (padding channels, the spare nibble) is 0;
// every element bit holds the element.
RC_GTEST_PROP(MgeProperty, padding_channels_are_zero, ()) {
  const std::string layout = *rc::gen::element<std::string>("mge.nchw4", "mge.nchw32", "mge.nchw64", "mge.chwn4");
  const Case c = draw_nchw_case(layout, draw_dtype());
  const uint64_t elem_bits = dtype_bits(c.dtype);
  std::vector<uint8_t> logical(*logical_bytes(c), 0xFF);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    const std::vector<uint8_t> phys = pack(*impl, c, logical);
    std::vector<bool> owned(phys.size() * 8, false);
    for (uint64_t bit : all_offsets(reference_impl(), c)) {
      for (uint64_t b = 0; b < elem_bits; ++b) owned[bit + b] = true;
    }
    for (size_t bit = 0; bit < owned.size(); ++bit) {
      RC_ASSERT(((phys[bit / 8] >> (bit % 8)) & 1) == (owned[bit] ? 1 : 0));
    }
  }
}

}  // namespace
}  // namespace layoutcheck
