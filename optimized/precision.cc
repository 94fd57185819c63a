// The optimized precision conversions: vector kernels for fp32 <-> fp16 (F16C +
// AVX2, AVX-512, or the portable bit-twiddling below, chosen at run time), the
// other float pairs through an fp32 block, and the integer equations in double
// arithmetic. Equal to the reference because:
//  - fp16 and bf16 values are exact in fp32, so a conversion through fp32 rounds once;
//  - the nvdla rule is a clamp in fp32 before rounding (precision_kernels.h);
//  - (d - offset) * SF is exact in a double (|d - offset| < 2^17, SF has 24 bits), so
//    round/nearbyint/trunc see the exact product, and fp16 is reached through fp32
//    rounded to odd, which then rounds to fp16 as the exact value would;
//  - nvdla-float in fp32 (unit sdp) is fp32 hardware arithmetic: fp16 and the offset
//    are exact in fp32, so d - offset and the product with SF round once each, to
//    nearest even; an overflow (INF) is clipped and a denormal product flushed, which
//    changes no output (every such value is far below half an fp16 denormal or an
//    integer). fp17 (unit conv) is emulated in doubles: d - offset and the product are
//    exact in a double and scaled to 11 integer bits, where nearbyint rounds to even.
#include <cfloat>
#include <cmath>
#include <algorithm>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <cstring>

#include "layoutcheck/precision.h"
#include "optimized/isa.h"
#include "optimized/precision_kernels.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the optimized conversions read little-endian values natively");

namespace layoutcheck {
namespace precision_kernels {
namespace {

inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint16_t load16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// The clamp on bit patterns (no float compare touches a NaN).
inline uint32_t clamp_bits(uint32_t x, const NvdlaClamp& c) {
  const uint32_t sign = x & 0x80000000u, abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return c.flush_nan ? 0 : x;
  const uint32_t max = float_to_bits(c.max);
  const uint32_t value = abs == 0x7f800000u ? float_to_bits(c.inf_value) : abs;
  return sign | (value > max ? max : value);  // positive floats order as their bits
}

// fp32 -> fp16, round to nearest even, on the bits.
inline uint16_t f32_to_f16_bits(uint32_t x) {
  const uint32_t sign = (x >> 16) & 0x8000u, abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 and INF
  if (abs < 0x38800000u) {                                             // below 2^-14: subnormal fp16
    const uint32_t e = abs >> 23;
    if (e < 102) return static_cast<uint16_t>(sign);  // below 2^-25: to zero
    const uint32_t m = (abs & 0x7fffffu) | 0x800000u, shift = 126 - e;
    uint32_t n = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    n += (rem > half || (rem == half && (n & 1))) ? 1 : 0;
    return static_cast<uint16_t>(sign | n);
  }
  // Rebias the exponent, add just under half an fp16 ulp plus the ulp's low bit, truncate.
  const uint32_t rounded = abs - (112u << 23) + 0xfffu + ((abs >> 13) & 1u);
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

// fp16 -> fp32, exact; a NaN is made quiet.
inline uint32_t f16_to_f32_bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, f = h & 0x3ffu;
  if (e == 31) return sign | 0x7f800000u | (f ? 0x400000u | (f << 13) : 0);
  if (e != 0) return sign | ((e + 112) << 23) | (f << 13);
  if (f == 0) return sign;
  int k = 9;  // the leading bit of a subnormal: value = f * 2^-24
  while (((f >> k) & 1) == 0) --k;
  return sign | (static_cast<uint32_t>(k + 103) << 23) | ((f << (23 - k)) & 0x7fffffu);
}

void f32_to_f16_portable(const uint8_t* src, uint8_t* dst, size_t n, const NvdlaClamp* clamp) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t x = load32(src + 4 * i);
    if (clamp) x = clamp_bits(x, *clamp);
    const uint16_t h = f32_to_f16_bits(x);
    std::memcpy(dst + 2 * i, &h, 2);
  }
}

void f16_to_f32_portable(const uint8_t* src, uint8_t* dst, size_t n, const NvdlaClamp* clamp) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t x = f16_to_f32_bits(load16(src + 2 * i));
    if (clamp) x = clamp_bits(x, *clamp);
    std::memcpy(dst + 4 * i, &x, 4);
  }
}

}  // namespace

