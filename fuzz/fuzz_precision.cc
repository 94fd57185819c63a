// Differential fuzzer of the precision rules: the optimized converter (every
// vector path the CPU has) against the reference, on (rule, dtypes, unit, flags,
// offset, scale, value bytes). Bad specs must be rejected alike.
// Input: 13 header bytes, then the raw little-endian values:
//   rule, from, to, unit, flags (bit 0 flush-nan, bits 1-2 truncate mode, bits 3-4 path),
//   offset (int32), scale (fp32 bits).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_util.h"
#include "layoutcheck/precision.h"

using namespace layoutcheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Bytes in(data, size);
  ConvertSpec s;
  s.rule = static_cast<ConvertRule>(in.take(1) % 4);
  s.from = static_cast<DType>(in.take(1) % 12);
  s.to = static_cast<DType>(in.take(1) % 12);
  s.unit = static_cast<NvdlaUnit>(in.take(1) % 7);
  const auto flags = static_cast<uint32_t>(in.take(1));
  s.flush_nan = (flags & 1) != 0;
  s.truncate = static_cast<TruncateMode>((flags >> 1) & 3);
  const auto path = static_cast<SimdPath>((flags >> 3) & 3);
  s.offset = static_cast<int32_t>(static_cast<uint32_t>(in.take(4)));
  const auto scale_bits = static_cast<uint32_t>(in.take(4));
  std::memcpy(&s.scale, &scale_bits, 4);
  const size_t header = 13;
  const uint8_t* values = size > header ? data + header : data;
  const size_t bytes = size > header ? size - header : 0;

  const size_t from_bytes = dtype_bits(s.from) / 8 ? dtype_bits(s.from) / 8 : 1;
  const size_t to_bytes = dtype_bits(s.to) / 8 ? dtype_bits(s.to) / 8 : 1;
  const size_t out_bytes = bytes / from_bytes * to_bytes;
  std::vector<uint8_t> a(out_bytes, 0x11), b(out_bytes, 0x22);
  NanCounts na, nb;
  const Converter& opt = precision_optimized(path);
  Status sa = precision_reference().convert(s, values, bytes, a.data(), a.size(), &na);
  Status sb = opt.convert(s, values, bytes, b.data(), b.size(), &nb);
  if (sa.code() != sb.code() || sa.message() != sb.message()) {
    std::fprintf(stderr, "status differs for %s: reference '%s', %s '%s'\n", to_string(s).c_str(),
                 sa.to_string().c_str(), opt.name().c_str(), sb.to_string().c_str());
    std::abort();
  }
  if (!sa.ok()) return 0;
  if (a != b || na.input != nb.input || na.output != nb.output) {
    size_t first = 0;
    while (first < a.size() && a[first] == b[first]) ++first;
    std::fprintf(stderr, "%s: reference and %s differ at output byte %zu (NaN counts %llu/%llu vs %llu/%llu)\n",
                 to_string(s).c_str(), opt.name().c_str(), first, static_cast<unsigned long long>(na.input),
                 static_cast<unsigned long long>(na.output), static_cast<unsigned long long>(nb.input),
                 static_cast<unsigned long long>(nb.output));
    std::abort();
  }
  return 0;
}
