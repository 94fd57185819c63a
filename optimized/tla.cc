// Fast pack/unpack for the CATLASS TLA layouts.
//
// Why it equals the reference: crd2offset of a coordinate (i0, ..., iN) is the
// sum of the offsets of each ik in mode k, and the offset of an integer in a
// mode is the sum over the mode's integers, first fastest, of
// (i mod extent) * stride with i divided by each extent in turn. So one table
// of "row" offsets (every coordinate of the dimensions but the last) and one
// of last-dimension offsets give every element; unit steps make each row one
// memcpy. A tile by its origin shape copies the origin and zeroes the rest.
// A nested coordinate is its flat position in each mode, counted first fastest. The fractal formats with the in-core C0 of
// 32 bytes use their compile-time layout (tla_layout.h): a z-fractal row is
// one 32-byte C0 copied whole, an n-fractal is a C0 x 16 transpose. They go
// by groups of the fractals that share a cache line of each logical row (see
// "fractal groups"), with AVX-512 or AVX2 in-register transposes where the CPU has
// them; notation layouts that are such a format copy the same way. A z
// unpack past L2 writes each logical row front to back straight from the
// fractals (see "z-fractal unpack"). From 4 MiB written, whole lines on line
// boundaries go out with non-temporal stores; in N order the fractals of the
// next block row are fetched ahead. Neither changes a byte written.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>

#include "core/case_cache.h"
#include "layoutcheck/checked.h"
#include "layoutcheck/int_tuple.h"
#include "optimized/families.h"
#include "optimized/byte_transpose.h"
#include "optimized/isa.h"
#include "optimized/threads.h"
#include "optimized/tla_layout.h"

#if defined(__x86_64__) || defined(__i386__)
// gcc 12 warns inside avx512fintrin.h, whose _mm512_undefined_* helpers read an
// uninitialized variable on purpose (a false positive for every intrinsic using them).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "optimized/masked.h"
#define LC_TLA_X86 1
#endif

namespace layoutcheck {
namespace {

using namespace tla_opt;  // NOLINT(google-build-using-namespace)

std::string str(uint64_t v) { return std::to_string(v); }

constexpr uint64_t kC0Bytes = 32;
constexpr uint64_t kFractalC0s = 16;
constexpr uint64_t kLineBytes = 64;  // a cache line
// Lines of each logical row a staged copy moves at once (measured on a Zen 5
// with a 48 KiB L1d, two runs each: nZ unpack of 2048 x 2048 fp16 0.61-0.65
// of memcpy with 8, 0.73-0.75 with 4; 2048 x 4096 int8 0.53-0.57 and
// 0.62-0.64; 32 MiB int8 0.83 and 0.92-0.97; nN fp16 and nZ fp16 32 MiB par).
constexpr uint64_t kStageLines = 4;
// And when the stage goes out streamed (AVX2 without AVX-512; AVX-512 streams
// straight from the registers): measured on a 32 KiB L1d Zen 3 with no
// AVX-512, pinned, alternating, medians of 5, of memcpy: 2048 x 2048 fp16 nZ
// 0.53 with 4 -> 0.81 with 8 -> 0.74 with 16, nN 0.43 -> 0.71 -> 0.68,
// 2048 x 4096 int8 nZ 0.50 -> 0.65 -> 0.58.
constexpr uint64_t kStreamStageLines = 8;
constexpr uint64_t kPrefetchGroups = 4;  // how far ahead a pack reading kH rows in turn prefetches them
constexpr uint64_t kPrefetchAbove = 1u << 20;  // logical bytes: past a typical L2
constexpr uint64_t kStreamAbove = 4u << 20;    // bytes written: past L2, a large share of a shared L3
constexpr uint64_t kEnumerateLimit = 1u << 20;
constexpr uint64_t kL1Sets = 64;               // sets of a 32 KiB or 48 KiB L1d of 64-byte lines (8 or 12 ways)
constexpr uint64_t kStraightRowsPerSet = 8;    // rows of a group an unpack writes straight, at most, in one L1 set

#define LC_TLA_INLINE_ANY inline __attribute__((always_inline))

struct Leaf {
  uint64_t extent, stride;
};

enum class Kind { kNotation, kRowMajor, kColMajor, kZN, kNZ, kZZ, kNN };

struct Plan {
  Kind kind = Kind::kNotation;
  uint64_t rows = 0, cols = 0, eb = 1;  // logical matrix (outer dims x last dim), element bytes
  std::vector<std::vector<Leaf>> modes;  // the integers of each top-level mode, first fastest
  Shape logical;                         // the logical tensor, one extent per mode
  uint64_t size = 0, cosize = 0;
  // Fractal formats: fractal height x width, block counts, strides between blocks.
  uint64_t c0 = 0, n16 = 0, fh = 0, fw = 0, R = 0, C = 0, out_row = 0, out_col = 0;
  // The fractal copy this layout takes (kNotation: none): an in-core fractal
  // format, named or written in the notation.
  Kind copy_as = Kind::kNotation;
  IntTuple shape, stride;               // for describe
  std::optional<TlaLayoutText> parent;  // tla.tile
};

void flatten(const IntTuple& shape, const IntTuple& stride, std::vector<Leaf>* out) {
  std::vector<int64_t> e = shape.leaves(), s = stride.leaves();
  for (size_t i = 0; i < e.size(); ++i) out->push_back({static_cast<uint64_t>(e[i]), static_cast<uint64_t>(s[i])});
}

// The tiled mode: its rightmost integer becomes `v`.
IntTuple with_last(const IntTuple& t, int64_t v) {
  if (t.is_integer()) return IntTuple(v);  // computed from the runtime tile: dynamic
  std::vector<IntTuple> items = t.items();
  items.back() = with_last(items.back(), v);
  return IntTuple(std::move(items));
}

IntTuple leaf(uint64_t v, bool s = false) { return IntTuple(static_cast<int64_t>(v), s); }
IntTuple pair(IntTuple a, IntTuple b) { return IntTuple(std::vector<IntTuple>{std::move(a), std::move(b)}); }

Status parse_notation_plan(const Case& c, Plan* p) {
  auto l = parse_tla_layout(c.layout.get("shape") + ":" + c.layout.get("stride"));
  if (!l.ok()) return l.status();
  const bool tile = c.layout.name == "tla.tile";
  const size_t n = l->shape.is_integer() ? 1 : l->shape.rank();
  if (tile && n != 2) return Status::invalid("MakeLayoutTile of " + to_string(*l) + ": the layout needs 2 modes");
  p->shape = l->shape;
  p->stride = l->stride;
  p->modes.assign(n, {});
  for (size_t m = 0; m < n; ++m) {
    if (l->shape.is_integer()) flatten(l->shape, l->stride, &p->modes[m]);
    else flatten(l->shape.items()[m], l->stride.items()[m], &p->modes[m]);
  }
  if (c.shape.size() != n) {
    return Status::invalid("logical shape " + clip_input(shape_to_string(c.shape)) + " has rank " + str(c.shape.size()) +
                           ", the layout " + to_string(*l) + " " + str(n));
  }
  for (int64_t e : c.shape) {
    if (e <= 0) return Status::invalid("logical shape " + shape_to_string(c.shape) + " has an extent below 1");
  }
  Shape origin;
  if (tile) {
    p->parent = *l;
    auto t = parse_int_tuple(c.layout.get("tile"));
    if (!t.ok()) return t.status();
    if (t->is_integer() || t->rank() != 2 || t->depth() != 1) {
      return Status::invalid("MakeLayoutTile: the tile " + to_string(*t) + " is not (rows,cols)");
    }
    std::vector<IntTuple> modes;
    for (size_t m = 0; m < 2; ++m) {
      const int64_t e = t->items()[m].value();
      if (e <= 0) return Status::invalid("MakeLayoutTile: tile extent " + std::to_string(e) + " is not positive");
      origin.push_back(e);
      uint64_t inner = 1;
      for (size_t i = 0; i + 1 < p->modes[m].size(); ++i) inner *= p->modes[m][i].extent;  // <= the mode's size
      p->modes[m].back().extent = ceil_div(static_cast<uint64_t>(e), inner);
      modes.push_back(with_last(l->shape.items()[m], static_cast<int64_t>(p->modes[m].back().extent)));
    }
    p->shape = IntTuple(std::move(modes));
  }
  Shape sizes;
  for (size_t m = 0; m < n; ++m) {
    Checked k = 1;
    for (const Leaf& f : p->modes[m]) k *= f.extent;
    if (!k.ok() || k.value() > (uint64_t{1} << 56)) return Status::invalid("the size of mode " + str(m) + " overflows");
    sizes.push_back(static_cast<int64_t>(k.value()));
  }
  // The whole layout, or under a tile its origin shape (the rest is padding).
  if (c.shape != sizes && (origin.empty() || c.shape != origin)) {
    return Status::invalid("logical shape " + shape_to_string(c.shape) + " is not the layout's tensor " +
                           shape_to_string(sizes));
  }
  p->logical = c.shape;
  Checked outer = 1;
  for (size_t m = 0; m + 1 < n; ++m) outer *= static_cast<uint64_t>(c.shape[m]);
  if (!outer.ok()) return Status::invalid("logical shape " + shape_to_string(c.shape) + " overflows");
  p->rows = outer.value();
  p->cols = static_cast<uint64_t>(c.shape[n - 1]);
  return Status();
}

void fractal_plan(Plan* p) {
  const bool z_in = p->kind == Kind::kZN || p->kind == Kind::kZZ;
  p->fh = z_in ? p->n16 : p->c0;
  p->fw = z_in ? p->c0 : p->n16;
  p->R = ceil_div(p->rows, p->fh);
  p->C = ceil_div(p->cols, p->fw);
}

Status named_plan(Plan* p) {
  if (p->kind == Kind::kRowMajor || p->kind == Kind::kColMajor) {
    const bool row = p->kind == Kind::kRowMajor;
    p->modes = {{{p->rows, row ? p->cols : 1}}, {{p->cols, row ? 1 : p->rows}}};
    p->shape = pair(leaf(p->rows), leaf(p->cols));
    p->stride = row ? pair(leaf(p->cols), leaf(1, true)) : pair(leaf(1, true), leaf(p->rows));
    return Status();
  }
  fractal_plan(p);
  Checked f = Checked(p->fh) * p->fw;
  Checked total = f * p->R * p->C;
  if (!total.ok() || total.value() > (uint64_t{1} << 62)) return Status::invalid("the padded fractal matrix overflows");
  const uint64_t F = f.value();
  const bool z_in = p->kind == Kind::kZN || p->kind == Kind::kZZ;
  const bool z_out = p->kind == Kind::kZZ || p->kind == Kind::kNZ;
  const uint64_t in_row = z_in ? p->fw : 1, in_col = z_in ? 1 : p->fh;
  p->out_row = z_out ? F * p->C : F;
  p->out_col = z_out ? F : F * p->R;
  p->modes = {{{p->fh, in_row}, {p->R, p->out_row}}, {{p->fw, in_col}, {p->C, p->out_col}}};
  p->shape = pair(pair(leaf(p->fh, true), leaf(p->R)), pair(leaf(p->fw, true), leaf(p->C)));
  p->stride = pair(pair(leaf(in_row, true), z_out ? leaf(p->out_row) : leaf(p->out_row, true)),
                   pair(leaf(in_col, true), z_out ? leaf(p->out_col, true) : leaf(p->out_col)));
  return Status();
}

uint64_t mode_offset(const std::vector<Leaf>& mode, uint64_t i) {
  uint64_t off = 0;
  for (const Leaf& f : mode) {
    off += (i % f.extent) * f.stride;
    i /= f.extent;
  }
  return off;
}

std::vector<uint64_t> offsets_of(const std::vector<Leaf>& mode, uint64_t n) {
  std::vector<uint64_t> out(n);
  for (uint64_t i = 0; i < n; ++i) out[i] = mode_offset(mode, i);
  return out;
}

Status injective(const Plan& p) {
  std::vector<Leaf> all;
  for (const auto& mode : p.modes) all.insert(all.end(), mode.begin(), mode.end());
  all.erase(std::remove_if(all.begin(), all.end(), [](const Leaf& f) { return f.extent == 1; }), all.end());
  std::sort(all.begin(), all.end(), [](const Leaf& a, const Leaf& b) { return a.stride < b.stride; });
  uint64_t reach = 1;
  bool nested = true;
  for (const Leaf& f : all) {
    if (f.stride < reach) {
      nested = false;
      break;
    }
    reach = f.stride * f.extent;  // <= cosize, checked before
  }
  if (nested) return Status();
  if (p.size > kEnumerateLimit) {
    return Status::invalid("cannot establish that the layout is injective: " + str(p.size) +
                           " elements and interleaved strides");
  }
  // Every offset: the sums of one offset per mode.
  std::vector<uint64_t> all_offsets = {0};
  for (const auto& mode : p.modes) {
    uint64_t k = 1;
    for (const Leaf& f : mode) k *= f.extent;
    const std::vector<uint64_t> part = offsets_of(mode, k);
    std::vector<uint64_t> next;
    next.reserve(all_offsets.size() * part.size());
    for (uint64_t a : all_offsets) {
      for (uint64_t b : part) next.push_back(a + b);
    }
    all_offsets.swap(next);
  }
  std::sort(all_offsets.begin(), all_offsets.end());
  auto dup = std::adjacent_find(all_offsets.begin(), all_offsets.end());
  if (dup != all_offsets.end()) {
    return Status::invalid("the layout is not injective: two coordinates share offset " + str(*dup));
  }
  return Status();
}

// A notation layout that is an in-core fractal format, ((16,R),(C0,C)) or
// ((C0,R),(16,C)) with a fractal of 16 C0s of 32 bytes and whole fractals in
// Z or N order, copies as that format.
void notation_fractal(Plan* p) {
  if (p->parent || p->modes.size() != 2 || p->modes[0].size() != 2 || p->modes[1].size() != 2 ||
      p->eb > 4 || kC0Bytes % p->eb != 0) {
    return;
  }
  const Leaf a = p->modes[0][0], A = p->modes[0][1], b = p->modes[1][0], B = p->modes[1][1];
  const uint64_t c0 = kC0Bytes / p->eb, F = kFractalC0s * c0;
  const bool z = a.extent == kFractalC0s && a.stride == c0 && b.extent == c0 && b.stride == 1;
  const bool n = a.extent == c0 && a.stride == 1 && b.extent == kFractalC0s && b.stride == c0;
  if (!z && !n) return;
  Kind k;
  if (A.stride == F * B.extent && B.stride == F) k = z ? Kind::kZZ : Kind::kNZ;
  else if (A.stride == F && B.stride == F * A.extent) k = z ? Kind::kZN : Kind::kNN;
  else return;
  p->copy_as = k;
  p->fh = a.extent, p->fw = b.extent, p->R = A.extent, p->C = B.extent;
  p->out_row = A.stride, p->out_col = B.stride;
}

Result<Plan> make_plan(const Case& c) {
  const LayoutSpec* spec = find_spec(c.layout.name);
  if (!spec) return Status::invalid("unknown layout " + c.layout.name);
  const std::string kind = c.layout.name.substr(4);
  if (kind != "layout" && kind != "tile") LC_RETURN_IF_ERROR(check_shape(*spec, c.shape));
  const uint32_t bits = dtype_bits(c.dtype);
  // A packed storage type (int8x4, ...) is no ElemType: its lanes are.
  if (bits % 8 != 0 || !dtype_info(c.dtype).logical) {
    return Status::invalid(std::string(dtype_name(c.dtype)) + " is not one element of a whole number of bytes (sizeof(ElemType))");
  }
  Plan p;
  p.eb = bits / 8;
  if (kind == "layout" || kind == "tile") {
    LC_RETURN_IF_ERROR(parse_notation_plan(c, &p));
    notation_fractal(&p);
  } else {
    p.rows = static_cast<uint64_t>(c.shape[0]);
    p.cols = static_cast<uint64_t>(c.shape[1]);
    p.logical = c.shape;
    static const std::pair<const char*, Kind> kKinds[] = {{"rowmajor", Kind::kRowMajor}, {"colmajor", Kind::kColMajor},
                                                          {"zN", Kind::kZN}, {"nZ", Kind::kNZ},
                                                          {"zZ", Kind::kZZ}, {"nN", Kind::kNN}};
    for (const auto& [n, k] : kKinds) {
      if (kind == n) p.kind = k;
    }
    if (p.kind != Kind::kRowMajor && p.kind != Kind::kColMajor) {
      p.c0 = c.layout.params.count("c0") ? static_cast<uint64_t>(c.layout.get_int("c0")) : 0;
      if (p.c0 == 0) p.c0 = kC0Bytes / p.eb;
      p.n16 = c.layout.params.count("c0_per_fractal") ? static_cast<uint64_t>(c.layout.get_int("c0_per_fractal"))
                                                     : kFractalC0s;
    }
    LC_RETURN_IF_ERROR(named_plan(&p));
    if (p.kind != Kind::kRowMajor && p.kind != Kind::kColMajor && p.c0 * p.eb == kC0Bytes && p.n16 == kFractalC0s &&
        p.eb <= 4) {
      p.copy_as = p.kind;
    }
  }
  Checked size = 1, span = 0;
  for (const auto& mode : p.modes) {
    for (const Leaf& f : mode) {
      size *= f.extent;
      span += Checked(f.extent - 1) * f.stride;
    }
  }
  Checked bytes = (span + 1) * p.eb;
  if (!size.ok() || !bytes.ok() || bytes.value() > (uint64_t{1} << 60)) {
    return Status::invalid("the layout's physical size overflows 2^60 bytes");
  }
  p.size = size.value();
  p.cosize = span.value() + 1;
  LC_RETURN_IF_ERROR(injective(p));
  return p;
}

Result<std::shared_ptr<const Plan>> cached_plan(const Case& c) {
  thread_local CaseCache<Plan> cache;
  return cache.get(c, make_plan);
}

// ---- copies ------------------------------------------------------------------

// The offsets of the logical "rows": every coordinate of the dimensions but the
// last, row-major (the first slowest), each the sum of its modes' offsets.
std::vector<uint64_t> outer_offsets(const Plan& p) {
  std::vector<uint64_t> out = {0};
  for (size_t m = 0; m + 1 < p.modes.size(); ++m) {
    const std::vector<uint64_t> part = offsets_of(p.modes[m], static_cast<uint64_t>(p.logical[m]));
    std::vector<uint64_t> next;
    next.reserve(out.size() * part.size());
    for (uint64_t a : out) {
      for (uint64_t b : part) next.push_back(a + b);
    }
    out.swap(next);
  }
  return out;
}

template <size_t EB>
inline void copy_elem(uint8_t* dst, const uint8_t* src) {
  std::memcpy(dst, src, EB);
}

// Any layout: row offsets + column offsets. Columns whose offsets step by
// one element form runs, each copied with one memcpy per row.
template <bool kPack, size_t EB>
void table_copy(const Plan& p, uint8_t* logical, uint8_t* phys) {
  const std::vector<uint64_t> row = outer_offsets(p), col = offsets_of(p.modes.back(), p.cols);
  struct Run {
    uint64_t first_col, length, offset;
  };
  std::vector<Run> runs;
  for (uint64_t k = 0; k < p.cols; ++k) {
    if (!runs.empty() && runs.back().offset + runs.back().length == col[k]) {
      ++runs.back().length;
    } else {
      runs.push_back({k, 1, col[k]});
    }
  }
  const bool singles = runs.size() * 2 > p.cols;  // mostly runs of one: copy element by element
  for (uint64_t r = 0; r < p.rows; ++r) {
    uint8_t* dst_row = phys + row[r] * EB;
    uint8_t* src_row = logical + r * p.cols * EB;
    if (singles) {
      for (uint64_t k = 0; k < p.cols; ++k) {
        if (kPack) copy_elem<EB>(dst_row + col[k] * EB, src_row + k * EB);
        else copy_elem<EB>(src_row + k * EB, dst_row + col[k] * EB);
      }
      continue;
    }
    for (const Run& run : runs) {
      if (kPack) std::memcpy(dst_row + run.offset * EB, src_row + run.first_col * EB, run.length * EB);
      else std::memcpy(src_row + run.first_col * EB, dst_row + run.offset * EB, run.length * EB);
    }
  }
}

// ---- AVX2 fractal transposes ----------------------------------------------------
// An n-fractal stores logical column c of a C0 x 16 block as one 32-byte C0, so
// pack and unpack are 32-byte-row transposes: per 128-bit lane the unpack
// stages below turn rows into columns (the same sequence as any in-register
// transpose; each stage interleaves element pairs, then pairs of pairs).
#ifdef LC_TLA_X86
bool has_avx2() { return isa_at_least(Isa::kAvx2); }

// A 32-byte piece of a line the copies write: non-temporal with kStream (the
// caller checked the alignment).
template <bool kStream>
__attribute__((target("avx2"), always_inline)) inline void put256(uint8_t* p, __m256i v) {
  if constexpr (kStream) _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v);
  else _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
}

// int8 nZ/nN: 32 logical rows x 16 columns <-> 16 C0s of 32 bytes.
template <bool kStream>
__attribute__((target("avx2"))) void pack_n_fractal_u8(const uint8_t* src, size_t src_stride, uint8_t* dst) {
  __m256i r[16];
  for (size_t i = 0; i < 16; ++i) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * src_stride));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (i + 16) * src_stride));
    r[i] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
  }
  byte_transpose::transpose16x16_epi8_x2(r);
  for (size_t k = 0; k < 16; ++k) put256<kStream>(dst + k * 32, r[k]);
}

