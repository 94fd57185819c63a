// Precision conversions: fp32 -> fp16 under the ieee and nvdla rules (optimized
// on each vector path, and the reference), beside a memcpy of the same input
// bytes. 4 Mi values = 16 MiB of fp32 per iteration.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "bench_util.h"
#include "layoutcheck/precision.h"

namespace layoutcheck {
namespace {

constexpr size_t kValues = size_t{1} << 22;

const std::vector<float>& inputs() {
  static const std::vector<float> v = [] {
    std::vector<float> out(kValues);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);
    for (float& x : out) x = dist(rng);
    return out;
  }();
  return v;
}

void register_conversion(const std::string& group, const ConvertSpec& s, const Converter& c, size_t values) {
  bench::register_row(group, std::string(convert_rule_name(s.rule)) + "/" + c.name(), values * 4,
                      [s, &c, values](benchmark::State& state) {
                        const auto& in = inputs();
                        std::vector<uint16_t> out(values);
                        for (auto _ : state) {
                          Status st = c.convert(s, in.data(), values * 4, out.data(), values * 2, nullptr);
                          if (!st.ok()) state.SkipWithError(st.message().c_str());
                          benchmark::DoNotOptimize(out.data());
                          benchmark::ClobberMemory();
                        }
                        state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * values));
                      });
}

const bool registered = [] {
  for (size_t values : {kValues, size_t{1} << 14}) {
    const std::string group = values == kValues ? "precision.fp32-fp16/16MiB" : "precision.fp32-fp16/64KiB";
    const uint64_t bytes = values * 4;
    bench::register_row(group, "memcpy", bytes, [bytes](benchmark::State& state) {
      bench::Buffer src(bytes, 1), dst(bytes, 0);
      for (auto _ : state) {
        std::memcpy(dst.data(), src.data(), bytes);
        benchmark::DoNotOptimize(dst.data());
        benchmark::ClobberMemory();
      }
    });
    for (ConvertRule rule : {ConvertRule::kIeee, ConvertRule::kNvdla}) {
      ConvertSpec s;
      s.rule = rule;
      s.from = DType::kFp32;
      s.to = DType::kFp16;
      for (SimdPath p : {SimdPath::kAvx512, SimdPath::kF16cAvx2, SimdPath::kPortable}) {
        if (simd_path_available(p)) register_conversion(group, s, precision_optimized(p), values);
      }
      if (values == kValues) register_conversion(group, s, precision_reference(), values);
    }
  }
  return true;
}();

}  // namespace
}  // namespace layoutcheck
