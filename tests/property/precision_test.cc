#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "layoutcheck/precision.h"
#include "precision_support.h"

namespace layoutcheck::testing {
namespace {

const Converter& any_converter(int pick) {
  switch (pick % 4) {
    case 0: return precision_reference();
    case 1: return precision_optimized(SimdPath::kPortable);
    case 2: return precision_optimized(SimdPath::kF16cAvx2);
    default: return precision_optimized(SimdPath::kAvx512);
  }
}

uint16_t convert1(const Converter& c, const ConvertSpec& s, uint32_t x) {
  uint16_t h = 0xeeee;
  RC_ASSERT(c.convert(s, &x, 4, &h, 2, nullptr).ok());
  return h;
}

float fp16_value(uint16_t h) { return as_float(fp16lib_f16_to_f32(h)); }

rc::Gen<uint32_t> finite_fp32() {
  return rc::gen::suchThat(rc::gen::arbitrary<uint32_t>(), [](uint32_t x) { return std::isfinite(as_float(x)); });
}

rc::Gen<NvdlaUnit> any_unit() {
  return rc::gen::element(NvdlaUnit::kConv, NvdlaUnit::kConvWinograd, NvdlaUnit::kSdp, NvdlaUnit::kCdp,
                          NvdlaUnit::kPdp, NvdlaUnit::kPdpMinMax);
}

RC_GTEST_PROP(PrecisionProperty, fp32_to_fp16_is_monotonic_on_finite_inputs, ()) {
  uint32_t a = *finite_fp32(), b = *finite_fp32();
  if (as_float(a) > as_float(b)) std::swap(a, b);
  const auto rule = *rc::gen::element(ConvertRule::kIeee, ConvertRule::kNvdla);
  const Converter& c = any_converter(*rc::gen::inRange(0, 4));
  const ConvertSpec s = spec(rule, DType::kFp32, DType::kFp16);
  RC_ASSERT(fp16_value(convert1(c, s, a)) <= fp16_value(convert1(c, s, b)));
}

RC_GTEST_PROP(PrecisionProperty, integer_equation_is_monotonic_for_a_non_negative_scale, ()) {
  ConvertSpec s = spec(ConvertRule::kNvdlaInt, DType::kInt16, *rc::gen::element(DType::kInt8, DType::kInt16, DType::kFp16));
  s.scale = std::fabs(as_float(*finite_fp32()));
  s.offset = *rc::gen::inRange(kNvdlaOffsetMin, kNvdlaOffsetMax + 1);
  s.truncate = *rc::gen::element(TruncateMode::kNearestAway, TruncateMode::kNearestEven, TruncateMode::kTowardZero);
  int16_t in[2] = {*rc::gen::arbitrary<int16_t>(), *rc::gen::arbitrary<int16_t>()};
  if (in[0] > in[1]) std::swap(in[0], in[1]);
  const Converter& c = any_converter(*rc::gen::inRange(0, 4));
  uint8_t out[4];
  RC_ASSERT(c.convert(s, in, 4, out, 2 * dtype_bits(s.to) / 8, nullptr).ok());
  if (s.to == DType::kInt8) {
    RC_ASSERT(static_cast<int8_t>(out[0]) <= static_cast<int8_t>(out[1]));
  } else {
    uint16_t h[2];
    std::memcpy(h, out, 4);
    if (s.to == DType::kInt16) {
      RC_ASSERT(static_cast<int16_t>(h[0]) <= static_cast<int16_t>(h[1]));
    } else {
      RC_ASSERT(fp16_value(h[0]) <= fp16_value(h[1]));
    }
  }
}

RC_GTEST_PROP(PrecisionProperty, fp16_to_fp32_to_fp16_is_the_identity_on_non_nan, ()) {
  const uint16_t h = *rc::gen::suchThat(rc::gen::arbitrary<uint16_t>(), [](uint16_t v) { return !is_nan16(v); });
  const auto rule = *rc::gen::element(ConvertRule::kIeee, ConvertRule::kNvdla);
  const Converter& c = any_converter(*rc::gen::inRange(0, 4));
  uint32_t x = 0;
  RC_ASSERT(c.convert(spec(rule, DType::kFp16, DType::kFp32), &h, 2, &x, 4, nullptr).ok());
  const uint16_t back = convert1(c, spec(rule, DType::kFp32, DType::kFp16), x);
  if (rule == ConvertRule::kNvdla && (h & 0x7fff) == 0x7c00) {
    RC_ASSERT(back == ((h & 0x8000) | 0x7bff));  // INF has no nvdla round trip: it saturates
  } else {
    RC_ASSERT(back == h);
  }
}

RC_GTEST_PROP(PrecisionProperty, nvdla_never_outputs_inf, ()) {
  ConvertSpec s = spec(ConvertRule::kNvdla, *rc::gen::element(DType::kFp32, DType::kFp16),
                       *rc::gen::element(DType::kFp32, DType::kFp16), *any_unit(), *rc::gen::arbitrary<bool>());
  const auto raw = *rc::gen::container<std::vector<uint32_t>>(
      rc::gen::oneOf(rc::gen::arbitrary<uint32_t>(), rc::gen::element(0x7f800000u, 0xff800000u, 0x7c007c00u, 0xfc00fc00u,
                                                                      0x477ff000u, 0xc77ff000u, 0x7f7fffffu)));
  const size_t n = raw.size() * 4 / (dtype_bits(s.from) / 8);
  std::vector<uint8_t> out(n * dtype_bits(s.to) / 8);
  const Converter& c = any_converter(*rc::gen::inRange(0, 4));
  NanCounts nan;
  RC_ASSERT(c.convert(s, raw.data(), raw.size() * 4, out.data(), out.size(), &nan).ok());
  for (size_t i = 0; i < n; ++i) {
    if (s.to == DType::kFp16) {
      uint16_t h;
      std::memcpy(&h, out.data() + 2 * i, 2);
      RC_ASSERT((h & 0x7fff) != 0x7c00);
    } else {
      uint32_t x;
      std::memcpy(&x, out.data() + 4 * i, 4);
      RC_ASSERT((x & 0x7fffffffu) != 0x7f800000u);
    }
  }
  if (s.flush_nan) RC_ASSERT(nan.output == 0u);
  if (!s.flush_nan) RC_ASSERT(nan.output == nan.input);
}

RC_GTEST_PROP(PrecisionProperty, optimized_equals_reference_on_random_buffers, ()) {
  ConvertSpec s;
  s.rule = *rc::gen::element(ConvertRule::kIeee, ConvertRule::kNvdla, ConvertRule::kNvdlaInt);
  if (s.rule == ConvertRule::kNvdlaInt) {
    s.from = *rc::gen::element(DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16);
    s.to = *rc::gen::element(DType::kInt8, DType::kInt16, DType::kFp16);
    s.offset = *rc::gen::inRange(kNvdlaOffsetMin, kNvdlaOffsetMax + 1);
    s.scale = as_float(*finite_fp32());
    s.truncate = *rc::gen::element(TruncateMode::kNearestAway, TruncateMode::kNearestEven, TruncateMode::kTowardZero);
  } else {
    const bool nvdla = s.rule == ConvertRule::kNvdla;
    s.from = nvdla ? *rc::gen::element(DType::kFp32, DType::kFp16) : *rc::gen::element(DType::kFp32, DType::kFp16, DType::kBf16);
    s.to = nvdla ? *rc::gen::element(DType::kFp32, DType::kFp16) : *rc::gen::element(DType::kFp32, DType::kFp16, DType::kBf16);
    s.unit = *any_unit();
    s.flush_nan = *rc::gen::arbitrary<bool>();
  }
  const auto raw = *rc::gen::container<std::vector<uint32_t>>(rc::gen::arbitrary<uint32_t>());
  const size_t n = raw.size() * 4 / (dtype_bits(s.from) / 8);
  std::vector<uint8_t> a(n * dtype_bits(s.to) / 8, 0x11), b(a.size(), 0x22);
  NanCounts na, nb;
  RC_ASSERT(precision_reference().convert(s, raw.data(), raw.size() * 4, a.data(), a.size(), &na).ok());
  const Converter& opt = any_converter(*rc::gen::inRange(1, 4));
  RC_ASSERT(opt.convert(s, raw.data(), raw.size() * 4, b.data(), b.size(), &nb).ok());
  RC_ASSERT(a == b);
  RC_ASSERT(na.input == nb.input);
  RC_ASSERT(na.output == nb.output);
}


ConvertSpec float_path_spec() {
  const NvdlaUnit unit = *rc::gen::element(NvdlaUnit::kConv, NvdlaUnit::kSdp);
  ConvertSpec s = spec(ConvertRule::kNvdlaFloat, DType::kFp16,
                       unit == NvdlaUnit::kSdp ? *rc::gen::element(DType::kInt16, DType::kFp16) : DType::kFp16, unit,
                       *rc::gen::arbitrary<bool>());
  s.offset = *rc::gen::inRange(kNvdlaOffsetMin, kNvdlaOffsetMax + 1);
  s.scale = as_float(*finite_fp32());
  s.truncate = *rc::gen::element(TruncateMode::kNearestAway, TruncateMode::kNearestEven, TruncateMode::kTowardZero);
  return s;
}

double output_value(const ConvertSpec& s, uint16_t h) {
  return s.to == DType::kFp16 ? double{fp16_value(h)} : static_cast<double>(static_cast<int16_t>(h));
}

RC_GTEST_PROP(PrecisionProperty, float_path_optimized_equals_reference, ()) {
  const ConvertSpec s = float_path_spec();
  const auto in = *rc::gen::container<std::vector<uint16_t>>(rc::gen::arbitrary<uint16_t>());
  std::vector<uint16_t> a(in.size(), 0x1111), b(in.size(), 0x2222);
  NanCounts na, nb;
  RC_ASSERT(precision_reference().convert(s, in.data(), 2 * in.size(), a.data(), 2 * a.size(), &na).ok());
  RC_ASSERT(any_converter(*rc::gen::inRange(1, 4)).convert(s, in.data(), 2 * in.size(), b.data(), 2 * b.size(), &nb).ok());
  RC_ASSERT(a == b);
  RC_ASSERT(na.output == nb.output);
}

// Monotonic in d for a non-negative SF, never INF, never NaN from a number.
RC_GTEST_PROP(PrecisionProperty, float_path_is_monotonic_and_finite, ()) {
  ConvertSpec s = float_path_spec();
  s.scale = std::fabs(s.scale);
  auto number = rc::gen::suchThat(rc::gen::arbitrary<uint16_t>(), [](uint16_t v) { return !is_nan16(v); });
  uint16_t in[2] = {*number, *number};
  if (fp16_value(in[0]) > fp16_value(in[1])) std::swap(in[0], in[1]);
  uint16_t out[2];
  RC_ASSERT(any_converter(*rc::gen::inRange(0, 4)).convert(s, in, 4, out, 4, nullptr).ok());
  RC_ASSERT(output_value(s, out[0]) <= output_value(s, out[1]));
  if (s.to == DType::kFp16) {
    for (uint16_t h : out) RC_ASSERT((h & 0x7fff) < 0x7c00);
  }
}

// "these formats have better precision than fp16 with denormalized value": without
// offset and scaling every fp16 number, denormals included, comes back unchanged.
RC_GTEST_PROP(PrecisionProperty, float_path_identity_keeps_every_fp16_number, ()) {
  ConvertSpec s = spec(ConvertRule::kNvdlaFloat, DType::kFp16, DType::kFp16,
                       *rc::gen::element(NvdlaUnit::kConv, NvdlaUnit::kSdp));
  const uint16_t h = *rc::gen::suchThat(rc::gen::arbitrary<uint16_t>(), [](uint16_t v) { return (v & 0x7fff) < 0x7c00; });
  uint16_t out = 0;
  RC_ASSERT(any_converter(*rc::gen::inRange(0, 4)).convert(s, &h, 2, &out, 2, nullptr).ok());
  RC_ASSERT(out == h);
}

}  // namespace
}  // namespace layoutcheck::testing