__attribute__((target("avx2"))) void unpack_n_fractal_u8(const uint8_t* src, uint8_t* dst, size_t dst_stride) {
  __m256i r[16];
  for (size_t k = 0; k < 16; ++k) r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + k * 32));
  byte_transpose::transpose16x16_epi8_x2(r);
  for (size_t i = 0; i < 16; ++i) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i * dst_stride), _mm256_castsi256_si128(r[i]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (i + 16) * dst_stride), _mm256_extracti128_si256(r[i], 1));
  }
}


// fp16/bf16/int16 nZ/nN: a 16 x 16 transpose of 32-byte rows (symmetric, so
// it serves pack and unpack with the strides swapped).
template <bool kStream = false>
__attribute__((target("avx2"))) void transpose_16x16_u16(const uint8_t* src, size_t src_stride, uint8_t* dst,
                                                         size_t dst_stride) {
  __m256i r[16], t[8], u[8];
  for (size_t i = 0; i < 16; ++i) r[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i * src_stride));
  byte_transpose::transpose8x8_epi16_x2(r, t);
  byte_transpose::transpose8x8_epi16_x2(r + 8, u);
  for (size_t k = 0; k < 8; ++k) {
    put256<kStream>(dst + k * dst_stride, _mm256_permute2x128_si256(t[k], u[k], 0x20));
    put256<kStream>(dst + (k + 8) * dst_stride, _mm256_permute2x128_si256(t[k], u[k], 0x31));
  }
}

// fp32 nZ/nN: 8 logical rows x 16 columns <-> 16 C0s of 8 elements, as two
// 8 x 8 transposes of 32-byte rows (symmetric, like the 16-bit one; hosts
// without AVX-512 went element by element: measured on a Zen 5 capped at
// AVX2, best of 7, pack / unpack, ratios to memcpy: nN 256 x 256 0.12 / 0.08
// -> 0.18 / 0.14, nZ 2048 x 2048 0.44 / 0.37 -> 0.57 / 0.44).
template <bool kStream = false>
__attribute__((target("avx2"))) void transpose_8x8_u32(const uint8_t* src, size_t src_stride, uint8_t* dst,
                                                       size_t dst_stride) {
  __m256 r[8];
  for (size_t i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(reinterpret_cast<const float*>(src + i * src_stride));
  __m256 t[8], u[8];
  for (size_t i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);      // rows 2i, 2i+1: elements 0, 1 | 4, 5
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);  // 2, 3 | 6, 7
  }
  for (size_t i = 0; i < 2; ++i) {
    for (size_t j = 0; j < 2; ++j) {
      u[4 * i + 2 * j] = _mm256_shuffle_ps(t[4 * i + j], t[4 * i + j + 2], 0x44);      // rows 4i..4i+3, element 2j | 2j + 4
      u[4 * i + 2 * j + 1] = _mm256_shuffle_ps(t[4 * i + j], t[4 * i + j + 2], 0xEE);  // element 2j + 1 | 2j + 5
    }
  }
  for (size_t k = 0; k < 4; ++k) {  // u[k]: rows 0..3 of elements k | k + 4; u[4 + k]: rows 4..7
    put256<kStream>(dst + k * dst_stride, _mm256_castps_si256(_mm256_permute2f128_ps(u[k], u[4 + k], 0x20)));
    put256<kStream>(dst + (k + 4) * dst_stride, _mm256_castps_si256(_mm256_permute2f128_ps(u[k], u[4 + k], 0x31)));
  }
}
#endif

// ---- AVX-512 fractal groups -------------------------------------------------------
// One 64-byte line of a logical row spans kG = 1 (fp32 n inside), 2 (z
// inside, fp16 n inside) or 4 (int8 n inside) fractals side by side, so the
// kernels below move a whole group: kH logical rows of 64 bytes <-> kG
// fractals of 512 bytes, every load and store one whole line. A 128-bit lane of a zmm holds 16 bytes of a C0;
// the transposes are per-lane element transposes (the unpack stages of the
// AVX2 code above, four lanes at once) and 4 x 4 transposes of lanes.
#ifdef LC_TLA_X86
#define LC_TLA_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define LC_TLA_UNROLL _Pragma("GCC unroll 16")
#define LC_TLA_INLINE inline __attribute__((always_inline))

// out[l] = (a.l, b.l, c.l, d.l): a 4 x 4 transpose of 128-bit lanes.
LC_TLA_AVX512 LC_TLA_INLINE void transpose_lanes(__m512i a, __m512i b, __m512i c, __m512i d, __m512i* out) {
  out[0] = a, out[1] = b, out[2] = c, out[3] = d;
  byte_transpose::transpose_lanes4x4(out);
}



LC_TLA_AVX512 LC_TLA_INLINE __m512i load512(const uint8_t* p) { return _mm512_loadu_si512(p); }
LC_TLA_AVX512 LC_TLA_INLINE void store512(uint8_t* p, __m512i v) { _mm512_storeu_si512(p, v); }
// A line a group writes, the fractals' (pack) or a logical row's (unpack):
// with kStream non-temporal, past the last-level cache (the caller checked
// the alignment), so that its old contents are not read first.
template <bool kStream>
LC_TLA_AVX512 LC_TLA_INLINE void put512(uint8_t* p, __m512i v) {
  if constexpr (kStream) _mm512_stream_si512(reinterpret_cast<__m512i*>(p), v);
  else _mm512_storeu_si512(p, v);
}

// z inside: 16 rows of 64 bytes <-> two fractals of 16 C0s (`step` bytes
// apart); row 2k and 2k+1 of one fractal are one line, so a 2 x 2 transpose
// of 32-byte halves.
template <bool kPack, bool kStream>
LC_TLA_AVX512 void z_group_avx512(uint8_t* logical, size_t pitch, uint8_t* block, size_t step) {
  // Every load before the first store: the compiler cannot move a load past a
  // store that may alias it, and the 16 loads in flight at once are what
  // hides the latency.
  __m512i a[8], b[8];
  LC_TLA_UNROLL for (size_t k = 0; k < 8; ++k) {
    a[k] = kPack ? load512(logical + 2 * k * pitch) : load512(block + 64 * k);
    b[k] = kPack ? load512(logical + (2 * k + 1) * pitch) : load512(block + step + 64 * k);
  }
  LC_TLA_UNROLL for (size_t k = 0; k < 8; ++k) {
    uint8_t* lo = kPack ? block + 64 * k : logical + 2 * k * pitch;
    uint8_t* hi = kPack ? block + step + 64 * k : logical + (2 * k + 1) * pitch;
    put512<kPack && kStream>(lo, _mm512_shuffle_i64x2(a[k], b[k], 0x44));
    put512<kPack && kStream>(hi, _mm512_shuffle_i64x2(a[k], b[k], 0xEE));
  }
}

