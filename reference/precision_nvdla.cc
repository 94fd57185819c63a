// The precision rules in executable form, value by value, with exact integer
// arithmetic on the bit patterns. Document: nvdla-in-memory-data-formats.txt,
// sections "Precision Type", "Precision Conversion", "FP16 Supporting"; IEEE 754
// for the `ieee` rule. No floating-point arithmetic is used to compute a result.
#include <cstdint>
#include <cstring>

#include "layoutcheck/precision.h"

namespace layoutcheck {
namespace {

// A binary floating-point format: `precision` significand bits including the
// hidden bit, normal exponents emin..emax (bias = emax).
struct FloatFormat {
  int bits;
  int precision;
  int emin;
  int emax;
};
constexpr FloatFormat kFp32{32, 24, -126, 127};
constexpr FloatFormat kFp16{16, 11, -14, 15};  // "16-bit floating point data, ... half-precision" (Precision Type)
constexpr FloatFormat kBf16{16, 8, -126, 127};

FloatFormat format_of(DType t) { return t == DType::kFp32 ? kFp32 : t == DType::kFp16 ? kFp16 : kBf16; }

enum class Class { kZero, kFinite, kInf, kNaN };

// A decoded value: (-1)^sign * m * 2^q exactly, or INF, or NaN with its payload.
struct Value {
  Class cls;
  bool sign;
  uint64_t m;
  int q;
  uint64_t payload;  // fraction field of a NaN
  int payload_bits;  // width of that field
};

Value decode(const FloatFormat& f, uint64_t bits) {
  const int frac_bits = f.precision - 1;
  const int exp_bits = f.bits - f.precision;
  const uint64_t frac = bits & ((uint64_t{1} << frac_bits) - 1);
  const uint64_t exp = (bits >> frac_bits) & ((uint64_t{1} << exp_bits) - 1);
  Value v{Class::kFinite, ((bits >> (f.bits - 1)) & 1) != 0, 0, 0, 0, frac_bits};
  if (exp == (uint64_t{1} << exp_bits) - 1) {  // all-ones exponent: INF or NaN
    v.cls = frac == 0 ? Class::kInf : Class::kNaN;
    v.payload = frac;
  } else if (exp == 0) {  // zero or subnormal: frac * 2^(emin - (p-1))
    v.cls = frac == 0 ? Class::kZero : Class::kFinite;
    v.m = frac;
    v.q = f.emin - frac_bits;
  } else {  // normal: (2^(p-1) + frac) * 2^(exp - bias - (p-1))
    v.m = frac | (uint64_t{1} << frac_bits);
    v.q = static_cast<int>(exp) - f.emax - frac_bits;
  }
  return v;
}

// What a result beyond the largest finite value becomes.
enum class Overflow {
  kInfinity,  // IEEE 754 round to nearest: INF
  kClip,      // "If the result is exceeding maximal normal value, it will be clipped to max
              // normalized value." (FP16 Supporting, Rounding); INF too: "There won't be any
              // INF output from any NVDLA sub-module" (FP16 Supporting, Infinity)
};

uint64_t sign_bit(const FloatFormat& f, bool sign) { return sign ? uint64_t{1} << (f.bits - 1) : 0; }

uint64_t largest_finite(const FloatFormat& f, bool sign) {
  const int frac_bits = f.precision - 1;
  return sign_bit(f, sign) | (static_cast<uint64_t>(2 * f.emax) << frac_bits) | ((uint64_t{1} << frac_bits) - 1);
}

uint64_t infinity(const FloatFormat& f, bool sign) {
  return sign_bit(f, sign) | (static_cast<uint64_t>(2 * f.emax + 1) << (f.precision - 1));
}

// A NaN keeps its sign and the leading bits of its payload, and is quiet (IEEE 754
// 6.2.3; the NVDLA leaves the mantissa of a propagated NaN undefined, ERRATA 4).
uint64_t quiet_nan(const FloatFormat& f, const Value& v) {
  const int frac_bits = f.precision - 1;
  uint64_t payload = frac_bits >= v.payload_bits ? v.payload << (frac_bits - v.payload_bits)
                                                 : v.payload >> (v.payload_bits - frac_bits);
  payload |= uint64_t{1} << (frac_bits - 1);
  return infinity(f, v.sign) | payload;
}

// (-1)^sign * m * 2^q rounded to nearest, ties to even (IEEE 754 4.3.1), with
// gradual underflow (subnormals, "completely following the requirement of IEEE754
// standard", FP16 Supporting, Denormalized value).
uint64_t round_to_format(const FloatFormat& f, bool sign, uint64_t m, int q, Overflow overflow) {
  const int p = f.precision;
  if (m == 0) return sign_bit(f, sign);
  const int msb = 63 - __builtin_clzll(m);        // the leading bit of m
  const int e = q + msb;                         // m * 2^q lies in [2^e, 2^(e+1))
  int qe = (e < f.emin ? f.emin : e) - (p - 1);  // the spacing of the format there
  uint64_t n;                                    // m * 2^q = n * 2^qe, n an integer after rounding
  if (q >= qe) {
    n = m << (q - qe);
  } else {
    const int shift = qe - q;
    if (shift >= 64) {
      n = 0;  // m < 2^63 <= half of 2^shift: below half a spacing
    } else {
      n = m >> shift;
      const uint64_t rem = m & ((uint64_t{1} << shift) - 1);
      const uint64_t half = uint64_t{1} << (shift - 1);
      if (rem > half || (rem == half && (n & 1) != 0)) ++n;
    }
  }
  if (n == uint64_t{1} << p) {  // rounded up to the next power of two
    n >>= 1;
    ++qe;
  }
  if (n == 0) return sign_bit(f, sign);
  if (n < uint64_t{1} << (p - 1)) return sign_bit(f, sign) | n;  // subnormal: qe == emin - (p-1)
  const int exponent = qe + (p - 1);
  if (exponent > f.emax) return overflow == Overflow::kClip ? largest_finite(f, sign) : infinity(f, sign);
  return sign_bit(f, sign) | (static_cast<uint64_t>(exponent + f.emax) << (p - 1)) | (n - (uint64_t{1} << (p - 1)));
}

uint64_t load_le(const uint8_t* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

void store_le(uint8_t* p, size_t bytes, uint64_t v) {
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Rule `ieee`: IEEE 754 convertFormat, round to nearest even; INF stays INF.
uint64_t convert_ieee(const FloatFormat& from, const FloatFormat& to, uint64_t bits) {
  const Value v = decode(from, bits);
  switch (v.cls) {
    case Class::kNaN: return quiet_nan(to, v);
    case Class::kInf: return infinity(to, v.sign);
    case Class::kZero: return sign_bit(to, v.sign);
    case Class::kFinite: break;
  }
  return round_to_format(to, v.sign, v.m, v.q, Overflow::kInfinity);
}

// Rule `nvdla` (FP16 Supporting):
//   NaN:  "If the register is set, all input NaNs are treated as zero value ... Otherwise
//         input NaNs propagate to output."
//   INF:  "NVDLA treats infinity value as different normalized value module by module"
//         (the INF converted values table), then "if saturation happens, NVDLA will output
//         the maximum representable (+/-65504 for FP16 ...)".
//   else: "Rounding to Nearest (or RN) in calculation except overflow case. If the result is
//         exceeding maximal normal value, it will be clipped to max normalized value."
uint64_t convert_nvdla(const ConvertSpec& s, const FloatFormat& from, const FloatFormat& to, uint64_t bits) {
  Value v = decode(from, bits);
  if (v.cls == Class::kNaN) return s.flush_nan ? 0 : quiet_nan(to, v);
  if (v.cls == Class::kInf) {
    const Value unit = decode(kFp32, nvdla_inf_value_bits(s.unit));
    if (unit.cls == Class::kInf) return largest_finite(to, v.sign);  // PDP max/min: INF, then saturation
    v.cls = Class::kFinite;
    v.m = unit.m;
    v.q = unit.q;
  }
  if (v.cls == Class::kZero) return sign_bit(to, v.sign);
  return round_to_format(to, v.sign, v.m, v.q, Overflow::kClip);
}

int64_t integer_value(DType t, uint64_t bits) {
  const uint32_t width = dtype_bits(t);
  if (dtype_info(t).kind == DTypeKind::kSignedInt && ((bits >> (width - 1)) & 1) != 0) {
    return static_cast<int64_t>(bits) - (int64_t{1} << width);
  }
  return static_cast<int64_t>(bits);
}

// truncate2int8 / truncate2int16 of (-1)^sign * m * 2^q: to an integer as the
// truncate mode reads it (ERRATA 2), then "if saturation happens, NVDLA will output the
// maximum representable (... 32767/-32768 for INT16, 127/-128 for INT8)" (FP16 Supporting).
uint64_t truncate_to_int(DType to, TruncateMode mode, bool sign, uint64_t m, int q) {
  const int width = static_cast<int>(dtype_bits(to));
  const int64_t max = (int64_t{1} << (width - 1)) - 1, min = -max - 1;
  bool beyond = false;  // |value| >= 2^62: saturates whatever the rounding
  uint64_t n = 0;
  if (m != 0 && q >= 0) {
    if (q >= 62 || (m >> (62 - q)) != 0) {
      beyond = true;
    } else {
      n = m << q;
    }
  } else if (m != 0) {
    const int shift = -q;
    uint64_t rem = m, half = 0;
    if (shift < 64) {
      n = m >> shift;
      rem = m & ((uint64_t{1} << shift) - 1);
      half = uint64_t{1} << (shift - 1);
    }
    // shift >= 64: n = 0 and the fraction m * 2^q < 2^63 * 2^-64 is below one half.
    const bool above_half = shift < 64 && rem > half, at_half = shift < 64 && rem == half;
    switch (mode) {
      case TruncateMode::kNearestAway: n += above_half || at_half ? 1 : 0; break;
      case TruncateMode::kNearestEven: n += above_half || (at_half && (n & 1) != 0) ? 1 : 0; break;
      case TruncateMode::kTowardZero: break;
    }
  }
  int64_t value = beyond ? (sign ? min : max) : sign ? -static_cast<int64_t>(n) : static_cast<int64_t>(n);
  if (value > max) value = max;
  if (value < min) value = min;
  return static_cast<uint64_t>(value) & ((uint64_t{1} << width) - 1);
}

// Rule `nvdla-int`, Equation 1 (pixel precision conversion) and Equation 3 (int16 <-> int8):
//   d_int8  = truncate2int8((d - offset) * SF)
//   d_int16 = truncate2int16((d - offset) * SF)
//   d_fp16  = int2fp((d - offset) * SF)
// "SF refers to scaling factor, offset refers to offset value. They are both given by
// programmable register fields." SF is an fp32 value; the product is kept exact.
uint64_t convert_int(const ConvertSpec& s, uint64_t bits) {
  const int64_t difference = integer_value(s.from, bits) - s.offset;
  uint32_t scale_bits;
  std::memcpy(&scale_bits, &s.scale, sizeof scale_bits);
  const Value sf = decode(kFp32, scale_bits);
  const bool sign = (difference < 0) != sf.sign;
  const uint64_t magnitude = static_cast<uint64_t>(difference < 0 ? -difference : difference);
  const uint64_t m = magnitude * sf.m;  // < 2^17 * 2^24
  const int q = sf.q;
  if (s.to == DType::kFp16) {
    // int2fp: the exact product rounded once to fp16, clipped on overflow (ERRATA 5).
    return round_to_format(kFp16, sign && m != 0, m, q, Overflow::kClip);
  }
  return truncate_to_int(s.to, s.truncate, sign, m, q);
}

// A value of an internal format: (-1)^sign * m * 2^q, m == 0 for a zero.
struct Internal {
  bool sign;
  uint64_t m;
  int q;
};

// Rounds (-1)^sign * m * 2^q to the internal format: "Rounding to Nearest (or RN) in
// calculation except overflow case. If the result is exceeding maximal normal value, it
// will be clipped to max normalized value" (FP16 Supporting, Rounding), ties to even;
// "These fp17 and fp32 format doesn't support denormalized value during calculation"
// (Denormalized value): a result below the smallest normal value is a zero of its sign
// (ERRATA NVDLA precision 13).
Internal round_internal(const NvdlaInternalFormat& f, bool sign, uint64_t m, int q) {
  if (m == 0) return {sign, 0, 0};
  const int p = f.precision;
  const int msb = 63 - __builtin_clzll(m);
  if (msb >= p) {  // drop msb + 1 - p bits, to nearest, ties to even
    const int shift = msb + 1 - p;
    uint64_t n = m >> shift;
    const uint64_t rem = m & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (n & 1) != 0)) ++n;
    m = n;
    q += shift;
    if (m == uint64_t{1} << p) {
      m >>= 1;
      ++q;
    }
  }
  const int e = q + (63 - __builtin_clzll(m));  // the value lies in [2^e, 2^(e+1))
  if (e > f.emax) return {sign, (uint64_t{1} << p) - 1, f.emax - (p - 1)};  // the largest normal value
  if (e < f.emin) return {sign, 0, 0};
  return {sign, m, q};
}

// x - offset, exactly, then rounded: the first operation of (d - offset) * SF. IEEE 754
// signs a zero difference: +0 unless both operands are zeros of opposite signs (-0 - (+0)).
Internal subtract_offset(const NvdlaInternalFormat& f, const Internal& x, int32_t offset) {
  if (offset == 0) return x;  // x - (+0) is x, a zero keeping its sign
  if (x.m != 0) {
    // x with exactly `precision` significand bits: when |offset| < 2^17 is below an
    // eighth of its last place (the sdp INF value 3.4e38), the difference rounds as x
    // moved by a sticky bit below that place would.
    const int lift = f.precision - 1 - (63 - __builtin_clzll(x.m));
    if (lift >= 0 && x.q - lift > 20) {
      const bool shrink = (offset > 0) != x.sign;  // the magnitude decreases
      const uint64_t m8 = (x.m << lift) << 3;
      return round_internal(f, x.sign, shrink ? m8 - 1 : m8 + 1, x.q - lift - 3);
    }
  }
  const int base = x.q < 0 ? x.q : 0;  // both operands as integers times 2^base
  const int64_t a = static_cast<int64_t>(x.m << (x.q - base)) * (x.sign ? -1 : 1);
  const int64_t b = static_cast<int64_t>(offset) * (int64_t{1} << (0 - base));
  const int64_t difference = a - b;  // |a| < 2^(11+40) for fp16 data, |b| < 2^(17+24)
  if (difference == 0) return {false, 0, 0};
  const bool sign = difference < 0;
  return round_internal(f, sign, static_cast<uint64_t>(sign ? -difference : difference), base);
}

// Rule `nvdla-float` (Precision Conversion with FP16 Supporting):
//   unit conv: Equation 1 for a floating-point pixel (T_R16_F, T_A16B16G16R16_F,
//     T_A16Y16U16V16_F; "Floating point images can only be converted to fp16"):
//     d_fp16 = (d_pixel - offset) * SF in the convolution pipeline's fp17;
//   unit sdp: the SDP table's "fp16 feature data -> int16 / fp16: real precision in
//     pipeline fp32": d_out = truncate2int16((d - offset) * SF) or (d - offset) * SF in fp32.
// Every fp16 value, denormals included, is a normal value of fp17 and fp32 ("these
// formats have better precision than fp16 with denormalized value"); "Before writing
// back to memory, fp17/fp32 will convert to fp16 with denormalized value."
// An INF input is the unit's INF value (INF converted values), a NaN propagates (to an
// fp16 output; an int16 output of a NaN is left open, ERRATA NVDLA precision 15) or,
// flushed, is +0.
uint64_t convert_float_path(const ConvertSpec& s, uint64_t bits) {
  const NvdlaInternalFormat& f = nvdla_internal_format(s.unit);
  Value v = decode(kFp16, bits);
  if (v.cls == Class::kNaN && !s.flush_nan) return s.to == DType::kFp16 ? quiet_nan(kFp16, v) : 0;
  Internal x{v.sign, v.m, v.q};
  if (v.cls == Class::kNaN || v.cls == Class::kZero) x = {v.cls == Class::kZero && v.sign, 0, 0};
  if (v.cls == Class::kInf) {
    const Value unit = decode(kFp32, nvdla_inf_value_bits(s.unit));
    x = round_internal(f, v.sign, unit.m, unit.q);
  }
  const Internal t = subtract_offset(f, x, s.offset);
  uint32_t scale_bits;
  std::memcpy(&scale_bits, &s.scale, sizeof scale_bits);
  const Value sf = decode(kFp32, scale_bits);
  const bool sign = t.sign != sf.sign;
  const Internal product = round_internal(f, sign, t.m * sf.m, t.q + sf.q);  // t.m < 2^24, sf.m < 2^24
  if (s.to == DType::kFp16) return round_to_format(kFp16, product.sign, product.m, product.q, Overflow::kClip);
  return truncate_to_int(s.to, s.truncate, product.sign, product.m, product.q);
}

bool is_nan(DType t, uint64_t bits) {
  if (dtype_info(t).kind != DTypeKind::kFloat) return false;
  return decode(format_of(t), bits).cls == Class::kNaN;
}

class ReferenceConverter : public Converter {
 public:
  std::string name() const override { return "reference"; }
  Status convert(const ConvertSpec& s, const void* src, size_t src_bytes, void* dst, size_t dst_bytes,
                 NanCounts* nan) const override {
    LC_RETURN_IF_ERROR(validate_convert(s, src_bytes, dst_bytes));
    const size_t from_bytes = dtype_bits(s.from) / 8, to_bytes = dtype_bits(s.to) / 8;
    const size_t count = src_bytes / from_bytes;
    const auto* in = static_cast<const uint8_t*>(src);
    auto* out = static_cast<uint8_t*>(dst);
    NanCounts counts;
    for (size_t i = 0; i < count; ++i) {
      const uint64_t x = load_le(in + i * from_bytes, from_bytes);
      uint64_t y = 0;
      switch (s.rule) {
        case ConvertRule::kIeee: y = convert_ieee(format_of(s.from), format_of(s.to), x); break;
        case ConvertRule::kNvdla: y = convert_nvdla(s, format_of(s.from), format_of(s.to), x); break;
        case ConvertRule::kNvdlaInt: y = convert_int(s, x); break;
        case ConvertRule::kNvdlaFloat: y = convert_float_path(s, x); break;
      }
      // "input/output NaN counting registers that summarize total NaN number in
      // input/output data cube" (FP16 Supporting, NaN)
      counts.input += is_nan(s.from, x) ? 1 : 0;
      counts.output += is_nan(s.to, y) ? 1 : 0;
      store_le(out + i * to_bytes, to_bytes, y);
    }
    if (nan) *nan = counts;
    return Status();
  }
};

}  // namespace

const Converter& precision_reference() {
  static const ReferenceConverter converter;
  return converter;
}

}  // namespace layoutcheck
