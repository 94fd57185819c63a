// AVX-512 kernels for NVDLA feature data (surfaces of lines of 32-byte atoms),
// bit-field pixel lines and 8-bit semi-planar pixel lines, chosen at run time by optimized/nvdla.cc, which
// keeps its portable path for every other case.
//
//   nvdla_simd::FeatureGeometry g{C, H, W, eb, surfaces, line_stride, surface_stride};
//   if (!nvdla_simd::feature_copy_avx512(g, logical, physical, /*pack=*/true)) {
//     ... the portable transposes ...
//   }
#pragma once

#include <cstdint>

namespace layoutcheck::nvdla_simd {

// Outputs from this size on are written past the caches (feature data here,
// word-reversed pixel lines in optimized/nvdla.cc): they would only evict the
// input, which the next pass over it may still find there.
constexpr uint64_t kStreamingBytes = uint64_t{4} << 20;

// Element (c, h, w) of eb bytes (1 or 2) sits at
// c / (32 / eb) * ss + h * ls + w * 32 + c % (32 / eb) * eb; the logical tensor is (C, H, W).
struct FeatureGeometry {
  uint64_t C, H, W, eb, surfaces, ls, ss;
};

// Packs (logical -> physical, zeroing every byte that holds no element) or
// unpacks; false if this CPU (or the ISA cap) has no AVX-512 or the element
// size has no kernel here, and nothing was written.
bool feature_copy_avx512(const FeatureGeometry& g, const uint8_t* src, uint8_t* dst, bool pack);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// One line of 2+10+10+10 bit-field words, for callers that checked
// isa_at_least(Isa::kAvx512): `row` holds W pixels of four 16-bit components,
// `line` W 32-bit words, component ch at bit shift[ch] with width[ch] bits.
// Packing returns false, and writes nothing, when a value does not fit its field.
bool pixel_fields_pack_line_avx512(const uint8_t* row, uint8_t* line, uint64_t W, const uint32_t shift[4],
                                   const uint32_t width[4]);
void pixel_fields_unpack_line_avx512(const uint8_t* line, uint8_t* row, uint64_t W, const uint32_t shift[4],
                                     const uint32_t width[4]);
// The same for callers that checked isa_at_least(Isa::kAvx2).
bool pixel_fields_pack_line_avx2(const uint8_t* row, uint8_t* line, uint64_t W, const uint32_t shift[4],
                                 const uint32_t width[4]);
void pixel_fields_unpack_line_avx2(const uint8_t* line, uint8_t* row, uint64_t W, const uint32_t shift[4],
                                   const uint32_t width[4]);

// One line of an 8-bit semi-planar image, for callers that checked
// isa_at_least(Isa::kAvx512Vbmi): `logical` holds W (Y, first chroma, second
// chroma) triples, `y` W bytes, `uv` W chroma pairs (second chroma first).
// 64 pixels per 4 byte permutes; the last, partial block by masked loads and
// stores that touch no byte past the W pixels.
void semi_planar_pack_line_vbmi(const uint8_t* logical, uint8_t* y, uint8_t* uv, uint64_t W);
void semi_planar_unpack_line_vbmi(const uint8_t* y, const uint8_t* uv, uint8_t* logical, uint64_t W);
#endif

}  // namespace layoutcheck::nvdla_simd