// fp16 n inside: 16 rows of 32 elements <-> two 16 x 16 fractals (columns as
// C0s). D[G][x] (rows 8G..8G+7, lane L: column 8L+x) is the per-lane
// transpose of rows 8G..; fractal L/2, line 8(L%2)+x, half G is D[G][x].L.
template <bool kPack, bool kStream>
LC_TLA_AVX512 void n16_group_avx512(uint8_t* logical, size_t pitch, uint8_t* block, size_t step) {
  __m512i d[2][8];
  if (kPack) {
    LC_TLA_UNROLL for (int g = 0; g < 2; ++g) {
      LC_TLA_UNROLL for (int i = 0; i < 8; ++i) d[g][i] = load512(logical + static_cast<size_t>(8 * g + i) * pitch);
      byte_transpose::transpose8x8_epi16_x4(d[g], d[g]);
    }
    LC_TLA_UNROLL for (int m = 0; m < 4; ++m) {
      __m512i out[4];
      transpose_lanes(d[0][2 * m], d[1][2 * m], d[0][2 * m + 1], d[1][2 * m + 1], out);
      LC_TLA_UNROLL for (int l = 0; l < 4; ++l) put512<kStream>(block + (l / 2) * step + 64 * (4 * (l % 2) + m), out[l]);
    }
    return;
  }
  // Each fractal's lines front to back.
  __m512i f[2][8];
  LC_TLA_UNROLL for (int q = 0; q < 2; ++q) {
    LC_TLA_UNROLL for (int i = 0; i < 8; ++i) f[q][i] = load512(block + static_cast<size_t>(q) * step + 64 * i);
  }
  LC_TLA_UNROLL for (int m = 0; m < 4; ++m) {
    __m512i out[4];
    transpose_lanes(f[0][m], f[0][4 + m], f[1][m], f[1][4 + m], out);
    LC_TLA_UNROLL for (int l = 0; l < 4; ++l) d[l % 2][2 * m + l / 2] = out[l];
  }
  LC_TLA_UNROLL for (int g = 0; g < 2; ++g) {
    byte_transpose::transpose8x8_epi16_x4(d[g], d[g]);
    LC_TLA_UNROLL for (int i = 0; i < 8; ++i) {
      put512<kStream>(logical + static_cast<size_t>(8 * g + i) * pitch, d[g][i]);
    }
  }
}

// int8 n inside: 32 rows of 64 bytes <-> four 32 x 16 fractals. D[G][x]
// (rows 16G.., lane L: column 16L+x) is the per-lane transpose of rows 16G..;
// fractal L, line x, half G is D[G][x].L.
template <bool kPack, bool kStream>
LC_TLA_AVX512 void n8_group_avx512(uint8_t* logical, size_t pitch, uint8_t* block, size_t step) {
  __m512i d[2][16];
  if (kPack) {
    LC_TLA_UNROLL for (int g = 0; g < 2; ++g) {
      LC_TLA_UNROLL for (int i = 0; i < 16; ++i) {
        d[g][i] = load512(logical + static_cast<size_t>(16 * g + i) * pitch);
      }
      byte_transpose::transpose16x16_epi8_x4(d[g]);
    }
    LC_TLA_UNROLL for (int m = 0; m < 8; ++m) {
      __m512i out[4];
      transpose_lanes(d[0][2 * m], d[1][2 * m], d[0][2 * m + 1], d[1][2 * m + 1], out);
      LC_TLA_UNROLL for (int l = 0; l < 4; ++l) put512<kStream>(block + l * step + 64 * m, out[l]);
    }
    return;
  }
  LC_TLA_UNROLL for (int m = 0; m < 8; ++m) {
    __m512i out[4];
    transpose_lanes(load512(block + 64 * m), load512(block + step + 64 * m), load512(block + 2 * step + 64 * m),
                    load512(block + 3 * step + 64 * m), out);
    LC_TLA_UNROLL for (int l = 0; l < 4; ++l) d[l % 2][2 * m + l / 2] = out[l];
  }
  LC_TLA_UNROLL for (int g = 0; g < 2; ++g) {
    byte_transpose::transpose16x16_epi8_x4(d[g]);
    LC_TLA_UNROLL for (int i = 0; i < 16; ++i) {
      put512<kStream>(logical + static_cast<size_t>(16 * g + i) * pitch, d[g][i]);
    }
  }
}

// fp32 n inside: 8 rows of 16 elements <-> one 8 x 16 fractal (16 C0s of 8
// elements), line m = columns 2m and 2m + 1. Three rounds of two-source
// permutes: rows 2k, 2k + 1 paired per column (dwords), the pairs of rows 4k..
// 4k + 3 joined (qwords), the halves of a C0 joined (128-bit lanes); the
// unpack runs their inverses backwards. Element by element before (measured
// on a Zen 5, best of 7, pack / unpack, against a memcpy of the same bytes:
// nZ 256 x 256 fp32 in cache 0.12 / 0.10 of memcpy -> 0.58 / 0.42, nN 0.12 /
// 0.10 -> 0.58 / 0.40; 2048 x 2048 (16 MiB) nZ 0.28 / 0.46 -> 1.08 / 0.96,
// nN 0.21 / 0.34 -> 1.16 / 1.09).
template <bool kPack, bool kStream>
LC_TLA_AVX512 void n4_group_avx512(uint8_t* logical, size_t pitch, uint8_t* block, size_t /*step*/) {
  // Round 1: rows a, b per column (a0 b0 a1 b1 ..), columns 0..7 (lo) and 8..15 (hi).
  const __m512i pair_lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i pair_hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  // Round 2 (qwords: a column of a row pair): columns 4h.. 4h + 3 of pairs ab, cd.
  const __m512i quad_lo = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
  const __m512i quad_hi = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
  // Round 3 (128-bit lanes: a column of four rows): columns 2m, 2m + 1 of rows 0..3 and 4..7.
  const __m512i half_lo = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
  const __m512i half_hi = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  if (kPack) {
    __m512i r[8], p2[8], q[8];
    LC_TLA_UNROLL for (int i = 0; i < 8; ++i) r[i] = load512(logical + static_cast<size_t>(i) * pitch);
    LC_TLA_UNROLL for (int k = 0; k < 4; ++k) {  // p2[2k + h]: rows 2k, 2k + 1, columns 8h..
      p2[2 * k] = _mm512_permutex2var_epi32(r[2 * k], pair_lo, r[2 * k + 1]);
      p2[2 * k + 1] = _mm512_permutex2var_epi32(r[2 * k], pair_hi, r[2 * k + 1]);
    }
    LC_TLA_UNROLL for (int k = 0; k < 2; ++k) {  // q[4k + 2h + e]: rows 4k.., columns 8h + 4e..
      LC_TLA_UNROLL for (int h = 0; h < 2; ++h) {
        q[4 * k + 2 * h] = _mm512_permutex2var_epi64(p2[4 * k + h], quad_lo, p2[4 * k + 2 + h]);
        q[4 * k + 2 * h + 1] = _mm512_permutex2var_epi64(p2[4 * k + h], quad_hi, p2[4 * k + 2 + h]);
      }
    }
    LC_TLA_UNROLL for (int j = 0; j < 4; ++j) {  // columns 4j.. 4j + 3: lines 2j, 2j + 1
      put512<kStream>(block + 128 * j, _mm512_permutex2var_epi64(q[j], half_lo, q[4 + j]));
      put512<kStream>(block + 128 * j + 64, _mm512_permutex2var_epi64(q[j], half_hi, q[4 + j]));
    }
    return;
  }
  const __m512i even = _mm512_setr_epi64(0, 1, 4, 5, 8, 9, 12, 13), odd = _mm512_setr_epi64(2, 3, 6, 7, 10, 11, 14, 15);
  const __m512i even_q = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), odd_q = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
  const __m512i even_d = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd_d = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  __m512i q[8], p2[8];
  LC_TLA_UNROLL for (int j = 0; j < 4; ++j) {
    const __m512i lo = load512(block + 128 * j), hi = load512(block + 128 * j + 64);
    q[j] = _mm512_permutex2var_epi64(lo, even, hi);
    q[4 + j] = _mm512_permutex2var_epi64(lo, odd, hi);
  }
  LC_TLA_UNROLL for (int k = 0; k < 2; ++k) {
    LC_TLA_UNROLL for (int h = 0; h < 2; ++h) {
      p2[4 * k + h] = _mm512_permutex2var_epi64(q[4 * k + 2 * h], even_q, q[4 * k + 2 * h + 1]);
      p2[4 * k + 2 + h] = _mm512_permutex2var_epi64(q[4 * k + 2 * h], odd_q, q[4 * k + 2 * h + 1]);
    }
  }
  LC_TLA_UNROLL for (int k = 0; k < 4; ++k) {
    const __m512i lo = _mm512_permutex2var_epi32(p2[2 * k], even_d, p2[2 * k + 1]);
    const __m512i hi = _mm512_permutex2var_epi32(p2[2 * k], odd_d, p2[2 * k + 1]);
    put512<kStream>(logical + static_cast<size_t>(2 * k) * pitch, lo);
    put512<kStream>(logical + static_cast<size_t>(2 * k + 1) * pitch, hi);
  }
}
#undef LC_TLA_AVX512
#undef LC_TLA_UNROLL
#undef LC_TLA_INLINE
#endif

// A whole n-fractal with the AVX2 transposes; false when they do not apply.
// kStream (packs): the fractal's lines non-temporal.
template <bool kPack, size_t EB, bool kStream = false>
bool n_fractal_simd(uint8_t* block, uint8_t* src, uint64_t cols) {
#ifdef LC_TLA_X86
  if (!has_avx2()) return false;
  if constexpr (EB == 1) {
    if (kPack) pack_n_fractal_u8<kStream>(src, cols, block);
    else unpack_n_fractal_u8(block, src, cols);
    return true;
  } else if constexpr (EB == 2) {
    if (kPack) transpose_16x16_u16<kStream>(src, cols * 2, block, 32);
    else transpose_16x16_u16(block, 32, src, cols * 2);
    return true;
  } else if constexpr (EB == 4) {
    for (uint64_t h = 0; h < 2; ++h) {  // columns 8h..8h+7: C0s 8h..
      if (kPack) transpose_8x8_u32<kStream>(src + h * 32, cols * 4, block + h * 256, 32);
      else transpose_8x8_u32(block + h * 256, 32, src + h * 32, cols * 4);
    }
    return true;
  }
#endif
  (void)block, (void)src, (void)cols;
  return false;
}

// Fractal formats with the in-core C0 (kC0 elements of EB bytes = 32 bytes)
// and 16 C0s per fractal. The fractal is a static layout: z inside = 16 x kC0
// rows of one C0, n inside = kC0 x 16 columns of one C0.
template <size_t EB, bool kZInside>
struct Fractal {
  static constexpr int64_t kC0 = static_cast<int64_t>(kC0Bytes / EB);
  static constexpr int64_t kH = kZInside ? 16 : kC0, kW = kZInside ? kC0 : 16;
  static constexpr auto layout = make_layout(make_shape(Int<kH>{}, Int<kW>{}),
                                             make_stride(Int<kZInside ? kW : 1>{}, Int<kZInside ? 1 : kH>{}));
  static_assert(decltype(cosize(layout))::value == 16 * kC0, "one fractal is 16 C0s");
};

// ---- fractal groups ----------------------------------------------------------
// kG = 64 / (bytes of a fractal in a logical row) fractals side by side make
// one cache line of each of their logical rows: a group (kH rows of one line
// <-> kG whole fractals) is the unit of the copies below, so that every line
// of the logical matrix is read (pack) or written (unpack) whole at once and
// the fractals are written (read) front to back. Block rows go in turn (on
// several threads, disjoint block rows each); the padded last block row and
// column, and a column of fractals beyond the last whole group, go fractal
// by fractal.
using GroupFn = void (*)(uint8_t* logical, size_t pitch, uint8_t* block, size_t step);

// A whole fractal: logical rows `pitch` bytes apart from `src`.
template <bool kPack, size_t EB, bool kZInside>
void full_fractal(uint8_t* src, size_t pitch, uint8_t* block) {
  using F = Fractal<EB, kZInside>;
  constexpr auto fractal = F::layout;
  constexpr int64_t kH = F::kH, kW = F::kW;
  if constexpr (kZInside) {
    for (int64_t rr = 0; rr < kH; ++rr) {  // each fractal row is one whole C0
      uint8_t* d = block + static_cast<uint64_t>(crd2offset(make_coord(rr, _0{}), fractal)) * EB;
      if (kPack) std::memcpy(d, src + static_cast<uint64_t>(rr) * pitch, kC0Bytes);
      else std::memcpy(src + static_cast<uint64_t>(rr) * pitch, d, kC0Bytes);
    }
  } else {
    // A kC0 x 16 transpose: logical rows become the fractal's columns.
    if (n_fractal_simd<kPack, EB>(block, src, pitch / EB)) return;
    for (int64_t rr = 0; rr < kH; ++rr) {
      uint8_t* s = src + static_cast<uint64_t>(rr) * pitch;
      for (int64_t cc = 0; cc < kW; ++cc) {
        uint8_t* d = block + static_cast<uint64_t>(crd2offset(make_coord(rr, cc), fractal)) * EB;
        if (kPack) copy_elem<EB>(d, s + static_cast<uint64_t>(cc) * EB);
        else copy_elem<EB>(s + static_cast<uint64_t>(cc) * EB, d);
      }
    }
  }
}

#ifdef LC_TLA_X86
__attribute__((target("avx512f,avx512bw"))) void copy_rows_avx512(uint8_t* dst, size_t dst_pitch, const uint8_t* src,
                                                                   size_t src_pitch, uint64_t rows, uint64_t n) {
  const __mmask64 m = n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
  for (uint64_t r = 0; r < rows; ++r) {
    masked::_mm512_mask_storeu_epi8(dst + r * dst_pitch, m, masked::_mm512_maskz_loadu_epi8(m, src + r * src_pitch));
  }
}
#endif

// `rows` rows of `n` <= 64 bytes (masked moves with AVX-512: a memcpy of a
// variable size is a call).
void copy_rows(uint8_t* dst, size_t dst_pitch, const uint8_t* src, size_t src_pitch, uint64_t rows, uint64_t n) {
#ifdef LC_TLA_X86
  if (isa_at_least(Isa::kAvx512)) return copy_rows_avx512(dst, dst_pitch, src, src_pitch, rows, n);
#endif
  for (uint64_t r = 0; r < rows; ++r) std::memcpy(dst + r * dst_pitch, src + r * src_pitch, n);
}

