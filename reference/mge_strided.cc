// mge.strided: a MegEngine tensor view of any rank, in executable form.
// Document: ../shared/spec/megengine-tensor-layout.txt
//
// "MegEngine is as flexible as NumPy and supports any stride indexing scheme."
// "Tensor stride": strides tell "how many bytes must be skipped in the memory to
// move to the next position along a certain axis". "Generalize": for an
// N-dimensional tensor the byte offset of T[n_0, ..., n_{N-1}] is
//
//   n_offset = sum_{k=0}^{N-1} s_k * n_k,    s_k^row = itemsize * prod_{j>k} d_j
//
// "Use of stride concept": "For some Tensor operations that change the shape, we
// can modify the stride to avoid the actual memory copy" — a transpose is a
// permutation of the strides, a sub-tensor keeps its parent's strides and moves
// the start, a broadcast repeats an element with stride 0.
//
// The layout's parameters: strides in elements ('row' = s^row / itemsize), the
// offset of element (0, ..., 0) in elements, and the block of `storage`
// elements ("one-dimensional continuous computer memory segments") the view
// lies in (0: the view's own span). Offsets are kept in bits (int4 is half a
// byte). row_align=byte is MegEngine's own int4 reading (oracles/ERRATA.md,
// MegEngine 10): each innermost row starts on a byte.
//
// A view is valid when (oracles/ERRATA.md, MegEngine 9):
//   every element lies in the block             (mge.strided/in-bounds)
//   two elements share memory only along a broadcast dimension, stride 0
//                                               (mge.strided/overlap-broadcast-only)
// Bytes of the block that hold no element of the view are free (the rest of
// the memory block belongs to whatever else is there).
#include <algorithm>
#include <cstring>

#include "core/case_cache.h"
#include "core/mge_strides.h"
#include "layoutcheck/byte_rules.h"
#include "layoutcheck/checked.h"
#include "reference/families.h"