Kernels portable_kernels() { return {&f32_to_f16_portable, &f16_to_f32_portable}; }

}  // namespace precision_kernels

namespace {

using namespace precision_kernels;

// fp32 -> bf16, round to nearest even; a NaN is made quiet.
inline uint16_t f32_to_bf16_bits(uint32_t x) {
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline uint32_t bf16_to_f32_bits(uint16_t h) {
  const uint32_t x = static_cast<uint32_t>(h) << 16;
  return (x & 0x7fffffffu) > 0x7f800000u ? x | 0x400000u : x;
}
inline uint32_t quiet_f32(uint32_t x) { return (x & 0x7fffffffu) > 0x7f800000u ? x | 0x400000u : x; }

NvdlaClamp clamp_for(const ConvertSpec& s, DType to) {
  return {s.flush_nan, bits_to_float(nvdla_inf_value_bits(s.unit)), to == DType::kFp16 ? 65504.0f : FLT_MAX};
}

uint64_t count_nans(DType t, const uint8_t* p, size_t n) {
  uint64_t count = 0;
  if (t == DType::kFp32) {
    for (size_t i = 0; i < n; ++i) count += (load32(p + 4 * i) & 0x7fffffffu) > 0x7f800000u;
  } else if (t == DType::kFp16) {
    for (size_t i = 0; i < n; ++i) count += (load16(p + 2 * i) & 0x7fffu) > 0x7c00u;
  } else if (t == DType::kBf16) {
    for (size_t i = 0; i < n; ++i) count += (load16(p + 2 * i) & 0x7fffu) > 0x7f80u;
  }
  return count;
}

// fp32 rounded to odd from a double: the truncation, with the last bit set when
// inexact. Rounding that to fp16 (13 bits shorter) equals rounding the double.
float round_to_odd_f32(double d) {
  if (std::fabs(d) > static_cast<double>(FLT_MAX)) return d > 0 ? FLT_MAX : -FLT_MAX;
  float f = static_cast<float>(d);
  if (static_cast<double>(f) != d) {
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
    f = bits_to_float(float_to_bits(f) | 1u);
  }
  return f;
}

class OptimizedConverter : public Converter {
 public:
  OptimizedConverter(SimdPath path, Kernels k) : path_(path), k_(k) {}
  std::string name() const override { return std::string("optimized-") + simd_path_name(path_); }

  Status convert(const ConvertSpec& s, const void* src, size_t src_bytes, void* dst, size_t dst_bytes,
                 NanCounts* nan) const override {
    LC_RETURN_IF_ERROR(validate_convert(s, src_bytes, dst_bytes));
    const auto* in = static_cast<const uint8_t*>(src);
    auto* out = static_cast<uint8_t*>(dst);
    const size_t n = src_bytes / (dtype_bits(s.from) / 8);
    if (s.rule == ConvertRule::kNvdlaInt) {
      convert_int(s, in, out, n);
    } else if (s.rule == ConvertRule::kNvdlaFloat) {
      convert_float_path(s, in, out, n);
    } else {
      convert_float(s, in, out, n);
    }
    if (nan) {
      nan->input = count_nans(s.from, in, n);
      nan->output = count_nans(s.to, out, n);
    }
    return Status();
  }

 private:
  void convert_float(const ConvertSpec& s, const uint8_t* in, uint8_t* out, size_t n) const {
    const bool nvdla = s.rule == ConvertRule::kNvdla;
    const NvdlaClamp clamp = clamp_for(s, s.to);
    const NvdlaClamp* c = nvdla ? &clamp : nullptr;
    if (s.from == DType::kFp32 && s.to == DType::kFp16) return k_.f32_to_f16(in, out, n, c);
    if (s.from == DType::kFp16 && s.to == DType::kFp32) return k_.f16_to_f32(in, out, n, c);
    // Other pairs: widen a block to fp32 (exact), then narrow it.
    constexpr size_t kBlock = 1024;
    alignas(64) uint8_t block[4 * kBlock];
    const size_t from_bytes = dtype_bits(s.from) / 8, to_bytes = dtype_bits(s.to) / 8;
    for (size_t i = 0; i < n; i += kBlock) {
      const size_t m = std::min(kBlock, n - i);
      const uint8_t* src = in + i * from_bytes;
      uint8_t* dst = out + i * to_bytes;
      switch (s.from) {
        case DType::kFp16: k_.f16_to_f32(src, block, m, nullptr); break;
        case DType::kBf16:
          for (size_t j = 0; j < m; ++j) {
            const uint32_t x = bf16_to_f32_bits(load16(src + 2 * j));
            std::memcpy(block + 4 * j, &x, 4);
          }
          break;
        default: std::memcpy(block, src, 4 * m); break;
      }
      switch (s.to) {
        case DType::kFp16: k_.f32_to_f16(block, dst, m, c); break;
        case DType::kBf16:
          for (size_t j = 0; j < m; ++j) {
            const uint16_t h = f32_to_bf16_bits(load32(block + 4 * j));
            std::memcpy(dst + 2 * j, &h, 2);
          }
          break;
        default:
          for (size_t j = 0; j < m; ++j) {
            uint32_t x = quiet_f32(load32(block + 4 * j));
            if (c) x = quiet_f32(clamp_bits(x, clamp));
            std::memcpy(dst + 4 * j, &x, 4);
          }
          break;
      }
    }
  }

  // x to `bits` significant bits, to nearest even, with fp17's range: clipped above its
  // largest value, flushed below its smallest normal 2^-30.
  static double round_fp17(double x) {
    if (x == 0) return x;
    const int e = std::ilogb(x);
    double r = std::ldexp(std::nearbyint(std::ldexp(x, 10 - e)), e - 10);
    const double max = std::ldexp(2047.0, 21);  // (2 - 2^-10) * 2^31
    if (std::fabs(r) > max) r = std::copysign(max, r);
    if (std::fabs(r) < std::ldexp(1.0, -30)) r = std::copysign(0.0, r);
    return r;
  }

  void convert_float_path(const ConvertSpec& s, const uint8_t* in, uint8_t* out, size_t n) const {
    const bool fp17 = s.unit != NvdlaUnit::kSdp;
    const float inf_value = bits_to_float(nvdla_inf_value_bits(s.unit));
    const float offset32 = static_cast<float>(s.offset);
    const NvdlaClamp clip{false, 65504.0f, 65504.0f};
    for (size_t i = 0; i < n; ++i) {
      const uint16_t h = load16(in + 2 * i);
      float d = bits_to_float(f16_to_f32_bits(h));
      if (std::isnan(d)) {
        if (!s.flush_nan) {
          if (s.to == DType::kFp16) {
            const uint16_t q = static_cast<uint16_t>(h | 0x200u);
            std::memcpy(out + 2 * i, &q, 2);
          } else {
            std::memset(out + 2 * i, 0, 2);
          }
          continue;
        }
        d = 0.0f;
      }
      if (std::isinf(d)) d = std::copysign(inf_value, d);
      float p;
      if (fp17) {
        const double t = round_fp17(static_cast<double>(d) - static_cast<double>(s.offset));
        p = static_cast<float>(round_fp17(t * static_cast<double>(s.scale)));  // 11 bits: exact in fp32
      } else {
        const volatile float t = d - offset32;
        p = t * s.scale;
        if (std::isinf(p)) p = std::copysign(FLT_MAX, p);
        if (std::fabs(p) < FLT_MIN) p = std::copysign(0.0f, p);
      }
      if (s.to == DType::kFp16) {
        const uint16_t r = f32_to_f16_bits(clamp_bits(float_to_bits(p), clip));
        std::memcpy(out + 2 * i, &r, 2);
        continue;
      }
      const double pd = static_cast<double>(p);
      double r = s.truncate == TruncateMode::kNearestAway   ? std::round(pd)
                 : s.truncate == TruncateMode::kNearestEven ? std::nearbyint(pd)
                                                            : std::trunc(pd);
      r = r > 32767.0 ? 32767.0 : r < -32768.0 ? -32768.0 : r;
      const auto v = static_cast<uint16_t>(static_cast<int16_t>(r));
      std::memcpy(out + 2 * i, &v, 2);
    }
  }

  void convert_int(const ConvertSpec& s, const uint8_t* in, uint8_t* out, size_t n) const {
    const double scale = static_cast<double>(s.scale);
    const uint32_t width = dtype_bits(s.to);
    const double max = std::ldexp(1.0, static_cast<int>(width) - 1) - 1, min = -max - 1;
    const NvdlaClamp clip{false, 65504.0f, 65504.0f};
    for (size_t i = 0; i < n; ++i) {
      int64_t d = 0;
      switch (s.from) {
        case DType::kInt8: d = static_cast<int8_t>(in[i]); break;
        case DType::kUInt8: d = in[i]; break;
        case DType::kInt16: d = static_cast<int16_t>(load16(in + 2 * i)); break;
        default: d = load16(in + 2 * i); break;
      }
      double product = static_cast<double>(d - s.offset) * scale;
      if (product == 0) product = 0;  // an exact zero is +0
      if (s.to == DType::kFp16) {
        const uint32_t x = clamp_bits(float_to_bits(round_to_odd_f32(product)), clip);
        const uint16_t h = f32_to_f16_bits(x);
        std::memcpy(out + 2 * i, &h, 2);
        continue;
      }
      double r = s.truncate == TruncateMode::kNearestAway   ? std::round(product)
                 : s.truncate == TruncateMode::kNearestEven ? std::nearbyint(product)
                                                            : std::trunc(product);
      r = r > max ? max : r < min ? min : r;
      const auto v = static_cast<int64_t>(r);
      if (width == 8) {
        out[i] = static_cast<uint8_t>(v);
      } else {
        const auto h = static_cast<uint16_t>(v);
        std::memcpy(out + 2 * i, &h, 2);
      }
    }
  }

  SimdPath path_;
  Kernels k_;
};

#if defined(__x86_64__)
bool cpuid_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
}
#endif

bool cpu_has(SimdPath p) {
#if defined(__x86_64__)
  switch (p) {
    case SimdPath::kAuto:
    case SimdPath::kPortable: return true;
    case SimdPath::kF16cAvx2:
      // clang 14 has no "f16c" for __builtin_cpu_supports: the CPUID bit, with AVX2
      // (whose check includes the OS saving the ymm registers).
      return f16c_avx2_kernels().f32_to_f16 != nullptr && __builtin_cpu_supports("avx2") && cpuid_f16c();
    case SimdPath::kAvx512:
      return avx512_kernels().f32_to_f16 != nullptr && __builtin_cpu_supports("avx512f");
  }
  return false;
#else
  return p == SimdPath::kAuto || p == SimdPath::kPortable;
#endif
}

}  // namespace

