#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "layoutcheck/precision.h"
#include "precision_support.h"

namespace layoutcheck::testing {
namespace {

constexpr NvdlaUnit kUnits[] = {NvdlaUnit::kConv, NvdlaUnit::kConvWinograd, NvdlaUnit::kSdp,
                                NvdlaUnit::kCdp,  NvdlaUnit::kPdp,          NvdlaUnit::kPdpMinMax};

std::vector<uint16_t> all_fp16() {
  std::vector<uint16_t> v(65536);
  for (uint32_t i = 0; i < 65536; ++i) v[i] = static_cast<uint16_t>(i);
  return v;
}

// Every 4093rd fp32 pattern, plus the neighbourhoods of the rounding boundaries.
std::vector<uint32_t> fp32_sample() {
  std::vector<uint32_t> v;
  for (uint64_t x = 0; x < (uint64_t{1} << 32); x += 4093) v.push_back(static_cast<uint32_t>(x));
  for (uint32_t edge : {0x477fe000u, 0x477ff000u, 0x47800000u, 0x38800000u, 0x33000000u, 0x33800000u,
                        0x387fc000u, 0x7f800000u, 0x7f7fffffu, 0x00000000u, 0x3f800000u, 0x7fc00000u}) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      for (uint32_t d = 0; d < 64; ++d) {
        v.push_back(sign | (edge + d));
        v.push_back(sign | (edge - d));
      }
    }
  }
  return v;
}

TEST(PrecisionExhaustive, fp16_to_fp32_all_inputs_reference_against_external_oracles) {
  const auto in = all_fp16();
  const auto ref = run<uint32_t>(precision_reference(), spec(ConvertRule::kIeee, DType::kFp16, DType::kFp32), in);
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_TRUE(same32(ref[i], fp16lib_f16_to_f32(in[i]), true)) << std::hex << in[i] << " -> " << ref[i];
    if (kHaveFloat16) {
      ASSERT_TRUE(same32(ref[i], float16_f16_to_f32(in[i]), true)) << std::hex << in[i];
    }
  }
  if (!cpu_has_f16c()) GTEST_SKIP() << "the CPU lacks F16C: compared with libfp16 and _Float16 only";
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(ref[i], f16c_f16_to_f32(in[i])) << std::hex << in[i];
  }
}

TEST(PrecisionExhaustive, fp16_to_fp32_to_fp16_all_inputs_every_path) {
  const auto in = all_fp16();
  const auto ref32 = run<uint32_t>(precision_reference(), spec(ConvertRule::kIeee, DType::kFp16, DType::kFp32), in);
  const auto ref16 = run<uint16_t>(precision_reference(), spec(ConvertRule::kIeee, DType::kFp32, DType::kFp16), ref32);
  for (size_t i = 0; i < in.size(); ++i) {
    if (is_nan16(in[i])) {
      ASSERT_EQ(ref16[i], in[i] | 0x200) << std::hex << in[i] << " (a NaN comes back quiet)";
    } else {
      ASSERT_EQ(ref16[i], in[i]) << std::hex << in[i];
    }
  }
  for (SimdPath p : simd_paths()) {
    const Converter& opt = precision_optimized(p);
    NanCounts n32, n16;
    const auto o32 = run<uint32_t>(opt, spec(ConvertRule::kIeee, DType::kFp16, DType::kFp32), in, &n32);
    const auto o16 = run<uint16_t>(opt, spec(ConvertRule::kIeee, DType::kFp32, DType::kFp16), o32, &n16);
    ASSERT_EQ(o32, ref32) << opt.name();
    ASSERT_EQ(o16, ref16) << opt.name();
    EXPECT_EQ(n32.input, 2046u);
    EXPECT_EQ(n32.output, 2046u);
    EXPECT_EQ(n16.input, 2046u);
  }
}

TEST(PrecisionExhaustive, fp16_nvdla_all_inputs_every_unit_and_path) {
  const auto in = all_fp16();
  for (NvdlaUnit u : kUnits) {
    for (bool flush : {false, true}) {
      for (DType to : {DType::kFp32, DType::kFp16}) {
        const ConvertSpec s = spec(ConvertRule::kNvdla, DType::kFp16, to, u, flush);
        NanCounts rn;
        std::vector<uint8_t> ref(in.size() * dtype_bits(to) / 8);
        ASSERT_TRUE(precision_reference().convert(s, in.data(), 2 * in.size(), ref.data(), ref.size(), &rn).ok());
        EXPECT_EQ(rn.input, 2046u);
        EXPECT_EQ(rn.output, flush ? 0u : 2046u);
        for (SimdPath p : simd_paths()) {
          NanCounts on;
          std::vector<uint8_t> opt(ref.size(), 0xee);
          ASSERT_TRUE(precision_optimized(p).convert(s, in.data(), 2 * in.size(), opt.data(), opt.size(), &on).ok());
          ASSERT_EQ(opt, ref) << to_string(s) << " " << simd_path_name(p);
          EXPECT_EQ(on.input, rn.input);
          EXPECT_EQ(on.output, rn.output);
        }
      }
    }
  }
}

