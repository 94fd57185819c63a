// The MegEngine tensor layout document in executable form.
// Document: ../shared/spec/megengine-tensor-layout.txt
//
// Every layout is a physical tensor whose shape and index are given by the
// document's format sections ("NCHW and NHWC", "NCHWX", "CHWN4"), stored in
// row-major order with the strides of "Generalize":
//
//   s_k = itemsize * prod_{j=k+1}^{N-1} d_j,   n_offset = sum_k s_k * n_k
//
// Offsets are kept in bits so itemsize may be half a byte (int4/uint4, the
// type NCHW64 is meant for). Sub-byte elements are packed two per byte, the
// element with the lower offset in the low nibble (oracles/ERRATA.md,
// "MegEngine"). pack and unpack walk the logical tensor element by element.
#include <cstring>
#include <initializer_list>

#include "core/case_cache.h"
#include "layoutcheck/byte_rules.h"
#include "layoutcheck/checked.h"
#include "reference/families.h"

namespace layoutcheck {
namespace {

std::string num(uint64_t v) { return std::to_string(v); }

std::string join(const std::vector<uint64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + num(v[i]);
  return out;
}

// A bit count as bytes: "20", or "0.5" for half a byte.
std::string bits_as_bytes(uint64_t bits) {
  std::string out = num(bits / 8);
  if (bits % 8 == 4) out += ".5";
  else if (bits % 8 != 0) out += "+" + num(bits % 8) + "b";
  return out;
}

// The format section a layout follows, told once from its name (the index is
// asked for every element).
enum class Section { kMatrixRowMajor, kMatrixColumnMajor, kNchw, kNhwc, kChwn4, kNchwx };

struct MgeTensor {
  std::string format;                  // nchw, nhwc, nchw4, nchw32, nchw64, chwn4, matrix
  Section section = Section::kNchw;
  uint64_t block = 1;                  // X of NCHWX, 4 of CHWN4
  uint64_t itemsize_bits = 0;
  std::vector<std::string> dims;       // physical dimension names
  std::vector<uint64_t> shape;         // physical shape d_0 .. d_{N-1}
  std::vector<uint64_t> strides_bits;  // s_0 .. s_{N-1}
  uint64_t size_bits = 0;              // itemsize * prod d_j
};

// The physical index of logical element `at`, per format section.
// At most five physical dimensions ([C/4, H, W, N, 4], [N, C/X, H, W, X]);
// held in place, as the index is asked for every element.
class PhysicalIndex {
 public:
  PhysicalIndex(std::initializer_list<uint64_t> values) {
    for (uint64_t v : values) values_[size_++] = v;
  }
  size_t size() const { return size_; }
  uint64_t operator[](size_t k) const { return values_[k]; }

