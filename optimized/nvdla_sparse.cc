// NVDLA sparse weight compression, word at a time.
//
// Why it equals the reference: the mask bit of element i is bit i % 8 of byte
// i / 8 over the whole mapped surface, so eight consecutive elements make one
// mask byte; full kernel groups hold a multiple of 16 elements (16 or 32
// kernels), so group boundaries fall on mask bytes and a group's WGS is its
// popcount times the element size. Non-zero elements are appended with a
// branch-free store-then-advance.
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "layoutcheck/checked.h"
#include "layoutcheck/nvdla.h"
#include "optimized/families.h"

namespace layoutcheck::nvdla {
namespace {

uint64_t up128(uint64_t v) { return (v + 127) / 128 * 128; }

struct Shape4 {
  uint64_t eb = 1, per_group = 0, groups = 0, total = 0;
};

Result<Shape4> shape_of(const Case& c, size_t physical_size) {
  if (c.layout.name.compare(0, 13, "nvdla.weight.") != 0) {
    return Status::invalid("sparse compression is for NVDLA weights, not " + c.layout.name);
  }
  LC_ASSIGN_OR_RETURN(uint64_t size, nvdla_optimized().size_bytes(c));
  if (size != physical_size) return Status::invalid("mapped weight buffer size " + std::to_string(physical_size) + " is not " + std::to_string(size));
  Shape4 s;
  s.eb = dtype_bits(c.dtype) / 8;
  const uint64_t kernels = s.eb == 1 ? 32 : 16;
  uint64_t per_kernel = static_cast<uint64_t>(c.shape[1]) * c.shape[2] * c.shape[3];
  if (c.layout.name == "nvdla.weight.winograd") {
    const uint64_t lanes = 32 / s.eb;
    per_kernel = (static_cast<uint64_t>(c.shape[1]) + lanes - 1) / lanes * lanes * 16;
  }
  s.per_group = kernels * per_kernel;
  s.groups = (static_cast<uint64_t>(c.shape[0]) + kernels - 1) / kernels;
  s.total = static_cast<uint64_t>(c.shape[0]) * per_kernel;
  return s;
}

#if defined(__SSE2__)
// int8: 16 elements at a time; the zero test is one compare and movemask, a
// full block is one store, an empty one nothing, a mixed one walks its set bits.
uint64_t compress_run_sse2(const uint8_t* src, uint64_t n, uint64_t first, uint8_t* mask, uint8_t* out) {
  uint64_t kept = 0, i = 0;
  const __m128i zero = _mm_setzero_si128();
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    unsigned m = ~static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero))) & 0xFFFFu;
    mask[(first + i) / 8] = static_cast<uint8_t>(m);
    mask[(first + i) / 8 + 1] = static_cast<uint8_t>(m >> 8);
    if (m == 0xFFFFu) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + kept), v);
      kept += 16;
      continue;
    }
    while (m != 0) {
      out[kept++] = src[i + static_cast<unsigned>(__builtin_ctz(m))];
      m &= m - 1;
    }
  }
  for (; i < n; ++i) {
    if (src[i] != 0) {
      mask[(first + i) / 8] |= static_cast<uint8_t>(1u << ((first + i) % 8));
      out[kept++] = src[i];
    }
  }
  return kept;
}
#endif

template <typename T>
uint64_t compress_run(const uint8_t* src, uint64_t n, uint64_t first, uint8_t* mask, uint8_t* out) {
  // first is a multiple of 8 (a group boundary): whole mask bytes.
  uint64_t kept = 0;
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    T v[8];
    std::memcpy(v, src + i * sizeof(T), sizeof(v));
    unsigned m = 0;
    for (int j = 0; j < 8; ++j) {
      const bool nz = v[j] != 0;
      m |= static_cast<unsigned>(nz) << j;
      std::memcpy(out + kept * sizeof(T), &v[j], sizeof(T));
      kept += nz;
    }
    mask[(first + i) / 8] = static_cast<uint8_t>(m);
  }
  for (; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    if (v != 0) {
      mask[(first + i) / 8] |= static_cast<uint8_t>(1u << ((first + i) % 8));
      std::memcpy(out + kept * sizeof(T), &v, sizeof(T));
      ++kept;
    }
  }
  return kept;
}

}  // namespace