TEST(PrecisionExhaustive, fp16_bf16_all_inputs_every_path) {
  const auto in = all_fp16();
  const auto to_bf = run<uint16_t>(precision_reference(), spec(ConvertRule::kIeee, DType::kFp16, DType::kBf16), in);
  const auto back = run<uint16_t>(precision_reference(), spec(ConvertRule::kIeee, DType::kBf16, DType::kFp16), in);
  for (SimdPath p : simd_paths()) {
    const Converter& opt = precision_optimized(p);
    ASSERT_EQ(run<uint16_t>(opt, spec(ConvertRule::kIeee, DType::kFp16, DType::kBf16), in), to_bf) << opt.name();
    ASSERT_EQ(run<uint16_t>(opt, spec(ConvertRule::kIeee, DType::kBf16, DType::kFp16), in), back) << opt.name();
    ASSERT_EQ(run<uint32_t>(opt, spec(ConvertRule::kIeee, DType::kBf16, DType::kFp32), in),
              run<uint32_t>(precision_reference(), spec(ConvertRule::kIeee, DType::kBf16, DType::kFp32), in));
    ASSERT_EQ(run<uint16_t>(opt, spec(ConvertRule::kIeee, DType::kFp16, DType::kFp16), in),
              run<uint16_t>(precision_reference(), spec(ConvertRule::kIeee, DType::kFp16, DType::kFp16), in));
  }
}

