// Fast pack/unpack for the Qualcomm HTP chunked layouts.
//
// Why it equals the reference: memory is the nest of loops the pairs describe,
// one loop per pair, slowest first; memory index = the loops' mixed-radix
// number, and the logical coordinate along a pair's dimension = sum of the
// loop value times the loop's step. Loops of count 1 do nothing and are
// dropped; two adjacent loops of the same dimension with outer step = inner
// step x inner count count one range and are fused; adjacent loops over
// unpadded dimensions whose logical strides nest are fused too. The innermost
// loop, when its logical stride is one element, is a contiguous run on both
// sides: a row copy (padding clipped off its tail), written front to back.
#include <algorithm>
#include <cstring>

#include "core/htp_notation.h"
#include "layoutcheck/checked.h"
#include "optimized/families.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define LC_HTP_X86 1
#endif

namespace layoutcheck {
namespace {

struct Loop {
  size_t dim = 0;
  uint64_t count = 1;
  uint64_t step = 1;  // along dim
  uint64_t ls = 0;    // logical stride in elements: step * row-major stride of dim
  bool clipped = false;
};

struct Plan {
  size_t rank = 0;
  std::vector<uint64_t> extent, padded, lstride, chunk;
  std::vector<Loop> pairs;  // one per pair, for offsets
  std::vector<Loop> loops;  // fused, for pack/unpack; innermost has ls == 1
  uint64_t elem = 1, elements = 1;
  uint8_t pad = 0;
};

Result<Plan> make_plan(const Case& c) {
  const DTypeInfo& info = dtype_info(c.dtype);
  if (!info.logical) return Status::invalid(std::string(info.name) + " is not a logical element type");
  if (info.bits % 8 != 0) return Status::unsupported(std::string(info.name) + ": sub-byte elements are not laid out");
  LC_ASSIGN_OR_RETURN(HtpNotation n, htp_notation_of(c.layout));
  Plan p;
  p.rank = static_cast<size_t>(n.rank);
  if (c.shape.size() != p.rank) {
    return Status::invalid("shape " + shape_to_string(c.shape) + " does not have the layout's rank " +
                           std::to_string(p.rank));
  }
  LC_RETURN_IF_ERROR(element_count(c.shape).status());
  p.elem = info.bits / 8;
  p.pad = htp_pad_byte(c.layout);
  p.chunk.assign(p.rank, 1);
  for (const HtpPair& q : n.pairs) p.chunk[static_cast<size_t>(q.dim)] *= q.size == 0 ? 1 : q.size;
  p.extent.resize(p.rank);
  p.padded.resize(p.rank);
  p.lstride.assign(p.rank, 1);
  Checked total = 1;
  for (size_t d = 0; d < p.rank; ++d) {
    p.extent[d] = static_cast<uint64_t>(c.shape[d]);
    Checked padded = Checked((p.extent[d] + p.chunk[d] - 1) / p.chunk[d]) * p.chunk[d];
    if (p.extent[d] + p.chunk[d] - 1 < p.extent[d]) padded = Checked(UINT64_MAX) * 2;
    total *= padded;
    p.padded[d] = padded.value();
  }
  Checked bytes = total * p.elem;
  if (!total.ok() || !bytes.ok() || total.value() > (uint64_t{1} << 56)) {
    return Status::invalid("padded tensor of shape " + shape_to_string(c.shape) + " is too large");
  }
  p.elements = total.value();
  for (size_t d = p.rank - 1; d-- > 0;) p.lstride[d] = p.lstride[d + 1] * p.extent[d + 1];

  // Loops, slowest first: zero-size pairs count chunks, sized pairs count
  // inside a chunk; a sized pair steps over the later sized pairs of its dimension.
  std::vector<uint64_t> inner(p.rank, 1);
  for (size_t i = n.pairs.size(); i-- > 0;) {
    const HtpPair& q = n.pairs[i];
    const size_t d = static_cast<size_t>(q.dim);
    Loop l;
    l.dim = d;
    if (q.size == 0) {
      l.count = p.padded[d] / p.chunk[d];
      l.step = p.chunk[d];
    } else {
      l.count = q.size;
      l.step = inner[d];
      inner[d] *= q.size;
    }
    l.ls = l.step * p.lstride[d];
    l.clipped = p.padded[d] != p.extent[d];
    p.pairs.push_back(l);
  }
  std::reverse(p.pairs.begin(), p.pairs.end());

  for (const Loop& l : p.pairs) {
    if (l.count == 1) continue;
    if (!p.loops.empty()) {
      Loop& o = p.loops.back();
      const bool same_dim = o.dim == l.dim && o.step == l.step * l.count;
      const bool nested = !o.clipped && !l.clipped && o.ls == l.ls * l.count;
      if (same_dim || nested) {
        o.count *= l.count;
        o.step = l.step;
        o.ls = l.ls;
        o.dim = l.dim;
        continue;
      }
    }
    p.loops.push_back(l);
  }
  // The innermost loop is a row: logical stride 1. Otherwise a row of one element.
  if (p.loops.empty() || p.loops.back().ls != 1) {
    Loop row;
    row.dim = p.loops.empty() ? p.rank - 1 : p.loops.back().dim;
    row.ls = 1;
    row.clipped = p.padded[row.dim] != p.extent[row.dim];
    p.loops.push_back(row);
  }
  return p;
}

// ---- row copies ---------------------------------------------------------------

template <bool kPack, size_t kRowBytes>
inline __attribute__((always_inline)) void copy_row(uint8_t* phys, uint8_t* logical, size_t row_bytes,
                                                   size_t valid_bytes, uint8_t pad) {
  if (kRowBytes != 0 && valid_bytes == kRowBytes) {
    if (kPack) std::memcpy(phys, logical, kRowBytes);
    else std::memcpy(logical, phys, kRowBytes);
    return;
  }
  if (valid_bytes != 0) {
    if (kPack) std::memcpy(phys, logical, valid_bytes);
    else std::memcpy(logical, phys, valid_bytes);
  }
  if (kPack) std::memset(phys + valid_bytes, pad, row_bytes - valid_bytes);
}

// Rows of the two innermost loops: `mid` runs over rows of `row` (logical
// stride 1). Memory advances one row at a time, front to back. Coordinates are
// tracked only where they can fall into padding (clipped dimensions).
template <bool kPack, size_t kRowBytes>
inline __attribute__((always_inline)) void walk_body(const Plan& p, uint8_t* logical, uint8_t* phys) {
  const size_t m = p.loops.size();
  const Loop& row = p.loops[m - 1];
  Loop unit;  // count 1: a stand-in middle loop when there is only the row
  unit.dim = row.dim;
  const Loop& mid = m >= 2 ? p.loops[m - 2] : unit;
  const size_t outer_loops = m >= 2 ? m - 2 : 0;
  const size_t e = p.elem;
  const size_t row_bytes = row.count * e;
  const size_t a = row.dim, b = mid.dim;
  const uint64_t xa_limit = p.extent[a];

  std::vector<uint64_t> value(outer_loops, 0), x(p.rank, 0);
  uint64_t base = 0;  // logical element offset of the current position
  uint8_t* dst = phys;
  while (true) {
    // Dimensions other than a and b are fixed during the two inner loops.
    bool others_ok = true;
    for (size_t d = 0; d < p.rank; ++d) {
      others_ok &= d == a || d == b || p.padded[d] == p.extent[d] || x[d] < p.extent[d];
    }
    uint64_t src = base;
    uint64_t xb = x[b];
    for (uint64_t it = 0; it < mid.count; ++it, xb += mid.step, src += mid.ls, dst += row_bytes) {
      uint64_t valid = 0;
      if (others_ok) {
        if (!row.clipped) {
          valid = (!mid.clipped || a == b || xb < p.extent[b]) ? row.count : 0;
        } else {
          const uint64_t xa = a == b ? xb : x[a];
          const bool b_ok = a == b || !mid.clipped || xb < p.extent[b];
          if (b_ok && xa < xa_limit) valid = std::min<uint64_t>(row.count, xa_limit - xa);
        }
      }
      copy_row<kPack, kRowBytes>(dst, valid != 0 ? logical + src * e : logical, row_bytes, valid * e, p.pad);
    }
    // Advance the outer odometer; the last outer loop moves fastest.
    size_t i = outer_loops;
    while (i-- > 0) {
      const Loop& l = p.loops[i];
      if (++value[i] < l.count) {
        x[l.dim] += l.step;
        base += l.ls;
        break;
      }
      value[i] = 0;
      x[l.dim] -= l.step * (l.count - 1);
      base -= l.ls * (l.count - 1);
    }
    if (i == SIZE_MAX) break;
  }
}

template <bool kPack, size_t kRowBytes>
void walk_portable(const Plan& p, uint8_t* logical, uint8_t* phys) {
  walk_body<kPack, kRowBytes>(p, logical, phys);
}

#ifdef LC_HTP_X86
// The same walk compiled for AVX2: whole 32- and 64-byte rows become single
// 256-bit loads and stores.
template <bool kPack, size_t kRowBytes>
__attribute__((target("avx2"))) void walk_avx2(const Plan& p, uint8_t* logical, uint8_t* phys) {
  walk_body<kPack, kRowBytes>(p, logical, phys);
}
bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

template <bool kPack, size_t kRowBytes>
void walk_rows(const Plan& p, uint8_t* logical, uint8_t* phys) {
#ifdef LC_HTP_X86
  if (has_avx2()) return walk_avx2<kPack, kRowBytes>(p, logical, phys);
#endif
  walk_portable<kPack, kRowBytes>(p, logical, phys);
}

template <bool kPack>
void walk(const Plan& p, uint8_t* logical, uint8_t* phys) {
  const size_t row_bytes = p.loops.back().count * p.elem;
  switch (row_bytes) {
    case 32: return walk_rows<kPack, 32>(p, logical, phys);
    case 64: return walk_rows<kPack, 64>(p, logical, phys);
    case 128: return walk_rows<kPack, 128>(p, logical, phys);
    default: return walk_rows<kPack, 0>(p, logical, phys);
  }
}

class HtpOptimized : public Impl {
 public:
  std::string name() const override { return "optimized"; }
  Status supports(const Case& c) const override { return make_plan(c).status(); }
  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(Plan p, make_plan(c));
    return p.elements * p.elem;
  }
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_ASSIGN_OR_RETURN(Plan p, make_plan(c));
    if (at.size() != p.rank) return Status::invalid("coordinate rank differs from the shape's");
    for (size_t d = 0; d < p.rank; ++d) {
      if (at[d] < 0 || static_cast<uint64_t>(at[d]) >= p.extent[d]) return Status::invalid("coordinate outside the shape");
    }
    // Mixed radix over the pair loops, innermost first.
    uint64_t offset = 0, weight = 1;
    for (size_t i = p.pairs.size(); i-- > 0;) {
      const Loop& l = p.pairs[i];
      offset += (static_cast<uint64_t>(at[l.dim]) / l.step % l.count) * weight;
      weight *= l.count;
    }
    return offset * p.elem * 8;
  }
  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    LC_ASSIGN_OR_RETURN(Plan p, make_plan(c));
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    walk<true>(p, const_cast<uint8_t*>(static_cast<const uint8_t*>(logical)), static_cast<uint8_t*>(physical));
    return Status();
  }
  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    LC_ASSIGN_OR_RETURN(Plan p, make_plan(c));
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    walk<false>(p, static_cast<uint8_t*>(logical), const_cast<uint8_t*>(static_cast<const uint8_t*>(physical)));
    return Status();
  }
};

}  // namespace

const Impl& htp_optimized() {
  static const HtpOptimized impl;
  return impl;
}

}  // namespace layoutcheck
