// mge.strided: pack/unpack of a MegEngine strided view by runs.
//
// Why it equals the reference: the view's dimensions of extent 1 never move
// an offset and are dropped; a dimension whose stride is the span of the next
// inner one (s_k == s_{k+1} * d_{k+1}) continues it and is merged into it, so a
// contiguous view becomes one run. The walk keeps the offset of the current
// run in an odometer (adds and subtracts of the strides, no products) and
// copies the innermost dimension with memcpy when it is dense and byte
// aligned, element by element otherwise. Overlap: nested strides (sorted by
// size, each at least the span of the smaller ones) cannot overlap; other
// views are decided by sorting all their non-broadcast offsets, as many as the
// reference enumerates, and declined beyond.
#include <algorithm>
#include <cstring>

#include "core/case_cache.h"
#include "core/mge_strides.h"
#include "layoutcheck/byte_rules.h"
#include "layoutcheck/checked.h"
#include "optimized/families.h"

namespace layoutcheck {
namespace {

constexpr uint64_t kLimitBits = uint64_t{1} << 62;
constexpr uint64_t kSortLimit = uint64_t{1} << 20;

struct Dim {
  uint64_t extent, stride;  // stride in bits
};

struct Plan {
  uint64_t bits = 0;
  uint64_t start = 0;        // bits
  uint64_t phys_bits = 0;
  std::vector<Dim> dims;     // logical order, with the extents of the shape (for offset_bits)
  std::vector<Dim> runs;     // merged, extent-1 dimensions dropped, outermost first
  uint64_t elements = 0;
};

Status invalid(const std::string& msg, const char* rule) {
  return Status::invalid("mge.strided: " + msg).with_rule(rule);
}

// Offsets of every element of `runs`, in order, through an odometer.
template <typename F>
void walk_offsets(const Plan& p, const std::vector<Dim>& runs, F&& visit) {
  const size_t r = runs.size();
  if (r == 0) {
    visit(p.start);
    return;
  }
  std::vector<uint64_t> idx(r, 0);
  uint64_t off = p.start;
  const Dim inner = runs[r - 1];
  while (true) {
    uint64_t o = off;
    for (uint64_t i = 0; i < inner.extent; ++i, o += inner.stride) visit(o);
    size_t k = r - 1;
    while (k-- > 0) {
      if (++idx[k] < runs[k].extent) {
        off += runs[k].stride;
        break;
      }
      off -= runs[k].stride * (runs[k].extent - 1);
      idx[k] = 0;
    }
    if (k == static_cast<size_t>(-1)) return;
  }
}

Status overlap(const Case& c, const Plan& p) {
  std::vector<Dim> moving;
  for (const Dim& d : p.dims) {
    if (d.extent > 1 && d.stride != 0) moving.push_back(d);
  }
  std::vector<Dim> sorted = moving;
  std::sort(sorted.begin(), sorted.end(), [](const Dim& a, const Dim& b) { return a.stride < b.stride; });
  uint64_t reach = p.bits;
  bool nested = true;
  for (const Dim& d : sorted) {
    if (d.stride < reach) {
      nested = false;
      break;
    }
    reach = d.stride * (d.extent - 1) + reach;  // below the checked span of the view
  }
  if (nested) return Status();
  Checked count = 1;
  for (const Dim& d : moving) count *= d.extent;
  if (!count.ok() || count.value() > kSortLimit) {
    return Status::unsupported("mge.strided: a view of more than " + std::to_string(kSortLimit) +
                               " elements whose strides interleave: that no two share memory is not established");
  }
  std::vector<uint64_t> offsets;
  offsets.reserve(count.value());
  walk_offsets(p, moving, [&](uint64_t o) { offsets.push_back(o); });
  std::sort(offsets.begin(), offsets.end());
  auto dup = std::adjacent_find(offsets.begin(), offsets.end());
  if (dup == offsets.end()) return Status();
  return invalid("two elements share bit " + std::to_string(*dup) + " with strides " + c.layout.get("strides") +
                     "; only a broadcast dimension (stride 0) may repeat an element",
                 "mge.strided/overlap-broadcast-only");
}

Result<Plan> make_plan(const Case& c) {
  const LayoutSpec* spec = find_spec(c.layout.name);
  if (spec == nullptr) return Status::invalid("unknown layout " + c.layout.name).with_rule("layout/unknown");
  LC_RETURN_IF_ERROR(check_shape(*spec, c.shape));
  Plan p;
  p.bits = dtype_bits(c.dtype);
  p.elements = *element_count(c.shape);
  const size_t rank = c.shape.size();
  LC_ASSIGN_OR_RETURN(auto given, parse_mge_strides(c.layout.get("strides")));
  const bool byte_rows = c.layout.get("row_align") == "byte";
  p.dims.resize(rank);
  for (size_t k = 0; k < rank; ++k) p.dims[k].extent = static_cast<uint64_t>(c.shape[k]);
  if (!given) {
    // Dense rows: the innermost row's pitch, rounded to bytes when asked, then
    // each outer stride the pitch times the extents inside it.
    Checked pitch = Checked(p.dims[rank - 1].extent) * p.bits;
    if (byte_rows && pitch.ok()) pitch = (pitch.value() + 7) / 8 * 8;
    p.dims[rank - 1].stride = p.bits;
    for (size_t k = rank - 1; k-- > 0;) {
      if (!pitch.ok()) break;
      p.dims[k].stride = pitch.value();
      pitch *= p.dims[k].extent;
    }
    if (!pitch.ok()) return invalid("the row-major strides overflow the size arithmetic", "mge.strided/size-overflow");
  } else {
    if (given->size() != rank) {
      return invalid(std::to_string(given->size()) + " strides for a shape of rank " + std::to_string(rank),
                     "mge.strided/strides-rank");
    }
    for (size_t k = 0; k < rank; ++k) {
      Checked s = Checked((*given)[k]) * p.bits;
      if (!s.ok() || s.value() > kLimitBits) return invalid("a stride overflows the size arithmetic", "mge.strided/size-overflow");
      p.dims[k].stride = s.value();
    }
  }
  const uint64_t offset = static_cast<uint64_t>(c.layout.get_int("offset"));
  Checked start = Checked(offset) * p.bits;
  if (!start.ok() || start.value() > kLimitBits) return invalid("the offset overflows the size arithmetic", "mge.strided/size-overflow");
  p.start = start.value();
  if (byte_rows && given) {
    bool aligned = p.start % 8 == 0;
    for (size_t k = 0; k + 1 < rank; ++k) aligned = aligned && (p.dims[k].extent == 1 || p.dims[k].stride % 8 == 0);
    if (!aligned) return invalid("a row starts inside a byte (row_align=byte)", "mge.strided/row-align-byte");
  }
  Checked last = Checked(p.start) + p.bits;
  for (const Dim& d : p.dims) last += Checked(d.stride) * (d.extent - 1);
  const uint64_t storage = static_cast<uint64_t>(c.layout.get_int("storage"));
  if (storage == 0) {
    if (!last.ok() || last.value() > kLimitBits) return invalid("the span overflows the size arithmetic", "mge.strided/size-overflow");
    p.phys_bits = last.value();
  } else {
    Checked block = Checked(storage) * p.bits;
    if (!block.ok() || block.value() > kLimitBits) return invalid("the block overflows the size arithmetic", "mge.strided/size-overflow");
    if (!last.ok() || last.value() > block.value()) {
      return invalid("the view ends past the block of " + std::to_string(storage) + " elements", "mge.strided/in-bounds");
    }
    p.phys_bits = block.value();
  }
  LC_RETURN_IF_ERROR(overlap(c, p));
  // Runs: drop extent-1 dimensions, merge a dimension into the next inner one it continues.
  for (const Dim& d : p.dims) {
    if (d.extent == 1) continue;
    if (!p.runs.empty() && p.runs.back().stride == d.stride * d.extent) {
      p.runs.back() = Dim{p.runs.back().extent * d.extent, d.stride};
    } else {
      p.runs.push_back(d);
    }
  }
  return p;
}

Result<std::shared_ptr<const Plan>> cached_plan(const Case& c) {
  thread_local CaseCache<Plan> cache;
  return cache.get(c, make_plan);
}

inline uint8_t nibble_at(const uint8_t* b, uint64_t bit) { return (b[bit >> 3] >> (bit & 4)) & 0xF; }
inline void set_nibble(uint8_t* b, uint64_t bit, uint8_t v) {
  uint8_t& x = b[bit >> 3];
  x = (bit & 4) ? static_cast<uint8_t>((x & 0x0F) | (v << 4)) : static_cast<uint8_t>((x & 0xF0) | v);
}

template <bool kPack>
void transfer(const Plan& p, uint8_t* logical, uint8_t* phys) {
  const uint64_t bytes = p.bits / 8;
  const bool dense_inner = !p.runs.empty() && p.runs.back().stride == p.bits && p.bits % 8 == 0;
  std::vector<Dim> outer = p.runs;
  uint64_t row = 1;
  if (dense_inner) {
    row = outer.back().extent;
    outer.back() = Dim{1, 0};
  }
  uint64_t at = 0;  // logical bit
  walk_offsets(p, outer, [&](uint64_t o) {
    if (p.bits % 8 == 0) {
      if (kPack) std::memcpy(phys + o / 8, logical + at / 8, row * bytes);
      else std::memcpy(logical + at / 8, phys + o / 8, row * bytes);
    } else if (kPack) {
      set_nibble(phys, o, nibble_at(logical, at));
    } else {
      set_nibble(logical, at, nibble_at(phys, o));
    }
    at += row * p.bits;
  });
}

class MgeStridedOptimized : public Impl {
 public:
  std::string name() const override { return "optimized"; }
  Status supports(const Case& c) const override { return cached_plan(c).status(); }
  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto p, cached_plan(c));
    return (p->phys_bits + 7) / 8;
  }
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_ASSIGN_OR_RETURN(auto p, cached_plan(c));
    LC_RETURN_IF_ERROR(check_coord(c, at));
    uint64_t o = p->start;
    for (size_t k = 0; k < at.size(); ++k) o += p->dims[k].stride * static_cast<uint64_t>(at[k]);
    return o;
  }
  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    LC_ASSIGN_OR_RETURN(auto p, cached_plan(c));
    LC_RETURN_IF_ERROR(check_buffers(c, (p->phys_bits + 7) / 8, logical_size, physical_size));
    std::memset(physical, 0, physical_size);
    transfer<true>(*p, const_cast<uint8_t*>(static_cast<const uint8_t*>(logical)), static_cast<uint8_t*>(physical));
    return Status();
  }
  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    LC_ASSIGN_OR_RETURN(auto p, cached_plan(c));
    LC_RETURN_IF_ERROR(check_buffers(c, (p->phys_bits + 7) / 8, logical_size, physical_size));
    if (p->bits < 8 && p->elements % 2 == 1) static_cast<uint8_t*>(logical)[logical_size - 1] = 0;
    transfer<false>(*p, static_cast<uint8_t*>(logical), const_cast<uint8_t*>(static_cast<const uint8_t*>(physical)));
    return Status();
  }
};

}  // namespace

const Impl& mge_strided_optimized() {
  static const MgeStridedOptimized impl;
  return impl;
}

}  // namespace layoutcheck