TEST(PrecisionSampled, fp32_to_fp16_strided_reference_against_external_oracles) {
  const auto in = fp32_sample();
  const auto ieee = run<uint16_t>(precision_reference(), spec(ConvertRule::kIeee, DType::kFp32, DType::kFp16), in);
  const auto nvdla = run<uint16_t>(precision_reference(), spec(ConvertRule::kNvdla, DType::kFp32, DType::kFp16), in);
  const auto flushed =
      run<uint16_t>(precision_reference(), spec(ConvertRule::kNvdla, DType::kFp32, DType::kFp16, NvdlaUnit::kSdp, true), in);
  for (size_t i = 0; i < in.size(); ++i) {
    const uint16_t lib = fp16lib_f32_to_f16(in[i]);
    ASSERT_TRUE(same16(ieee[i], lib, true)) << std::hex << in[i] << " -> " << ieee[i] << " libfp16 " << lib;
    ASSERT_TRUE(same16(nvdla[i], nvdla_from_ieee(in[i], lib, false), true)) << std::hex << in[i];
    ASSERT_TRUE(same16(flushed[i], nvdla_from_ieee(in[i], lib, true), true)) << std::hex << in[i];
    ASSERT_NE(nvdla[i] & 0x7fff, 0x7c00) << std::hex << in[i] << ": INF under nvdla";
    if (kHaveFloat16) {
      const uint16_t f = float16_f32_to_f16(in[i]);
      ASSERT_TRUE(same16(ieee[i], f, true)) << std::hex << in[i] << " -> " << ieee[i] << " _Float16 " << f;
      ASSERT_TRUE(same16(nvdla[i], nvdla_from_ieee(in[i], f, false), true)) << std::hex << in[i];
    }
  }
  if (!cpu_has_f16c()) GTEST_SKIP() << "the CPU lacks F16C: compared with libfp16 and _Float16 only";
  std::vector<uint16_t> hw(in.size());
  f16c_f32_to_f16(in.data(), hw.data(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(ieee[i], hw[i]) << std::hex << in[i];
    ASSERT_EQ(nvdla[i], nvdla_from_ieee(in[i], hw[i], false)) << std::hex << in[i];
    ASSERT_EQ(flushed[i], nvdla_from_ieee(in[i], hw[i], true)) << std::hex << in[i];
  }
}

TEST(PrecisionSampled, fp32_to_fp16_and_bf16_strided_every_rule_unit_and_path) {
  const auto in = fp32_sample();
  std::vector<ConvertSpec> specs = {spec(ConvertRule::kIeee, DType::kFp32, DType::kFp16),
                                    spec(ConvertRule::kIeee, DType::kFp32, DType::kBf16),
                                    spec(ConvertRule::kIeee, DType::kFp32, DType::kFp32)};
  for (NvdlaUnit u : kUnits) {
    for (bool flush : {false, true}) {
      specs.push_back(spec(ConvertRule::kNvdla, DType::kFp32, DType::kFp16, u, flush));
      specs.push_back(spec(ConvertRule::kNvdla, DType::kFp32, DType::kFp32, u, flush));
    }
  }
  for (const ConvertSpec& s : specs) {
    NanCounts rn;
    std::vector<uint8_t> ref(in.size() * dtype_bits(s.to) / 8);
    ASSERT_TRUE(precision_reference().convert(s, in.data(), 4 * in.size(), ref.data(), ref.size(), &rn).ok());
    for (SimdPath p : simd_paths()) {
      NanCounts on;
      std::vector<uint8_t> opt(ref.size(), 0xee);
      ASSERT_TRUE(precision_optimized(p).convert(s, in.data(), 4 * in.size(), opt.data(), opt.size(), &on).ok());
      for (size_t i = 0; i < ref.size(); ++i) {
        ASSERT_EQ(opt[i], ref[i]) << to_string(s) << " " << simd_path_name(p) << " input " << std::hex
                                  << in[i / (dtype_bits(s.to) / 8)];
      }
      EXPECT_EQ(on.input, rn.input);
      EXPECT_EQ(on.output, rn.output);
    }
  }
}

TEST(PrecisionSampled, integer_equations_every_input_and_mode) {
  std::vector<uint16_t> in16 = {};
  for (uint32_t i = 0; i < 65536; ++i) in16.push_back(static_cast<uint16_t>(i));
  std::vector<uint8_t> in8;
  for (uint32_t i = 0; i < 256; ++i) in8.push_back(static_cast<uint8_t>(i));
  const float scales[] = {1.0f, 0.5f, -0.5f, 0.0078125f, 3.0f, 0.1f, -7.3f, 1e-30f, 1e30f, 0.0f, 1.5e-45f, 255.0f};
  const int32_t offsets[] = {0, 1, -1, 128, -32768, 65535, -65536, 12345};
  for (DType from : {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16}) {
    for (DType to : {DType::kInt8, DType::kInt16, DType::kFp16}) {
      for (TruncateMode mode : {TruncateMode::kNearestAway, TruncateMode::kNearestEven, TruncateMode::kTowardZero}) {
        for (float scale : scales) {
          for (int32_t offset : offsets) {
            ConvertSpec s = spec(ConvertRule::kNvdlaInt, from, to);
            s.scale = scale;
            s.offset = offset;
            s.truncate = mode;
            const void* src = dtype_bits(from) == 8 ? static_cast<const void*>(in8.data()) : in16.data();
            const size_t n = dtype_bits(from) == 8 ? in8.size() : in16.size();
            std::vector<uint8_t> ref(n * dtype_bits(to) / 8), opt(ref.size(), 0xee);
            ASSERT_TRUE(precision_reference().convert(s, src, n * dtype_bits(from) / 8, ref.data(), ref.size(), nullptr).ok());
            ASSERT_TRUE(precision_optimized().convert(s, src, n * dtype_bits(from) / 8, opt.data(), opt.size(), nullptr).ok());
            ASSERT_EQ(opt, ref) << to_string(s);
          }
        }
      }
    }
  }
}


TEST(PrecisionSampled, float_path_every_fp16_input_unit_and_mode) {
  std::vector<uint16_t> in;
  for (uint32_t i = 0; i < 65536; ++i) in.push_back(static_cast<uint16_t>(i));
  const float scales[] = {1.0f, 0.5f, -0.25f, 3.0f, 0.1f, -7.3f, 1e-30f, 1e30f, 0.0f, -0.0f, 1.5e-45f, 65536.0f};
  const int32_t offsets[] = {0, 1, -1, 1001, -32768, 65535, -65536, 12345};
  size_t compared = 0;
  for (NvdlaUnit unit : {NvdlaUnit::kConv, NvdlaUnit::kSdp}) {
    for (DType to : {DType::kInt16, DType::kFp16}) {
      for (TruncateMode mode : {TruncateMode::kNearestAway, TruncateMode::kNearestEven, TruncateMode::kTowardZero}) {
        for (bool flush : {false, true}) {
          for (float scale : scales) {
            for (int32_t offset : offsets) {
              ConvertSpec s = spec(ConvertRule::kNvdlaFloat, DType::kFp16, to, unit, flush);
              s.scale = scale;
              s.offset = offset;
              s.truncate = mode;
              if (!validate_convert(s, 0, 0).ok() || (to == DType::kFp16 && mode != kDefaultTruncate)) continue;
              std::vector<uint8_t> ref(2 * in.size()), opt(ref.size(), 0xee);
              NanCounts rn, on;
              ASSERT_TRUE(precision_reference().convert(s, in.data(), 2 * in.size(), ref.data(), ref.size(), &rn).ok());
              ASSERT_TRUE(precision_optimized().convert(s, in.data(), 2 * in.size(), opt.data(), opt.size(), &on).ok());
              for (size_t i = 0; i < in.size(); ++i) {
                ASSERT_EQ(opt[2 * i] | opt[2 * i + 1] << 8, ref[2 * i] | ref[2 * i + 1] << 8)
                    << to_string(s) << " input 0x" << std::hex << in[i];
              }
              EXPECT_EQ(on.input, rn.input);
              EXPECT_EQ(on.output, rn.output);
              ++compared;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(compared, 2u * 12 * 8 * (1 + 1 + 3));  // conv fp16, sdp fp16, sdp int16 in three modes
}

}  // namespace
}  // namespace layoutcheck::testing
