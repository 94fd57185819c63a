// Winograd weight conversion (phase 1) in exact rational arithmetic.
// Document: ../shared/spec/nvdla-in-memory-data-formats.txt, "Basic Weight for
// Winograd Convolution" and "FP16 Supporting".
#include <cstring>
#include <numeric>

#include "layoutcheck/checked.h"
#include "layoutcheck/nvdla.h"

namespace layoutcheck::nvdla {
namespace {

__extension__ typedef __int128 Wide;

// A rational number num / den, den > 0, in lowest terms.
struct Rational {
  int64_t num = 0, den = 1;
};

Rational make(int64_t num, int64_t den) {
  const int64_t g = std::gcd(num, den);
  return {num / g, den / g};
}
Rational operator+(Rational a, Rational b) {
  const int64_t l = std::lcm(a.den, b.den);
  return make(a.num * (l / a.den) + b.num * (l / b.den), l);
}
Rational operator*(Rational a, Rational b) { return make(a.num * b.num, a.den * b.den); }
// a < b
bool less(Rational a, Rational b) { return Wide(a.num) * b.den < Wide(b.num) * a.den; }

// "Matrix for weight transfer for Winograd"
const Rational kG[4][3] = {{{1, 1}, {0, 1}, {0, 1}},
                           {{1, 2}, {1, 2}, {1, 2}},
                           {{1, 2}, {-1, 2}, {1, 2}},
                           {{0, 1}, {0, 1}, {1, 1}}};

// An IEEE fp16 bit pattern's value (finite), as a rational.
Rational fp16_value(uint16_t bits) {
  const int64_t exponent = (bits >> 10) & 31, mantissa = bits & 1023;
  const int64_t sign = (bits & 0x8000) ? -1 : 1;
  // Subnormal: m * 2^-24; normal: (1024 + m) * 2^(e - 25).
  if (exponent == 0) return make(sign * mantissa, int64_t{1} << 24);
  const int64_t e = exponent - 25;
  const int64_t m = 1024 + mantissa;
  return e >= 0 ? make(sign * (m << e), 1) : make(sign * m, int64_t{1} << -e);
}

constexpr uint16_t kFp16Max = 0x7BFF;  // 65504
constexpr uint16_t kFp16NaN = 0x7E00;

// The fp16 nearest to v, ties to the even mantissa; "If the result is exceeding
// maximal normal value, it will be clipped to max normalized value."
uint16_t round_to_fp16(Rational v) {
  const bool negative = v.num < 0;
  const Rational a{negative ? -v.num : v.num, v.den};
  const uint16_t sign = negative ? uint16_t{0x8000} : uint16_t{0};
  if (!less(a, fp16_value(kFp16Max))) return sign | kFp16Max;
  // The largest non-negative pattern whose value is <= a (values grow with the pattern).
  uint16_t lo = 0, hi = kFp16Max;
  while (lo < hi) {
    const uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (less(a, fp16_value(mid))) hi = static_cast<uint16_t>(mid - 1);
    else lo = mid;
  }
  const uint16_t up = static_cast<uint16_t>(lo + 1);
  const Rational below = a + make(-fp16_value(lo).num, fp16_value(lo).den);
  const Rational above = fp16_value(up) + make(-a.num, a.den);
  uint16_t pick = lo;
  if (less(above, below) || (!less(below, above) && !less(above, below) && (up & 1) == 0)) pick = up;
  if (pick == 0) return 0;  // an exact or rounded zero is +0
  return sign | pick;
}

// Nearest integer, ties to even, saturated to [lo, hi].
int64_t round_to_int(Rational v, int64_t lo, int64_t hi) {
  int64_t q = v.num / v.den;
  if (v.num % v.den != 0 && v.num < 0) --q;  // floor
  const Rational frac = v + make(-q, 1);    // in [0, 1)
  if (less(make(1, 2), frac) || (!less(frac, make(1, 2)) && (q & 1))) ++q;
  return q < lo ? lo : q > hi ? hi : q;
}

}  // namespace

Result<std::vector<uint8_t>> winograd_extend_reference(DType t, const Shape& shape, int64_t stride, const void* logical,
                                                       size_t size) {
  if (t != DType::kInt8 && t != DType::kInt16 && t != DType::kFp16) {
    return Status::invalid(std::string("Winograd weights are int8, int16 or fp16, not ") + dtype_name(t) +
                           " (Precision Type)");
  }
  if (stride < 1 || stride > 64) return Status::invalid("Winograd channel extension: stride " + std::to_string(stride) + " is not in [1, 64]");
  const int64_t span = 3 * stride;
  if (shape.size() != 4 || shape[0] < 1 || shape[1] < 1 || shape[2] < 1 || shape[3] < 1 ||
      (stride == 1 && (shape[2] != 3 || shape[3] != 3)) || shape[2] > span || shape[3] > span) {
    return Status::invalid("Winograd channel extension: kernels (" + shape_to_string(shape) + ") with stride " +
                           std::to_string(stride) + " do not become 3x3: the new width and height of a kernel should "
                           "be 3 after extension (Basic Weight for Winograd Convolution)");
  }
  const uint64_t eb = dtype_bits(t) / 8, s = static_cast<uint64_t>(stride);
  const uint64_t K = shape[0], C = shape[1], R = shape[2], S = shape[3];
  Checked in_bytes = Checked(K) * C * R * S * eb, out_bytes = Checked(K) * C * s * s * 9 * eb;
  if (!in_bytes.ok() || !out_bytes.ok() || out_bytes.value() > (uint64_t{1} << 40)) {
    return Status::invalid("Winograd channel extension: tensor too large");
  }
  if (size != in_bytes.value()) {
    return Status::invalid("Winograd channel extension: logical buffer is " + std::to_string(size) + " bytes, (" +
                           shape_to_string(shape) + ") needs " + std::to_string(in_bytes.value()));
  }
  const auto* src = static_cast<const uint8_t*>(logical);
  std::vector<uint8_t> out(out_bytes.value(), 0);  // the padding to 3s x 3s is 0
  const uint64_t extended_C = s * s * C;
  for (uint64_t k = 0; k < K; ++k) {
    for (uint64_t p = 0; p < s; ++p) {
      for (uint64_t q = 0; q < s; ++q) {
        for (uint64_t c = 0; c < C; ++c) {
          const uint64_t ec = (p * s + q) * C + c;  // phase (p, q) of channel c
          for (uint64_t i = 0; i < 3; ++i) {
            for (uint64_t j = 0; j < 3; ++j) {
              const uint64_t h = i * s + p, w = j * s + q;
              if (h >= R || w >= S) continue;
              std::memcpy(out.data() + (((k * extended_C + ec) * 3 + i) * 3 + j) * eb,
                          src + (((k * C + c) * R + h) * S + w) * eb, eb);
            }
          }
        }
      }
    }
  }
  return out;
}

Result<std::vector<uint8_t>> winograd_transform_reference(DType t, const Shape& shape, const void* logical,
                                                          size_t size) {
  if (t != DType::kInt8 && t != DType::kInt16 && t != DType::kFp16) {
    return Status::invalid(std::string("Winograd weights are int8, int16 or fp16, not ") + dtype_name(t) +
                           " (Precision Type)");
  }
  if (shape.size() != 4 || shape[0] < 1 || shape[1] < 1 || shape[2] != 3 || shape[3] != 3) {
    return Status::invalid("Winograd conversion takes (K, C, 3, 3) kernels, not (" + shape_to_string(shape) +
                           "): convert the kernel from 3x3xC cube to a 4x4xC cube (Basic Weight for Winograd "
                           "Convolution)");
  }
  const uint64_t eb = dtype_bits(t) / 8;
  Checked channels = Checked(shape[0]) * shape[1];
  Checked in_bytes = channels * 9 * eb, out_bytes = channels * 16 * eb;
  if (!in_bytes.ok() || !out_bytes.ok() || out_bytes.value() > (uint64_t{1} << 40)) {
    return Status::invalid("Winograd conversion: tensor too large");
  }
  if (size != in_bytes.value()) {
    return Status::invalid("Winograd conversion: logical buffer is " + std::to_string(size) + " bytes, (" +
                           shape_to_string(shape) + ") needs " + std::to_string(in_bytes.value()));
  }
  const auto* src = static_cast<const uint8_t*>(logical);
  std::vector<uint8_t> out(out_bytes.value());
  for (uint64_t ch = 0; ch < channels.value(); ++ch) {
    Rational w[3][3];
    bool nan[3][3] = {};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        const uint8_t* e = src + (ch * 9 + i * 3 + j) * eb;
        if (t == DType::kInt8) {
          w[i][j] = make(static_cast<int8_t>(e[0]), 1);
        } else {
          const uint16_t bits = static_cast<uint16_t>(e[0] | e[1] << 8);
          if (t == DType::kInt16) {
            w[i][j] = make(static_cast<int16_t>(bits), 1);
          } else if (((bits >> 10) & 31) == 31 && (bits & 1023) != 0) {
            nan[i][j] = true;  // "it supports NaN propagation"
          } else if (((bits >> 10) & 31) == 31) {
            // "INF converted values: +/-65504 (Winograd)"
            w[i][j] = fp16_value(static_cast<uint16_t>((bits & 0x8000) | kFp16Max));
          } else {
            w[i][j] = fp16_value(bits);
          }
        }
      }
    }
    // U = G W G^T: U[a][b] = sum over i, j of G[a][i] W[i][j] G[b][j].
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < 4; ++b) {
        Rational u;
        bool u_nan = false;
        for (int i = 0; i < 3; ++i) {
          for (int j = 0; j < 3; ++j) {
            const Rational coefficient = kG[a][i] * kG[b][j];
            if (coefficient.num == 0) continue;
            if (nan[i][j]) u_nan = true;
            else u = u + coefficient * w[i][j];
          }
        }
        uint8_t* dst = out.data() + (ch * 16 + a * 4 + b) * eb;
        if (t == DType::kInt8) {
          dst[0] = static_cast<uint8_t>(round_to_int(u, -128, 127));
        } else {
          const uint16_t bits = t == DType::kInt16 ? static_cast<uint16_t>(round_to_int(u, -32768, 32767))
                                : u_nan             ? kFp16NaN
                                                    : round_to_fp16(u);
          dst[0] = static_cast<uint8_t>(bits);
          dst[1] = static_cast<uint8_t>(bits >> 8);
        }
      }
    }
  }
  return out;
}

}  // namespace layoutcheck::nvdla