namespace layoutcheck {
namespace {

constexpr const char* kDoc = "megengine-tensor-layout.txt";
constexpr uint64_t kMaxBits = uint64_t{1} << 62;
// Views of up to this many non-broadcast elements are checked for overlap one
// element at a time; larger ones must have nested strides.
constexpr uint64_t kEnumerateLimit = uint64_t{1} << 20;

std::string num(uint64_t v) { return std::to_string(v); }

std::string join(const std::vector<uint64_t>& v, const char* sep = ",") {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + num(v[i]);
  return out;
}

struct View {
  uint64_t bits = 0;                   // itemsize in bits
  std::vector<uint64_t> shape;         // d_0 .. d_{N-1}
  std::vector<uint64_t> stride_bits;   // s_0 .. s_{N-1}, in bits
  uint64_t offset_bits = 0;            // of element (0, ..., 0)
  uint64_t size_bits = 0;              // the memory block
  bool row_strides = false;            // strides=row
};

// "Generalize": n_offset = sum_k s_k * n_k, from the view's start.
uint64_t offset_of(const View& v, const Coord& at) {
  uint64_t offset = v.offset_bits;
  for (size_t k = 0; k < at.size(); ++k) offset += v.stride_bits[k] * static_cast<uint64_t>(at[k]);
  return offset;
}

// Two elements share memory only where a broadcast dimension repeats one:
// every coordinate of the other dimensions has an offset of its own.
Status check_overlap(const Case& c, const View& v) {
  std::vector<size_t> moving;  // dimensions of extent > 1 that are not broadcast
  Checked count = 1;
  for (size_t k = 0; k < v.shape.size(); ++k) {
    if (v.shape[k] > 1 && v.stride_bits[k] != 0) moving.push_back(k), count *= v.shape[k];
  }
  if (count.ok() && count.value() <= kEnumerateLimit) {
    std::vector<std::pair<uint64_t, uint64_t>> offsets;  // (offset, index among the moving coordinates)
    offsets.reserve(count.value());
    Coord at(v.shape.size(), 0);
    for (uint64_t i = 0; i < count.value(); ++i) {
      uint64_t rest = i;
      for (size_t m = moving.size(); m-- > 0;) {
        at[moving[m]] = static_cast<int64_t>(rest % v.shape[moving[m]]);
        rest /= v.shape[moving[m]];
      }
      offsets.push_back({offset_of(v, at), i});
    }
    std::sort(offsets.begin(), offsets.end());
    for (size_t i = 1; i < offsets.size(); ++i) {
      if (offsets[i].first != offsets[i - 1].first) continue;
      auto coord = [&](uint64_t index) {
        std::vector<uint64_t> x(v.shape.size(), 0);
        for (size_t m = moving.size(); m-- > 0;) x[moving[m]] = index % v.shape[moving[m]], index /= v.shape[moving[m]];
        return "(" + join(x) + ")";
      };
      return Status::invalid("mge.strided: elements " + coord(offsets[i - 1].second) + " and " +
                             coord(offsets[i].second) + " share bit " + num(offsets[i].first) + " with strides " +
                             c.layout.get("strides") + " on shape (" + join(v.shape) +
                             "); only a broadcast dimension (stride 0) may repeat an element")
          .with_rule("mge.strided/overlap-broadcast-only");
    }
    return Status();
  }
  // Too many to enumerate: nested strides (each at least the span of the
  // smaller ones) cannot overlap; interleaved ones are not established.
  std::vector<std::pair<uint64_t, uint64_t>> dims;  // (stride, extent)
  for (size_t k : moving) dims.push_back({v.stride_bits[k], v.shape[k]});
  std::sort(dims.begin(), dims.end());
  Checked span = v.bits;
  for (const auto& [stride, extent] : dims) {
    if (!span.ok() || stride < span.value()) {
      return Status::unsupported("mge.strided: a view of more than " + num(kEnumerateLimit) +
                                 " elements whose strides interleave: that no two share memory is not established");
    }
    span = Checked(stride) * (extent - 1) + span;
  }
  return Status();
}

Result<View> model(const Case& c) {
  const LayoutSpec* spec = find_spec(c.layout.name);
  if (spec == nullptr) return Status::invalid("unknown layout " + c.layout.name).with_rule("layout/unknown");
  LC_RETURN_IF_ERROR(check_shape(*spec, c.shape));
  View v;
  v.bits = dtype_bits(c.dtype);
  for (int64_t d : c.shape) v.shape.push_back(static_cast<uint64_t>(d));
  const size_t rank = v.shape.size();
  LC_ASSIGN_OR_RETURN(auto given, parse_mge_strides(c.layout.get("strides")));
  const bool byte_rows = c.layout.get("row_align") == "byte";
  v.stride_bits.assign(rank, 0);
  if (!given) {
    // "Generalize": s_k = itemsize * prod_{j=k+1}^{N-1} d_j; with row_align=byte
    // the innermost row, itemsize * d_{N-1}, is rounded up to whole bytes.
    v.row_strides = true;
    Checked stride = v.bits;
    for (size_t k = rank; k-- > 0;) {
      v.stride_bits[k] = stride.value();
      stride *= v.shape[k];
      if (k == rank - 1 && byte_rows && stride.ok()) stride = ceil_div(stride.value(), 8) * 8;
      if (!stride.ok()) {
        return Status::invalid("mge.strided: the row-major strides of shape (" + join(v.shape) +
                               ") overflow the size arithmetic").with_rule("mge.strided/size-overflow");
      }
    }
  } else {
    if (given->size() != rank) {
      return Status::invalid("mge.strided: strides " + c.layout.get("strides") + " give " + num(given->size()) +
                             " dimensions, the shape (" + join(v.shape) + ") has " + num(rank))
          .with_rule("mge.strided/strides-rank");
    }
    for (size_t k = 0; k < rank; ++k) {
      Checked s = Checked((*given)[k]) * v.bits;
      if (!s.ok() || s.value() > kMaxBits) {
        return Status::invalid("mge.strided: stride " + num((*given)[k]) + " of dimension " + num(k) +
                               " overflows the size arithmetic").with_rule("mge.strided/size-overflow");
      }
      v.stride_bits[k] = s.value();
    }
  }
  const uint64_t offset = static_cast<uint64_t>(c.layout.get_int("offset"));
  const uint64_t storage = static_cast<uint64_t>(c.layout.get_int("storage"));
  Checked offset_bits = Checked(offset) * v.bits;
  if (!offset_bits.ok() || offset_bits.value() > kMaxBits) {
    return Status::invalid("mge.strided: offset " + num(offset) + " overflows the size arithmetic")
        .with_rule("mge.strided/size-overflow");
  }
  v.offset_bits = offset_bits.value();
  if (byte_rows && given) {
    // MegEngine's int4 rows: the view's start and each step outside the
    // innermost row land on a byte.
    if (v.offset_bits % 8 != 0) {
      return Status::invalid("mge.strided: offset " + num(offset) + " of " + dtype_name(c.dtype) +
                             " starts a row inside a byte (row_align=byte)").with_rule("mge.strided/row-align-byte");
    }
    for (size_t k = 0; k + 1 < rank; ++k) {
      if (v.shape[k] > 1 && v.stride_bits[k] % 8 != 0) {
        return Status::invalid("mge.strided: stride " + num((*given)[k]) + " of dimension " + num(k) + " is " +
                               num(v.stride_bits[k]) + " bits, not whole bytes (row_align=byte)")
            .with_rule("mge.strided/row-align-byte");
      }
    }
  }
  // The last bit of the view: offset + sum_k s_k * (d_k - 1) + itemsize.
  Checked end = Checked(v.offset_bits) + v.bits;
  for (size_t k = 0; k < rank; ++k) end += Checked(v.stride_bits[k]) * (v.shape[k] - 1);
  if (storage == 0) {
    if (!end.ok() || end.value() > kMaxBits) {
      return Status::invalid("mge.strided: the view's span overflows the size arithmetic")
          .with_rule("mge.strided/size-overflow");
    }
    v.size_bits = end.value();
  } else {
    Checked block = Checked(storage) * v.bits;
    if (!block.ok() || block.value() > kMaxBits) {
      return Status::invalid("mge.strided: a block of " + num(storage) + " " + dtype_name(c.dtype) +
                             " elements overflows the size arithmetic").with_rule("mge.strided/size-overflow");
    }
    if (!end.ok() || end.value() > block.value()) {
      return Status::invalid("mge.strided: the view's last element ends at bit " +
                             (end.ok() ? num(end.value()) : std::string("past 2^64")) + ", past the block of " +
                             num(storage) + " elements (" + num(block.value()) + " bits)")
          .with_rule("mge.strided/in-bounds");
    }
    v.size_bits = block.value();
  }
  LC_RETURN_IF_ERROR(check_overlap(c, v));
  return v;
}

Result<std::shared_ptr<const View>> cached_model(const Case& c) {
  thread_local CaseCache<View> cache;
  return cache.get(c, model);
}

// Copies one element of `bits` bits (whole bytes, or 4) from bit `from` to bit `to`.
void copy_element(const uint8_t* src, uint64_t from, uint8_t* dst, uint64_t to, uint64_t bits) {
  if (bits % 8 == 0) {
    std::memcpy(dst + to / 8, src + from / 8, bits / 8);
    return;
  }
  const uint8_t nibble = static_cast<uint8_t>((src[from / 8] >> (from % 8)) & 0xF);
  uint8_t& byte = dst[to / 8];
  byte = static_cast<uint8_t>((byte & ~(0xF << (to % 8))) | (nibble << (to % 8)));
}

class MgeStridedReference : public Impl {
 public:
  std::string name() const override { return "reference"; }