 private:
  uint64_t values_[5] = {};
  size_t size_ = 0;
};

PhysicalIndex physical_index(const MgeTensor& t, const Coord& at) {
  // "How Tensor values are stored in memory": row-major a[i][j] at i*cols + j;
  // column-major is the same with the roles of i and j exchanged.
  if (t.section == Section::kMatrixRowMajor || t.section == Section::kMatrixColumnMajor) {
    const uint64_t i = at[0], j = at[1];
    if (t.section == Section::kMatrixRowMajor) return {i, j};
    return {j, i};
  }
  const uint64_t n = at[0], c = at[1], h = at[2], w = at[3];
  switch (t.section) {
    // "NCHW and NHWC": NCHW stores W first, then H, C and N.
    case Section::kNchw: return {n, c, h, w};
    // "NCHW and NHWC": NHWC stores C first, then W, H and N.
    case Section::kNhwc: return {n, h, w, c};
    // "CHWN4": 4 channels first, then along N, then W and H: [C/4, H, W, N, 4].
    case Section::kChwn4: return {c / 4, h, w, n, c % 4};
    // "NCHWX": [Batch, Channels/X, Height, Width, X]: X channels first, then W, H, C, N.
    default: return {n, c / t.block, h, w, c % t.block};
  }
}

Result<MgeTensor> model(const Case& c) {
  const LayoutSpec* spec = find_spec(c.layout.name);
  if (spec == nullptr) return Status::invalid("unknown layout " + c.layout.name).with_rule("layout/unknown");
  LC_RETURN_IF_ERROR(check_shape(*spec, c.shape));
  MgeTensor t;
  t.format = c.layout.name.substr(4);
  // "itemsize depending dtype"; int4/uint4 take half a byte.
  t.itemsize_bits = dtype_bits(c.dtype);
  if (t.format == "matrix") {
    const uint64_t rows = c.shape[0], cols = c.shape[1];
    if (c.layout.get("order") == "row") {
      t.section = Section::kMatrixRowMajor;
      t.dims = {"rows", "cols"};
      t.shape = {rows, cols};
    } else {
      t.section = Section::kMatrixColumnMajor;
      t.dims = {"cols", "rows"};
      t.shape = {cols, rows};
    }
  } else {
    const uint64_t N = c.shape[0], C = c.shape[1], H = c.shape[2], W = c.shape[3];
    if (t.format == "nchw") {
      t.section = Section::kNchw;
      t.dims = {"N", "C", "H", "W"};
      t.shape = {N, C, H, W};
    } else if (t.format == "nhwc") {
      t.section = Section::kNhwc;
      t.dims = {"N", "H", "W", "C"};
      t.shape = {N, H, W, C};
    } else if (t.format == "chwn4") {
      // "CHWN4": channels split into blocks of 4; the last block is padded.
      t.section = Section::kChwn4;
      t.block = 4;
      t.dims = {"C/4", "H", "W", "N", "4"};
      t.shape = {ceil_div(C, 4), H, W, N, 4};
    } else {
      // "NCHWX": X = 4, 32 or 64; the channels split into ceil(C/X) blocks.
      t.section = Section::kNchwx;
      t.block = std::stoull(t.format.substr(4));
      t.dims = {"N", "C/" + num(t.block), "H", "W", num(t.block)};
      t.shape = {N, ceil_div(C, t.block), H, W, t.block};
    }
  }
  // "Generalize": s_k = itemsize * prod_{j=k+1}^{N-1} d_j.
  const size_t rank = t.shape.size();
  t.strides_bits.assign(rank, 0);
  Checked stride = t.itemsize_bits;
  for (size_t k = rank; k-- > 0;) {
    t.strides_bits[k] = stride.value();
    stride *= t.shape[k];
  }
  // The contiguous block holds itemsize * prod d_j bits.
  if (!stride.ok() || stride.value() > (uint64_t{1} << 62)) {
    return Status::invalid(c.layout.name + ": the physical tensor " + join(t.shape) + " of " +
                           dtype_name(c.dtype) + " overflows the size arithmetic").with_rule("mge/size-overflow");
  }
  t.size_bits = stride.value();
  return t;
}

// "Generalize": n_offset = sum_k s_k * n_k (in bits here).
uint64_t offset_of(const MgeTensor& t, const Coord& at) {
  const PhysicalIndex index = physical_index(t, at);
  uint64_t offset = 0;
  for (size_t k = 0; k < index.size(); ++k) offset += t.strides_bits[k] * index[k];
  return offset;
}

// The coordinate after `at` in the order of the dense logical buffer (row-major,
// the last dimension fastest): coord_of_index(shape, i + 1) from that of i.
void next_coord(const Shape& shape, Coord* at) {
  for (size_t d = at->size(); d-- > 0;) {
    if (++(*at)[d] < shape[d]) return;
    (*at)[d] = 0;
  }
}

// Copies `bits` bits (a whole number of bytes, or 4) from bit `from` of src to
// bit `to` of dst. A 4-bit element with an even offset is the low nibble.
void copy_element(const uint8_t* src, uint64_t from, uint8_t* dst, uint64_t to, uint64_t bits) {
  if (bits % 8 == 0) {
    uint8_t* d = dst + to / 8;
    const uint8_t* s = src + from / 8;
    // A copy of a known size for each itemsize (1, 2, 4 bytes): no call per element.
    switch (bits) {
      case 8: std::memcpy(d, s, 1); break;
      case 16: std::memcpy(d, s, 2); break;
      case 32: std::memcpy(d, s, 4); break;
      default: std::memcpy(d, s, bits / 8);
    }
    return;
  }
  const uint8_t nibble = static_cast<uint8_t>((src[from / 8] >> (from % 8)) & 0xF);
  uint8_t& byte = dst[to / 8];
  byte = static_cast<uint8_t>((byte & ~(0xF << (to % 8))) | (nibble << (to % 8)));
}

// The checker asks one case many questions: each derives the model once (core/case_cache.h).
Result<std::shared_ptr<const MgeTensor>> cached_model(const Case& c) {
  thread_local CaseCache<MgeTensor> cache;
  return cache.get(c, model);
}

class MgeReference : public Impl {
 public:
  std::string name() const override { return "reference"; }