Result<CompressedWeights> compress(const Case& c, const void* physical, size_t physical_size) {
  LC_ASSIGN_OR_RETURN(Shape4 s, shape_of(c, physical_size));
  CompressedWeights out;
  out.wmb.assign(up128((s.total + 7) / 8), 0);
  out.wgs.assign(up128(4 * s.groups), 0);
  // Room for every element plus the 8-element store-ahead of compress_run.
  out.data.assign(up128(s.total * s.eb + 8 * s.eb), 0);
  const auto* src = static_cast<const uint8_t*>(physical);
  uint64_t kept = 0;
  for (uint64_t g = 0; g < s.groups; ++g) {
    const uint64_t first = g * s.per_group, n = std::min(s.per_group, s.total - first);
    uint8_t* dst = out.data.data() + kept * s.eb;
#if defined(__SSE2__)
    const uint64_t k = s.eb == 1 ? compress_run_sse2(src + first, n, first, out.wmb.data(), dst)
                                 : compress_run<uint16_t>(src + first * 2, n, first, out.wmb.data(), dst);
#else
    const uint64_t k = s.eb == 1 ? compress_run<uint8_t>(src + first, n, first, out.wmb.data(), dst)
                                 : compress_run<uint16_t>(src + first * 2, n, first, out.wmb.data(), dst);
#endif
    const uint32_t bytes = static_cast<uint32_t>(k * s.eb);
    std::memcpy(out.wgs.data() + 4 * g, &bytes, 4);  // little-endian host
    kept += k;
  }
  const uint64_t used = kept * s.eb;
  out.data.resize(up128(used));
  std::memset(out.data.data() + used, 0, out.data.size() - used);
  return out;
}

Status decompress(const Case& c, const CompressedWeights& in, void* physical, size_t physical_size) {
  LC_ASSIGN_OR_RETURN(Shape4 s, shape_of(c, physical_size));
  if (in.wmb.size() != up128((s.total + 7) / 8)) return Status::invalid("WMB surface has the wrong size");
  if (in.wgs.size() != up128(4 * s.groups)) return Status::invalid("WGS surface has the wrong size");
  for (uint64_t i = s.total; i < in.wmb.size() * 8; ++i) {
    if ((in.wmb[i / 8] >> (i % 8)) & 1) return Status::invalid("WMB padding bits are not 0");
  }
  for (uint64_t i = 4 * s.groups; i < in.wgs.size(); ++i) {
    if (in.wgs[i]) return Status::invalid("WGS padding is not 0");
  }
  auto* dst = static_cast<uint8_t*>(physical);
  std::memset(dst, 0, physical_size);
  uint64_t read = 0;
  for (uint64_t g = 0; g < s.groups; ++g) {
    const uint64_t first = g * s.per_group, n = std::min(s.per_group, s.total - first);
    // Groups start on mask bytes: whole bytes by popcount, then the last bits.
    uint64_t kept = 0, i = first;
    for (; i + 8 <= first + n; i += 8) kept += static_cast<uint64_t>(__builtin_popcount(in.wmb[i / 8]));
    for (; i < first + n; ++i) kept += (in.wmb[i / 8] >> (i % 8)) & 1;
    uint32_t wgs;
    std::memcpy(&wgs, in.wgs.data() + 4 * g, 4);
    if (wgs != kept * s.eb) return Status::invalid("WGS of group " + std::to_string(g) + " disagrees with its mask");
    if (read + kept * s.eb > in.data.size()) return Status::invalid("compressed weight surface is too short");
    const uint8_t* data = in.data.data();
    for (i = first; i + 8 <= first + n; i += 8) {
      unsigned m = in.wmb[i / 8];
      if (m == 0xFFu) {  // eight kept weights in a row
        std::memcpy(dst + i * s.eb, data + read, 8 * s.eb);
        read += 8 * s.eb;
        continue;
      }
      while (m != 0) {
        std::memcpy(dst + (i + static_cast<unsigned>(__builtin_ctz(m))) * s.eb, data + read, s.eb);
        read += s.eb;
        m &= m - 1;
      }
    }
    for (; i < first + n; ++i) {
      if ((in.wmb[i / 8] >> (i % 8)) & 1) {
        std::memcpy(dst + i * s.eb, data + read, s.eb);
        read += s.eb;
      }
    }
  }
  if (in.data.size() != up128(read)) return Status::invalid("compressed weight surface has the wrong size");
  for (uint64_t i = read; i < in.data.size(); ++i) {
    if (in.data[i]) return Status::invalid("compressed weight padding is not 0");
  }
  return Status();
}

}  // namespace layoutcheck::nvdla
