// layoutcheck/nvdla.h — NVDLA sparse weight compression (WGS, WMB, compressed data).
//
// nvdla-in-memory-data-formats.txt, "Sparse Compression option": a mapped weight
// surface (the physical buffer of nvdla.weight.dc) becomes three surfaces:
//
//   WGS   one 32-bit little-endian word per kernel group: the bytes of that
//         group's compressed (non-zero) weights; zeros to 128-byte alignment.
//   WMB   one bit per weight element, in the order of the mapped surface,
//         bit i of the surface = bit (i mod 8) of byte i / 8 (little-endian);
//         1 = the element is kept, 0 = it was zero; zero bits to 128 bytes.
//   data  the non-zero elements in the order of the mapped surface, packed
//         compactly across groups; zeros to 128-byte alignment.
//
// A compressed weight is data-dependent in size, so it is not a layout of the
// Impl model (size_bytes() and offset_bits() do not depend on values); it is
// this API over a packed weight buffer instead (oracles/ERRATA.md).
//
//   Case c = *parse_case("nvdla.weight.dc", "int8", "33,5,3,3");
//   std::vector<uint8_t> packed(*optimized_impl().size_bytes(c));
//   optimized_impl().pack(c, logical.data(), logical.size(), packed.data(), packed.size());
//   auto z = nvdla::compress(c, packed.data(), packed.size());        // z->wgs, z->wmb, z->data
//   nvdla::decompress(c, *z, back.data(), back.size());                 // back == packed
//
// compress/decompress are the optimized implementation (layoutcheck::optimized);
// compress_reference/decompress_reference walk the document's steps element by
// element (layoutcheck::reference). Both accept nvdla.weight.* cases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "layoutcheck/impl.h"

namespace layoutcheck::nvdla {

struct CompressedWeights {
  std::vector<uint8_t> wgs;   // 32-bit weight group sizes, padded to 128 bytes
  std::vector<uint8_t> wmb;   // weight mask bits, padded to 128 bytes
  std::vector<uint8_t> data;  // non-zero weights, padded to 128 bytes
  bool operator==(const CompressedWeights& o) const { return wgs == o.wgs && wmb == o.wmb && data == o.data; }
};

// `physical` is the packed weight buffer of `weights` (size_bytes() long).
Result<CompressedWeights> compress(const Case& weights, const void* physical, size_t physical_size);
// Rebuilds the packed weight buffer (128-byte tail zeros included). Rejects
// surfaces of the wrong size, WGS words that disagree with the mask, and
// non-zero padding.
Status decompress(const Case& weights, const CompressedWeights& in, void* physical, size_t physical_size);

// ---- Winograd weights, phase 1 ----------------------------------------------
//
// "Convert the kernel from 3x3xC cube to a 4x4xC cube. The equation is GWGT":
// every 3x3 channel W of the dense (K, C, 3, 3) tensor `logical` becomes
// U = G W G^T, G = [[1,0,0],[.5,.5,.5],[.5,-.5,.5],[0,0,1]]; the result is the
// dense (K, C, 4, 4) tensor in the same precision, which nvdla.weight.winograd
// maps (C padded to 32 bytes there). Stride 1 only (no channel extension), no
// scaling factor. U is computed exactly, then rounded once: fp16 to nearest,
// ties to even, clipped to +-65504 (an fp16 infinity input counts as +-65504, a
// NaN input makes the outputs it reaches 0x7E00); int8/int16 to nearest, ties to
// even, saturated. For example W = [[1,2,3],[4,5,6],[7,8,9]] (int16) gives the
// first row U[0] = [1, 3, 1, 3] (G W = [[1,2,3],[6,7.5,9],[2,2.5,3],[7,8,9]]).
// "Do channel extension in if convolution stride is not 1. The new width and
// height of a kernel should be 3 after extension." For stride s >= 2 the
// (K, C, R, S) kernels (R, S <= 3s) are padded with 0s to 3s x 3s and split
// into s*s phases: extended channel (p*s + q)*C + c holds W[c][i*s + p][j*s + q]
// at (i, j), i, j in 0..2 (oracles/ERRATA.md). The
// result is the dense (K, s*s*C, 3, 3) tensor for winograd_transform. Stride 1
// requires 3x3 kernels and returns them unchanged.
Result<std::vector<uint8_t>> winograd_extend(DType t, const Shape& kcrs, int64_t stride, const void* logical, size_t size);
Result<std::vector<uint8_t>> winograd_extend_reference(DType t, const Shape& kcrs, int64_t stride, const void* logical,
                                                       size_t size);

Result<std::vector<uint8_t>> winograd_transform(DType t, const Shape& kc33, const void* logical, size_t size);
Result<std::vector<uint8_t>> winograd_transform_reference(DType t, const Shape& kc33, const void* logical, size_t size);

// ---- placement of the three surfaces ----------------------------------------
//
// Table "Requirements of alignment": WMB and WGS (and the compressed weight
// itself) start at 256-byte aligned addresses and their data sizes are
// multiples of 128 bytes. `check_surfaces` checks surfaces placed at `at`; the
// Status names the rule (nvdla.sparse/wgs-start-address-align-256,
// nvdla.sparse/wmb-size-align-128, ...). compress() always returns sizes that
// pass; decompress() names the size rule when a surface's size is not a
// multiple of 128.
//
//   nvdla::check_surfaces(*z, {.wgs = 0x1000, .wmb = 0x1080, .data = 0x2000})
//     -> "WMB surface: start address 4224 is not aligned to 256 bytes ..."
struct SurfaceAddresses {
  uint64_t wgs = 0, wmb = 0, data = 0;
};
Status check_surfaces(const CompressedWeights& surfaces, const SurfaceAddresses& at);

// A placement by addresses and sizes alone (what a compiler decides before the
// surfaces exist; `layoutcheck sparse --lib` checks a user's own function on it,
// include/layoutcheck/nvdla_surface.h). Besides the alignment table, the three
// surfaces are "three separated memory surfaces": no byte lies in two of them
// (nvdla.sparse/surfaces-overlap; an empty surface holds no byte), and each ends
// within the 64-bit address space, start + size <= 2^64
// (nvdla.sparse/address-overflow) (oracles/ERRATA.md, NVDLA 26).
// `placement_breaks` lists every rule the placement breaks, in this order: per
// surface (WGS, WMB, compressed weight) start address, data size, end; then
// the pairs WGS/WMB, WGS/weight, WMB/weight. `check_placement` is the first of
// them (check_surfaces is check_placement of the surfaces' sizes).
struct SurfacePlacement {
  uint64_t wgs_address = 0, wgs_size = 0;
  uint64_t wmb_address = 0, wmb_size = 0;
  uint64_t data_address = 0, data_size = 0;
};
std::vector<Status> placement_breaks(const SurfacePlacement& placement);
Status check_placement(const SurfacePlacement& placement);

// Deconvolution weights (nvdla.weight.deconv) are compressed set by set: each
// set is the nvdla.weight.dc surface that `describe` reports as set_layout
// (oracles/ERRATA.md, NVDLA 22); the whole deconvolution buffer is declined.

Result<CompressedWeights> compress_reference(const Case& weights, const void* physical, size_t physical_size);
Status decompress_reference(const Case& weights, const CompressedWeights& in, void* physical, size_t physical_size);

}  // namespace layoutcheck::nvdla