  Status supports(const Case& c) const override { return cached_model(c).status(); }

  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto t_ptr, cached_model(c));
    const MgeTensor& t = *t_ptr;
    return ceil_div(t.size_bits, 8);
  }

  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_ASSIGN_OR_RETURN(auto t_ptr, cached_model(c));
    const MgeTensor& t = *t_ptr;
    LC_RETURN_IF_ERROR(check_coord(c, at));
    return offset_of(t, at);
  }

  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    LC_ASSIGN_OR_RETURN(auto t_ptr, cached_model(c));
    const MgeTensor& t = *t_ptr;
    // Padding channels ("easy padding") and the spare nibble of an odd 4-bit
    // tensor are 0.
    std::memset(physical, 0, physical_size);
    const uint64_t count = *element_count(c.shape);
    Coord at(c.shape.size(), 0);
    for (uint64_t i = 0; i < count; ++i, next_coord(c.shape, &at)) {
      copy_element(static_cast<const uint8_t*>(logical), i * t.itemsize_bits, static_cast<uint8_t*>(physical),
                   offset_of(t, at), t.itemsize_bits);
    }
    return Status();
  }

  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    LC_ASSIGN_OR_RETURN(auto t_ptr, cached_model(c));
    const MgeTensor& t = *t_ptr;
    // The spare nibble of an odd 4-bit logical tensor is 0.
    if (logical_size > 0) static_cast<uint8_t*>(logical)[logical_size - 1] = 0;
    const uint64_t count = *element_count(c.shape);
    Coord at(c.shape.size(), 0);
    for (uint64_t i = 0; i < count; ++i, next_coord(c.shape, &at)) {
      copy_element(static_cast<const uint8_t*>(physical), offset_of(t, at),
                   static_cast<uint8_t*>(logical), i * t.itemsize_bits, t.itemsize_bits);
    }
    return Status();
  }

  // Padding channels ("Easy padding", NCHWX and CHWN4) have no value in the
  // document; they are fixed to 0 (oracles/ERRATA.md, MegEngine 5): they lie in
  // the channel blocks the kernels reduce over, where only 0 is neutral, and
  // oneDNN's padded layouts (the external oracle) require 0. A byte holding any
  // bits of an element is an element byte; its other nibble (a padding channel,
  // or the spare nibble after an odd 4-bit count) is then 0 as well. No byte is free.
  Result<ByteRules> byte_rules(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto t_ptr, cached_model(c));
    const MgeTensor& t = *t_ptr;
    const uint64_t size = ceil_div(t.size_bits, 8);
    if (size > (uint64_t{1} << 30)) return Status::unsupported("byte rules are mapped for buffers of up to 1 GiB");
    const char* doc = "megengine-tensor-layout.txt";
    const LayoutSpec* spec = find_spec(c.layout.name);
    const std::string section = spec ? spec->section : "Generalize";
    ByteRulesBuilder b(size, {"mge.padding-channel", doc, section, "a padding channel of the last channel block",
                              "Easy padding, reduce boundary branch judgment, simple code logic."},
                       ByteKind::kFixed, 0);
    const uint8_t element = b.add(element_rule(doc, section), ByteKind::kElement);
    const uint64_t count = *element_count(c.shape);
    Coord at(c.shape.size(), 0);
    for (uint64_t i = 0; i < count; ++i, next_coord(c.shape, &at)) {
      const uint64_t bit = offset_of(t, at);
      b.paint(bit / 8, ceil_div(bit + t.itemsize_bits, 8) - bit / 8, element);
    }
    return std::move(b).finish();
  }

  Result<std::vector<Fact>> describe(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto t_ptr, cached_model(c));
    const MgeTensor& t = *t_ptr;
    std::vector<Fact> f;
    f.push_back({"size_bytes", num(ceil_div(t.size_bits, 8))});
    f.push_back({"itemsize", bits_as_bytes(t.itemsize_bits)});
    std::string dims;
    for (const auto& d : t.dims) dims += (dims.empty() ? "" : ",") + d;
    f.push_back({"physical_dims", dims});
    f.push_back({"physical_shape", join(t.shape)});
    std::string strides;
    for (uint64_t s : t.strides_bits) strides += (strides.empty() ? "" : ",") + bits_as_bytes(s);
    f.push_back({"strides", strides});
    f.push_back({"strides_bits", join(t.strides_bits)});
    if (t.block > 1) {
      const uint64_t C = c.shape[1];
      f.push_back({"channel_blocks", num(ceil_div(C, t.block))});
      f.push_back({"padded_channels", num(ceil_div(C, t.block) * t.block - C)});
    }
    if (t.itemsize_bits < 8) f.push_back({"nibble_order", "low nibble first"});
    return f;
  }
};

}  // namespace

const Impl& mge_reference() {
  static const MgeReference impl;
  return impl;
}

}  // namespace layoutcheck