#ifdef LC_TLA_X86
// A z fractal of `h` rows of `n` bytes (the rest padding): each fractal row
// one masked move of 32 bytes, the padding zero.
template <bool kPack>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void z_edge_avx512(uint8_t* src, size_t pitch, uint8_t* block,
                                                                         uint64_t h, uint64_t n) {
  const __mmask32 m = n >= kC0Bytes ? ~__mmask32{0} : (__mmask32{1} << n) - 1;
  for (uint64_t r = 0; r < kFractalC0s; ++r) {
    __m256i* line = reinterpret_cast<__m256i*>(block + r * kC0Bytes);
    if (kPack) {
      _mm256_storeu_si256(line, r < h ? masked::_mm256_maskz_loadu_epi8(m, src + r * pitch) : _mm256_setzero_si256());
    } else if (r < h) {
      masked::_mm256_mask_storeu_epi8(src + r * pitch, m, _mm256_loadu_si256(line));
    }
  }
}
#endif

#ifdef LC_TLA_X86
// An n fractal of `h` rows of `w` elements (the rest padding; or none: a
// whole fractal outside the whole groups), in registers: the rows read (pack)
// or written (unpack) masked to their own elements, the fractal's 16 C0s
// whole. Columns past w and rows past h are zeros in the registers, so the
// padding leaves with the C0s. Measured on a Zen 5 against a padded tile in
// L1 and the AVX2 transpose, pack / unpack of nZ: 4096 x 1 fp16 0.11 / 0.13
// -> 0.40 / 0.43 of memcpy, int8 0.10 / 0.10 -> 0.30 / 0.32; 4096 x 17 fp16
// 0.16 / 0.17 -> 0.45 / 0.46.
//
// 16-bit elements: register k holds row k (columns 0..15, lanes 0-1) and row
// k + 8 (lanes 2-3); after the 8 x 8 word transposes per lane, register x
// holds C0 x (lanes 0 and 2: rows 0-7, 8-15) and C0 8 + x (lanes 1 and 3).
template <bool kPack>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void n16_edge_avx512(uint8_t* src, size_t pitch, uint8_t* block,
                                                                           uint64_t h, uint64_t w) {
  const __mmask16 m = static_cast<__mmask16>((uint32_t{1} << w) - 1);
  __m512i d[8];
  if (kPack) {
    _Pragma("GCC unroll 8") for (uint64_t k = 0; k < 8; ++k) {
      const __m256i lo = k < h ? masked::_mm256_maskz_loadu_epi16(m, src + k * pitch) : _mm256_setzero_si256();
      const __m256i hi = k + 8 < h ? masked::_mm256_maskz_loadu_epi16(m, src + (k + 8) * pitch) : _mm256_setzero_si256();
      d[k] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    }
    byte_transpose::transpose8x8_epi16_x4(d, d);
    _Pragma("GCC unroll 4") for (uint64_t j = 0; j < 4; ++j) {  // C0s 2j, 2j + 1 and 8 + 2j, 9 + 2j: one line each
      _mm512_storeu_si512(block + 64 * j, _mm512_shuffle_i64x2(d[2 * j], d[2 * j + 1], 0x88));
      _mm512_storeu_si512(block + 64 * (4 + j), _mm512_shuffle_i64x2(d[2 * j], d[2 * j + 1], 0xDD));
    }
    return;
  }
  const __m512i even = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), odd = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  _Pragma("GCC unroll 4") for (uint64_t j = 0; j < 4; ++j) {
    const __m512i a = _mm512_loadu_si512(block + 64 * j), b = _mm512_loadu_si512(block + 64 * (4 + j));
    d[2 * j] = _mm512_permutex2var_epi64(a, even, b);
    d[2 * j + 1] = _mm512_permutex2var_epi64(a, odd, b);
  }
  byte_transpose::transpose8x8_epi16_x4(d, d);
  _Pragma("GCC unroll 8") for (uint64_t k = 0; k < 8; ++k) {
    if (k < h) masked::_mm256_mask_storeu_epi16(src + k * pitch, m, _mm512_castsi512_si256(d[k]));
    if (k + 8 < h) masked::_mm256_mask_storeu_epi16(src + (k + 8) * pitch, m, _mm512_extracti64x4_epi64(d[k], 1));
  }
}

// 8-bit elements: register i holds row i (lane 0) and row i + 16 (lane 1);
// after the 16 x 16 byte transposes per lane register k is C0 k.
template <bool kPack>
__attribute__((target("avx512f,avx512bw,avx512vl,avx2"))) void n8_edge_avx512(uint8_t* src, size_t pitch,
                                                                                uint8_t* block, uint64_t h, uint64_t w) {
  const __mmask16 m = static_cast<__mmask16>((uint32_t{1} << w) - 1);
  __m256i r[16];
  if (kPack) {
    _Pragma("GCC unroll 16") for (uint64_t i = 0; i < 16; ++i) {
      const __m128i lo = i < h ? masked::_mm_maskz_loadu_epi8(m, src + i * pitch) : _mm_setzero_si128();
      const __m128i hi = i + 16 < h ? masked::_mm_maskz_loadu_epi8(m, src + (i + 16) * pitch) : _mm_setzero_si128();
      r[i] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
    }
    byte_transpose::transpose16x16_epi8_x2(r);
    _Pragma("GCC unroll 16") for (uint64_t k = 0; k < 16; ++k) _mm256_storeu_si256(reinterpret_cast<__m256i*>(block + k * kC0Bytes), r[k]);
    return;
  }
  _Pragma("GCC unroll 16") for (uint64_t k = 0; k < 16; ++k) r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + k * kC0Bytes));
  byte_transpose::transpose16x16_epi8_x2(r);
  _Pragma("GCC unroll 16") for (uint64_t i = 0; i < 16; ++i) {
    if (i < h) masked::_mm_mask_storeu_epi8(src + i * pitch, m, _mm256_castsi256_si128(r[i]));
    if (i + 16 < h) masked::_mm_mask_storeu_epi8(src + (i + 16) * pitch, m, _mm256_extracti128_si256(r[i], 1));
  }
}
#endif

// Fractal (bi, bj) on its own; `block` is its first element. With AVX-512 an
// n fractal of 8 or 16 bits (whole or not) goes through registers and a z
// fractal by masked C0 moves; otherwise an edge fractal goes through a whole
// fractal of logical rows in L1 (its padding zero), so that it moves as fast
// as the others and its padding is written with it.
template <bool kPack, size_t EB, bool kZInside>
void one_fractal(const Plan& p, uint8_t* logical, uint8_t* block, uint64_t bi, uint64_t bj) {
  using F = Fractal<EB, kZInside>;
  constexpr uint64_t kH = static_cast<uint64_t>(F::kH), kW = static_cast<uint64_t>(F::kW);
  constexpr size_t kTilePitch = kW * EB;
  static_assert(kTilePitch <= 64, "a fractal row fits a cache line");
  const uint64_t cols = p.cols;
  const uint64_t r0 = bi * kH, c0 = bj * kW;
  const uint64_t h = std::min<uint64_t>(kH, p.rows - r0);
  const uint64_t w = std::min<uint64_t>(kW, cols - c0);
  uint8_t* src = logical + (r0 * cols + c0) * EB;
#ifdef LC_TLA_X86
  // n inside, 8 or 16 bits, whole or not: in registers.
  if constexpr (!kZInside && EB == 2) {
    if (isa_at_least(Isa::kAvx512)) return n16_edge_avx512<kPack>(src, cols * EB, block, h, w);
  }
  if constexpr (!kZInside && EB == 1) {
    if (isa_at_least(Isa::kAvx512)) return n8_edge_avx512<kPack>(src, cols * EB, block, h, w);
  }
#endif
  if (h == kH && w == kW) return full_fractal<kPack, EB, kZInside>(src, cols * EB, block);
#ifdef LC_TLA_X86
  if (kZInside && isa_at_least(Isa::kAvx512)) return z_edge_avx512<kPack>(src, cols * EB, block, h, w * EB);
#endif
  alignas(64) uint8_t tile[kH * kTilePitch];
  if (kPack) {
    std::memset(tile, 0, sizeof(tile));
    copy_rows(tile, kTilePitch, src, cols * EB, h, w * EB);
    full_fractal<true, EB, kZInside>(tile, kTilePitch, block);
  } else {
    full_fractal<false, EB, kZInside>(tile, kTilePitch, block);
    copy_rows(src, cols * EB, tile, kTilePitch, h, w * EB);
  }
}

// `rows` runs of `lines` lines from the stage to the logical rows.
void stage_out_portable(uint8_t* dst, size_t pitch, const uint8_t* stage, size_t stage_pitch, uint64_t rows,
                        uint64_t lines) {
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t k = 0; k < lines; ++k) {  // line by line: a variable-size memcpy may become a slow rep movs
      std::memcpy(dst + r * pitch + k * kLineBytes, stage + r * stage_pitch + k * kLineBytes, kLineBytes);
    }
  }
}

#ifdef LC_TLA_X86
// Unpack: `rows` runs of `lines` lines from the stage to the logical rows. A
// row starting inside a line is written with unaligned stores (measured:
// faster than aligned stores of lines shifted into place). With kStream (the
// caller checked that every row starts on a line) non-temporal.
template <bool kStream>
__attribute__((target("avx512f"))) void stage_out_avx512(uint8_t* dst, size_t pitch, const uint8_t* stage,
                                                        size_t stage_pitch, uint64_t rows, uint64_t lines) {
  for (uint64_t r = 0; r < rows; ++r) {
    uint8_t* d = dst + r * pitch;
    const uint8_t* s = stage + r * stage_pitch;
    for (uint64_t k = 0; k < lines; ++k) {
      const __m512i v = _mm512_load_si512(s + k * kLineBytes);
      if constexpr (kStream) _mm512_stream_si512(reinterpret_cast<__m512i*>(d + k * kLineBytes), v);
      else _mm512_storeu_si512(d + k * kLineBytes, v);
    }
  }
}

#endif

#ifdef LC_TLA_X86
// Each line as two 32-byte moves (a memcpy of 64 bytes compiles to 16-byte moves).
template <bool kStream>
__attribute__((target("avx2"))) void stage_out_avx2(uint8_t* dst, size_t pitch, const uint8_t* stage,
                                                     size_t stage_pitch, uint64_t rows, uint64_t lines) {
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t k = 0; k < 2 * lines; ++k) {
      put256<kStream>(dst + r * pitch + k * 32, _mm256_load_si256(reinterpret_cast<const __m256i*>(stage + r * stage_pitch + k * 32)));
    }
  }
}
#endif

// `stream`: non-temporal stores (every row on a line).
void stage_out(uint8_t* dst, size_t pitch, const uint8_t* stage, size_t stage_pitch, uint64_t rows, uint64_t lines,
               bool stream) {
#ifdef LC_TLA_X86
  if (stream && isa_at_least(Isa::kAvx512)) return stage_out_avx512<true>(dst, pitch, stage, stage_pitch, rows, lines);
  if (isa_at_least(Isa::kAvx512)) return stage_out_avx512<false>(dst, pitch, stage, stage_pitch, rows, lines);
  if (stream) return stage_out_avx2<true>(dst, pitch, stage, stage_pitch, rows, lines);
  if (isa_at_least(Isa::kAvx2)) return stage_out_avx2<false>(dst, pitch, stage, stage_pitch, rows, lines);
#endif
  (void)stream;
  stage_out_portable(dst, pitch, stage, stage_pitch, rows, lines);
}

// A group without AVX2: fractal by fractal.
template <bool kPack, size_t EB, bool kZInside>
void group_by_fractal(uint8_t* logical, size_t pitch, uint8_t* block, size_t step) {
  constexpr uint64_t kPiece = static_cast<uint64_t>(Fractal<EB, kZInside>::kW) * EB;
  for (uint64_t q = 0; q * kPiece < kLineBytes; ++q) {
    full_fractal<kPack, EB, kZInside>(logical + q * kPiece, pitch, block + q * step);
  }
}

// The lines of the `n` fractals `step` bytes apart from `block`, `ahead`
// bytes on (0: none), fetched into L2 to read or to write.
template <bool kWrite>
LC_TLA_INLINE_ANY void fetch_fractals(const uint8_t* block, size_t step, size_t ahead, uint64_t n) {
  constexpr uint64_t kFractalLines = kFractalC0s * kC0Bytes / kLineBytes;
  for (uint64_t q = 0; ahead != 0 && q < n; ++q) {  // mutate: equivalent (a prefetch: the same bytes)
    for (uint64_t k = 0; k < kFractalLines; ++k) {  // mutate: equivalent (a prefetch: the same bytes)
      __builtin_prefetch(block + q * step + ahead + k * kLineBytes, kWrite, 2);  // mutate: equivalent (a prefetch: the same bytes)
    }
  }
}

// ---- z-fractal unpack: each logical row written front to back ------------------
// With z inside, logical row r of a block row is piece r (one 32-byte C0) of
// each fractal in turn, so the unpack writes each row's bytes in order
// straight from the fractals, kZRunFractals fractals (kZRunFractals / 2
// lines of each row) at a time: the run's fractals (8 KiB) stay in L1 while
// its 16 rows are written. Measured on 2048 x 2048 fp16 (zN and zZ): +10-60%
// over moving each group of two fractals through a stage (one more store and
// load of every line); runs of 8 or 32 fractals were slower, and software
// prefetch of the next run did not help.
constexpr uint64_t kZRunFractals = 16;

// Row r of the block row from the `n` fractals `step` bytes apart at `block`.
LC_TLA_INLINE_ANY void z_unpack_rows_body(uint8_t* logical, size_t pitch, const uint8_t* block, size_t step,
                                          uint64_t n) {
  for (uint64_t q0 = 0; q0 < n; q0 += kZRunFractals) {
    const uint64_t q1 = std::min<uint64_t>(n, q0 + kZRunFractals);
    for (uint64_t r = 0; r < kFractalC0s; ++r) {
      for (uint64_t q = q0; q < q1; ++q) {
        std::memcpy(logical + r * pitch + q * kC0Bytes, block + q * step + r * kC0Bytes, kC0Bytes);
      }
    }
  }
}

void z_unpack_rows_portable(uint8_t* logical, size_t pitch, const uint8_t* block, size_t step, uint64_t n) {
  z_unpack_rows_body(logical, pitch, block, step, n);
}