  Status supports(const Case& c) const override { return cached_model(c).status(); }

  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto v, cached_model(c));
    return ceil_div(v->size_bits, 8);
  }

  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_ASSIGN_OR_RETURN(auto v, cached_model(c));
    LC_RETURN_IF_ERROR(check_coord(c, at));
    return offset_of(*v, at);
  }

  // Every element in logical order; bytes of the block outside the view, and
  // the other nibble of a byte shared with them, are written 0.
  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    LC_ASSIGN_OR_RETURN(auto v, cached_model(c));
    std::memset(physical, 0, physical_size);
    const uint64_t count = *element_count(c.shape);
    for (uint64_t i = 0; i < count; ++i) {
      copy_element(static_cast<const uint8_t*>(logical), i * v->bits, static_cast<uint8_t*>(physical),
                   offset_of(*v, coord_of_index(c.shape, i)), v->bits);
    }
    return Status();
  }

  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    LC_ASSIGN_OR_RETURN(auto v, cached_model(c));
    if (logical_size > 0) static_cast<uint8_t*>(logical)[logical_size - 1] = 0;
    const uint64_t count = *element_count(c.shape);
    for (uint64_t i = 0; i < count; ++i) {
      copy_element(static_cast<const uint8_t*>(physical), offset_of(*v, coord_of_index(c.shape, i)),
                   static_cast<uint8_t*>(logical), i * v->bits, v->bits);
    }
    return Status();
  }

  // Bytes holding an element are element bytes; the rest of the block holds
  // nothing of the view and is free (oracles/ERRATA.md, MegEngine 9).
  Result<ByteRules> byte_rules(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto v, cached_model(c));
    const uint64_t size = ceil_div(v->size_bits, 8);
    if (size > (uint64_t{1} << 30)) return Status::unsupported("byte rules are mapped for buffers of up to 1 GiB");
    ByteRulesBuilder b(size, {"mge.strided.outside-view", kDoc, "Tensor stride", "a byte of the block outside the view",
                              "An instance of the Tensor class is composed of one-dimensional continuous computer "
                              "memory segments."},
                       ByteKind::kFree);
    const uint8_t element = b.add(element_rule(kDoc, "Tensor stride"), ByteKind::kElement);
    const uint64_t count = *element_count(c.shape);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t bit = offset_of(*v, coord_of_index(c.shape, i));
      b.paint(bit / 8, ceil_div(bit + v->bits, 8) - bit / 8, element);
    }
    return std::move(b).finish();
  }

  Result<std::vector<Fact>> describe(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto v, cached_model(c));
    std::vector<Fact> f;
    f.push_back({"size_bytes", num(ceil_div(v->size_bits, 8))});
    std::vector<uint64_t> bytes_strides, broadcast;
    std::string strides;
    for (size_t k = 0; k < v->shape.size(); ++k) {
      const uint64_t s = v->stride_bits[k];
      strides += (k ? "," : "") + num(s / 8) + (s % 8 == 4 ? ".5" : s % 8 ? "+" + num(s % 8) + "b" : "");
      if (s == 0 && v->shape[k] > 1) broadcast.push_back(k);
    }
    f.push_back({"strides", strides});
    f.push_back({"strides_bits", join(v->stride_bits)});
    f.push_back({"offset_bits", num(v->offset_bits)});
    // megdnn TensorLayout::is_contiguous: every dimension of extent > 1 has the
    // row-major stride s^row of "Generalize".
    bool contiguous = true;
    uint64_t expected = v->bits;
    for (size_t k = v->shape.size(); k-- > 0;) {
      if (v->shape[k] != 1 && v->stride_bits[k] != expected) contiguous = false;
      expected *= v->shape[k];
    }
    f.push_back({"is_contiguous", contiguous ? "yes" : "no"});
    f.push_back({"broadcast_dims", broadcast.empty() ? "none" : join(broadcast)});
    return f;
  }
};

}  // namespace

const Impl& mge_strided_reference() {
  static const MgeStridedReference impl;
  return impl;
}

}  // namespace layoutcheck