const char* simd_path_name(SimdPath p) {
  switch (p) {
    case SimdPath::kAuto: return "auto";
    case SimdPath::kPortable: return "portable";
    case SimdPath::kF16cAvx2: return "f16c-avx2";
    case SimdPath::kAvx512: return "avx512";
  }
  return "?";
}

bool simd_path_available(SimdPath p) { return cpu_has(p); }

const Converter& precision_optimized(SimdPath path) {
  static const OptimizedConverter portable(SimdPath::kPortable, portable_kernels());
  static const OptimizedConverter f16c(SimdPath::kF16cAvx2,
                                       cpu_has(SimdPath::kF16cAvx2) ? f16c_avx2_kernels() : portable_kernels());
  static const OptimizedConverter avx512(SimdPath::kAvx512,
                                         cpu_has(SimdPath::kAvx512) ? avx512_kernels() : portable_kernels());
  switch (path) {
    case SimdPath::kPortable: return portable;
    case SimdPath::kF16cAvx2: return f16c;
    case SimdPath::kAvx512: return avx512;
    case SimdPath::kAuto: break;
  }
  // The automatic choice follows the level the layout kernels use (LAYOUTCHECK_ISA, IsaCapScope).
  if (isa_at_least(Isa::kAvx512) && cpu_has(SimdPath::kAvx512)) return avx512;
  if (isa_at_least(Isa::kAvx2) && cpu_has(SimdPath::kF16cAvx2)) return f16c;
  return portable;
}

}  // namespace layoutcheck
