#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "layoutcheck/precision.h"
#include "precision_support.h"

namespace layoutcheck::testing {
namespace {

constexpr uint64_t kAll = uint64_t{1} << 32;
constexpr size_t kChunk = size_t{1} << 16;

void fill_chunk(uint64_t start, std::vector<uint32_t>* in) {
  in->resize(kChunk);
  for (size_t i = 0; i < kChunk; ++i) (*in)[i] = static_cast<uint32_t>(start + i);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(PrecisionAllFp32, optimized_ieee_and_nvdla_against_f16c) {
  if (!cpu_has_f16c()) GTEST_SKIP() << "the CPU lacks F16C, the oracle of this sweep";
  const Converter& opt = precision_optimized();
  const ConvertSpec ieee = spec(ConvertRule::kIeee, DType::kFp32, DType::kFp16);
  const ConvertSpec nvdla = spec(ConvertRule::kNvdla, DType::kFp32, DType::kFp16);
  std::vector<uint32_t> in;
  std::vector<uint16_t> hw(kChunk), a(kChunk), b(kChunk);
  double optimized_seconds = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t start = 0; start < kAll; start += kChunk) {
    fill_chunk(start, &in);
    const auto t = std::chrono::steady_clock::now();
    ASSERT_TRUE(opt.convert(ieee, in.data(), 4 * kChunk, a.data(), 2 * kChunk, nullptr).ok());
    ASSERT_TRUE(opt.convert(nvdla, in.data(), 4 * kChunk, b.data(), 2 * kChunk, nullptr).ok());
    optimized_seconds += seconds_since(t);
    f16c_f32_to_f16(in.data(), hw.data(), kChunk);
    for (size_t i = 0; i < kChunk; ++i) {
      if (a[i] != hw[i] || b[i] != nvdla_from_ieee(in[i], hw[i], false)) {
        FAIL() << std::hex << "input 0x" << in[i] << ": ieee 0x" << a[i] << " nvdla 0x" << b[i] << ", F16C 0x"
               << hw[i] << " (" << opt.name() << ")";
      }
    }
  }
  std::printf("all 2^32 fp32 -> fp16, ieee + nvdla, %s: %.1f s converting (%.1f s with the F16C comparison)\n",
              opt.name().c_str(), optimized_seconds, seconds_since(t0));
}

void reference_sweep(const ConvertSpec& s, bool nvdla) {
  const Converter& ref = precision_reference();
  const Converter& opt = precision_optimized();
  std::vector<uint32_t> in;
  std::vector<uint16_t> r(kChunk), o(kChunk);
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t start = 0; start < kAll; start += kChunk) {
    fill_chunk(start, &in);
    ASSERT_TRUE(ref.convert(s, in.data(), 4 * kChunk, r.data(), 2 * kChunk, nullptr).ok());
    ASSERT_TRUE(opt.convert(s, in.data(), 4 * kChunk, o.data(), 2 * kChunk, nullptr).ok());
    for (size_t i = 0; i < kChunk; ++i) {
      const uint16_t lib = fp16lib_f32_to_f16(in[i]);
      const uint16_t expected_lib = nvdla ? nvdla_from_ieee(in[i], lib, false) : lib;
      if (r[i] != o[i] || !same16(r[i], expected_lib, true)) {
        FAIL() << std::hex << to_string(s) << " input 0x" << in[i] << ": reference 0x" << r[i] << ", " << opt.name()
               << " 0x" << o[i] << ", libfp16 0x" << expected_lib;
      }
    }
  }
  std::printf("all 2^32 fp32 -> fp16, %s: reference, optimized and libfp16 agree (%.1f s)\n", to_string(s).c_str(),
              seconds_since(t0));
}

TEST(PrecisionAllFp32, reference_ieee_against_optimized_and_libfp16) {
  reference_sweep(spec(ConvertRule::kIeee, DType::kFp32, DType::kFp16), false);
}

TEST(PrecisionAllFp32, reference_nvdla_against_optimized_and_libfp16) {
  reference_sweep(spec(ConvertRule::kNvdla, DType::kFp32, DType::kFp16), true);
}

}  // namespace
}  // namespace layoutcheck::testing
