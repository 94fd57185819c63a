// NVDLA sparse weight compression, the document's steps one element at a time.
// Document: ../shared/spec/nvdla-in-memory-data-formats.txt, "Sparse Compression option".
#include <cstring>

#include "layoutcheck/checked.h"
#include "layoutcheck/nvdla.h"
#include "reference/families.h"

namespace layoutcheck::nvdla {
namespace {

std::string num(uint64_t v) { return std::to_string(v); }

constexpr uint64_t kSurfaceAlign = 128;  // "Align WMB surface to 128-byte", "Align compressed weight surface to 128-byte"

uint64_t align128(uint64_t bytes) { return ceil_div(bytes, kSurfaceAlign) * kSurfaceAlign; }

// The kernel groups of the mapped weight surface, in elements.
struct Groups {
  uint64_t element_bytes = 1;
  std::vector<uint64_t> elements;  // per group
  uint64_t total = 0;              // all elements
  uint64_t mapped_size = 0;        // size_bytes of the mapped surface
};

Result<Groups> groups_of(const Case& c, size_t physical_size) {
  if (c.layout.name.rfind("nvdla.weight.", 0) != 0) {
    return Status::invalid("sparse compression applies to NVDLA weight formats, not " + c.layout.name +
                           " (Sparse Compression option)");
  }
  if (c.layout.name == "nvdla.weight.deconv") {
    return Status::invalid("deconvolution weights are compressed set by set: compress each set as the "
                           "nvdla.weight.dc surface describe reports as set_layout (Sparse Compression option)");
  }
  LC_ASSIGN_OR_RETURN(uint64_t mapped, nvdla_reference().size_bytes(c));
  if (physical_size != mapped) {
    return Status::invalid("mapped weight buffer is " + num(physical_size) + " bytes, " + to_string(c) + " needs " +
                           num(mapped));
  }
  Groups g;
  g.mapped_size = mapped;
  g.element_bytes = dtype_bits(c.dtype) / 8;
  // "For int16 and fp16 weight, one group has 16 kernels. For int8, one group has 32 kernels."
  const uint64_t group_kernels = c.dtype == DType::kInt8 ? 32 : 16;
  uint64_t K = c.shape[0], per_kernel = c.shape[1] * c.shape[2] * c.shape[3];
  if (c.layout.name == "nvdla.weight.winograd") {
    // The mapped Winograd kernel is 4x4 x C padded to 32 bytes; the appended 0s are weights too.
    const uint64_t per_atom = 32 / g.element_bytes;
    per_kernel = ceil_div(c.shape[1], per_atom) * per_atom * 16;
  }
  for (uint64_t k0 = 0; k0 < K; k0 += group_kernels) {
    g.elements.push_back(std::min(group_kernels, K - k0) * per_kernel);
    g.total += g.elements.back();
  }
  return g;
}

bool is_zero(const uint8_t* element, uint64_t bytes) {
  for (uint64_t b = 0; b < bytes; ++b) {
    if (element[b] != 0) return false;
  }
  return true;
}

bool get_bit(const std::vector<uint8_t>& bits, uint64_t i) { return (bits[i / 8] >> (i % 8)) & 1; }

uint32_t get_u32le(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

// "Requirements of alignment": a data size of 128 bytes for WMB, WGS and weight.
Status check_size_128(const char* rule, const char* surface, uint64_t size) {
  if (size % kSurfaceAlign == 0) return Status();
  return Status::invalid(std::string(surface) + ": data size " + num(size) + " is not a multiple of 128 bytes (Alignment "
                         "of Start Address and Stride, Requirements of alignment)").with_rule(rule);
}

}  // namespace

// "Requirements of alignment": WMB, WGS and the (compressed) weight start at
// 256-byte aligned addresses; their data sizes are multiples of 128 bytes.
// "Store WGS, WMB and compressed weight into three separated memory surfaces":
// no byte lies in two of them. A surface ends within the 64-bit address space.
std::vector<Status> placement_breaks(const SurfacePlacement& p) {
  struct Surface { const char* name; const char* start_rule; const char* size_rule; uint64_t addr, size; };
  const Surface surfaces[] = {
      {"WGS surface", "nvdla.sparse/wgs-start-address-align-256", "nvdla.sparse/wgs-size-align-128", p.wgs_address,
       p.wgs_size},
      {"WMB surface", "nvdla.sparse/wmb-start-address-align-256", "nvdla.sparse/wmb-size-align-128", p.wmb_address,
       p.wmb_size},
      {"compressed weight surface", "nvdla.weight/start-address-align-256", "nvdla.sparse/data-size-align-128",
       p.data_address, p.data_size},
  };
  std::vector<Status> out;
  for (const Surface& s : surfaces) {
    if (s.addr % 256 != 0) {
      out.push_back(Status::invalid(std::string(s.name) + ": start address " + num(s.addr) + " is not aligned to 256 "
                                    "bytes (Alignment of Start Address and Stride, Requirements of alignment)")
                        .with_rule(s.start_rule));
    }
    if (Status size = check_size_128(s.size_rule, s.name, s.size); !size.ok()) out.push_back(size);
    // The surface's last byte is start + size - 1; it must be an address.
    if (s.size != 0 && s.size - 1 > UINT64_MAX - s.addr) {
      out.push_back(Status::invalid(std::string(s.name) + ": " + num(s.size) + " bytes from address " + num(s.addr) +
                                    " end past 2^64: a surface lies in the 64-bit address space (Alignment of Start Address and Stride)")
                        .with_rule("nvdla.sparse/address-overflow"));
    }
  }
  for (int a = 0; a < 3; ++a) {
    for (int b = a + 1; b < 3; ++b) {
      const Surface &x = surfaces[a], &y = surfaces[b];
      if (x.size == 0 || y.size == 0) continue;  // an empty surface holds no byte
      // They share a byte when each starts before the other ends (start + size).
      const bool x_before_y_end = x.addr <= y.addr || x.addr - y.addr < y.size;
      const bool y_before_x_end = y.addr <= x.addr || y.addr - x.addr < x.size;
      if (x_before_y_end && y_before_x_end) {
        out.push_back(Status::invalid(std::string(x.name) + " (" + num(x.size) + " bytes at " + num(x.addr) + ") and " +
                                      y.name + " (" + num(y.size) + " bytes at " + num(y.addr) + ") share bytes; they "
                                      "are three separated memory surfaces (Sparse Compression option)")
                          .with_rule("nvdla.sparse/surfaces-overlap"));
      }
    }
  }
  return out;
}

Status check_placement(const SurfacePlacement& p) {
  std::vector<Status> breaks = placement_breaks(p);
  return breaks.empty() ? Status() : breaks.front();
}

Status check_surfaces(const CompressedWeights& z, const SurfaceAddresses& at) {
  return check_placement({at.wgs, z.wgs.size(), at.wmb, z.wmb.size(), at.data, z.data.size()});
}

Result<CompressedWeights> compress_reference(const Case& c, const void* physical, size_t physical_size) {
  LC_ASSIGN_OR_RETURN(Groups g, groups_of(c, physical_size));
  const auto* src = static_cast<const uint8_t*>(physical);
  const uint64_t eb = g.element_bytes;
  CompressedWeights out;
  out.wmb.assign(ceil_div(g.total, 8), 0);
  uint64_t element = 0;
  // "Compress weight group by group."
  for (uint64_t group_elements : g.elements) {
    uint64_t kept_bytes = 0;
    for (uint64_t i = 0; i < group_elements; ++i, ++element) {
      const uint8_t* e = src + element * eb;
      // "Always use 1 bit to indicate 1 element of weight": 0 for a zero weight.
      // "The bits in WMB are stored as little-endian."
      if (!is_zero(e, eb)) {
        out.wmb[element / 8] |= static_cast<uint8_t>(1u << (element % 8));
        // "Remove all 0 weights in original surface and pack them compactly."
        out.data.insert(out.data.end(), e, e + eb);
        kept_bytes += eb;
      }
    }
    // "The remaining byte number of each group is called weight group size or
    //  WGS. One WGS is of 32-bit wise."
    for (int b = 0; b < 4; ++b) out.wgs.push_back(static_cast<uint8_t>(kept_bytes >> (8 * b)));
  }
  // "Align WMB surface to 128-byte by adding 0 bits in the end", the same for
  // the compressed weight surface and (alignment table, data size) for WGS.
  out.wmb.resize(align128(out.wmb.size()), 0);
  out.data.resize(align128(out.data.size()), 0);
  out.wgs.resize(align128(out.wgs.size()), 0);
  return out;
}

Status decompress_reference(const Case& c, const CompressedWeights& in, void* physical, size_t physical_size) {
  LC_ASSIGN_OR_RETURN(Groups g, groups_of(c, physical_size));
  const uint64_t eb = g.element_bytes;
  LC_RETURN_IF_ERROR(check_size_128("nvdla.sparse/wgs-size-align-128", "WGS surface", in.wgs.size()));
  LC_RETURN_IF_ERROR(check_size_128("nvdla.sparse/wmb-size-align-128", "WMB surface", in.wmb.size()));
  LC_RETURN_IF_ERROR(check_size_128("nvdla.sparse/data-size-align-128", "compressed weight surface", in.data.size()));
  if (in.wmb.size() != align128(ceil_div(g.total, 8))) {
    return Status::invalid("WMB surface is " + num(in.wmb.size()) + " bytes, " + num(g.total) +
                           " weight bits need " + num(align128(ceil_div(g.total, 8))) + " (Sparse Compression option)");
  }
  if (in.wgs.size() != align128(4 * g.elements.size())) {
    return Status::invalid("WGS surface is " + num(in.wgs.size()) + " bytes, " + num(g.elements.size()) +
                           " groups need " + num(align128(4 * g.elements.size())) + " (Sparse Compression option)");
  }
  for (uint64_t i = g.total; i < in.wmb.size() * 8; ++i) {
    if (get_bit(in.wmb, i)) return Status::invalid("WMB padding bit " + num(i) + " is not 0 (Sparse Compression option)");
  }
  for (uint64_t i = 4 * g.elements.size(); i < in.wgs.size(); ++i) {
    if (in.wgs[i] != 0) return Status::invalid("WGS padding byte " + num(i) + " is not 0 (Sparse Compression option)");
  }
  auto* dst = static_cast<uint8_t*>(physical);
  std::memset(dst, 0, physical_size);
  uint64_t element = 0, read = 0;
  for (uint64_t gi = 0; gi < g.elements.size(); ++gi) {
    uint64_t kept_bytes = 0;
    for (uint64_t i = 0; i < g.elements[gi]; ++i, ++element) {
      if (!get_bit(in.wmb, element)) continue;  // a removed zero
      if (read + eb > in.data.size()) {
        return Status::invalid("compressed weight surface of " + num(in.data.size()) +
                               " bytes ends before the mask's last kept weight (Sparse Compression option)");
      }
      std::memcpy(dst + element * eb, in.data.data() + read, eb);
      read += eb;
      kept_bytes += eb;
    }
    const uint32_t wgs = get_u32le(in.wgs.data() + 4 * gi);
    if (wgs != kept_bytes) {
      return Status::invalid("WGS of group " + num(gi) + " is " + num(wgs) + " bytes, its mask keeps " +
                             num(kept_bytes) + " (Sparse Compression option)");
    }
  }
  if (in.data.size() != align128(read)) {
    return Status::invalid("compressed weight surface is " + num(in.data.size()) + " bytes, " + num(read) +
                           " kept bytes need " + num(align128(read)) + " (Sparse Compression option)");
  }
  for (uint64_t i = read; i < in.data.size(); ++i) {
    if (in.data[i] != 0) {
      return Status::invalid("compressed weight padding byte " + num(i) + " is not 0 (Sparse Compression option)");
    }
  }
  return Status();
}

}  // namespace layoutcheck::nvdla
