// Winograd weight conversion (phase 1) in exact fixed-point arithmetic.
//
// Why it equals the reference: 4 G W G^T = (2G) W (2G)^T with the integer
// matrix 2G, so with the inputs as integers (int8/int16) or as multiples of
// 2^-24 scaled to integers (fp16), every U is an exact int64 in units of 1/4
// (or 2^-26); one rounding step then gives the nearest value, ties to even.
#include <cstring>

#include "layoutcheck/checked.h"
#include "layoutcheck/nvdla.h"

namespace layoutcheck::nvdla {
namespace {

constexpr int64_t k2G[4][3] = {{2, 0, 0}, {1, 1, 1}, {1, -1, 1}, {0, 0, 2}};

// fp16 bits -> value * 2^24 (exact); infinity is +-65504.
int64_t fp16_fixed(uint16_t bits) {
  const int64_t e = (bits >> 10) & 31, m = bits & 1023;
  const int64_t mag = e == 0 ? m : e == 31 ? (2047LL << 29) : (1024 + m) << (e - 1);
  return (bits & 0x8000) ? -mag : mag;
}

// n * 2^-26 -> fp16, nearest, ties to even, clipped to 65504.
uint16_t fixed_to_fp16(int64_t n) {
  const uint16_t sign = n < 0 ? uint16_t{0x8000} : uint16_t{0};
  uint64_t a = static_cast<uint64_t>(n < 0 ? -n : n);
  if (a == 0) return 0;
  const int bits = 64 - __builtin_clzll(a);
  int s = bits - 11 > 2 ? bits - 11 : 2;  // 2^-24 = 4 units: the subnormal step
  uint64_t q = a >> s;
  const uint64_t rem = a & ((uint64_t{1} << s) - 1), half = uint64_t{1} << (s - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;
  if (q == 2048) q = 1024, ++s;
  if (q == 0) return 0;
  if (q < 1024) return static_cast<uint16_t>(sign | q);
  const int biased = s - 1;
  if (biased >= 31) return static_cast<uint16_t>(sign | 0x7BFF);
  return static_cast<uint16_t>(sign | biased << 10 | (q - 1024));
}

int64_t quarter_to_int(int64_t n, int64_t lo, int64_t hi) {
  int64_t q = n >> 2;  // floor(n / 4)
  const int64_t r = n - q * 4;
  if (r > 2 || (r == 2 && (q & 1))) ++q;
  return q < lo ? lo : q > hi ? hi : q;
}

}  // namespace

// Every source weight (c, h, w) lands at phase (h mod s, w mod s), position
// (h div s, w div s) of its extended channel: one pass over the source.
Result<std::vector<uint8_t>> winograd_extend(DType t, const Shape& shape, int64_t stride, const void* logical, size_t size) {
  if (t != DType::kInt8 && t != DType::kInt16 && t != DType::kFp16) return Status::invalid("not an NVDLA precision");
  if (stride < 1 || stride > 64) return Status::invalid("stride out of range");
  if (shape.size() != 4 || shape[0] < 1 || shape[1] < 1 || shape[2] < 1 || shape[3] < 1 ||
      (stride == 1 && (shape[2] != 3 || shape[3] != 3)) || shape[2] > 3 * stride || shape[3] > 3 * stride) {
    return Status::invalid("kernels do not become 3x3 after extension");
  }
  const uint64_t eb = dtype_bits(t) / 8, s = static_cast<uint64_t>(stride);
  const uint64_t K = shape[0], C = shape[1], R = shape[2], S = shape[3];
  Checked in_bytes = Checked(K) * C * R * S * eb, out_bytes = Checked(K) * C * s * s * 9 * eb;
  if (!in_bytes.ok() || !out_bytes.ok() || out_bytes.value() > (uint64_t{1} << 40)) return Status::invalid("too large");
  if (size != in_bytes.value()) return Status::invalid("Winograd channel extension: wrong logical buffer size");
  const auto* src = static_cast<const uint8_t*>(logical);
  std::vector<uint8_t> out(out_bytes.value(), 0);
  uint64_t index = 0;
  for (uint64_t k = 0; k < K; ++k) {
    uint8_t* kernel = out.data() + k * s * s * C * 9 * eb;
    for (uint64_t c = 0; c < C; ++c) {
      for (uint64_t h = 0; h < R; ++h) {
        const uint64_t p = h % s, i = h / s;
        for (uint64_t w = 0; w < S; ++w, ++index) {
          const uint64_t q = w % s, j = w / s;
          std::memcpy(kernel + ((((p * s + q) * C + c) * 3 + i) * 3 + j) * eb, src + index * eb, eb);
        }
      }
    }
  }
  return out;
}

Result<std::vector<uint8_t>> winograd_transform(DType t, const Shape& shape, const void* logical, size_t size) {
  if (t != DType::kInt8 && t != DType::kInt16 && t != DType::kFp16) return Status::invalid("not an NVDLA precision");
  if (shape.size() != 4 || shape[0] < 1 || shape[1] < 1 || shape[2] != 3 || shape[3] != 3) {
    return Status::invalid("Winograd conversion takes (K, C, 3, 3) kernels");
  }
  const uint64_t eb = dtype_bits(t) / 8;
  Checked channels = Checked(shape[0]) * shape[1];
  Checked in_bytes = channels * 9 * eb, out_bytes = channels * 16 * eb;
  if (!in_bytes.ok() || !out_bytes.ok() || out_bytes.value() > (uint64_t{1} << 40)) return Status::invalid("too large");
  if (size != in_bytes.value()) return Status::invalid("Winograd conversion: wrong logical buffer size");
  const auto* src = static_cast<const uint8_t*>(logical);
  std::vector<uint8_t> out(out_bytes.value());
  for (uint64_t ch = 0; ch < channels.value(); ++ch) {
    int64_t w[3][3];
    unsigned nan = 0;  // bit 3i+j
    for (int i = 0; i < 9; ++i) {
      const uint8_t* e = src + (ch * 9 + i) * eb;
      if (t == DType::kInt8) {
        w[i / 3][i % 3] = static_cast<int8_t>(e[0]);
        continue;
      }
      uint16_t bits;
      std::memcpy(&bits, e, 2);
      if (t == DType::kInt16) {
        w[i / 3][i % 3] = static_cast<int16_t>(bits);
      } else {
        w[i / 3][i % 3] = fp16_fixed(bits);
        if ((bits & 0x7C00) == 0x7C00 && (bits & 1023)) nan |= 1u << i, w[i / 3][i % 3] = 0;
      }
    }
    int64_t gw[4][3];  // (2G) W
    for (int a = 0; a < 4; ++a) {
      for (int j = 0; j < 3; ++j) gw[a][j] = k2G[a][0] * w[0][j] + k2G[a][1] * w[1][j] + k2G[a][2] * w[2][j];
    }
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < 4; ++b) {
        const int64_t u4 = gw[a][0] * k2G[b][0] + gw[a][1] * k2G[b][1] + gw[a][2] * k2G[b][2];
        uint8_t* dst = out.data() + (ch * 16 + a * 4 + b) * eb;
        if (t == DType::kInt8) {
          dst[0] = static_cast<uint8_t>(quarter_to_int(u4, -128, 127));
          continue;
        }
        uint16_t bits;
        if (t == DType::kInt16) {
          bits = static_cast<uint16_t>(quarter_to_int(u4, -32768, 32767));
        } else {
          bool reached = false;
          for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) reached |= ((nan >> (3 * i + j)) & 1) && k2G[a][i] && k2G[b][j];
          }
          bits = reached ? uint16_t{0x7E00} : fixed_to_fp16(u4);  // u4 is U * 2^26
        }
        std::memcpy(dst, &bits, 2);
      }
    }
  }
  return out;
}

}  // namespace layoutcheck::nvdla