#ifdef LC_TLA_X86
// Without AVX-512: line k of each fractal holds rows 2k and 2k + 1, so the
// two rows are written side by side, a 32-byte half each (non-temporal with
// kStream), line k of two fractals at a time so that each row's line gets its
// two halves one after the other (measured on a Zen 3, pinned, alternating,
// medians of 5, of memcpy: zN 32 MiB fp16 0.93 -> 1.05, int8 0.95 -> 1.03,
// 2048 x 2048 fp16 zN and zZ par to 5% faster; a half of each row in turn
// before), and that line of the same fractal of the next block row, `ahead`
// bytes on (0: none), is fetched into L2 as z_unpack_rows_avx512 does (row
// by row without the fetch before: measured on a Zen 4 capped at AVX2,
// pinned, alternating, of memcpy: zN fp16 2048 x 2048 0.66-0.78 ->
// 0.83-0.90, int8 2048 x 4096 0.72-0.78 -> 0.86-0.90, 32 MiB fp16 0.64-0.72
// -> 0.94-1.15, int8 0.66-0.71 -> 0.96-1.22; zZ and in L2 par).
template <bool kStream>
__attribute__((target("avx2"))) void z_unpack_rows_avx2(uint8_t* logical, size_t pitch, const uint8_t* block,
                                                         size_t step, uint64_t n, size_t ahead) {
  for (uint64_t q0 = 0; q0 < n; q0 += kZRunFractals) {
    const uint64_t q1 = std::min<uint64_t>(n, q0 + kZRunFractals);
    for (uint64_t k = 0; k < kFractalC0s / 2; ++k) {
      uint8_t* lo = logical + 2 * k * pitch;
      uint8_t* hi = lo + pitch;
      uint64_t q = q0;
      for (; q + 1 < q1; q += 2) {  // whole lines, their halves back to back
        const uint8_t* a = block + q * step + k * kLineBytes;
        const uint8_t* b = a + step;
        if (ahead != 0) _mm_prefetch(reinterpret_cast<const char*>(a + ahead), _MM_HINT_T1);  // mutate: equivalent (a prefetch: the same bytes)
        if (ahead != 0) _mm_prefetch(reinterpret_cast<const char*>(b + ahead), _MM_HINT_T1);  // mutate: equivalent (a prefetch: the same bytes)
        const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
        const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + kC0Bytes));
        const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
        const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + kC0Bytes));
        put256<kStream>(lo + q * kC0Bytes, a0);
        put256<kStream>(lo + q * kC0Bytes + kC0Bytes, b0);
        put256<kStream>(hi + q * kC0Bytes, a1);
        put256<kStream>(hi + q * kC0Bytes + kC0Bytes, b1);
      }
      for (; q < q1; ++q) {
        const uint8_t* line = block + q * step + k * kLineBytes;
        if (ahead != 0) _mm_prefetch(reinterpret_cast<const char*>(line + ahead), _MM_HINT_T1);  // mutate: equivalent (a prefetch: the same bytes)
        put256<kStream>(lo + q * kC0Bytes, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line)));
        put256<kStream>(hi + q * kC0Bytes, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line + kC0Bytes)));
      }
    }
  }
}

// Piece l of rows 2k and 2k+1 of a block row: line k of fractals 2l and
// 2l + 1 (`step` bytes apart from `f`), their 32-byte halves exchanged; the
// same lines of the next block row, `ahead` bytes on (0: none), fetched.
__attribute__((target("avx512f"))) LC_TLA_INLINE_ANY void z_row_pair_piece(const uint8_t* f, size_t step, uint64_t l,
                                                                           uint64_t k, size_t ahead, __m512i* even,
                                                                           __m512i* odd) {
  if (ahead != 0) {  // see fetch_fractals
    _mm_prefetch(reinterpret_cast<const char*>(f + 2 * l * step + k * kLineBytes + ahead), _MM_HINT_T1);  // mutate: equivalent (a prefetch: the same bytes)
    _mm_prefetch(reinterpret_cast<const char*>(f + (2 * l + 1) * step + k * kLineBytes + ahead), _MM_HINT_T1);  // mutate: equivalent (a prefetch: the same bytes)
  }
  const __m512i a = _mm512_loadu_si512(f + 2 * l * step + k * kLineBytes);
  const __m512i b = _mm512_loadu_si512(f + (2 * l + 1) * step + k * kLineBytes);
  *even = _mm512_shuffle_i64x2(a, b, 0x44);
  *odd = _mm512_shuffle_i64x2(a, b, 0xEE);
}

// Two fractals make one line of each row: a line of each holds rows 2k and
// 2k+1, so rows 2k and 2k+1 of the block row are written side by side
// (non-temporal with kStream: the caller checked that the rows start on lines).
template <bool kStream>
__attribute__((target("avx512f"))) void z_unpack_rows_avx512(uint8_t* logical, size_t pitch, const uint8_t* block,
                                                            size_t step, uint64_t n, size_t ahead) {
  for (uint64_t q0 = 0; q0 + 1 < n; q0 += kZRunFractals) {
    const uint64_t pairs = (std::min<uint64_t>(n, q0 + kZRunFractals) - q0) / 2;
    const uint8_t* f = block + q0 * step;
    for (uint64_t k = 0; k < kFractalC0s / 2; ++k) {
      uint8_t* lo = logical + 2 * k * pitch + q0 * kC0Bytes;
      uint8_t* hi = lo + pitch;
      for (uint64_t l = 0; l < pairs; ++l) {
        __m512i even, odd;
        z_row_pair_piece(f, step, l, k, ahead, &even, &odd);
        if constexpr (kStream) {
          _mm512_stream_si512(reinterpret_cast<__m512i*>(lo + l * kLineBytes), even);
          _mm512_stream_si512(reinterpret_cast<__m512i*>(hi + l * kLineBytes), odd);
        } else {
          _mm512_storeu_si512(lo + l * kLineBytes, even);
          _mm512_storeu_si512(hi + l * kLineBytes, odd);
        }
      }
    }
  }
  if (n % 2 != 0) z_unpack_rows_body(logical + (n - 1) * kC0Bytes, pitch, block + (n - 1) * step, step, 1);
}
#endif

// The block row's first `n` fractals (all whole) into its 16 logical rows;
// `stream` as for stage_out().
void z_unpack_rows(uint8_t* logical, size_t pitch, const uint8_t* block, size_t step, uint64_t n, bool stream,
                   size_t ahead) {
#ifdef LC_TLA_X86
  if (stream && isa_at_least(Isa::kAvx512)) return z_unpack_rows_avx512<true>(logical, pitch, block, step, n, ahead);
  if (isa_at_least(Isa::kAvx512)) return z_unpack_rows_avx512<false>(logical, pitch, block, step, n, ahead);
  if (stream) return z_unpack_rows_avx2<true>(logical, pitch, block, step, n, ahead);
  if (isa_at_least(Isa::kAvx2)) return z_unpack_rows_avx2<false>(logical, pitch, block, step, n, ahead);
#endif
  (void)stream, (void)ahead;
  z_unpack_rows_portable(logical, pitch, block, step, n);
}

#ifdef LC_TLA_X86
// ---- z-fractal pack of rows that start inside lines ----------------------------
// from, from + 1, ..., from + 63 (from <= 64): the vpermt2b index of 64
// bytes starting `from` bytes into a pair of lines.
__attribute__((target("avx512f,avx512bw"))) __m512i byte_ramp(uint64_t from) {
  const __m512i iota = _mm512_set_epi8(63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44,
                                       43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24,
                                       23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1,
                                       0);
  return _mm512_add_epi8(iota, _mm512_set1_epi8(static_cast<char>(from)));
}

// One group of z_pack_rows_shifted() (`kLast`: the rows' last whole group,
// whose next lines are loaded masked to the rows' own bytes).
template <bool kStream, bool kLast>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"), always_inline)) inline void z_shifted_group(
    const uint8_t* const* line, const uint64_t* shift, const __m512i* idx, __m512i* carry, uint64_t g, uint8_t* b,
    size_t step) {
  _Pragma("GCC unroll 8") for (uint64_t k = 0; k < kFractalC0s / 2; ++k) {
    __m512i cur[2];
    _Pragma("GCC unroll 2") for (uint64_t h = 0; h < 2; ++h) {
      const uint64_t r = 2 * k + h;
      const __mmask64 m = kLast ? (__mmask64{1} << shift[r]) - 1 : ~__mmask64{0};
      const __m512i next = masked::_mm512_maskz_loadu_epi8(m, line[r] + (g + 1) * kLineBytes);
      cur[h] = _mm512_permutex2var_epi8(carry[r], idx[r], next);
      carry[r] = next;
    }
    put512<kStream>(b + k * kLineBytes, _mm512_shuffle_i64x2(cur[0], cur[1], 0x44));
    put512<kStream>(b + step + k * kLineBytes, _mm512_shuffle_i64x2(cur[0], cur[1], 0xEE));
  }
}

// A row starting s bytes into a line is read as whole aligned lines, each 64
// bytes of it the bytes s.. of one line and the first s of the next (VBMI
// vpermt2b), so that no load splits across two lines. The line a group
// shares with the next one is carried over, not loaded again: with a pitch
// near 4 KiB the group's rows fall in one or two L1 sets, and a second load
// of a line finds it evicted (measured on a 32 KiB L1d Zen 4 with 2047 x 2047
// fp16: split loads held the group pack to 0.47 of memcpy). The first and
// last lines of each row are loaded masked to the row's own bytes.
//
// The block row's `n` whole groups go in one call, so that the carried lines
// stay in registers (measured on a 32 KiB L1d Zen 4 with 2047 x 2047 fp16:
// 0.65 -> 0.80 of memcpy, medians of 9 runs, against one call per group
// with the carry stored to the stack and loaded back). `prefetch` and
// `wahead` as for the other packs of fractal_groups().
template <bool kStream>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"))) void z_pack_rows_shifted(
    const uint8_t* logical, size_t pitch, uint8_t* block, size_t step, uint64_t n, bool prefetch, size_t wahead) {
  const uint8_t* line[kFractalC0s];  // the line each row starts in
  uint64_t shift[kFractalC0s];       // where in it
  __m512i idx[kFractalC0s];          // s, s+1, ..., s+63: the permute that shifts
  __m512i carry[kFractalC0s];        // the line the next group starts in
  constexpr uint64_t kG = kLineBytes / kC0Bytes;  // the two fractals a group fills
  for (uint64_t r = 0; r < kFractalC0s; ++r) {
    shift[r] = reinterpret_cast<uintptr_t>(logical + r * pitch) % kLineBytes;
    line[r] = logical + r * pitch - shift[r];
    idx[r] = byte_ramp(shift[r]);
    carry[r] = masked::_mm512_maskz_loadu_epi8(~__mmask64{0} << shift[r], line[r]);
  }
  for (uint64_t g = 0; g < n; ++g) {
    for (uint64_t r = 0; prefetch && r < kFractalC0s; ++r) {
      __builtin_prefetch(logical + (g + kPrefetchGroups) * kLineBytes + r * pitch, 0, 1);
    }
    uint8_t* b = block + kG * g * step;
    fetch_fractals<true>(b, step, wahead, kG);
    if (g + 1 < n) z_shifted_group<kStream, false>(line, shift, idx, carry, g, b, step);
    else z_shifted_group<kStream, true>(line, shift, idx, carry, g, b, step);
  }
}

#endif

#ifdef LC_TLA_X86
// ---- z-fractal unpack of rows that start inside lines, streamed ------------------
// As z_unpack_rows_avx512, each row's 64-byte pieces in order, but shifted
// into whole aligned lines (the last bytes of one piece and the first of the
// next, VBMI vpermt2b; the piece before carried over) that go out
// non-temporal. A row's first and last lines, shared with the rows around it
// or the edge fractals, are masked ordinary stores. Unaligned stores of the
// pieces would write each line in two halves at two times, with a pitch
// near 4 KiB the 16 rows' lines in one or two L1 sets (measured on a 32 KiB
// L1d Zen 4 with 2047 x 2047 fp16: 0.65-1.10 ms before, 0.42-0.52 after,
// 2048 x 2048 streamed 0.35-0.44). `n` >= 2 fractals, an even number.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi"))) void z_unpack_rows_shifted(
    uint8_t* logical, size_t pitch, const uint8_t* block, size_t step, uint64_t n, size_t ahead) {
  alignas(64) __m512i carry[kFractalC0s];
  for (uint64_t r = 0; r < kFractalC0s; ++r) carry[r] = _mm512_setzero_si512();
  const uint64_t s0 = reinterpret_cast<uintptr_t>(logical) % kLineBytes;
  for (uint64_t q0 = 0; q0 < n; q0 += kZRunFractals) {
    const uint64_t pairs = (std::min<uint64_t>(n, q0 + kZRunFractals) - q0) / 2;
    const uint8_t* f = block + q0 * step;
    for (uint64_t k = 0; k < kFractalC0s / 2; ++k) {
      const uint64_t sa = (s0 + 2 * k * pitch) % kLineBytes, sb = (s0 + (2 * k + 1) * pitch) % kLineBytes;
      uint8_t* la = logical + 2 * k * pitch - sa + q0 / 2 * kLineBytes;
      uint8_t* lb = logical + (2 * k + 1) * pitch - sb + q0 / 2 * kLineBytes;
      const __m512i ia = byte_ramp(kLineBytes - sa), ib = byte_ramp(kLineBytes - sb);
      __m512i ca = carry[2 * k], cb = carry[2 * k + 1];
      uint64_t l = 0;
      if (q0 == 0) {  // the rows' first lines, shared with the rows before: masked, ordinary
        __m512i even, odd;
        z_row_pair_piece(f, step, 0, k, ahead, &even, &odd);
        masked::_mm512_mask_storeu_epi8(la, ~__mmask64{0} << sa, _mm512_permutex2var_epi8(ca, ia, even));
        masked::_mm512_mask_storeu_epi8(lb, ~__mmask64{0} << sb, _mm512_permutex2var_epi8(cb, ib, odd));
        ca = even, cb = odd, l = 1;
      }
      for (; l < pairs; ++l) {
        __m512i even, odd;
        z_row_pair_piece(f, step, l, k, ahead, &even, &odd);
        _mm512_stream_si512(reinterpret_cast<__m512i*>(la + l * kLineBytes), _mm512_permutex2var_epi8(ca, ia, even));
        _mm512_stream_si512(reinterpret_cast<__m512i*>(lb + l * kLineBytes), _mm512_permutex2var_epi8(cb, ib, odd));
        ca = even, cb = odd;
      }
      carry[2 * k] = ca, carry[2 * k + 1] = cb;
    }
  }
  for (uint64_t r = 0; r < kFractalC0s; ++r) {
    const uint64_t sr = (s0 + r * pitch) % kLineBytes;
    const __m512i v = _mm512_permutex2var_epi8(carry[r], byte_ramp(kLineBytes - sr), _mm512_setzero_si512());
    masked::_mm512_mask_storeu_epi8(logical + r * pitch - sr + n / 2 * kLineBytes, (__mmask64{1} << sr) - 1, v);
  }
}
#endif

#ifdef LC_TLA_X86
// z inside with AVX2: row r of the group is C0 r of the two fractals, one
// 32-byte move each (the portable memcpy of 32 bytes is two 16-byte moves).
// Packs write each fractal line's two C0s (rows r and r + 1) one after the
// other, kStream non-temporal (measured on a Zen 3, pinned, alternating,
// medians of 4, of memcpy, against the C0 r of both fractals in turn: zN
// 2048 x 2048 fp16 0.49 -> 0.57, 2048 x 4096 int8 0.52 -> 0.60, 32 MiB fp16
// 0.97 -> 1.04, int8 0.94 -> 1.14; zZ par).
template <bool kPack, bool kStream = false>
__attribute__((target("avx2"))) void z_group_avx2(uint8_t* logical, size_t pitch, uint8_t* block, size_t step) {
  if (kPack) {
    for (uint64_t r = 0; r < kFractalC0s; r += 2) {
      const uint8_t* row = logical + r * pitch;
      const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row));
      const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + kC0Bytes));
      const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + pitch));
      const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + pitch + kC0Bytes));
      put256<kStream>(block + r * kC0Bytes, a0);
      put256<kStream>(block + (r + 1) * kC0Bytes, b0);
      put256<kStream>(block + step + r * kC0Bytes, a1);
      put256<kStream>(block + step + (r + 1) * kC0Bytes, b1);
    }
    return;
  }
  for (uint64_t r = 0; r < kFractalC0s; ++r) {
    for (uint64_t q = 0; q < kLineBytes / kC0Bytes; ++q) {
      const uint8_t* c0 = block + q * step + r * kC0Bytes;
      uint8_t* row = logical + r * pitch + q * kC0Bytes;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c0)));
    }
  }
}

// ---- z-fractal rows that start inside lines, without AVX-512 -----------------------
// The z_pack_rows_shifted / z_unpack_rows_shifted design without VBMI: the
// shift into whole lines is done by an L1 stage, one stage row per logical
// row and run of kZRunFractals C0s (512 bytes); the rows are read (pack) or
// written (unpack) as whole aligned lines, and the shift is an unaligned
// load inside L1 (the pack's stage row holds the row's lines as they are, the
// C0s loaded from it at the row's offset in its first line; the unpack's
// holds the C0s aligned, each line loaded from it at that offset: stores of
// the C0s at the offset, each split across two stage lines, held the unpack
// to 0.42-0.48 of memcpy, 0.66-0.72 after). The line a run shares with the
// next is carried over in the stage: a pack loads it once, an unpack writes
// it whole once both runs filled it (non-temporal with kStream). A row's
// first and last lines, shared with the rows around it or the edge
// fractals, are copied byte-exact with ordinary stores. Before, each row's 32-byte pieces were loaded or
// stored split across two lines, with a pitch near 4 KiB the 16 rows' lines
// in one or two L1 sets, each line touched twice at two times (measured on
// a 32 KiB L1d Zen 4 capped at AVX2, 2047 x 2047 fp16 zN, A/B in the same
// minutes: pack 0.49-0.60 of memcpy -> 0.67-0.80, unpack 0.37-0.45 ->
// 0.66-0.72).
constexpr uint64_t kZStagePitch = kZRunFractals * kC0Bytes + kLineBytes;

template <bool kPack, bool kStream>
__attribute__((target("avx2"))) void z_rows_staged_avx2(uint8_t* logical, size_t pitch, uint8_t* block, size_t step,
                                                         uint64_t n, bool prefetch, size_t ahead) {
  alignas(64) uint8_t stage[kFractalC0s * kZStagePitch];
  for (uint64_t q0 = 0; q0 < n; q0 += kZRunFractals) {
    const uint64_t nq = std::min<uint64_t>(kZRunFractals, n - q0);
    const bool first = q0 == 0, last = q0 + nq == n;
    uint8_t* f = block + q0 * step;
    fetch_fractals<kPack>(f, step, ahead, nq);
    if (!kPack) {  // C0 r of each fractal to stage row r after its line 0, the fractals front to back
      for (uint64_t q = 0; q < nq; ++q) {
        _Pragma("GCC unroll 16") for (uint64_t r = 0; r < kFractalC0s; ++r) {
          _mm256_store_si256(reinterpret_cast<__m256i*>(stage + r * kZStagePitch + kLineBytes + q * kC0Bytes),
                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(f + q * step + r * kC0Bytes)));
        }
      }
    }
    for (uint64_t r = 0; r < kFractalC0s; ++r) {
      uint8_t* row = logical + r * pitch + q0 * kC0Bytes;  // the run's first byte
      const uint64_t s = reinterpret_cast<uintptr_t>(row) % kLineBytes;
      uint8_t* line = row - s;
      uint8_t* st = stage + r * kZStagePitch;
      const uint64_t end = s + nq * kC0Bytes, full = end / kLineBytes, rem = end % kLineBytes;
      if (kPack) {
        if (prefetch && !last) {  // the row's next run, into L2
          for (uint64_t k = 1; k <= kZRunFractals * kC0Bytes / kLineBytes; ++k) {
            __builtin_prefetch(line + (kZRunFractals * kC0Bytes / kLineBytes + k) * kLineBytes, 0, 1);
          }
        }
        uint64_t k = 0;
        if (first) {
          std::memcpy(st + s, row, kLineBytes - s);
          k = 1;
        } else if (s != 0) {  // line 0: the run before's last line (a whole run: stage line 8)
          for (uint64_t h = 0; h < kLineBytes; h += 32) {
            _mm256_store_si256(reinterpret_cast<__m256i*>(st + h),
                               _mm256_load_si256(reinterpret_cast<const __m256i*>(st + kZRunFractals * kC0Bytes + h)));
          }
          k = 1;
        }
        for (; k < full; ++k) {
          for (uint64_t h = 0; h < kLineBytes; h += 32) {
            _mm256_store_si256(reinterpret_cast<__m256i*>(st + k * kLineBytes + h),
                               _mm256_load_si256(reinterpret_cast<const __m256i*>(line + k * kLineBytes + h)));
          }
        }
        if (rem != 0) {
          if (last) {
            std::memcpy(st + full * kLineBytes, line + full * kLineBytes, rem);
          } else {  // whole: the next run's first line, inside the row
            for (uint64_t h = 0; h < kLineBytes; h += 32) {
              _mm256_store_si256(reinterpret_cast<__m256i*>(st + full * kLineBytes + h),
                                 _mm256_load_si256(reinterpret_cast<const __m256i*>(line + full * kLineBytes + h)));
            }
          }
        }
      } else {
        // The run's bytes are at st + kLineBytes on; logical line k is the
        // 64 bytes at st + kLineBytes + 64k - s, the s before the run the
        // last of the run before (carried to just before it).
        const uint8_t* at = st + kLineBytes - s;
        uint64_t k = 0;
        if (first && s != 0) {
          std::memcpy(row, st + kLineBytes, kLineBytes - s);
          k = 1;
        }
        for (; k < full; ++k) {
          for (uint64_t h = 0; h < kLineBytes; h += 32) {
            put256<kStream>(line + k * kLineBytes + h,
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + k * kLineBytes + h)));
          }
        }
        if (rem != 0 && last) std::memcpy(line + full * kLineBytes, at + full * kLineBytes, rem);
        if (rem != 0 && !last) {  // the run's last line (a whole run) goes before the next
          for (uint64_t h = 0; h < kLineBytes; h += 32) {
            _mm256_store_si256(reinterpret_cast<__m256i*>(st + h),
                               _mm256_load_si256(reinterpret_cast<const __m256i*>(st + kZRunFractals * kC0Bytes + h)));
          }
        }
      }
    }
    if (kPack) {  // C0 r of each fractal from stage row r, each fractal front to back
      for (uint64_t q = 0; q < nq; ++q) {
        _Pragma("GCC unroll 16") for (uint64_t r = 0; r < kFractalC0s; ++r) {
          const uint64_t s = reinterpret_cast<uintptr_t>(logical + r * pitch) % kLineBytes;
          put256<kStream>(f + q * step + r * kC0Bytes,
                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(stage + r * kZStagePitch + s + q * kC0Bytes)));
        }
      }
    }
  }
  if (kStream) _mm_sfence();
}
#endif

#ifdef LC_TLA_X86
// ---- AVX2 fractal groups -----------------------------------------------------------
// The AVX-512 groups' design with 32-byte registers: each logical row's line
// is read (pack) or written (unpack) whole, its two halves back to back, and
// the fractals' C0s front to back. Fractal by fractal instead, a pack read
// the kH rows' lines a half (or quarter) at a time; with rows a multiple of
// 4 KiB apart the kH rows share one L1 set (8 ways on a 32 KiB L1d) and each
// line was evicted before its next piece was read, so every line came from
// L2 two or four times. Every loop is unrolled so that the rows stay in
// registers (the compiler spills what does not fit to the stack, in lines of
// its own, rather than to the rows' sets). Measured on a 32 KiB L1d Zen 4
// capped at AVX2, A/B in the same minutes, pack / unpack against a memcpy of
// the same bytes: nZ 2048 x 2048 fp16 0.36-0.62 / 0.41-0.54 -> 0.70 /
// 0.52-0.70, nZ 2048 x 4096 int8 0.43-0.46 / 0.40 -> 0.58-0.62 / 0.59-0.70,
// nZ 2048 x 2048 fp32 0.73-0.77 / 0.72 -> 1.37-1.67 / 1.06-1.12, nN 2048 x
// 2048 fp16 0.40-0.49 / 0.44-0.52 -> 0.71-0.79 / 0.55, nN 256 x 256 fp32
// (in cache) 0.24-0.42 / 0.20-0.23 -> 0.80-0.85 / 0.45-0.52.
//
// Streaming below AVX-512 (these packs, z_group_avx2's, stage_out_avx2 and
// z_unpack_rows_avx2) was measured on a Zen 5 capped at AVX2, best of 7,
// unpacks: nZ int8 2048 x 4096 0.25 -> 0.49 of memcpy, fp16 2048 x 2048 0.27
// -> 0.45, fp32 0.36 -> 0.61, nN fp16 0.30 -> 0.39, zN fp16 0.42 -> 0.64,
// int8 0.40 -> 0.63; the packs' times par to 7% less (z fractals through an
// L1 buffer and out instead of straight: 15% more).
#define LC_TLA_AVX2 __attribute__((target("avx2")))
#define LC_TLA_UNROLL2 _Pragma("GCC unroll 32")

LC_TLA_AVX2 LC_TLA_INLINE_ANY __m256i load256(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// fp16 n inside: 16 rows of 32 elements <-> two 16 x 16 fractals. D[G][h][x]
// (rows 8G..8G+7, lane L: column 16h + 8L + x) is the per-lane transpose of
// half h of rows 8G..; C0 k of fractal h is lane k / 8 of D[0][h][k % 8]
// (rows 0..7) and of D[1][h][k % 8] (rows 8..15).
template <bool kPack, bool kStream>
LC_TLA_AVX2 void n16_group_avx2(uint8_t* logical, size_t pitch, uint8_t* block, size_t step) {
  __m256i d[2][2][8];
  if (kPack) {
    LC_TLA_UNROLL2 for (int g = 0; g < 2; ++g) {
      __m256i lo[8], hi[8];
      LC_TLA_UNROLL2 for (int i = 0; i < 8; ++i) {
        lo[i] = load256(logical + static_cast<size_t>(8 * g + i) * pitch);
        hi[i] = load256(logical + static_cast<size_t>(8 * g + i) * pitch + 32);
      }
      byte_transpose::transpose8x8_epi16_x2(lo, d[g][0]);
      byte_transpose::transpose8x8_epi16_x2(hi, d[g][1]);
    }
    LC_TLA_UNROLL2 for (int h = 0; h < 2; ++h) {
      LC_TLA_UNROLL2 for (int k = 0; k < 16; ++k) {
        const __m256i c0 = k < 8 ? _mm256_permute2x128_si256(d[0][h][k % 8], d[1][h][k % 8], 0x20)
                                 : _mm256_permute2x128_si256(d[0][h][k % 8], d[1][h][k % 8], 0x31);
        put256<kStream>(block + static_cast<size_t>(h) * step + 32 * k, c0);
      }
    }
    return;
  }
  LC_TLA_UNROLL2 for (int h = 0; h < 2; ++h) {
    LC_TLA_UNROLL2 for (int x = 0; x < 8; ++x) {
      const __m256i a = load256(block + static_cast<size_t>(h) * step + 32 * x);
      const __m256i b = load256(block + static_cast<size_t>(h) * step + 32 * (x + 8));
      d[0][h][x] = _mm256_permute2x128_si256(a, b, 0x20);
      d[1][h][x] = _mm256_permute2x128_si256(a, b, 0x31);
    }
  }
  LC_TLA_UNROLL2 for (int g = 0; g < 2; ++g) {
    __m256i lo[8], hi[8];
    byte_transpose::transpose8x8_epi16_x2(d[g][0], lo);
    byte_transpose::transpose8x8_epi16_x2(d[g][1], hi);
    LC_TLA_UNROLL2 for (int i = 0; i < 8; ++i) {
      put256<kStream>(logical + static_cast<size_t>(8 * g + i) * pitch, lo[i]);
      put256<kStream>(logical + static_cast<size_t>(8 * g + i) * pitch + 32, hi[i]);
    }
  }
}

// int8 n inside: 32 rows of 64 bytes <-> four 32 x 16 fractals. R[f][i]
// holds bytes 16f.. 16f + 15 of row i (lane 0) and of row i + 16 (lane 1),
// so that after the per-lane 16 x 16 byte transpose R[f][k] is C0 k of
// fractal f. Rows i and i + 16 are read whole and split into the four R[f][i]
// before any transpose (the compiler keeps fewer values on the stack than
// with the rows' halves transposed first and the lanes joined after:
// measured on a Zen 4 capped at AVX2, A/B in the same minutes, nZ 2048 x
// 4096 pack / unpack 0.48-0.61 / 0.50-0.53 of memcpy -> 0.60-0.67 /
// 0.56-0.57, 256 x 512 0.59-0.61 / 0.33-0.42 -> 0.71 / 0.44-0.50).
template <bool kPack, bool kStream>
LC_TLA_AVX2 void n8_group_avx2(uint8_t* logical, size_t pitch, uint8_t* block, size_t step) {
  __m256i r[4][16];
  if (kPack) {
    LC_TLA_UNROLL2 for (int i = 0; i < 16; ++i) {
      const uint8_t* a = logical + static_cast<size_t>(i) * pitch;
      const uint8_t* b = logical + static_cast<size_t>(i + 16) * pitch;
      const __m256i alo = load256(a), ahi = load256(a + 32), blo = load256(b), bhi = load256(b + 32);
      r[0][i] = _mm256_permute2x128_si256(alo, blo, 0x20);
      r[1][i] = _mm256_permute2x128_si256(alo, blo, 0x31);
      r[2][i] = _mm256_permute2x128_si256(ahi, bhi, 0x20);
      r[3][i] = _mm256_permute2x128_si256(ahi, bhi, 0x31);
    }
    LC_TLA_UNROLL2 for (int f = 0; f < 4; ++f) {
      byte_transpose::transpose16x16_epi8_x2(r[f]);
      LC_TLA_UNROLL2 for (int k = 0; k < 16; ++k) put256<kStream>(block + static_cast<size_t>(f) * step + 32 * k, r[f][k]);
    }
    return;
  }
  LC_TLA_UNROLL2 for (int f = 0; f < 4; ++f) {
    LC_TLA_UNROLL2 for (int k = 0; k < 16; ++k) r[f][k] = load256(block + static_cast<size_t>(f) * step + 32 * k);
    byte_transpose::transpose16x16_epi8_x2(r[f]);
  }
  LC_TLA_UNROLL2 for (int i = 0; i < 16; ++i) {
    uint8_t* a = logical + static_cast<size_t>(i) * pitch;
    uint8_t* b = logical + static_cast<size_t>(i + 16) * pitch;
    put256<kStream>(a, _mm256_permute2x128_si256(r[0][i], r[1][i], 0x20));
    put256<kStream>(a + 32, _mm256_permute2x128_si256(r[2][i], r[3][i], 0x20));
    put256<kStream>(b, _mm256_permute2x128_si256(r[0][i], r[1][i], 0x31));
    put256<kStream>(b + 32, _mm256_permute2x128_si256(r[2][i], r[3][i], 0x31));
  }
}


// fp32 n inside: 8 rows of 16 elements <-> one 8 x 16 fractal: the two 8 x 8
// transposes of transpose_8x8_u32 (columns 0..7: C0s 0..7, 8..15: C0s
// 8..15) on both halves of each row at once.
template <bool kPack, bool kStream>
LC_TLA_AVX2 void n4_group_avx2(uint8_t* logical, size_t pitch, uint8_t* block, size_t /*step*/) {
  __m256 r[2][8];
  if (kPack) {  // both halves of each row in turn
    LC_TLA_UNROLL2 for (int i = 0; i < 8; ++i) {
      LC_TLA_UNROLL2 for (int h = 0; h < 2; ++h) {
        r[h][i] = _mm256_loadu_ps(reinterpret_cast<const float*>(logical + static_cast<size_t>(i) * pitch + 32 * h));
      }
    }
  } else {  // the C0s in order: C0 8h + i
    LC_TLA_UNROLL2 for (int h = 0; h < 2; ++h) {
      LC_TLA_UNROLL2 for (int i = 0; i < 8; ++i) {
        r[h][i] = _mm256_loadu_ps(reinterpret_cast<const float*>(block + 256 * h + 32 * i));
      }
    }
  }
  __m256 o[2][8];
  LC_TLA_UNROLL2 for (int h = 0; h < 2; ++h) {
    __m256 t[8], u[8];
    LC_TLA_UNROLL2 for (int i = 0; i < 4; ++i) {
      t[2 * i] = _mm256_unpacklo_ps(r[h][2 * i], r[h][2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[h][2 * i], r[h][2 * i + 1]);
    }
    LC_TLA_UNROLL2 for (int i = 0; i < 2; ++i) {
      LC_TLA_UNROLL2 for (int j = 0; j < 2; ++j) {
        u[4 * i + 2 * j] = _mm256_shuffle_ps(t[4 * i + j], t[4 * i + j + 2], 0x44);
        u[4 * i + 2 * j + 1] = _mm256_shuffle_ps(t[4 * i + j], t[4 * i + j + 2], 0xEE);
      }
    }
    LC_TLA_UNROLL2 for (int k = 0; k < 4; ++k) {
      o[h][k] = _mm256_permute2f128_ps(u[k], u[4 + k], 0x20);
      o[h][k + 4] = _mm256_permute2f128_ps(u[k], u[4 + k], 0x31);
    }
  }
  if (kPack) {  // C0 8h + k
    LC_TLA_UNROLL2 for (int h = 0; h < 2; ++h) {
      LC_TLA_UNROLL2 for (int k = 0; k < 8; ++k) put256<kStream>(block + 256 * h + 32 * k, _mm256_castps_si256(o[h][k]));
    }
  } else {  // half h of logical row k
    LC_TLA_UNROLL2 for (int k = 0; k < 8; ++k) {
      LC_TLA_UNROLL2 for (int h = 0; h < 2; ++h) {
        put256<kStream>(logical + static_cast<size_t>(k) * pitch + 32 * h, _mm256_castps_si256(o[h][k]));
      }
    }
  }
}
#undef LC_TLA_AVX2
#undef LC_TLA_UNROLL2
#endif

// `stream`: a pack writes the fractals with non-temporal stores (AVX-512 only).
template <bool kPack, size_t EB, bool kZInside>
GroupFn group_kernel(bool stream) {
#ifdef LC_TLA_X86
  if (isa_at_least(Isa::kAvx512)) {
    if constexpr (kZInside) return stream ? z_group_avx512<kPack, true> : z_group_avx512<kPack, false>;
    else if constexpr (EB == 2) return stream ? n16_group_avx512<kPack, true> : n16_group_avx512<kPack, false>;
    else if constexpr (EB == 1) return stream ? n8_group_avx512<kPack, true> : n8_group_avx512<kPack, false>;
    else if constexpr (EB == 4) return stream ? n4_group_avx512<kPack, true> : n4_group_avx512<kPack, false>;
  }
  if constexpr (kZInside) {
    if (kPack && stream && isa_at_least(Isa::kAvx2)) return z_group_avx2<true, true>;
    if (isa_at_least(Isa::kAvx2)) return z_group_avx2<kPack>;
  } else if (isa_at_least(Isa::kAvx2)) {
    if constexpr (EB == 2) return stream ? n16_group_avx2<kPack, true> : n16_group_avx2<kPack, false>;
    else if constexpr (EB == 1) return stream ? n8_group_avx2<kPack, true> : n8_group_avx2<kPack, false>;
    else if constexpr (EB == 4) return stream ? n4_group_avx2<kPack, true> : n4_group_avx2<kPack, false>;
  }
#endif
  (void)stream;
  return group_by_fractal<kPack, EB, kZInside>;
}

// The most of `rows` lines `pitch` bytes apart that fall in one L1 set.
uint64_t rows_per_set(uint64_t rows, uint64_t pitch) {
  uint64_t count[kL1Sets] = {}, most = 0;
  for (uint64_t r = 0; r < rows; ++r) most = std::max(most, ++count[r * pitch / kLineBytes % kL1Sets]);
  return most;
}

template <bool kPack, size_t EB, bool kZInside>
void fractal_groups(const Plan& p, uint8_t* logical, uint8_t* phys) {
  using F = Fractal<EB, kZInside>;
  constexpr uint64_t kH = static_cast<uint64_t>(F::kH), kW = static_cast<uint64_t>(F::kW);
  constexpr uint64_t kPiece = kW * EB;
  static_assert(kLineBytes % kPiece == 0, "a line holds whole fractal rows");
  constexpr uint64_t kG = kLineBytes / kPiece;
  const auto blocks = make_layout(make_shape(static_cast<int64_t>(p.R), static_cast<int64_t>(p.C)),
                                  make_stride(static_cast<int64_t>(p.out_row), static_cast<int64_t>(p.out_col)));
  auto block_at = [&](uint64_t bi, uint64_t bj) {
    return phys + static_cast<uint64_t>(crd2offset(make_coord(static_cast<int64_t>(bi), static_cast<int64_t>(bj)),
                                                   blocks)) * EB;
  };
  const uint64_t pitch = p.cols * EB, step = p.out_col * EB;
  const uint64_t full_r = p.rows / kH, full_g = p.cols / (kW * kG);
  const bool prefetch = p.rows * pitch > kPrefetchAbove;
  // From kStreamAbove the whole lines the groups write (pack: the fractals;
  // unpack: the logical rows) are non-temporal, so that their old contents
  // are not read first (measured on a 32 KiB L1d Zen 4 with a 32 MiB L3 shared
  // with other guests: 4096 x 4096 fp16 and 4096 x 8192 int8, zN and nZ, 0.30-0.59
  // of memcpy before, 0.52-1.33 after; 8 MiB matrices, four runs each, nN and
  // nZ fp16 unpacks 0.46-0.53 before, 0.67-0.81 after, nZ int8 0.52 -> 0.64,
  // the packs par or better). Needs AVX2 and every written line whole:
  // the fractals on lines (pack), or every logical row on a line (unpack).
#ifdef LC_TLA_X86
  const bool line_phys = reinterpret_cast<uintptr_t>(phys) % kLineBytes == 0;
  const bool line_rows = reinterpret_cast<uintptr_t>(logical) % kLineBytes == 0 && pitch % kLineBytes == 0;
  const bool stream = isa_at_least(Isa::kAvx2) && (kPack ? p.cosize * EB : p.rows * pitch) >= kStreamAbove &&
                      (kPack ? line_phys : line_rows);
#else
  const bool stream = false;
#endif
  // A streamed n unpack with AVX-512 writes each group's lines straight from
  // the registers, non-temporal, without the stage: whole lines, so their old
  // contents are not read either way (measured on a Zen 5, pinned,
  // alternating, medians of 5, of memcpy: 2048 x 2048 fp16 nN 0.62 -> 0.76,
  // nZ 0.68 -> 0.82, fp32 nZ 0.85 -> 1.07; int8 2048 x 4096 nZ 0.61 -> 0.66;
  // 32 MiB fp16 nZ 0.91 -> 1.15, int8 0.84 -> 0.87). With AVX2 alone the
  // stage of kStreamStageLines lines a row goes out streamed instead: the
  // groups' 32-byte halves straight to 16 rows 4 KiB apart were measured on
  // a Zen 3 with no AVX-512 (pinned, alternating, medians of 5, fp16, of
  // memcpy) at nN 2048 x 2048 0.45 against 0.68 staged, nZ 0.40 against
  // 0.74, nZ 32 MiB 0.73 against 1.00 (on a Zen 4 capped at AVX2 the two
  // had been near par, with a stage of 4 lines).
#ifdef LC_TLA_X86
  const bool direct = !kPack && !kZInside && stream && isa_at_least(Isa::kAvx512);
#else
  const bool direct = false;
#endif
  const GroupFn group = group_kernel<kPack, EB, kZInside>(kPack ? stream : direct);
  const GroupFn edge_group = direct ? group_kernel<kPack, EB, kZInside>(false) : group;  // into a stage of its own
  // A z unpack past L2 writes each row front to back; in L2 (measured on
  // 256 x 256 fp16: -13%) it goes through the stage as the n fractals do.
  const bool z_rows = !kPack && kZInside && p.rows * pitch > kPrefetchAbove;
  // An unpack that does not stream writes each group's kH lines straight
  // into the logical rows where at most kStraightRowsPerSet of them share an
  // L1 set; rows a multiple of 2 or 4 KiB apart, more of them a set than its
  // ways, go through the stage (measured on a Zen 4, 32 KiB L1d of 8 ways,
  // pinned, alternating with the stage for all, us: nN 256 x 256 fp32
  // 9.8-10.2 -> 6.5-7.2, capped at AVX2 12.8-14.3 -> 6.0-8.4; nZ 256 x 512
  // int8 4.4 -> 3.0; nZ 256 x 256 fp16 4.0-5.1 -> 2.7-2.8; zN 512 x 512 fp16
  // 26.4-26.9 -> 18.0-18.3, capped 15.7-16.0 -> 10.8-12.4; nN 1024 x 1024
  // fp16, 8 rows a set, 85-108 -> 69-75; nN 64 x 1024 fp32, 8 rows 4 KiB
  // apart, 9.7-10.5 -> 8.0-8.6; but nZ 256 x 2048 int8, 16 rows a set,
  // 20.3 -> 23 straight).
  // (A direct unpack writes straight too, streamed.)
  const bool straight = direct || (!kPack && !z_rows && !stream && rows_per_set(kH, pitch) <= kStraightRowsPerSet);  // mutate: equivalent (straight or staged: the same bytes)
  // A z pack of rows that start inside lines reads whole lines (see
  // z_pack_rows_shifted; measured on 2048 x 2048: -10% for rows on lines).
#ifdef LC_TLA_X86
  const bool z_shifted = kPack && kZInside && !line_rows && full_g != 0 && isa_at_least(Isa::kAvx512Vbmi);
  // And a z unpack of such rows from kStreamAbove streams whole lines too
  // (see z_unpack_rows_shifted).
  const bool stream_shifted = !kPack && z_rows && !line_rows && full_g != 0 && p.rows * pitch >= kStreamAbove &&
                              isa_at_least(Isa::kAvx512Vbmi);
  // Without AVX-512 such rows go through z_rows_staged_avx2, packs from L2
  // on, unpacks where z_rows does.
  const bool z_staged = kZInside && !line_rows && full_g != 0 && !isa_at_least(Isa::kAvx512) &&
                        isa_at_least(Isa::kAvx2) && (kPack ? prefetch : z_rows);
  const bool stream_staged = z_staged && p.rows * pitch >= kStreamAbove;
#else
  const bool z_shifted = false, stream_shifted = false, z_staged = false, stream_staged = false;
#endif
  parallel_ranges(p.R, p.cosize * p.eb, [&](uint64_t begin, uint64_t end) {
    // Unpack, unless straight: kStageLines groups (kStreamStageLines when
    // streamed) go through a stage in L1, each row's lines of them copied out
    // in one run (measured: rows written one line at a time in turn, kH rows
    // a pitch apart in a few L1 sets, are several times slower than runs of
    // lines).
    alignas(64) uint8_t stage[kH * kStreamStageLines * kLineBytes];
    const uint64_t stage_lines = stream ? kStreamStageLines : kStageLines;
    const uint64_t stage_pitch = stage_lines * kLineBytes;
    for (uint64_t bi = begin; bi < end; ++bi) {
      uint64_t bj = 0;
      if (bi < full_r) {
        uint8_t* src = logical + bi * kH * pitch;
        // N order (fractals of a block row a column of blocks apart): each
        // fractal a group moves is one of many streams too far apart for the
        // hardware to follow, so the same fractal of the next block row, the
        // next piece of its stream, is fetched ahead: to read (unpack), or to
        // write unless the pack streams (measured on a 32 KiB L1d Zen 4,
        // 2048 x 2048 fp16 and 2048 x 4096 int8: nN unpack 0.23-0.44 of memcpy
        // before, 0.59-0.67 after; zN unpack past 16 MiB 0.67-0.92 before,
        // 1.01-1.16 after; the packs +5-25%).
        const size_t ahead = p.out_col > p.out_row && bi + 1 < full_r && prefetch ? p.out_row * EB : 0;  // mutate: equivalent (a prefetch: the same bytes)
        const size_t wahead = kPack && !stream ? ahead : 0;  // mutate: equivalent (a prefetch: the same bytes)
        // The line of each row kPrefetchGroups groups on, into L2 (measured:
        // +5% on 2048 x 2048 fp16 zN, +8% on nN; -15% on 256 x 256, in L2;
        // into L2 rather than L1, on a 32 KiB L1d Zen 4: int8 nZ 32 MiB 0.65
        // of memcpy before, 1.05-1.3 after, fp16 32 MiB +15%, the rest par).
        // The kH rows are read straight, even int8's 32 rows a pitch apart in
        // one L1 set: each line is read whole once (measured against copying
        // runs of 8 lines of each row to a stage first: par on 8 and 32 MiB,
        // 0.45 -> 0.65 of memcpy in cache).
#ifdef LC_TLA_X86
        if (kPack && z_shifted) {
          if (stream) z_pack_rows_shifted<true>(src, pitch, block_at(bi, 0), step, full_g, prefetch, wahead);
          else z_pack_rows_shifted<false>(src, pitch, block_at(bi, 0), step, full_g, prefetch, wahead);
        }
#endif
#ifdef LC_TLA_X86
        if (kPack && z_staged) {
          if (stream) z_rows_staged_avx2<true, true>(src, pitch, block_at(bi, 0), step, full_g * kG, prefetch, wahead);
          else z_rows_staged_avx2<true, false>(src, pitch, block_at(bi, 0), step, full_g * kG, prefetch, wahead);
        }
        if (!kPack && z_staged) {
          if (stream_staged) z_rows_staged_avx2<false, true>(src, pitch, block_at(bi, 0), step, full_g * kG, false, ahead);
          else z_rows_staged_avx2<false, false>(src, pitch, block_at(bi, 0), step, full_g * kG, false, ahead);
        }
#endif
        for (uint64_t g = 0; kPack && !z_shifted && !z_staged && g < full_g; ++g) {
          for (uint64_t r = 0; prefetch && r < kH; ++r) __builtin_prefetch(src + (g + kPrefetchGroups) * kLineBytes + r * pitch, 0, 1);
          uint8_t* b = block_at(bi, g * kG);
          fetch_fractals<true>(b, step, wahead, kG);  // nothing without prefetch: wahead is 0
          group(src + g * kLineBytes, pitch, b, step);
        }
#ifdef LC_TLA_X86
        if (!kPack && z_rows && stream_shifted) z_unpack_rows_shifted(src, pitch, block_at(bi, 0), step, full_g * kG, ahead);
#endif
        if (!kPack && z_rows && !stream_shifted && !z_staged) z_unpack_rows(src, pitch, block_at(bi, 0), step, full_g * kG, stream, ahead);
        for (uint64_t g = 0; straight && g < full_g; ++g) {
          uint8_t* b = block_at(bi, g * kG);
          fetch_fractals<false>(b, step, ahead, kG);
          if (prefetch && ahead == 0) fetch_fractals<false>(b, step, kStageLines * kG * step, kG);
          group(src + g * kLineBytes, pitch, b, step);
        }
        for (uint64_t g0 = 0; !kPack && !z_rows && !straight && g0 < full_g; g0 += stage_lines) {
          const uint64_t n = std::min<uint64_t>(stage_lines, full_g - g0);
          for (uint64_t g = 0; g < n; ++g) {
            uint8_t* b = block_at(bi, (g0 + g) * kG);
            fetch_fractals<false>(b, step, ahead, kG);
            group(stage + g * kLineBytes, stage_pitch, b, step);
          }
          // Z order: the next run's fractals, fetched into L2 while this
          // run goes out (measured on a 32 KiB L1d Zen 4, nZ 32 MiB: int8
          // 0.53 -> 0.74 of memcpy, fp16 0.75 -> 0.93; the 8 MiB rows par).
          const uint64_t next = g0 + stage_lines < full_g ? std::min(stage_lines, full_g - g0 - stage_lines) : 0;
          if (prefetch && ahead == 0) fetch_fractals<false>(block_at(bi, g0 * kG), step, stage_lines * kG * step, next * kG);  // mutate: equivalent (a prefetch: the same bytes)
          stage_out(src + g0 * kLineBytes, pitch, stage, stage_pitch, kH, n, stream);
        }
        bj = full_g * kG;
      } else if (full_g != 0) {
        // The last block row, of h < kH rows: each group through a stage of
        // kH rows of one line, zeros past the h rows (the fractals' padding),
        // so that the group kernels serve it too (measured on a Zen 4,
        // 49 x 2048 int8 nZ: 0.15 of memcpy fractal by fractal).
        const uint64_t h = p.rows - bi * kH;
        uint8_t* src = logical + bi * kH * pitch;
        alignas(64) uint8_t rows_stage[kH * kLineBytes] = {};
        for (uint64_t g = 0; g < full_g; ++g) {
          uint8_t* b = block_at(bi, g * kG);
          if (kPack) copy_rows(rows_stage, kLineBytes, src + g * kLineBytes, pitch, h, kLineBytes);
          edge_group(rows_stage, kLineBytes, b, step);
          if (!kPack) copy_rows(src + g * kLineBytes, pitch, rows_stage, kLineBytes, h, kLineBytes);
        }
        bj = full_g * kG;
      }
      for (; bj < p.C; ++bj) one_fractal<kPack, EB, kZInside>(p, logical, block_at(bi, bj), bi, bj);
    }
#ifdef LC_TLA_X86
    if (stream || stream_shifted) _mm_sfence();  // this thread's non-temporal stores, before it reports its range done
#endif
  });
}

// The fractal formats with the core's C0 of 32 bytes and 16 C0s per fractal.
bool in_core_fractal(const Plan& p) { return p.copy_as != Kind::kNotation; }

template <bool kPack, size_t EB>
void copy_sized(const Plan& p, uint8_t* logical, uint8_t* phys) {
  const bool in_core = in_core_fractal(p);
  if (in_core && (p.copy_as == Kind::kZN || p.copy_as == Kind::kZZ)) return fractal_groups<kPack, EB, true>(p, logical, phys);
  if (in_core && (p.copy_as == Kind::kNZ || p.copy_as == Kind::kNN)) return fractal_groups<kPack, EB, false>(p, logical, phys);
  table_copy<kPack, EB>(p, logical, phys);
}

template <bool kPack>
void copy(const Plan& p, uint8_t* logical, uint8_t* phys) {
  // Offsets no element maps to are 0: everything is covered only when the
  // layout is injective onto [0, cosize) and the logical matrix is the whole
  // layout. The fractal copies zero the padding of edge fractals themselves.
  if (kPack && !in_core_fractal(p) && (p.cosize != p.size || p.size != p.rows * p.cols)) {
    std::memset(phys, 0, p.cosize * p.eb);
  }
  switch (p.eb) {
    case 1: return copy_sized<kPack, 1>(p, logical, phys);
    case 2: return copy_sized<kPack, 2>(p, logical, phys);
    case 4: return copy_sized<kPack, 4>(p, logical, phys);
    default: return table_copy<kPack, 8>(p, logical, phys);
  }
}

// The position of a nested coordinate in its mode: integers count first
// fastest, each part of a tuple in units of the sizes before it.
Result<uint64_t> nested_position(const IntTuple& coord, const IntTuple& shape) {
  if (coord.is_integer()) {
    const uint64_t size = *shape.product();  // parsed: <= 2^62
    if (coord.value() < 0 || static_cast<uint64_t>(coord.value()) >= size) {
      return Status::invalid("coordinate " + to_string(coord) + " is outside " + to_string(shape));
    }
    return static_cast<uint64_t>(coord.value());
  }
  if (shape.is_integer() || coord.rank() != shape.rank()) {
    return Status::invalid("coordinate " + to_string(coord) + " does not match " + to_string(shape));
  }
  uint64_t pos = 0, unit = 1;
  for (size_t i = 0; i < coord.rank(); ++i) {
    LC_ASSIGN_OR_RETURN(uint64_t p, nested_position(coord.items()[i], shape.items()[i]));
    pos += p * unit;
    unit *= *shape.items()[i].product();
  }
  return pos;
}

class TlaOptimized : public Impl {
 public:
  std::string name() const override { return "optimized"; }
  Status supports(const Case& c) const override { return cached_plan(c).status(); }
  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_plan(c));
    const Plan& p = *p_ptr;
    return p.cosize * p.eb;
  }
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_plan(c));
    const Plan& p = *p_ptr;
    if (at.size() != p.logical.size()) {
      return Status::invalid("coordinate (" + shape_to_string(at) + ") is not of the rank of " + shape_to_string(c.shape));
    }
    uint64_t off = 0;
    for (size_t d = 0; d < at.size(); ++d) {
      if (at[d] < 0 || at[d] >= p.logical[d]) {
        return Status::invalid("coordinate (" + shape_to_string(at) + ") outside the tensor " + shape_to_string(c.shape));
      }
      off += mode_offset(p.modes[d], static_cast<uint64_t>(at[d]));
    }
    return off * p.eb * 8;
  }
  // A nested coordinate is the flat one of its positions in each mode.
  Result<uint64_t> offset_bits_nested(const Case& c, const IntTuple& at) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_plan(c));
    const Plan& p = *p_ptr;
    Coord flat;
    if (p.shape.is_integer()) {
      LC_ASSIGN_OR_RETURN(uint64_t i, nested_position(at, p.shape));
      flat.push_back(static_cast<int64_t>(i));
    } else {
      if (at.is_integer() || at.rank() != p.shape.rank()) {
        return Status::invalid("coordinate " + to_string(at) + " needs one part per mode of " + to_string(p.shape));
      }
      for (size_t m = 0; m < at.rank(); ++m) {
        LC_ASSIGN_OR_RETURN(uint64_t i, nested_position(at.items()[m], p.shape.items()[m]));
        flat.push_back(static_cast<int64_t>(i));
      }
    }
    return offset_bits(c, flat);
  }
  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_plan(c));
    const Plan& p = *p_ptr;
    LC_RETURN_IF_ERROR(check_buffers(c, p.cosize * p.eb, logical_size, physical_size));
    copy<true>(p, const_cast<uint8_t*>(static_cast<const uint8_t*>(logical)), static_cast<uint8_t*>(physical));
    return Status();
  }
  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_plan(c));
    const Plan& p = *p_ptr;
    LC_RETURN_IF_ERROR(check_buffers(c, p.cosize * p.eb, logical_size, physical_size));
    copy<false>(p, static_cast<uint8_t*>(logical), const_cast<uint8_t*>(static_cast<const uint8_t*>(physical)));
    return Status();
  }
  Result<std::vector<Fact>> describe(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_plan(c));
    const Plan& p = *p_ptr;
    std::vector<Fact> f;
    TlaLayoutText l{p.shape, p.stride};
    f.push_back({"tla", to_string(l)});
    f.push_back({"tla_shape", to_string(p.shape)});
    f.push_back({"tla_stride", to_string(p.stride)});
    f.push_back({"rank", str(p.shape.rank())});
    f.push_back({"depth", str(static_cast<uint64_t>(p.shape.depth()))});
    for (size_t i = 0; i < p.modes.size(); ++i) {
      const IntTuple* s = p.shape.get({i});
      f.push_back({"mode" + str(i), to_string(*s) + ":" + to_string(*p.stride.get({i}))});
      f.push_back({"rank_" + str(i), str(s->rank())});
      f.push_back({"depth_" + str(i), str(static_cast<uint64_t>(s->depth()))});
    }
    f.push_back({"size", str(p.size)});
    f.push_back({"cosize", str(p.cosize)});
    f.push_back({"size_bytes", str(p.cosize * p.eb)});
    if (p.parent) {
      f.push_back({"parent", to_string(*p.parent)});
      if (p.size != p.rows * p.cols) f.push_back({"padded_shape", str(*p.shape.items()[0].product()) + "," + str(*p.shape.items()[1].product())});
    }
    if (p.c0 != 0) {
      f.push_back({"c0_elements", str(p.c0)});
      f.push_back({"fractal", str(p.fh) + "x" + str(p.fw)});
      f.push_back({"padded_shape", str(p.R * p.fh) + "," + str(p.C * p.fw)});
    }
    return f;
  }
};

}  // namespace

const Impl& tla_optimized() {
  static const TlaOptimized impl;
  return impl;
}

}  // namespace layoutcheck
