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
// sides: a row copy (padding clipped off its tail). The nest visits the same
// (physical, logical) pairs in any loop order, so pack runs it in physical
// order (memory written front to back) and unpack with the outer loops sorted
// by logical stride (the tensor written front to back). When the innermost
// pair is not stride-1 but a loop further out is (R4Crouton4x1Layout,
// R4Crouton2x2Layout, the weights), that loop and the loops inside it are a
// small transpose per tile: physical [t][k] = logical row k, element t. Tiles
// run in physical order, or with the loops around them in logical order when
// the physical order would sweep the whole tensor per step of its outermost
// loop (the weights). Pack writes every physical row or tile with whole
// stores, padding included. Outputs of 8 MiB or more use non-temporal stores
// where every store fills whole 16-byte pieces; reads that the hardware does
// not see as streams are fetched ahead. The bytes written are the same.
// With both buffers on cache lines, unpadded rows of 32 or 64 bytes whose
// logical neighbour is a step of another loop (croutons, depth32) are a
// transpose of rows between that loop and the middle one (AVX2 and up), and
// 32 x 4 byte tiles (crouton4x1, crouton2x2; AVX2 and up) without padding
// along the depth go two logically adjacent tiles at a time: every line of
// either side is read and written whole (streamed past 8 MiB), which a row
// or tile at a time cannot do for rows of 32 bytes; a tile's rows in padding
// (height, width) read a line of the pad element or are not written.
// Packs whose blocks (the tile loops inside x) read 16 KiB of
// logical lines or less walk x between the blocks' loops, in memory order.
// Both walk the loops around the transpose in physical order, unpack too:
// short chunk rows (croutons) are then read front to back, with the next
// block of chunks fetched into L2; with long chunk rows (depth32) the
// logical rows are written front to back instead. A position that reads one
// block of at most 256 KiB fetches the next position's block front to back
// meanwhile (kSeqBlock), whatever order it reads its own. Padded rows of 32
// or 64 bytes pack by the same transposes, masked loads (AVX2: blends) over
// the padding pattern.
// Unpack of rows of 64 bytes or more at any byte offset (padded tensors)
// gathers the tensor's lines in a register (AVX-512 VBMI) and streams them.
// Padded rows of 32 or 64 bytes unpack by the same transposes of rows, the
// padding skipped and the rows' last bytes masked, their lines gathered and
// streamed from 8 MiB on (VBMI; with AVX2 a position's run of the tensor
// goes through a stage in the cache and out streamed). The weights' tiles go two chunk columns at
// a time (AVX2 and up): one 64-byte piece of each logical row for two tiles,
// the padded last column by masked loads and stores, pack streamed; an
// unpack's run of rows goes through a stage in L2 and out streamed. Other
// tiles of 2 or 4 rows of 32-byte pieces (crouton2; the tiles of 16- and
// 32-bit elements; the padded and logical-order 32 x 4 byte tiles) are
// interleaved in AVX2 registers, a tile partly padding a 32-byte piece at a
// time through the stack (unpacked past 8 MiB streamed when each tile's piece
// of each row is whole lines); crouton2's tiles go a position's run of pixels at
// a time along the depth, in logical order (walk_tile_runs). Rows of one element whose tensor has a loop of
// logical stride 1 further out (the NCHW layouts) are transposes of planes:
// tiles of 64 bytes by 64 bytes staged and transposed in registers, every
// destination line written whole (streamed past 8 MiB); packs of planes of
// fewer rows or rows not whole tiles take a run of planes as one transpose,
// its logical rows gathered by address; with AVX-512, groups of planes of
// whole tiles go by steps along whole rows and lane transposes through a
// stage (group_lanes).
// Threads (optimized/threads.h) take disjoint ranges of the positions of the
// loops outside the two innermost ones (rows) or outside the tile's plain
// loop (tiles); every position writes its own rows or tiles.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>

#include "core/case_cache.h"
#include "core/htp_notation.h"
#include "layoutcheck/checked.h"
#include "optimized/byte_transpose.h"
#include "optimized/families.h"
#include "optimized/isa.h"
#include "optimized/stream_run.h"
#include "optimized/threads.h"

#if defined(__x86_64__) || defined(__i386__)
// gcc 12 warns inside avx512fintrin.h, whose _mm512_undefined_* helpers read an
// uninitialized variable on purpose (a false positive for every intrinsic using them).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "optimized/head_store.h"
#include "optimized/masked.h"
#include "optimized/plane_transpose.h"
#define LC_HTP_X86 1
#endif

// Complete unrolling of a loop of four over an array of vector registers
// (rows, lines or pieces of a tile). GCC 12 at -O2 left such loops rolled,
// most of all with a branch inside, and then kept the array on the stack:
// each register stored there and loaded back before its own store (what
// that cost the tile columns' and tile pairs' walks on a Zen 4: see
// walk_tile_cols, walk_tile_cols_avx2 and Avx2TilePair).
#define LC_HTP_UNROLL4 _Pragma("GCC unroll 4")

namespace layoutcheck {
namespace {

struct Loop {
  size_t dim = 0;
  uint64_t count = 1;
  uint64_t step = 1;  // along dim
  uint64_t ls = 0;    // logical stride in elements: step * row-major stride of dim
  uint64_t ps = 0;    // physical stride in elements: product of the counts of the loops inside
  bool clipped = false;
};

// The most rows a run of tiles takes (Plan::tile_run).
constexpr uint64_t kMaxRunRows = 16;

struct Plan {
  size_t rank = 0;
  std::vector<uint64_t> extent, padded, lstride, chunk;
  std::vector<Loop> pairs;  // one per pair, for offsets
  std::vector<Loop> loops;  // fused, physical order (pack); innermost has ls == ps == 1
  std::vector<Loop> logical_order;  // the same loops, outer ones by decreasing ls (unpack)
  uint64_t elem = 1, elements = 1;
  // The padding element: `pad` when its bytes are all equal (memset), else
  // the element's bytes repeated.
  uint8_t pad = 0;
  bool pad_uniform = true;
  uint8_t pad_element[8] = {};
  alignas(64) uint8_t pad_line[64] = {};  // pad_element repeated (rows start on element boundaries)
  // Tiles (see make_plan): loops[tile_at] has logical stride 1 and the K
  // physical elements of one of its steps are the loops inside it.
  bool tile = false;
  size_t tile_at = 0;
  uint64_t tile_k = 1;
  std::vector<uint64_t> tile_offset;  // K logical offsets (elements)
  std::vector<uint64_t> tile_delta;   // K x inner loops: coordinate along the loop's dimension
  // The loops the tiles are walked by: p.loops, or with the loops around the
  // tile in logical order (tile_logical; see make_plan).
  std::vector<Loop> tile_order;
  bool tile_logical = false;
  // Chunks placed apart (htp.chunk_table): chunk k of the consecutive form, bytes
  // [k * chunk_bytes, (k + 1) * chunk_bytes), lives at start[k] (or k * stride).
  bool placed = false;
  uint64_t chunk_bytes = 0, stride = 0, size = 0;
  std::vector<uint64_t> start;
  // Unit transposes (see make_plan): rows of 32 or 64 bytes, the middle loop
  // `pair_m` (physical neighbours) and the loop `pair_x` of logical stride one
  // row (logical neighbours); the other loops, outer, in physical order (both
  // ways: unpack then reads the chunks front to back, its lines written whole
  // wherever they are).
  bool pair = false;
  size_t pair_x = 0, pair_m = 0;
  std::vector<Loop> pair_outer;
  // Planes (see make_plan): the innermost loop `plane_r` (rows of a plane,
  // physical stride 1) against `plane_c` (columns, logical stride 1), the
  // other loops around them in physical order.
  bool plane = false;
  size_t plane_r = 0, plane_c = 0;
  std::vector<Loop> plane_outer;
  // The same transpose for unpack of a padded tensor: x the only loop but the
  // row along the row's dimension (so a block's valid bytes are those of its
  // x step), the other loops around it by logical stride (pair_pad_outer) with
  // coordinates tracked; positions in padding are skipped, the middle loop's
  // steps in padding and the bytes past the row's extent are not written.
  bool pair_pad = false;
  std::vector<Loop> pair_pad_outer;
  // Pack by the same transposes: the loops around x in physical order; only
  // when every physical line of the walk is a whole one (x, the middle loop
  // and the outer loops step whole lines).
  bool pair_pad_lines = false;
  std::vector<Loop> pair_pad_pack;
  // 32 x 4 byte tiles whose logical neighbour tile is a step of the loop
  // `tile_pair_x`: two tiles at a time, four whole logical lines against two
  // whole physical lines per tile; the other loops around the tile in
  // physical order (both ways, as for the unit transposes). Padding only
  // along other dimensions than the tile's and x's: a row of the tile is
  // then wholly valid or wholly padding at every step of x.
  bool tile_pair = false;
  size_t tile_pair_x = 0;
  std::vector<Loop> tile_pair_outer;
  // The same loops split at x: those outside it (tile_pair_blocks) and those
  // between it and the tile (tile_pair_inner), physical order kept.
  std::vector<Loop> tile_pair_blocks, tile_pair_inner;
  // 32 x 4 byte tiles in logical chunk order (the weights) whose innermost
  // chunk loop `tile_cols_x` (of p.tile_order) steps one tile row along the
  // tile's dimension, the only one with padding: two chunk columns per pass,
  // one 64-byte piece of each logical row for two tiles. The chunk loops
  // outside x (tile_cols_outer) run as an odometer; at most one loop inside
  // the chunk, tile_cols_in (count 1 when none), runs inside x.
  // tile_cols_lines: every tile starts on a line when the buffer does (pack
  // then streams its lines).
  bool tile_cols = false, tile_cols_lines = false;
  size_t tile_cols_x = 0;
  std::vector<Loop> tile_cols_outer;
  // The same loops in physical order: a staged unpack reads each chunk
  // column front to back.
  std::vector<Loop> tile_cols_outer_phys;
  Loop tile_cols_in;
  // Runs of tiles of 2 rows of 32-byte pieces (crouton2): the tile, the loop
  // inside it and the plain loop around it (`last`) are one physical block of
  // run rows (tile_run_offset: logical offsets, elements; tile_run_delta:
  // their coordinates, rank a row), each a tile's count of elements; the
  // chunk loop `tile_run_x` steps them all along the tile's dimension. The
  // other loops around, by decreasing physical stride, are the walk's
  // odometer, the chunk loop inside them. tile_run_in (when tile_run_has_in):
  // the loop whose blocks fill the rest of a step (crouton2's rows h % 8);
  // a walk of the odometer tile_run_in_outer, the other loops, runs it
  // inside the chunk loop, so that a position's steps are one physical run.
  bool tile_run = false, tile_run_has_in = false;
  size_t tile_run_x = 0;
  std::vector<uint64_t> tile_run_offset, tile_run_delta;
  std::vector<Loop> tile_run_outer, tile_run_in_outer;
  Loop tile_run_in;
};

// The placement of htp.chunk_table. Two chunks of equal length overlap exactly
// when their starts are closer than that length: sorted starts, adjacent gaps.
Status place(const Case& c, Plan* p) {
  uint64_t chunk_elements = 1;
  for (uint64_t e : p->chunk) chunk_elements *= e;
  const uint64_t cb = chunk_elements * p->elem, chunks = p->elements / chunk_elements;
  const uint64_t stride = static_cast<uint64_t>(c.layout.get_int("chunk_stride"));
  const std::string& given = c.layout.get("bases");
  const std::string table = given == kHtpNoBases ? std::string() : given;
  p->chunk_bytes = cb;
  p->stride = cb;
  p->size = p->elements * p->elem;
  if (stride != 0 && !table.empty()) return Status::invalid("chunk_stride and bases both given");
  if (table.empty()) {
    if (stride == 0) return Status();
    if (stride < cb) return Status::invalid("chunk_stride " + std::to_string(stride) + " < chunk bytes " + std::to_string(cb));
    if (stride % p->elem != 0) return Status::invalid("chunk_stride is not a multiple of the element size");
    // The last chunk starts at (chunks - 1) * stride; both factors are below 2^60 here.
    if (chunks - 1 > (kHtpMaxTableBytes - cb) / stride) return Status::invalid("chunks end past 2^60 bytes");
    const uint64_t end = (chunks - 1) * stride + cb;
    p->placed = true;
    p->stride = stride;
    p->size = end;
    return Status();
  }
  LC_ASSIGN_OR_RETURN(p->start, parse_htp_bases(table));
  if (p->start.size() != chunks) return Status::invalid("the chunk table does not give one base per chunk");
  std::vector<uint64_t> sorted = p->start;
  std::sort(sorted.begin(), sorted.end());
  for (uint64_t b : sorted) {
    if (b % p->elem != 0) return Status::invalid("a chunk base is not a multiple of the element size");
  }
  if (sorted.back() > kHtpMaxTableBytes - cb) return Status::invalid("a chunk ends past 2^60 bytes");
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] - sorted[i - 1] < cb) return Status::invalid("two chunks of the table overlap");
  }
  p->placed = true;
  p->size = sorted.back() + cb;
  return Status();
}

Result<Plan> make_plan(const Case& c) {
  const DTypeInfo& info = dtype_info(c.dtype);
  if (!info.logical) return Status::invalid(std::string(info.name) + " is not a logical element type");
  if (info.bits % 8 != 0) return Status::unsupported(std::string(info.name) + ": sub-byte elements are not laid out");
  LC_ASSIGN_OR_RETURN(HtpNotation n, htp_notation_of(c.layout));
  Plan p;
  p.rank = static_cast<size_t>(n.rank);
  if (c.shape.size() != p.rank) {
    return Status::invalid("shape " + clip_input(shape_to_string(c.shape)) + " does not have the layout's rank " +
                           std::to_string(p.rank));
  }
  LC_RETURN_IF_ERROR(element_count(c.shape).status());
  p.elem = info.bits / 8;
  LC_ASSIGN_OR_RETURN(std::vector<uint8_t> pad, htp_pad_element(c.layout, c.dtype));
  std::copy(pad.begin(), pad.end(), p.pad_element);
  if (p.elem != 0) {
    for (size_t i = 0; i < sizeof p.pad_line; ++i) p.pad_line[i] = p.pad_element[i % p.elem];
  }
  p.pad = pad[0];
  p.pad_uniform = std::all_of(pad.begin(), pad.end(), [&](uint8_t b) { return b == pad[0]; });
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
  // The innermost loop is a row: logical stride 1. When instead a loop further
  // out has logical stride 1 (32 depths around 4 columns in R4Crouton4x1Layout,
  // around 2x2 rows and columns in R4Crouton2x2Layout), it and the loops inside
  // it form a tile: a small transpose. Otherwise a row of one element.
  const size_t m = p.loops.size();
  if (m >= 2 && p.loops[m - 1].ls != 1) {
    size_t j = m - 1;  // mutate: equivalent (from m, the loop first re-tests loops[m - 1], known not 1)
    while (j-- > 0 && p.loops[j].ls != 1) {
    }
    uint64_t k = 1;
    for (size_t i = j + 1; j != SIZE_MAX && i < m; ++i) k *= p.loops[i].count;
    if (j != SIZE_MAX && k <= 64 && p.loops[j].count <= 1024) {
      p.tile = true;
      p.tile_at = j;
      p.tile_k = k;
      for (uint64_t e = 0; e < k; ++e) {
        uint64_t rest = e, offset = 0;
        std::vector<uint64_t> digit(m, 0);
        for (size_t i = m; i-- > j + 1;) {
          digit[i] = rest % p.loops[i].count;
          rest /= p.loops[i].count;
          offset += digit[i] * p.loops[i].ls;
        }
        p.tile_offset.push_back(offset);
        for (size_t i = j + 1; i < m; ++i) {
          uint64_t along = 0;
          for (size_t o = j + 1; o < m; ++o) {
            if (p.loops[o].dim == p.loops[i].dim) along += digit[o] * p.loops[o].step;
          }
          p.tile_delta.push_back(along);
        }
      }
    }
  }
  if (!p.tile && (p.loops.empty() || p.loops.back().ls != 1)) {
    Loop row;
    row.dim = p.loops.empty() ? p.rank - 1 : p.loops.back().dim;
    row.ls = 1;
    row.clipped = p.padded[row.dim] != p.extent[row.dim];
    p.loops.push_back(row);
  }
  uint64_t ps = 1;
  for (size_t i = p.loops.size(); i-- > 0;) {
    p.loops[i].ps = ps;
    ps *= p.loops[i].count;
  }
  // Tiles are walked in physical order unless that order's outermost loop has
  // the least logical stride of the loops around the tile (the weights: output
  // channel blocks outermost): then each of its steps would sweep the whole
  // tensor, a few bytes per page, and the loops around the tile run in logical
  // order instead (the tensor read or written front to back, the tiles
  // scattered over the chunks).
  // Only the loops over chunks are reordered: the loops inside a chunk stay
  // inside them in physical order, so each chunk is written (or read) whole,
  // front to back, while the block of the tensor its tiles read stays in the
  // cache for the next chunk along the least-stride loop.
  p.tile_order = p.loops;
  if (p.tile && p.tile_at >= 2) {
    bool least = true;
    for (size_t i = 1; i < p.tile_at; ++i) least = least && p.loops[0].ls < p.loops[i].ls;
    if (least) {
      uint64_t chunk_elements = 1;
      for (uint64_t e : p.chunk) chunk_elements *= e;
      size_t chunk_loops = p.tile_at;
      while (chunk_loops > 1 && p.loops[chunk_loops - 1].ps < chunk_elements) --chunk_loops;
      p.tile_logical = true;
      std::stable_sort(p.tile_order.begin(), p.tile_order.begin() + static_cast<std::ptrdiff_t>(chunk_loops),
                       [](const Loop& x, const Loop& y) { return x.ls > y.ls; });
    }
  }
  // Unpack writes the logical tensor front to back: the same loops, the outer
  // ones ordered by logical stride (any order of a loop nest visits the same
  // (physical, logical) pairs).
  p.logical_order = p.loops;
  std::stable_sort(p.logical_order.begin(), p.logical_order.end() - 1,  // mutate: equivalent (the row loop has the least logical stride and a stable sort keeps it last)
                   [](const Loop& x, const Loop& y) { return x.ls > y.ls; });
  // Rows of one element (no tile, the innermost loop's logical stride more
  // than one) in an unpadded tensor with a loop of logical stride 1 further
  // out (the NCHW layouts): each position of the other loops is a transpose of
  // a plane, physical [column][row] against logical [row][column].
  if (!p.tile && p.padded == p.extent && p.loops.size() >= 3 && p.loops.back().count == 1) {
    const size_t rows = p.loops.size() - 2;
    size_t cols = SIZE_MAX;
    for (size_t i = 0; i < rows; ++i) cols = p.loops[i].ls == 1 ? i : cols;
    if (cols != SIZE_MAX) {
      p.plane = true;
      p.plane_r = rows;
      p.plane_c = cols;
      for (size_t i = 0; i < rows; ++i) {
        if (i != cols) p.plane_outer.push_back(p.loops[i]);
      }
    }
  }
  // Unpadded rows of 32 or 64 bytes whose logical neighbour row is a step of
  // another loop x: a transpose of rows between x and the middle loop m, in
  // 2 x 2 blocks of 32-byte rows (one line on each side) or single 64-byte
  // ones, every line of either side read and written whole.
  if (!p.tile && p.padded == p.extent && p.loops.size() >= 3) {
    const size_t mm = p.loops.size();
    const Loop& row = p.loops[mm - 1];
    const uint64_t unit = row.count * p.elem;
    size_t xi = SIZE_MAX;
    for (size_t i = 0; i + 2 < mm; ++i) xi = p.loops[i].ls == row.count ? i : xi;
    bool ok = (unit == 32 || unit == 64) && xi != SIZE_MAX;
    if (ok && unit == 32) ok = p.loops[xi].count % 2 == 0 && p.loops[mm - 2].count % 2 == 0;
    if (ok) ok = (p.loops[mm - 2].ls * p.elem) % 64 == 0 && (p.loops[xi].ps * p.elem) % 64 == 0;
    for (size_t i = 0; ok && i + 2 < mm; ++i) {
      if (i == xi) continue;
      ok = (p.loops[i].ls * p.elem) % 64 == 0 && (p.loops[i].ps * p.elem) % 64 == 0;
      p.pair_outer.push_back(p.loops[i]);
    }
    if (ok) {
      p.pair = true;
      p.pair_x = xi;
      p.pair_m = mm - 2;
    } else {
      p.pair_outer.clear();
    }
  }
  if (!p.tile && p.padded != p.extent && p.loops.size() >= 3) {
    const size_t mm = p.loops.size();
    const Loop& row = p.loops[mm - 1];
    const uint64_t unit = row.count * p.elem;
    size_t xi = SIZE_MAX;
    for (size_t i = 0; i + 2 < mm; ++i) {
      const Loop& l = p.loops[i];
      if (l.dim == row.dim) xi = xi == SIZE_MAX && l.ls == row.count && l.step == row.count ? i : SIZE_MAX - 1;
    }
    bool ok = (unit == 32 || unit == 64) && xi < mm - 2 && p.loops[mm - 2].dim != row.dim;
    if (ok && unit == 32) ok = p.loops[xi].count % 2 == 0 && p.loops[mm - 2].count % 2 == 0;
    if (ok) {
      p.pair_pad = true;
      p.pair_x = xi;
      p.pair_m = mm - 2;
      for (size_t i = 0; i + 2 < mm; ++i) {
        if (i != xi) p.pair_pad_outer.push_back(p.loops[i]);
      }
      p.pair_pad_pack = p.pair_pad_outer;
      bool lines = (p.loops[xi].ps * p.elem) % 64 == 0 && (unit == 32 || unit == 64);
      for (const Loop& l : p.pair_pad_pack) lines = lines && (l.ps * p.elem) % 64 == 0;
      p.pair_pad_lines = lines;
      std::stable_sort(p.pair_pad_outer.begin(), p.pair_pad_outer.end(),
                       [](const Loop& x, const Loop& y) { return x.ls > y.ls; });
    }
  }
  if (p.tile && p.elem == 1 && p.tile_k == 4 && p.loops[p.tile_at].count == 32) {
    const size_t t_dim = p.loops[p.tile_at].dim;
    size_t xi = SIZE_MAX;
    for (size_t i = 0; i < p.tile_at; ++i) xi = p.loops[i].ls == 32 ? i : xi;
    bool ok = xi != SIZE_MAX && p.loops[xi].count % 2 == 0 && p.loops[xi].ps % 64 == 0 &&
              p.padded[t_dim] == p.extent[t_dim] && p.padded[p.loops[xi].dim] == p.extent[p.loops[xi].dim];
    for (uint64_t o : p.tile_offset) ok = ok && o % 64 == 0;
    for (size_t i = 0; ok && i < p.tile_at; ++i) {
      if (i == xi) continue;
      ok = p.loops[i].ls % 64 == 0 && p.loops[i].ps % 64 == 0;
      p.tile_pair_outer.push_back(p.loops[i]);
      (i < xi ? p.tile_pair_blocks : p.tile_pair_inner).push_back(p.loops[i]);
    }
    if (ok) {
      p.tile_pair = true;
      p.tile_pair_x = xi;
    } else {
      p.tile_pair_outer.clear();
      p.tile_pair_blocks.clear();
      p.tile_pair_inner.clear();
    }
  }
  if (p.tile && p.tile_logical && p.elem == 1 && p.tile_k == 4 && p.loops[p.tile_at].count == 32) {
    const size_t t_dim = p.loops[p.tile_at].dim;
    size_t xi = SIZE_MAX;
    for (size_t i = 0; i < p.tile_at; ++i) {
      const Loop& l = p.tile_order[i];
      if (l.dim == t_dim) xi = xi == SIZE_MAX && l.ls == 32 && l.step == 32 ? i : SIZE_MAX - 1;
    }
    bool ok = xi < p.tile_at && p.tile_at - xi <= 2;
    for (size_t i = p.tile_at + 1; ok && i < p.loops.size(); ++i) ok = p.loops[i].dim != t_dim;
    for (size_t d = 0; ok && d < p.rank; ++d) ok = d == t_dim || p.padded[d] == p.extent[d];
    if (ok) {
      p.tile_cols = true;
      p.tile_cols_x = xi;
      p.tile_cols_outer.assign(p.tile_order.begin(), p.tile_order.begin() + static_cast<std::ptrdiff_t>(xi));
      p.tile_cols_outer_phys = p.tile_cols_outer;
      std::stable_sort(p.tile_cols_outer_phys.begin(), p.tile_cols_outer_phys.end(),
                       [](const Loop& x, const Loop& y) { return x.ps > y.ps; });
      if (xi + 1 < p.tile_at) p.tile_cols_in = p.tile_order[xi + 1];
      bool lines = p.tile_order[xi].ps % 64 == 0 && (p.tile_cols_in.count == 1 || p.tile_cols_in.ps % 64 == 0);
      for (const Loop& l : p.tile_cols_outer) lines = lines && l.ps % 64 == 0;
      p.tile_cols_lines = lines;
    }
  }
  if (p.tile && !p.tile_logical && p.tile_k == 2 && p.tile_at >= 2 &&
      p.loops[p.tile_at].count * p.elem % 32 == 0) {
    const Loop tl = p.loops[p.tile_at], last = p.loops[p.tile_at - 1];
    const size_t in_loops = p.loops.size() - p.tile_at - 1;
    size_t xi = SIZE_MAX;
    for (size_t i = 0; i + 1 < p.tile_at; ++i) xi = p.loops[i].dim == tl.dim && p.loops[i].step == tl.count ? i : xi;
    bool ok = xi != SIZE_MAX && last.dim != tl.dim && last.count * p.tile_k <= kMaxRunRows;
    for (size_t i = p.tile_at + 1; ok && i < p.loops.size(); ++i) ok = p.loops[i].dim != tl.dim;
    if (ok) {
      p.tile_run = true;
      p.tile_run_x = xi;
      for (uint64_t s = 0; s < last.count; ++s) {
        for (uint64_t k = 0; k < p.tile_k; ++k) {
          p.tile_run_offset.push_back(s * last.ls + p.tile_offset[k]);
          for (size_t d = 0; d < p.rank; ++d) {
            uint64_t along = d == last.dim ? s * last.step : 0;
            for (size_t i = 0; i < in_loops; ++i) {  // tile_delta: the sum over the inner loops along d
              if (p.loops[p.tile_at + 1 + i].dim != d) continue;
              along += p.tile_delta[k * in_loops + i];
              break;
            }
            p.tile_run_delta.push_back(along);
          }
        }
      }
      for (size_t i = 0; i + 1 < p.tile_at; ++i) {
        if (i != xi) p.tile_run_outer.push_back(p.loops[i]);
      }
      std::stable_sort(p.tile_run_outer.begin(), p.tile_run_outer.end(),
                       [](const Loop& x, const Loop& y) { return x.ps > y.ps; });
      const uint64_t block = last.count * p.tile_k * tl.count;  // elements of a step's run of tiles
      for (auto it = p.tile_run_outer.begin(); it != p.tile_run_outer.end(); ++it) {
        if (it->ps == block && it->ps * it->count == p.loops[xi].ps && it->dim != tl.dim) {
          p.tile_run_has_in = true;
          p.tile_run_in = *it;
          p.tile_run_in_outer = p.tile_run_outer;
          p.tile_run_in_outer.erase(p.tile_run_in_outer.begin() + (it - p.tile_run_outer.begin()));
          break;
        }
      }
    }
  }
  if (c.layout.name == "htp.chunk_table") {
    LC_RETURN_IF_ERROR(place(c, &p));
  } else {
    p.size = p.elements * p.elem;
  }
  return p;
}

// ---- row copies ---------------------------------------------------------------

// Large outputs bypass the cache with non-temporal 16-byte stores (SSE2, part
// of x86-64), as memcpy does for large copies.
constexpr uint64_t kStreamBytes = uint64_t{8} << 20;
constexpr uintptr_t kPrefetchBytes = 256;

// The padding element repeated over 64 bytes (made with the plan: a call's setup is no loop).
inline void pad_pattern(const Plan& p, uint8_t* out) { std::memcpy(out, p.pad_line, sizeof p.pad_line); }

// Row operations of the portable path (and of the AVX2 one, compiled in its
// target): pack writes a whole physical row, its first `valid` bytes from the
// tensor and the rest padding; a row partly padding is assembled in a buffer
// 64 bytes at a time, so every physical byte is written by one whole store.
// Unpack copies the valid bytes. kStream: 16-byte non-temporal stores (the
// caller checked that every row starts 16-byte aligned and has whole 16-byte
// pieces).
template <bool kStream>
struct MemRows {
  static constexpr bool kStreams = kStream;
  alignas(16) uint8_t pad[64];
  explicit MemRows(const Plan& p) { pad_pattern(p, pad); }
  static inline __attribute__((always_inline)) void put(uint8_t* dst, const uint8_t* src, size_t n) {
#ifdef LC_HTP_X86
    if (kStream) {
      for (size_t i = 0; i < n; i += 16) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
      }
      return;
    }
#endif
    std::memcpy(dst, src, n);
  }
  template <size_t kRowBytes>
  inline __attribute__((always_inline)) void pack(uint8_t* dst, const uint8_t* src, size_t valid, size_t row_bytes) const {
    if (kRowBytes != 0) row_bytes = kRowBytes;
    if (valid == row_bytes) return put(dst, src, row_bytes);
    for (size_t at = 0; at < row_bytes; at += 64) {
      const size_t n = std::min<size_t>(64, row_bytes - at);
      const size_t v = valid > at ? std::min(n, valid - at) : 0;
      alignas(16) uint8_t buf[64];
      std::memcpy(buf, pad, 64);
      std::memcpy(buf, src + at, v);
      put(dst + at, buf, n);
    }
  }
  template <size_t kRowBytes>
  inline __attribute__((always_inline)) void unpack(uint8_t* dst, const uint8_t* src, size_t valid) const {
    if (kRowBytes != 0 && valid == kRowBytes) return put(dst, src, kRowBytes);
    put(dst, src, valid);
  }
  void finish() const {
#ifdef LC_HTP_X86
    if (kStream) _mm_sfence();
#endif
  }
};

#ifdef LC_HTP_X86
#define LC_HTP_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

// Row operations with AVX-512: a row partly padding is a masked load over the
// padding pattern (bytes past the valid ones are not read) and one whole
// store; unpack's partial rows are masked stores.
template <bool kStream>
struct Avx512Rows {
  static constexpr bool kStreams = kStream;
  __m512i pad;
  LC_HTP_AVX512 explicit Avx512Rows(const Plan& p) {
    pad = _mm512_load_si512(p.pad_line);
  }
  static LC_HTP_AVX512 inline __mmask64 head(size_t n) { return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1; }
  // n <= 64 bytes of v to dst; streamed in 16-byte pieces (n a multiple of 16 then).
  static LC_HTP_AVX512 inline void put(uint8_t* dst, __m512i v, size_t n) {
    if (kStream) {
      __m128i* d = reinterpret_cast<__m128i*>(dst);
      _mm_stream_si128(d, _mm512_castsi512_si128(v));
      if (n > 16) _mm_stream_si128(d + 1, _mm512_extracti32x4_epi32(v, 1));
      if (n > 32) _mm_stream_si128(d + 2, _mm512_extracti32x4_epi32(v, 2));
      if (n > 48) _mm_stream_si128(d + 3, _mm512_extracti32x4_epi32(v, 3));
    } else if (n == 64) {
      _mm512_storeu_si512(dst, v);
    } else if (n == 32) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm512_castsi512_si256(v));
    } else {
      masked::_mm512_mask_storeu_epi8(dst, head(n), v);
    }
  }
  template <size_t kRowBytes>
  LC_HTP_AVX512 inline void pack(uint8_t* dst, const uint8_t* src, size_t valid, size_t row_bytes) const {
    if (kRowBytes == 32) {
      const __m256i v = valid == 32 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src))
                                    : masked::_mm256_mask_loadu_epi8(_mm512_castsi512_si256(pad), static_cast<__mmask32>(head(valid)), src);
      if (kStream) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst), _mm256_castsi256_si128(v));
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst) + 1, _mm256_extracti128_si256(v, 1));
      } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), v);
      }
      return;
    }
    if (kRowBytes != 0) row_bytes = kRowBytes;
    for (size_t at = 0; at < row_bytes; at += 64) {
      const size_t n = std::min<size_t>(64, row_bytes - at);
      const size_t v = valid > at ? std::min(n, valid - at) : 0;
      put(dst + at, v == 64 ? _mm512_loadu_si512(src + at) : masked::_mm512_mask_loadu_epi8(pad, head(v), src + at), n);
    }
  }
  template <size_t kRowBytes>
  LC_HTP_AVX512 inline void unpack(uint8_t* dst, const uint8_t* src, size_t valid) const {
    if (kRowBytes == 32 && valid == 32) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
      if (kStream) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst), _mm256_castsi256_si128(v));
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst) + 1, _mm256_extracti128_si256(v, 1));
      } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), v);
      }
      return;
    }
    for (size_t at = 0; at < valid; at += 64) {
      const size_t n = std::min<size_t>(64, valid - at);
      // Physical rows are whole: the masked load only keeps the read inside the row.
      put(dst + at, masked::_mm512_maskz_loadu_epi8(head(n), src + at), n);
    }
  }
  void finish() const {
    if (kStream) _mm_sfence();
  }
};
#endif

// Advances the odometer of the first `outer` loops (the last moves fastest),
// keeping the coordinate and the logical and physical element offsets in step.
// False once every position has been visited.
inline __attribute__((always_inline)) bool advance(const std::vector<Loop>& loops, size_t outer,
                                                   std::vector<uint64_t>* value, std::vector<uint64_t>* x,
                                                   uint64_t* lbase, uint64_t* pbase) {
  for (size_t i = outer; i-- > 0;) {
    const Loop& l = loops[i];
    if (++(*value)[i] < l.count) {
      (*x)[l.dim] += l.step;
      *lbase += l.ls;
      *pbase += l.ps;
      return true;
    }
    (*value)[i] = 0;
    (*x)[l.dim] -= l.step * (l.count - 1);
    *lbase -= l.ls * (l.count - 1);
    *pbase -= l.ps * (l.count - 1);
  }
  return false;
}

// The number of positions of the odometer of the first `outer` loops.
inline uint64_t positions(const std::vector<Loop>& loops, size_t outer) {
  uint64_t n = 1;
  for (size_t i = 0; i < outer; ++i) n *= loops[i].count;
  return n;
}

// Sets the odometer of the first `outer` loops (all at 0) to position `pos`
// of positions(loops, outer), the last loop moving fastest, with the
// coordinate (when given) and the element offsets in step.
inline void seek(const std::vector<Loop>& loops, size_t outer, uint64_t pos, std::vector<uint64_t>* value,
                 std::vector<uint64_t>* x, uint64_t* lbase, uint64_t* pbase) {
  for (size_t i = outer; i-- > 0;) {
    const Loop& l = loops[i];
    const uint64_t v = pos % l.count;
    pos /= l.count;
    (*value)[i] = v;
    if (x != nullptr) (*x)[l.dim] += v * l.step;
    *lbase += v * l.ls;
    *pbase += v * l.ps;
  }
}

// Walks `loops` (the innermost a row with logical and physical stride 1):
// the two innermost loops run as plain loops, the others as an odometer.
// Without padding every row is whole; otherwise coordinates are tracked where
// they can fall into padding (clipped dimensions), and a row copies its valid
// head and, when packing, pads its tail. Only the odometer's positions
// [begin, end) run (positions(loops, m - 2) in all): one thread's range.
template <bool kPack, size_t kRowBytes, class Ops>
inline __attribute__((always_inline)) void walk_body(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical,
                                                    uint8_t* phys, uint64_t begin, uint64_t end, const Ops& ops) {
  const size_t m = loops.size();
  const Loop& row = loops[m - 1];
  Loop unit;  // count 1: a stand-in middle loop when there is only the row
  unit.dim = row.dim;
  const Loop& mid = m >= 2 ? loops[m - 2] : unit;
  const size_t outer_loops = m >= 2 ? m - 2 : 0;
  const size_t e = p.elem;
  const size_t row_bytes = kRowBytes != 0 ? kRowBytes : row.count * e;
  const size_t a = row.dim, b = mid.dim;
  const uint64_t xa_limit = p.extent[a];
  const bool dense = p.padded == p.extent;
  // Unpack reads each row from another chunk: the lines a few rows on are
  // fetched ahead (the hardware sees no stream in these reads).
  constexpr size_t kRowAhead = 256;
  // Pack reads a chunk's rows from a block of the tensor that the next chunks
  // (the outer loop of least logical stride) read again from the cache; the
  // loop just outside that one moves to new lines: each row fetches its
  // counterpart there.
  size_t pack_ahead = 0;
  if (kPack && outer_loops >= 2) {
    size_t least = 0;
    for (size_t i = 1; i < outer_loops; ++i) least = loops[i].ls < loops[least].ls ? i : least;
    if (least >= 1) pack_ahead = loops[least - 1].ls * e;
  }

  std::vector<uint64_t> value(outer_loops, 0), x(p.rank, 0);
  uint64_t lbase = 0, pbase = 0;  // element offsets of the current position
  seek(loops, outer_loops, begin, &value, &x, &lbase, &pbase);
  for (uint64_t left = end - begin; left != 0; --left) {
    // Dimensions other than a and b are fixed during the two inner loops. The
    // first `full` steps of the middle loop are whole rows (all of them
    // without padding); the others are tested one by one.
    uint64_t full = mid.count;
    bool others_ok = true;
    if (!dense) {
      for (size_t d = 0; d < p.rank; ++d) {
        others_ok &= d == a || d == b || p.padded[d] == p.extent[d] || x[d] < p.extent[d];
      }
      full = 0;
      if (others_ok && a == b) {
        // One dimension: step `it` is whole when x + it * step + row.count <= extent.
        if (!row.clipped) full = mid.count;
        else if (x[a] + row.count <= xa_limit) full = std::min<uint64_t>(mid.count, (xa_limit - x[a] - row.count) / mid.step + 1);
      } else if (others_ok && (!row.clipped || x[a] + row.count <= xa_limit)) {
        if (!mid.clipped) full = mid.count;
        else if (x[b] < p.extent[b]) full = std::min<uint64_t>(mid.count, (p.extent[b] - x[b] - 1) / mid.step + 1);
      }
    }
    {
      uint8_t* lg = logical + lbase * e;
      uint8_t* ph = phys + pbase * e;
      const size_t lstep = mid.ls * e, pstep = mid.ps * e;
      for (uint64_t it = 0; it < full; ++it, lg += lstep, ph += pstep) {
        if (kPack) {
          if (pack_ahead != 0) __builtin_prefetch(lg + pack_ahead);
          else if (Ops::kStreams) __builtin_prefetch(lg + kPrefetchBytes);
          ops.template pack<kRowBytes>(ph, lg, row_bytes, row_bytes);
        } else {
          if (kRowAhead) __builtin_prefetch(ph + kRowAhead);
          ops.template unpack<kRowBytes>(lg, ph, row_bytes);
        }
      }
    }
    uint64_t lo = lbase + full * mid.ls, po = pbase + full * mid.ps, xb = x[b] + full * mid.step;
    for (uint64_t it = full; it < mid.count; ++it, xb += mid.step, lo += mid.ls, po += mid.ps) {
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
      uint8_t* dst = phys + po * e;
      // Padding rows read nothing: their logical offset may lie past the tensor.
      uint8_t* lg = valid != 0 ? logical + lo * e : logical;
      if (kPack) {
        if (pack_ahead != 0 && valid != 0) __builtin_prefetch(lg + pack_ahead);
        else if (Ops::kStreams && valid != 0) __builtin_prefetch(lg + kPrefetchBytes);
        ops.template pack<kRowBytes>(dst, lg, valid * e, row_bytes);
      } else if (valid != 0) {
        if (kRowAhead) __builtin_prefetch(dst + kRowAhead);
        ops.template unpack<kRowBytes>(lg, dst, valid * e);
      }
    }
    if (left > 1) advance(loops, outer_loops, &value, &x, &lbase, &pbase);
  }
  ops.finish();
}

template <bool kPack, size_t kRowBytes, bool kStream>
void walk_portable(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical, uint8_t* phys, uint64_t begin,
                   uint64_t end) {
  const MemRows<kStream> ops(p);
  walk_body<kPack, kRowBytes>(p, loops, logical, phys, begin, end, ops);
}

#ifdef LC_HTP_X86
// The same walk compiled for AVX2: whole 32- and 64-byte rows become single
// 256-bit loads and stores.
template <bool kPack, size_t kRowBytes, bool kStream>
__attribute__((target("avx2"))) void walk_avx2(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical,
                                               uint8_t* phys, uint64_t begin, uint64_t end) {
  const MemRows<kStream> ops(p);
  walk_body<kPack, kRowBytes>(p, loops, logical, phys, begin, end, ops);
}
// And for AVX-512: rows partly padding without a buffer.
template <bool kPack, size_t kRowBytes, bool kStream>
LC_HTP_AVX512 void walk_avx512(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical, uint8_t* phys,
                               uint64_t begin, uint64_t end) {
  const Avx512Rows<kStream> ops(p);
  walk_body<kPack, kRowBytes>(p, loops, logical, phys, begin, end, ops);
}
bool has_avx2() { return isa_at_least(Isa::kAvx2); }
bool has_avx512() { return isa_at_least(Isa::kAvx512); }

#define LC_HTP_AVX512_VBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")))
bool has_avx512_vbmi() { return isa_at_least(Isa::kAvx512Vbmi); }

// Unpack whose rows land at any byte but one after the other (the walk in
// logical order writes the tensor front to back): the bytes are gathered in
// a register, shifted into place with byte permutes, and each line is stored
// whole, non-temporally, once complete. The first and the last line of a walk
// (shared with a neighbouring thread's range) are masked ordinary stores. A
// row that does not continue the last one flushes the line and starts anew.
struct Avx512SeqRows : Avx512Rows<false> {
  mutable __m512i acc;
  mutable uint8_t* line = nullptr;  // the line being gathered
  mutable uint8_t* cursor = nullptr;  // where the next row must start
  mutable size_t lo = 0;              // first byte of the line this walk writes
  __m512i iota;
  LC_HTP_AVX512_VBMI explicit Avx512SeqRows(const Plan& p) : Avx512Rows<false>(p) {
    alignas(64) uint8_t b[64];
    for (int i = 0; i < 64; ++i) b[i] = static_cast<uint8_t>(i);
    iota = _mm512_load_si512(b);
    acc = _mm512_setzero_si512();
  }
  LC_HTP_AVX512_VBMI inline void flush() const {
    const size_t fill = static_cast<size_t>(cursor - line);
    if (fill > lo) masked::_mm512_mask_storeu_epi8(line, head(fill) & ~head(lo), acc);
  }
  template <size_t kRowBytes>
  LC_HTP_AVX512_VBMI inline void unpack(uint8_t* dst, const uint8_t* src,
                                                                      size_t valid) const {
    if (dst != cursor) {
      if (cursor != nullptr) flush();
      line = reinterpret_cast<uint8_t*>(reinterpret_cast<uintptr_t>(dst) & ~uintptr_t{63});
      lo = static_cast<size_t>(dst - line);
    }
    size_t fill = static_cast<size_t>(dst - line);
    for (size_t at = 0; at < valid; at += 64) {
      const size_t n = std::min<size_t>(64, valid - at);
      gather(masked::_mm512_maskz_loadu_epi8(head(n), src + at), n, &fill);
    }
    cursor = dst + valid;
  }
  // The next n <= 64 bytes of the row, v's first ones; `fill` bytes of the line are gathered.
  LC_HTP_AVX512_VBMI inline void gather(__m512i v, size_t n, size_t* fill_at) const {
    size_t fill = *fill_at;
    {
      const __m512i shift = _mm512_set1_epi8(static_cast<char>(fill));
      // Bytes fill.. of the line: v's bytes from 0; the rest of v: the next line.
      acc = _mm512_mask_permutexvar_epi8(acc, ~head(fill), _mm512_sub_epi8(iota, shift), v);
      if (fill + n >= 64) {
        if (lo == 0) _mm512_stream_si512(reinterpret_cast<__m512i*>(line), acc);
        else masked::_mm512_mask_storeu_epi8(line, ~head(lo), acc);
        lo = 0;
        line += 64;
        acc = _mm512_permutexvar_epi8(_mm512_add_epi8(iota, _mm512_set1_epi8(static_cast<char>(64 - fill))), v);
        fill = fill + n - 64;
      } else {
        fill += n;
      }
    }
    *fill_at = fill;
  }
  LC_HTP_AVX512_VBMI inline void finish() const {
    if (cursor != nullptr) flush();
    _mm_sfence();
  }
};

template <size_t kRowBytes>
LC_HTP_AVX512_VBMI __attribute__((flatten)) void walk_seq_unpack(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical, uint8_t* phys,
                                        uint64_t begin, uint64_t end) {
  const Avx512SeqRows ops(p);
  walk_body<false, kRowBytes>(p, loops, logical, phys, begin, end, ops);
}
#endif

// A walk of the odometer positions [begin, end) of its loops (one thread's range).
using WalkFn = void (*)(const Plan&, const std::vector<Loop>&, uint8_t*, uint8_t*, uint64_t, uint64_t);

template <bool kPack, size_t kRowBytes, bool kStream>
WalkFn walk_rows() {
#ifdef LC_HTP_X86
  if (has_avx512()) return &walk_avx512<kPack, kRowBytes, kStream>;
  if (has_avx2()) return &walk_avx2<kPack, kRowBytes, kStream>;
#endif
  return &walk_portable<kPack, kRowBytes, kStream>;
}

// Streaming needs every row written to start 16-byte aligned and be whole
// 16-byte pieces: physical rows start at multiples of the row length; logical
// ones (unpack) at the loops' logical strides, and must not be cut by padding
// (a partly written line would leave the write-combining buffer half full).
bool can_stream(const Plan& p, bool pack, const uint8_t* logical, const uint8_t* phys) {
#ifdef LC_HTP_X86
  if (p.elements * p.elem < kStreamBytes) return false;
  const Loop& row = p.loops.back();
  if ((row.count * p.elem) % 16 != 0) return false;
  if (pack) return (reinterpret_cast<uintptr_t>(phys) & 15) == 0;
  if (row.clipped || (reinterpret_cast<uintptr_t>(logical) & 15) != 0) return false;
  for (const Loop& l : p.loops) {
    if ((l.ls * p.elem) % 16 != 0 && &l != &row) return false;
  }
  return true;
#else
  (void)p, (void)pack, (void)logical, (void)phys;
  return false;
#endif
}

// Unpacking whole tiles (wide_tiles_walk), each tile writes a piece of each
// of its rows; streamed when those pieces are whole lines: no padding, the
// logical buffer on a line and every loop's logical step whole lines
// (crouton4x1 fp16 1 x 256 x 256 x 512 on a Zen 5, pinned, alternating, of
// memcpy: 0.57-0.66 -> 0.72-0.80; each tile's four 64-byte lines 1 KiB
// apart went through the cache, read before they were written).
bool can_stream_tile_rows(const Plan& p, const uint8_t* logical) {
  if (p.elements * p.elem < kStreamBytes || p.padded != p.extent) return false;
  if ((reinterpret_cast<uintptr_t>(logical) & 63) != 0) return false;
  for (size_t i = 0; i < p.loops.size(); ++i) {
    const uint64_t bytes = (i == p.tile_at ? p.loops[i].count : p.loops[i].ls) * p.elem;
    if (bytes % 64 != 0) return false;
  }
  return true;
}

template <bool kPack, size_t kRowBytes>
WalkFn walk_sized(const Plan& p, const uint8_t* logical, const uint8_t* phys) {
  if (can_stream(p, kPack, logical, phys)) return walk_rows<kPack, kRowBytes, true>();
#ifdef LC_HTP_X86
  // (Rows of 64 bytes or more: shorter ones end lines at irregular places,
  // and the branch that stores a line mispredicts more than streaming gains.)
  if (!kPack && p.elements * p.elem >= kStreamBytes && p.loops.back().count * p.elem >= 64 && has_avx512_vbmi()) {
    return &walk_seq_unpack<kRowBytes>;
  }
#endif
  return walk_rows<kPack, kRowBytes, false>();
}

// ---- unit transposes ---------------------------------------------------------------

#ifdef LC_HTP_X86
template <bool kStream>
LC_HTP_AVX512 inline void store_line(uint8_t* at, __m512i v) {
  if (kStream) _mm512_stream_si512(reinterpret_cast<__m512i*>(at), v);
  else _mm512_store_si512(at, v);
}

// One strided pass of 2 x 2 blocks (32-byte rows: two lines in, their 256-bit
// halves exchanged, two lines out) or of single lines (64-byte rows): `outer`
// steps of (so, dso) bytes, each `inner` steps of (si, di); a block reads the
// lines at s and s + sb and writes those at d and d + db. The next lines of
// the read rows are fetched `ahead` bytes on (into L1) and, when `next` is
// not 0, those of the next position `next` bytes on (into L2); when `seq` is
// not null, as many lines from `seq` on, front to back, as the pass reads.
template <bool kStream, bool kHalf>
LC_HTP_AVX512 void pair_lines_avx512(const uint8_t* s, uint8_t* d, uint64_t outer, uint64_t so, uint64_t dso,
                                     uint64_t inner, uint64_t si, uint64_t di, uint64_t sb, uint64_t db,
                                     uint64_t ahead, uint64_t next, const uint8_t* seq) {
  for (uint64_t o = 0; o < outer; ++o, s += so, d += dso) {
    const uint8_t* sp = s;
    uint8_t* dp = d;
    for (uint64_t i = 0; i < inner; ++i, sp += si, dp += di) {
      if (seq != nullptr) {
        _mm_prefetch(reinterpret_cast<const char*>(seq), _MM_HINT_T0);
        if (kHalf) _mm_prefetch(reinterpret_cast<const char*>(seq + 64), _MM_HINT_T0);
        seq += kHalf ? 128 : 64;
      }
      _mm_prefetch(reinterpret_cast<const char*>(sp + ahead), _MM_HINT_T0);
      if (next != 0) _mm_prefetch(reinterpret_cast<const char*>(sp + next), _MM_HINT_T1);
      const __m512i a = _mm512_load_si512(sp);
      if (kHalf) {
        _mm_prefetch(reinterpret_cast<const char*>(sp + sb + ahead), _MM_HINT_T0);
        if (next != 0) _mm_prefetch(reinterpret_cast<const char*>(sp + sb + next), _MM_HINT_T1);
        const __m512i b = _mm512_load_si512(sp + sb);
        store_line<kStream>(dp, _mm512_shuffle_i64x2(a, b, 0x44));
        store_line<kStream>(dp + db, _mm512_shuffle_i64x2(a, b, 0xEE));
      } else {
        store_line<kStream>(dp, a);
      }
    }
  }
}

// The same with AVX2: a line is two 256-bit halves, so a 2 x 2 block needs
// no exchange, only the halves stored to the other line (measured on a Zen 5
// capped at AVX2, best of 7, 1 x 256 x 256 x C, pack / unpack, against the
// rows' walk: depth32 uint8 0.52 / 0.54 of memcpy -> 0.98 / 0.84, fp16 0.60
// / 0.75 -> 1.22 / 0.76; crouton uint8 0.51 / 0.62 -> 0.94 / 0.92, fp16 0.64
// / 0.65 -> 1.05 / 0.89).
template <bool kStream>
__attribute__((target("avx2"), always_inline)) inline void store_line_avx2(uint8_t* at, __m256i lo, __m256i hi) {
  if (kStream) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(at), lo);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(at + 32), hi);
  } else {
    _mm256_store_si256(reinterpret_cast<__m256i*>(at), lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(at + 32), hi);
  }
}

__attribute__((target("avx2"), always_inline)) inline __m256i load_half(const uint8_t* at) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(at));
}

template <bool kStream, bool kHalf>
__attribute__((target("avx2"))) void pair_lines_avx2(const uint8_t* s, uint8_t* d, uint64_t outer, uint64_t so,
                                                     uint64_t dso, uint64_t inner, uint64_t si, uint64_t di,
                                                     uint64_t sb, uint64_t db, uint64_t ahead, uint64_t next,
                                                     const uint8_t* seq) {
  for (uint64_t o = 0; o < outer; ++o, s += so, d += dso) {
    const uint8_t* sp = s;
    uint8_t* dp = d;
    for (uint64_t i = 0; i < inner; ++i, sp += si, dp += di) {
      if (seq != nullptr) {
        _mm_prefetch(reinterpret_cast<const char*>(seq), _MM_HINT_T0);
        if (kHalf) _mm_prefetch(reinterpret_cast<const char*>(seq + 64), _MM_HINT_T0);
        seq += kHalf ? 128 : 64;
      }
      _mm_prefetch(reinterpret_cast<const char*>(sp + ahead), _MM_HINT_T0);
      if (next != 0) _mm_prefetch(reinterpret_cast<const char*>(sp + next), _MM_HINT_T1);
      if (kHalf) {
        _mm_prefetch(reinterpret_cast<const char*>(sp + sb + ahead), _MM_HINT_T0);
        if (next != 0) _mm_prefetch(reinterpret_cast<const char*>(sp + sb + next), _MM_HINT_T1);
        store_line_avx2<kStream>(dp, load_half(sp), load_half(sp + sb));
        store_line_avx2<kStream>(dp + db, load_half(sp + 32), load_half(sp + sb + 32));
      } else {
        store_line_avx2<kStream>(dp, load_half(sp), load_half(sp + 32));
      }
    }
  }
}

// One position of the outer loops: x rows by m rows of `unit` bytes, physical
// [x][m] against logical [m][x], by the lines' loops above. Pack walks x
// outside m (the physical rows written front to back) or, by_rows, m outside x
// (the logical rows read front to back). Unpack of short rows of x (at most
// kShortRow bytes: croutons) walks x outside m, each row of x read whole, and
// fetches the next position; longer rows (depth32) m outside x: the logical
// rows written front to back, a line of each row of x at a time, each row of x
// fetched a few lines ahead. Measured on a Zen 4 with 1 x 256 x 256 x C
// (medians of 7 runs): depth32 fp16 1.52 of memcpy and uint8 (pairs of 32-byte
// rows) 1.19, against 1.01 and 0.98 with the rows of x read in blocks of 1 KiB,
// x outside m per block; croutons by logical rows: 0.74 against 1.21.
constexpr uint64_t kShortRow = 1024;

// A position whose read bytes are one block of at most kSeqBlock bytes
// fetches the next position's block front to back while it transposes its
// own from the cache: memory then sees one read stream, as in a copy, in
// whatever order the transpose takes the lines. Measured on a Zen 5 with
// 1 x 256 x 256 x C (64 MiB, a block of 256 KiB per row of pixels), ratios
// to memcpy against the strided fetches alone: depth32 uint8 pack 1.03-1.13
// against 0.83, unpack 1.13-1.19 against 0.85; fp16 unpack 1.01-1.07
// against 0.81-0.88; crouton uint8 pack 1.09 against 0.98.
constexpr uint64_t kSeqBlock = uint64_t{256} << 10;

// pair_block and walk_pairs are compiled for the baseline, the lines' loops
// for AVX-512 or (kAvx512 false) AVX2.
template <bool kPack, bool kStream, bool kHalf, bool kAvx512>
inline void pair_block(const uint8_t* src, uint8_t* dst, uint64_t x_count, uint64_t m_count, uint64_t x_ps,
                       uint64_t m_ls, uint64_t next, bool by_rows, const uint8_t* seq) {
  constexpr auto pair_lines = kAvx512 ? &pair_lines_avx512<kStream, kHalf> : &pair_lines_avx2<kStream, kHalf>;
  constexpr uint64_t step = kHalf ? 2 : 1;
  // Along the outer loop of the two, the next line of each read row.
  constexpr uint64_t kAhead = 256;
  const uint64_t xs = x_count / step, ms = m_count / step;
  if (kPack) {
    if (by_rows) {
      pair_lines(src, dst, ms, step * m_ls, 64, xs, 64, step * x_ps, m_ls, x_ps, kAhead, 0, seq);
    } else {
      pair_lines(src, dst, xs, 64, step * x_ps, ms, step * m_ls, 64, m_ls, x_ps, kAhead, next, seq);
    }
    return;
  }
  if (ms * 64 <= kShortRow) {
    pair_lines(src, dst, xs, step * x_ps, 64, ms, 64, step * m_ls, x_ps, m_ls, ms * 64, next, seq);
  } else {
    pair_lines(src, dst, ms, 64, step * m_ls, xs, step * x_ps, 64, x_ps, m_ls, kAhead, 0, seq);
  }
}

// The outer loops' positions [begin, end) (`loops`: p.pair_outer), each a
// pair_block.
template <bool kPack, bool kStream, bool kHalf, bool kAvx512>
void walk_pairs(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical, uint8_t* phys, uint64_t begin,
                uint64_t end) {
  const Loop& xl = p.loops[p.pair_x];
  const Loop& ml = p.loops[p.pair_m];
  const uint64_t e = p.elem, x_ps = xl.ps * e, m_ls = ml.ls * e;
  std::vector<uint64_t> value(loops.size(), 0), x(p.rank, 0);
  uint64_t lbase = 0, pbase = 0;
  // The rows the next position reads, one step of the innermost outer loop on
  // (past the end of a run of it, or the last position, the fetches are wasted).
  // Pack of 64-byte rows reads the logical rows one after the other (the
  // physical lines written scattered, each whole) when the runs along m are
  // the longer ones. Not for 32-byte rows, whose 2 x 2 blocks write each
  // line of a pair of rows to a different run: measured on a Zen 4 with
  // depth32 uint8 1 x 256 x 256 x 1024, 0.80-0.91 of memcpy by rows, 1.33 by
  // physical lines (fp16, 64-byte rows: 2.0 by rows, 1.3 by lines).
  const bool by_rows = kPack && !kHalf && ml.count > xl.count;
  // Unpack: the innermost outer loop whose step moves past the chunks a
  // position reads (the inner ones read the rest of those chunks).
  uint64_t next = loops.empty() ? 0 : (kPack ? loops.back().ls : loops.back().ps) * e;
  if (!kPack) {
    next = 0;
    for (size_t i = loops.size(); i-- > 0 && next == 0;) {
      if (loops[i].ps * e >= xl.count * x_ps) next = loops[i].ps * e;
    }
  }
  const uint64_t unit = kHalf ? 32 : 64;
  const bool contiguous = kPack ? m_ls == xl.count * unit : x_ps == ml.count * unit;
  const bool seq = contiguous && xl.count * ml.count * unit <= kSeqBlock;
  seek(loops, loops.size(), begin, &value, nullptr, &lbase, &pbase);
  for (uint64_t left = end - begin; left != 0; --left) {
    const uint64_t cl = lbase, cp = pbase;
    if (left > 1) advance(loops, loops.size(), &value, &x, &lbase, &pbase);
    const uint8_t* nx = !seq || left == 1 ? nullptr : kPack ? logical + lbase * e : phys + pbase * e;
    if (kPack) pair_block<true, kStream, kHalf, kAvx512>(logical + cl * e, phys + cp * e, xl.count, ml.count, x_ps, m_ls, seq ? 0 : next, by_rows, nx);
    else pair_block<false, kStream, kHalf, kAvx512>(phys + cp * e, logical + cl * e, xl.count, ml.count, x_ps, m_ls, seq ? 0 : next, by_rows, nx);
  }
  if (kStream) _mm_sfence();
}
#endif

#ifdef LC_HTP_X86
// A piece's fetches in walk_pairs_padded_body: its chunk's row kPieceAhead
// bytes on and, with `next` (0: none), the same piece a step of the loop
// outside on. Always inlined, as is every function there that only fetches:
// one that is not has no side effects to GCC, which deletes its calls (GCC
// 12 did so to walk_pairs_padded_body's fetch of the next position, a lambda).
constexpr uint64_t kPieceAhead = 256;
__attribute__((always_inline)) inline void fetch_piece(const uint8_t* at, uint64_t next) {
  _mm_prefetch(reinterpret_cast<const char*>(at + kPieceAhead), _MM_HINT_T0);
  if (next != 0) _mm_prefetch(reinterpret_cast<const char*>(at + next), _MM_HINT_T0);
}

// The stage of a padded unpack's run of logical rows (walk_pairs_padded_avx2,
// Avx512StagedLines): rows are put at `fill` on, each row's last piece whole
// (its tail is the next row's head, written after it); once the stage holds
// kFlush bytes its whole lines leave for `run` by kStream (stream_run or
// stream_run_avx2), the rest of its last line moved to its front, so that it
// stays in L1. A row that does not continue the run starts another.
template <void (*kStream)(uint8_t*, const uint8_t*, uint64_t)>
struct RunStage {
  static constexpr uint64_t kFlush = 4096;
  std::vector<uint8_t> bytes;
  uint8_t* run = nullptr;  // where the stage's bytes go
  uint64_t fill = 0;
  // `row_bytes`: the most a row writes, its last piece whole.
  explicit RunStage(uint64_t row_bytes) : bytes(kFlush + row_bytes + 64) {}
  // Where the row for the tensor's `dst` goes in the stage.
  uint8_t* at(uint8_t* dst) {
    if (dst != run + fill) {
      if (fill != 0) kStream(run, bytes.data(), fill);
      run = dst;
      fill = 0;
    }
    return bytes.data() + fill;
  }
  // A row of n bytes put at at().
  void added(uint64_t n) {
    fill += n;
    if (fill < kFlush) return;
    const uint64_t cut = fill - reinterpret_cast<uintptr_t>(run + fill) % 64;  // to the tensor's last line boundary
    kStream(run, bytes.data(), cut);
    std::memmove(bytes.data(), bytes.data() + cut, fill - cut);
    run += cut;
    fill -= cut;
  }
  void finish() {
    if (fill != 0) kStream(run, bytes.data(), fill);
    fill = 0;
  }
};

// Unpack's stores of walk_pairs_padded without VBMI: each line of a row, at
// any byte, whole or masked to its valid bytes.
struct Avx512Lines {
  explicit Avx512Lines(const Plan&) {}
  template <size_t kRowBytes>
  LC_HTP_AVX512 inline void unpack(uint8_t* dst, const uint8_t* src, size_t valid) const {
    if (valid == 64) _mm512_storeu_si512(dst, _mm512_loadu_si512(src));
    else masked::_mm512_mask_storeu_epi8(dst, (__mmask64{1} << valid) - 1, _mm512_loadu_si512(src));
  }
  // A logical row of 64-byte chunks `stride` apart from src: `full` whole
  // pieces, then one of `last` bytes (0: none), at dst on.
  LC_HTP_AVX512 inline void unpack_row(uint8_t* dst, const uint8_t* src, uint64_t stride, uint64_t full, size_t last,
                                       uint64_t next) const {
    for (uint64_t k = 0; k < full; ++k, src += stride, dst += 64) {
      fetch_piece(src, next);
      unpack<64>(dst, src, 64);
    }
    if (last != 0) {
      fetch_piece(src, next);
      unpack<64>(dst, src, last);
    }
  }
  void finish() const {}
};

// The steps of the middle loop `ml` (over dimension b) that hold logical rows
// at the position `x` of the loops outside: none when a dimension other than
// a and b is past its extent there (loops fused over unpadded dimensions keep
// no coordinate: those never clip), else those before b's extent.
inline uint64_t valid_middle_steps(const Plan& p, const std::vector<uint64_t>& x, size_t a, size_t b, const Loop& ml) {
  for (size_t d = 0; d < p.rank; ++d) {
    if (d != a && d != b && p.padded[d] != p.extent[d] && x[d] >= p.extent[d]) return 0;
  }
  const uint64_t ext_b = p.extent[b];
  if (p.padded[b] == ext_b) return ml.count;
  return x[b] >= ext_b ? 0 : std::min<uint64_t>(ml.count, (ext_b - x[b] - 1) / ml.step + 1);
}

// Unpack of a padded tensor by the transposes of walk_pairs (p.pair_pad):
// per position of p.pair_pad_outer outside padding, the middle loop's valid
// steps outside x's, m outside x. 32-byte rows go by 2 x 2 blocks stored
// whole or masked at any byte, or with kGather (VBMI) a logical row at a time,
// front to back, rows m of two chunks per 64 bytes (rows m and m + 1 from one
// read of their lines, the second's pieces held until the first is done,
// when a row has at most kLater pieces); 64-byte rows are the
// logical tensor front to back already. Both gather lines through `Ops`
// (Avx512Gather: whole lines streamed) once the tensor is 8 MiB or more.
template <bool kHalf, bool kGather, class Ops>
LC_HTP_AVX512 inline __attribute__((always_inline)) void walk_pairs_padded_body(
    const Plan& p, const std::vector<Loop>& loops, uint8_t* logical, uint8_t* phys, uint64_t begin, uint64_t end,
    const Ops& ops) {
  const Loop& xl = p.loops[p.pair_x];
  const Loop& ml = p.loops[p.pair_m];
  const Loop& row = p.loops.back();
  const uint64_t e = p.elem, x_ps = xl.ps * e, m_ls = ml.ls * e;
  constexpr uint64_t unit = kHalf ? 32 : 64, step = kHalf ? 2 : 1;
  const size_t a = row.dim, b = ml.dim;
  // An unpadded row dimension (perhaps fused with others: no coordinate) is valid throughout.
  const bool a_clipped = p.padded[a] != p.extent[a];
  const uint64_t ext_a = a_clipped ? p.extent[a] : UINT64_MAX;
  // 64-byte rows: a logical row's pieces are `full` whole ones, then one of
  // `last` bytes (0: none), the same at every position.
  uint64_t full = 0, last = 0;
  for (uint64_t c = 0; !kHalf && full < xl.count && c < ext_a; c += row.count) {
    const uint64_t v = a_clipped ? std::min<uint64_t>(64, (ext_a - c) * e) : 64;
    if (v < 64) {
      last = v;
      break;
    }
    ++full;
  }
  // The next position's lines: its block front to back, as many per step of
  // m as this one reads, when it is one block of at most kSeqBlock bytes
  // (see kSeqBlock; depth32 fp16 1 x 255 x 255 x 125 on a Zen 5: 1.04-1.06
  // of memcpy against 0.93), else the strided rows a step of the loop
  // outside on (next: 0 with the block, and no fetch of the lines being
  // read: the same case on a Zen 4, pinned, alternating, 0.85-0.92 -> 0.90-1.04).
  const uint64_t m_bytes = xl.count * unit;
  const bool seq = x_ps == ml.count * unit && ml.count * m_bytes <= kSeqBlock;
  const uint64_t next = seq || loops.empty() ? 0 : loops.back().ps * e;
  const uint8_t* nx = nullptr;
  const auto fetch_next = [&](uint64_t m, uint64_t rows) __attribute__((always_inline)) {
    if (nx == nullptr) return;
    for (uint64_t o = m * m_bytes, stop = (m + rows) * m_bytes; o < stop; o += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(nx + o), _MM_HINT_T0);
    }
  };
  // kGather with 32-byte rows: rows m and m + 1 of a line together when the
  // pieces of a row fit `later`.
  constexpr uint64_t kLater = 32;
  __m512i later[kLater];
  uint64_t later_v[kLater];
  const bool two_rows = kGather && kHalf && xl.count / 2 <= kLater;
  std::vector<uint64_t> value(loops.size(), 0), x(p.rank, 0);
  uint64_t lbase = 0, pbase = 0;
  seek(loops, loops.size(), begin, &value, &x, &lbase, &pbase);
  for (uint64_t left = end - begin; left != 0; --left) {
    const uint64_t m_valid = valid_middle_steps(p, x, a, b, ml);
    const uint8_t* src = phys + pbase * e;
    uint8_t* dst = logical + lbase * e;
    if (left > 1) advance(loops, loops.size(), &value, &x, &lbase, &pbase);
    nx = seq && left > 1 ? phys + pbase * e : nullptr;
    if constexpr (kGather) {
    if (two_rows) {
      // Rows m and m + 1 from the same lines: row m's pieces go to the
      // gatherer as they come, row m + 1's wait in `later` (front to back).
      for (uint64_t m = 0; m < m_valid; m += 2) {
        fetch_next(m, 2);
        const bool second = m + 1 < m_valid;
        const uint8_t* ph = src + m * unit;
        uint8_t* lg = dst + m * m_ls;
        uint64_t n = 0;
        for (uint64_t i = 0, c = 0; i < xl.count && c < ext_a; i += 2, c += 2 * row.count, ph += 2 * x_ps, lg += 64) {
          const uint64_t v = a_clipped ? std::min<uint64_t>(64, (ext_a - c) * e) : 64;
          fetch_piece(ph, next);
          fetch_piece(ph + x_ps, next);
          const __m512i lo = _mm512_loadu_si512(ph), hi = _mm512_loadu_si512(ph + x_ps);
          ops.put(lg, _mm512_shuffle_i64x2(lo, hi, 0x44), v);
          later[n] = _mm512_shuffle_i64x2(lo, hi, 0xEE);
          later_v[n++] = v;
        }
        if (!second) break;
        lg = dst + (m + 1) * m_ls;
        for (uint64_t k = 0; k < n; ++k, lg += 64) ops.put(lg, later[k], later_v[k]);
      }
    } else {
    for (uint64_t m = 0; m < m_valid; ++m) {
      // One logical row at a time, front to back: the rows m of two chunks x
      // per 64 bytes (each physical line is read twice, the second time from L1).
      fetch_next(m, 1);
      const uint8_t* ph = src + m * unit;
      uint8_t* lg = dst + m * m_ls;
      for (uint64_t i = 0, c = 0; i < xl.count && c < ext_a; i += step, c += step * row.count, ph += step * x_ps, lg += 64) {
        const uint64_t v = a_clipped ? std::min<uint64_t>(64, (ext_a - c) * e) : 64;
        if ((m & 1) == 0) {
          fetch_piece(ph, next);
          fetch_piece(ph + x_ps, next);
        }
        const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ph));
        const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ph + x_ps));
        ops.put(lg, _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1), v);
      }
    }
    }
    } else {
    for (uint64_t m = 0; m < m_valid; m += step) {
      fetch_next(m, step);
      if constexpr (!kHalf) {
        ops.unpack_row(dst + m * m_ls, src + m * unit, x_ps, full, last, next);
      } else {
        const bool second = m + 1 < m_valid;
        const uint8_t* ph = src + m * unit;
        uint8_t* lg = dst + m * m_ls;
        for (uint64_t i = 0, c = 0; i < xl.count && c < ext_a; i += step, c += step * row.count, ph += step * x_ps, lg += 64) {
          const uint64_t v = a_clipped ? std::min<uint64_t>(64, (ext_a - c) * e) : 64;
          fetch_piece(ph, next);
          fetch_piece(ph + x_ps, next);
          const __m512i lo = _mm512_loadu_si512(ph), hi = _mm512_loadu_si512(ph + x_ps);
          const __m512i l0 = _mm512_shuffle_i64x2(lo, hi, 0x44), l1 = _mm512_shuffle_i64x2(lo, hi, 0xEE);
          if (v == 64) {
            _mm512_storeu_si512(lg, l0);
            if (second) _mm512_storeu_si512(lg + m_ls, l1);
          } else {
            const __mmask64 mask = (__mmask64{1} << v) - 1;
            masked::_mm512_mask_storeu_epi8(lg, mask, l0);
            if (second) masked::_mm512_mask_storeu_epi8(lg + m_ls, mask, l1);
          }
        }
      }
    }
    }
  }
  ops.finish();
}

// A padded unpack's position's rows are one run of the tensor: x spans the
// row's dimension and the rows of m follow each other.
inline bool rows_one_run(const Plan& p) {
  const Loop& xl = p.loops[p.pair_x];
  const uint64_t row_elems = std::min(p.extent[xl.dim], xl.count * p.loops.back().count);
  return row_elems == p.extent[xl.dim] && p.loops[p.pair_m].ls == row_elems;
}

template <bool kHalf>
LC_HTP_AVX512 void walk_pairs_padded(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical, uint8_t* phys,
                                     uint64_t begin, uint64_t end) {
  const Avx512Lines ops(p);
  walk_pairs_padded_body<kHalf, false>(p, loops, logical, phys, begin, end, ops);
}

// Avx512Lines for 64-byte rows of 8 MiB or more without VBMI, whose logical
// rows follow each other: a row's pieces are stored whole at their places in
// a stage in L1 (the last one's tail is the next row's head, written after
// it), whose whole lines stream out every few KiB (RunStage, as
// walk_pairs_padded_avx2's). Depth32 fp16 1 x 255 x
// 255 x 125 on a Zen 5 capped at AVX-512 without VBMI, pinned, alternating,
// against each piece stored to the tensor: 0.68-0.81 of memcpy -> 0.95-0.99.
struct Avx512StagedLines {
  mutable RunStage<&stream_run> stage;
  explicit Avx512StagedLines(const Plan& p) : stage((p.loops[p.pair_x].count + 1) * 64) {}
  LC_HTP_AVX512 inline void unpack_row(uint8_t* dst, const uint8_t* src, uint64_t stride, uint64_t full, size_t last,
                                       uint64_t next) const {
    uint8_t* at = stage.at(dst);
    for (uint64_t k = 0; k < full + (last != 0); ++k, src += stride, at += 64) {
      fetch_piece(src, next);
      _mm512_storeu_si512(at, _mm512_loadu_si512(src));
    }
    stage.added(64 * full + last);
  }
  LC_HTP_AVX512 void finish() const {
    stage.finish();
    _mm_sfence();
  }
};

LC_HTP_AVX512 void walk_pairs_padded_staged(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical,
                                            uint8_t* phys, uint64_t begin, uint64_t end) {
  const Avx512StagedLines ops(p);
  walk_pairs_padded_body<false, false>(p, loops, logical, phys, begin, end, ops);
}

// The first v bytes (at most 64) of lo then hi at `at`, whatever follows them
// left as it is: whole 32-byte stores, then overlapping ones for the rest.
__attribute__((target("avx2"), always_inline)) inline void store_piece_avx2(uint8_t* at, __m256i lo, __m256i hi,
                                                                            uint64_t v) {
  if (v >= 32) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(at), lo);
    if (v == 64) return _mm256_storeu_si256(reinterpret_cast<__m256i*>(at + 32), hi);
    at += 32;
    v -= 32;
    lo = hi;
  }
  alignas(32) uint8_t buf[32];
  _mm256_store_si256(reinterpret_cast<__m256i*>(buf), lo);
  if (v >= 16) {
    std::memcpy(at, buf, 16);
    std::memcpy(at + v - 16, buf + v - 16, 16);
  } else if (v >= 8) {
    std::memcpy(at, buf, 8);
    std::memcpy(at + v - 8, buf + v - 8, 8);
  } else if (v >= 4) {
    std::memcpy(at, buf, 4);
    std::memcpy(at + v - 4, buf + v - 4, 4);
  } else if (v >= 2) {
    std::memcpy(at, buf, 2);
    std::memcpy(at + v - 2, buf + v - 2, 2);
  } else if (v == 1) {
    *at = buf[0];
  }
}

// Unpack of a padded tensor by the transposes of walk_pairs (p.pair_pad)
// with AVX2: per position of p.pair_pad_outer outside padding, one logical
// row m at a time, front to back, its 64-byte pieces two 32-byte halves of
// the physical lines (32-byte rows: row m's piece of chunks x and x + 1 is
// the same half of a line of each). With kStage (8 MiB or more, a position's
// rows one run of the tensor: x spans the row's dimension and the rows of m
// are consecutive), the run is written to a stage in L1, each row's last
// piece whole (its tail is the next row's head, written after it), and
// streamed out whole lines (stream_run_avx2) every few KiB, so that the
// tensor's lines are not read before they are written; otherwise each piece
// goes to the tensor, the last ones cut to their valid bytes. Measured on a
// Zen 4 capped at AVX2, pinned, alternating, against the rows' walk in
// logical order (walk_avx2): crouton uint8 1 x 250 x 250 x 250 0.47-0.51 of
// memcpy -> 0.72-0.75, depth32 fp16 1 x 255 x 255 x 125 0.53-0.61 -> 0.68-0.77.
template <bool kHalf, bool kStage>
__attribute__((target("avx2"))) void walk_pairs_padded_avx2(const Plan& p, const std::vector<Loop>& loops,
                                                            uint8_t* logical, uint8_t* phys, uint64_t begin,
                                                            uint64_t end) {
  const Loop& xl = p.loops[p.pair_x];
  const Loop& ml = p.loops[p.pair_m];
  const Loop& row = p.loops.back();
  const uint64_t e = p.elem, x_ps = xl.ps * e, m_ls = ml.ls * e;
  constexpr uint64_t unit = kHalf ? 32 : 64, step = kHalf ? 2 : 1, kAhead = 256;
  const size_t a = row.dim, b = ml.dim;
  const bool a_clipped = p.padded[a] != p.extent[a];
  const uint64_t ext_a = a_clipped ? p.extent[a] : UINT64_MAX;
  // As in walk_pairs_padded_body: the next position's block front to back,
  // or the strided rows a step of the loop outside on. The block goes to L2,
  // where the stage's lines stay in L1 (depth32 fp16 1 x 255 x 255 x 125, 64
  // KiB blocks, on a Zen 4 capped at AVX2, pinned, alternating: 0.79-0.84 of
  // memcpy into L1, 0.84-1.05 into L2; crouton's 2 KiB blocks alike either way).
  const uint64_t m_bytes = xl.count * unit;
  const bool seq = x_ps == ml.count * unit && ml.count * m_bytes <= kSeqBlock;
  const uint64_t next = seq || loops.empty() ? 0 : loops.back().ps * e;
  // Positions whose runs follow each other join one run of the stage: each
  // run streamed has its partial first and last lines, and a crouton's
  // position is a run of 8 pixels (1 x 250 x 250 x 250 uint8 on a Zen 4
  // capped at AVX2, pinned, alternating: 0.43-0.68 of memcpy a position at a
  // time, 0.69-0.78 joined). The stage's whole lines leave once it holds
  // RunStage::kFlush bytes, after a logical row, so that it stays in L1
  // (a Zen 5 capped at AVX2, pinned,
  // alternating, against a stage of a whole run, up to 64 KiB: depth32 fp16
  // 1 x 255 x 255 x 125 0.61-0.66 of memcpy -> 0.76-0.85, crouton uint8 1 x
  // 250 x 250 x 250 0.56-0.58 -> 0.69-0.78; flushing at 2 or 8 KiB: slower).
  RunStage<&stream_run_avx2> stage(kStage ? m_ls : 0);
  std::vector<uint64_t> value(loops.size(), 0), x(p.rank, 0);
  uint64_t lbase = 0, pbase = 0;
  seek(loops, loops.size(), begin, &value, &x, &lbase, &pbase);
  for (uint64_t left = end - begin; left != 0; --left) {
    const uint64_t m_valid = valid_middle_steps(p, x, a, b, ml);
    const uint8_t* src = phys + pbase * e;
    uint8_t* out = logical + lbase * e;
    if (left > 1) advance(loops, loops.size(), &value, &x, &lbase, &pbase);
    const uint8_t* nx = seq && left > 1 ? phys + pbase * e : nullptr;
    for (uint64_t m = 0; m < m_valid; ++m) {
      if (nx != nullptr && m % step == 0) {
        for (uint64_t o = m * m_bytes, stop = (m + step) * m_bytes; o < stop; o += 64) {
          _mm_prefetch(reinterpret_cast<const char*>(nx + o), _MM_HINT_T1);
        }
      }
      const uint8_t* ph = src + m * unit;
      uint8_t* lg = kStage ? stage.at(out + m * m_ls) : out + m * m_ls;
      for (uint64_t i = 0, c = 0; i < xl.count && c < ext_a; i += step, c += step * row.count, ph += step * x_ps, lg += 64) {
        const uint64_t v = a_clipped ? std::min<uint64_t>(64, (ext_a - c) * e) : 64;
        const uint8_t* hi_at = kHalf ? ph + x_ps : ph + 32;
        if (m % step == 0) {
          _mm_prefetch(reinterpret_cast<const char*>(ph + kAhead), _MM_HINT_T0);
          if (next != 0) _mm_prefetch(reinterpret_cast<const char*>(ph + next), _MM_HINT_T0);
          if (kHalf) {
            _mm_prefetch(reinterpret_cast<const char*>(hi_at + kAhead), _MM_HINT_T0);
            if (next != 0) _mm_prefetch(reinterpret_cast<const char*>(hi_at + next), _MM_HINT_T0);
          }
        }
        const __m256i lo = _mm256_load_si256(reinterpret_cast<const __m256i*>(ph));
        const __m256i hi = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_at));
        if (kStage || v == 64) {
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(lg), lo);
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(lg + 32), hi);
        } else {
          store_piece_avx2(lg, lo, hi, v);
        }
      }
      if (kStage) stage.added(m_ls);
    }
  }
  if (kStage) {
    stage.finish();
    _mm_sfence();
  }
}

// The byte permutes of Avx512Gather, by the number f of bytes gathered: join
// keeps the f bytes of the line and appends a piece's first 64 - f bytes;
// rest moves the piece's remaining bytes to the front.
struct GatherTables {
  alignas(64) uint8_t join[64][64];
  alignas(64) uint8_t rest[64][64];
  GatherTables() {
    for (int f = 0; f < 64; ++f) {
      for (int j = 0; j < 64; ++j) {
        join[f][j] = static_cast<uint8_t>(j < f ? j : 64 + j - f);
        rest[f][j] = static_cast<uint8_t>((j + 64 - f) & 63);
      }
    }
  }
};
const GatherTables& gather_tables() {
  static const GatherTables tables;
  return tables;
}

// Avx512SeqRows for pieces given in registers, with table permutes (one
// two-source permute per piece, one more per line completed): the rows land
// at any byte one after the other; each line is streamed whole once
// complete, the first and the last line of a walk (shared with a
// neighbouring thread's range) are masked ordinary stores, and a piece that
// does not continue the last one flushes the line and starts anew.
struct Avx512Gather {
  const GatherTables& t = gather_tables();
  mutable __m512i acc = _mm512_setzero_si512();
  mutable uint8_t* line = nullptr;
  mutable uint8_t* cursor = nullptr;
  mutable size_t lo = 0, fill = 0;
  LC_HTP_AVX512_VBMI explicit Avx512Gather(const Plan&) {}
  static LC_HTP_AVX512 inline __mmask64 head(size_t n) { return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1; }
  LC_HTP_AVX512_VBMI inline void flush() const {
    if (fill > lo) masked::_mm512_mask_storeu_epi8(line, head(fill) & ~head(lo), acc);
  }
  // n <= 64 bytes, v's first ones, at dst.
  LC_HTP_AVX512_VBMI inline void put(uint8_t* dst, __m512i v, size_t n) const {
    if (dst != cursor) {
      if (cursor != nullptr) flush();
      line = reinterpret_cast<uint8_t*>(reinterpret_cast<uintptr_t>(dst) & ~uintptr_t{63});
      lo = fill = static_cast<size_t>(dst - line);
    }
    const __m512i out = _mm512_permutex2var_epi8(acc, _mm512_load_si512(t.join[fill]), v);
    if (fill + n >= 64) {
      if (lo == 0) {
        _mm512_stream_si512(reinterpret_cast<__m512i*>(line), out);
      } else {
        masked::_mm512_mask_storeu_epi8(line, ~head(lo), out);
        lo = 0;
      }
      line += 64;
      acc = _mm512_permutexvar_epi8(_mm512_load_si512(t.rest[fill]), v);
      fill = fill + n - 64;
    } else {
      acc = out;
      fill += n;
    }
    cursor = dst + n;
  }
  // Avx512Lines::unpack_row by put. A whole piece completes one line and
  // leaves `fill` as it is, so past the run's first line a row's whole
  // pieces take the same two tables, loaded once, and no branch. Depth32
  // fp16 1 x 255 x 255 x 125 on a Zen 5, pinned: put piece by piece ran at
  // 0.62-0.67 of memcpy (0.84-0.88 ms) where a plain loop of the same
  // loads, permutes and stores ran at 1.07-1.14 in the same process; this
  // way 0.88-0.97 (0.64-0.66 ms); in the benchmark, alternating, 0.74-0.77
  // -> 1.00-1.09.
  LC_HTP_AVX512_VBMI inline void unpack_row(uint8_t* dst, const uint8_t* src, uint64_t stride, uint64_t full,
                                            size_t last, uint64_t next) const {
    uint64_t k = 0;
    if (full != 0 && (dst != cursor || lo != 0)) {  // a new run, or its first line not yet whole
      fetch_piece(src, next);
      put(dst, _mm512_loadu_si512(src), 64);
      k = 1;
      src += stride;
    }
    if (k < full) {
      const __m512i join = _mm512_load_si512(t.join[fill]), rest = _mm512_load_si512(t.rest[fill]);
      __m512i held = acc;
      uint8_t* at = line;
      for (; k < full; ++k, src += stride, at += 64) {
        fetch_piece(src, next);
        const __m512i v = _mm512_loadu_si512(src);
        _mm512_stream_si512(reinterpret_cast<__m512i*>(at), _mm512_permutex2var_epi8(held, join, v));
        held = _mm512_permutexvar_epi8(rest, v);
      }
      acc = held;
      line = at;
      cursor = dst + 64 * full;
    }
    if (last != 0) {
      fetch_piece(src, next);
      put(dst + 64 * full, masked::_mm512_maskz_loadu_epi8(head(last), src), last);
    }
  }
  LC_HTP_AVX512_VBMI inline void finish() const {
    if (cursor != nullptr) flush();
    _mm_sfence();
  }
};

template <bool kHalf>
LC_HTP_AVX512_VBMI __attribute__((flatten)) void walk_pairs_padded_seq(const Plan& p, const std::vector<Loop>& loops,
                                                                      uint8_t* logical, uint8_t* phys, uint64_t begin,
                                                                      uint64_t end) {
  const Avx512Gather ops(p);
  walk_pairs_padded_body<kHalf, kHalf>(p, loops, logical, phys, begin, end, ops);
}

// Pack of a padded tensor by the transposes of walk_pairs (p.pair_pad, every
// physical line whole: p.pair_pad_lines): per position of p.pair_pad_pack (the
// outer loops in physical order), the rows of x outside the middle loop's, so
// the physical lines are written front to back, each by one whole store. A
// line's logical pieces are masked loads over the padding pattern: bytes past
// the row's extent, rows of the middle loop in padding and positions in
// padding read nothing. 32-byte rows go by 2 x 2 blocks (the 64 bytes of two
// chunks of logical rows m and m + 1, their 256-bit halves exchanged).
template <bool kHalf, bool kStream>
LC_HTP_AVX512 void walk_pairs_padded_pack(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical,
                                          uint8_t* phys, uint64_t begin, uint64_t end) {
  const Loop& xl = p.loops[p.pair_x];
  const Loop& ml = p.loops[p.pair_m];
  const Loop& row = p.loops.back();
  const uint64_t e = p.elem, x_ps = xl.ps * e, m_ls = ml.ls * e;
  constexpr uint64_t unit = kHalf ? 32 : 64, step = kHalf ? 2 : 1;
  const size_t a = row.dim, b = ml.dim;
  const bool a_clipped = p.padded[a] != p.extent[a];
  const uint64_t ext_a = a_clipped ? p.extent[a] : UINT64_MAX;
  alignas(64) uint8_t pad_bytes[64];
  pad_pattern(p, pad_bytes);
  const __m512i pad = _mm512_load_si512(pad_bytes);
  // The logical lines the next position reads (a step of the innermost outer loop on).
  const uint64_t next = loops.empty() ? 0 : loops.back().ls * e;
  std::vector<uint64_t> value(loops.size(), 0), x(p.rank, 0);
  uint64_t lbase = 0, pbase = 0;
  seek(loops, loops.size(), begin, &value, &x, &lbase, &pbase);
  for (uint64_t left = end - begin; left != 0; --left) {
    const uint64_t m_valid = valid_middle_steps(p, x, a, b, ml);
    uint8_t* dst = phys + pbase * e;
    const uint8_t* src = logical + lbase * e;  // dereferenced only at valid rows
    for (uint64_t i = 0, c = 0; i < xl.count; i += step, c += step * row.count) {
      const uint64_t v = c >= ext_a ? 0 : a_clipped ? std::min<uint64_t>(64, (ext_a - c) * e) : 64;
      const __mmask64 mask = v >= 64 ? ~__mmask64{0} : (__mmask64{1} << v) - 1;
      uint8_t* ph = dst + i * x_ps;
      for (uint64_t m = 0; m < ml.count; m += step, ph += 64) {
        const bool r0 = v != 0 && m < m_valid;
        const uint8_t* lg = r0 ? src + m * m_ls + i * unit : nullptr;
        if (r0 && next != 0) _mm_prefetch(reinterpret_cast<const char*>(lg + next), _MM_HINT_T0);
        const __m512i l0 = r0 ? masked::_mm512_mask_loadu_epi8(pad, mask, lg) : pad;
        if (kHalf) {
          const bool r1 = v != 0 && m + 1 < m_valid;
          if (r1 && next != 0) _mm_prefetch(reinterpret_cast<const char*>(lg + m_ls + next), _MM_HINT_T0);
          const __m512i l1 = r1 ? masked::_mm512_mask_loadu_epi8(pad, mask, lg + m_ls) : pad;
          store_line<kStream>(ph, _mm512_shuffle_i64x2(l0, l1, 0x44));
          store_line<kStream>(ph + x_ps, _mm512_shuffle_i64x2(l0, l1, 0xEE));
        } else {
          store_line<kStream>(ph, l0);
        }
      }
    }
    if (left > 1) advance(loops, loops.size(), &value, &x, &lbase, &pbase);
  }
  if (kStream) _mm_sfence();
}

// Bytes [32 - n, 64 - n): the mask of a piece's first n bytes.
alignas(64) constexpr uint8_t kHeadMask[64] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

// The first n (<= 32) bytes of the 32 at `at` over the padding pattern (`pad`,
// and `pad_line` 64 bytes of it): the 32 bytes read whole and blended when
// they lie before `end` (bytes past the first n are other rows', not
// written), through the stack otherwise.
__attribute__((target("avx2"), always_inline)) inline __m256i load_head_avx2(const uint8_t* at, uint64_t n,
                                                                             const uint8_t* end, __m256i pad,
                                                                             const uint8_t* pad_line) {
  if (n == 32) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
  if (n == 0) return pad;
  if (at + 32 <= end) {
    const __m256i head = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kHeadMask + 32 - n));
    return _mm256_blendv_epi8(pad, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)), head);
  }
  alignas(32) uint8_t buf[32];
  std::memcpy(buf, pad_line, 32);  // whole elements: 32 is a multiple of every element size
  std::memcpy(buf, at, n);
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(buf));
}

// The first v bytes of the 64 at `at` over the padding pattern, as two halves.
__attribute__((target("avx2"), always_inline)) inline void load_piece_avx2(const uint8_t* at, uint64_t v,
                                                                           const uint8_t* end, __m256i pad,
                                                                           const uint8_t* pad_line, __m256i* lo,
                                                                           __m256i* hi) {
  *lo = load_head_avx2(at, std::min<uint64_t>(v, 32), end, pad, pad_line);
  *hi = load_head_avx2(at + 32, v > 32 ? v - 32 : 0, end, pad, pad_line);
}

// walk_pairs_padded_pack with AVX2: a line's logical pieces are two 32-byte
// halves, whole, or the row's last piece blended over the padding pattern
// (read whole when the 64 bytes lie in the tensor: bytes past the row's
// extent are the next rows', never written; the tensor's last bytes through
// a row on the stack). Measured on a Zen 4 capped at AVX2, pinned,
// alternating, against the rows' walk (walk_avx2): crouton uint8 1 x 250 x
// 250 x 250 0.55-0.57 of memcpy -> 1.11-1.13, depth32 fp16 1 x 255 x 255 x
// 125 0.66-0.74 -> 1.02-1.04.
template <bool kHalf, bool kStream>
__attribute__((target("avx2"))) void walk_pairs_padded_pack_avx2(const Plan& p, const std::vector<Loop>& loops,
                                                                 uint8_t* logical, uint8_t* phys, uint64_t begin,
                                                                 uint64_t end) {
  const Loop& xl = p.loops[p.pair_x];
  const Loop& ml = p.loops[p.pair_m];
  const Loop& row = p.loops.back();
  const uint64_t e = p.elem, x_ps = xl.ps * e, m_ls = ml.ls * e;
  constexpr uint64_t unit = kHalf ? 32 : 64, step = kHalf ? 2 : 1;
  const size_t a = row.dim, b = ml.dim;
  const bool a_clipped = p.padded[a] != p.extent[a];
  const uint64_t ext_a = a_clipped ? p.extent[a] : UINT64_MAX;
  uint64_t logical_bytes = e;
  for (uint64_t n : p.extent) logical_bytes *= n;
  const uint8_t* const logical_end = logical + logical_bytes;
  const __m256i pad = _mm256_load_si256(reinterpret_cast<const __m256i*>(p.pad_line));
  const uint64_t next = loops.empty() ? 0 : loops.back().ls * e;
  std::vector<uint64_t> value(loops.size(), 0), x(p.rank, 0);
  uint64_t lbase = 0, pbase = 0;
  seek(loops, loops.size(), begin, &value, &x, &lbase, &pbase);
  for (uint64_t left = end - begin; left != 0; --left) {
    const uint64_t m_valid = valid_middle_steps(p, x, a, b, ml);
    uint8_t* dst = phys + pbase * e;
    const uint8_t* src = logical + lbase * e;  // dereferenced only at valid rows
    for (uint64_t i = 0, c = 0; i < xl.count; i += step, c += step * row.count) {
      const uint64_t v = c >= ext_a ? 0 : a_clipped ? std::min<uint64_t>(64, (ext_a - c) * e) : 64;
      uint8_t* ph = dst + i * x_ps;
      for (uint64_t m = 0; m < ml.count; m += step, ph += 64) {
        const bool r0 = v != 0 && m < m_valid;
        const uint8_t* lg = r0 ? src + m * m_ls + i * unit : nullptr;
        __m256i lo0 = pad, hi0 = pad;
        if (r0) {
          if (next != 0) _mm_prefetch(reinterpret_cast<const char*>(lg + next), _MM_HINT_T0);
          load_piece_avx2(lg, v, logical_end, pad, p.pad_line, &lo0, &hi0);
        }
        if (kHalf) {
          const bool r1 = v != 0 && m + 1 < m_valid;
          __m256i lo1 = pad, hi1 = pad;
          if (r1) {
            if (next != 0) _mm_prefetch(reinterpret_cast<const char*>(lg + m_ls + next), _MM_HINT_T0);
            load_piece_avx2(lg + m_ls, v, logical_end, pad, p.pad_line, &lo1, &hi1);
          }
          store_line_avx2<kStream>(ph, lo0, lo1);
          store_line_avx2<kStream>(ph + x_ps, hi0, hi1);
        } else {
          store_line_avx2<kStream>(ph, lo0, hi0);
        }
      }
    }
    if (left > 1) advance(loops, loops.size(), &value, &x, &lbase, &pbase);
  }
  if (kStream) _mm_sfence();
}
#endif

// ---- tiles ------------------------------------------------------------------------

#ifdef LC_HTP_X86
// Two 32 x 4 byte tiles a and b (128 bytes each, physical [t][k]) against
// four logical lines: line k = row k of a, then row k of b. Pack interleaves
// bytes then words in each lane (lane l: elements 16 l' .. 16 l' + 15 of tile
// l / 2, l' = l % 2) and transposes the lanes; unpack transposes the lanes
// back, transposes each lane's 4 x 4 bytes and then its 4 x 4 dwords.
// In registers: pack turns lines r into the tiles' four lines o (a, a + 64,
// b, b + 64); unpack turns those back into the lines.
LC_HTP_AVX512 inline void pack_32x4x2(const __m512i* r, __m512i* o) {
  const __m512i x0 = _mm512_unpacklo_epi8(r[0], r[1]), x1 = _mm512_unpackhi_epi8(r[0], r[1]);
  const __m512i y0 = _mm512_unpacklo_epi8(r[2], r[3]), y1 = _mm512_unpackhi_epi8(r[2], r[3]);
  o[0] = _mm512_unpacklo_epi16(x0, y0);
  o[1] = _mm512_unpackhi_epi16(x0, y0);
  o[2] = _mm512_unpacklo_epi16(x1, y1);
  o[3] = _mm512_unpackhi_epi16(x1, y1);
  byte_transpose::transpose_lanes4x4(o);
}
LC_HTP_AVX512 inline void unpack_32x4x2(__m512i* o, __m512i* r) {
  byte_transpose::transpose_lanes4x4(o);
  const __m512i bytes = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  const __m512i p0 = _mm512_shuffle_epi8(o[0], bytes), p1 = _mm512_shuffle_epi8(o[1], bytes);
  const __m512i p2 = _mm512_shuffle_epi8(o[2], bytes), p3 = _mm512_shuffle_epi8(o[3], bytes);
  const __m512i q0 = _mm512_unpacklo_epi32(p0, p1), q1 = _mm512_unpackhi_epi32(p0, p1);
  const __m512i q2 = _mm512_unpacklo_epi32(p2, p3), q3 = _mm512_unpackhi_epi32(p2, p3);
  r[0] = _mm512_unpacklo_epi64(q0, q2);
  r[1] = _mm512_unpackhi_epi64(q0, q2);
  r[2] = _mm512_unpacklo_epi64(q1, q3);
  r[3] = _mm512_unpackhi_epi64(q1, q3);
}
// Unpack of tile_pair_32x4 storing only the rows k with bit k of `rows` set
// (the others lie in padding).
template <bool kStream>
LC_HTP_AVX512 inline void tile_pair_32x4_rows(uint8_t* a, uint8_t* b, uint8_t* const* lines, unsigned rows) {
  __m512i o[4] = {_mm512_load_si512(a), _mm512_load_si512(a + 64), _mm512_load_si512(b), _mm512_load_si512(b + 64)};
  __m512i r[4];
  unpack_32x4x2(o, r);
  LC_HTP_UNROLL4 for (int k = 0; k < 4; ++k) {
    if ((rows >> k) & 1) store_line<kStream>(lines[k], r[k]);
  }
}
template <bool kPack, bool kStream>
LC_HTP_AVX512 inline void tile_pair_32x4(uint8_t* a, uint8_t* b, uint8_t* const* lines) {
  if (kPack) {
    const __m512i r[4] = {_mm512_load_si512(lines[0]), _mm512_load_si512(lines[1]), _mm512_load_si512(lines[2]),
                          _mm512_load_si512(lines[3])};
    __m512i o[4];
    pack_32x4x2(r, o);
    store_line<kStream>(a, o[0]);
    store_line<kStream>(a + 64, o[1]);
    store_line<kStream>(b, o[2]);
    store_line<kStream>(b + 64, o[3]);
  } else {
    tile_pair_32x4_rows<kStream>(a, b, lines, 0xF);
  }
}

// The tile pair's kernels for the walks below: AVX-512 (a line a register).
struct Avx512TilePair {
  template <bool kPack, bool kStream>
  static LC_HTP_AVX512 inline void pair(uint8_t* a, uint8_t* b, uint8_t* const* lines) {
    tile_pair_32x4<kPack, kStream>(a, b, lines);
  }
  template <bool kStream>
  static LC_HTP_AVX512 inline void rows(uint8_t* a, uint8_t* b, uint8_t* const* lines, unsigned rows) {
    tile_pair_32x4_rows<kStream>(a, b, lines, rows);
  }
};

// One 32 x 4 byte tile in AVX2 registers: pack turns logical rows r (32
// bytes each) into the tile's four 32-byte pieces o by byte and word
// interleaves in lanes and a join of the lanes' halves (d0-7, d8-15, d16-23,
// d24-31); unpack gathers each row's bytes of four depths with a byte
// shuffle, pairs the two lanes' dwords and transposes 8-byte pieces.
__attribute__((target("avx2"), always_inline)) inline void pack_32x4_avx2(const __m256i* r, __m256i* o) {
  const __m256i a = _mm256_unpacklo_epi8(r[0], r[1]), b = _mm256_unpacklo_epi8(r[2], r[3]);
  const __m256i c = _mm256_unpackhi_epi8(r[0], r[1]), d = _mm256_unpackhi_epi8(r[2], r[3]);
  const __m256i o0 = _mm256_unpacklo_epi16(a, b), o1 = _mm256_unpackhi_epi16(a, b);
  const __m256i o2 = _mm256_unpacklo_epi16(c, d), o3 = _mm256_unpackhi_epi16(c, d);
  o[0] = _mm256_permute2x128_si256(o0, o1, 0x20);
  o[1] = _mm256_permute2x128_si256(o2, o3, 0x20);
  o[2] = _mm256_permute2x128_si256(o0, o1, 0x31);
  o[3] = _mm256_permute2x128_si256(o2, o3, 0x31);
}
__attribute__((target("avx2"), always_inline)) inline void unpack_32x4_avx2(const __m256i* o, __m256i* r) {
  const __m256i by_row = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,  //
                                          0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m256i pair_lanes = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  __m256i w[4];
  LC_HTP_UNROLL4 for (int i = 0; i < 4; ++i) {
    // 8-byte piece k: row k, depths 8i..8i+7.
    w[i] = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(o[i], by_row), pair_lanes);
  }
  const __m256i x0 = _mm256_unpacklo_epi64(w[0], w[1]), x1 = _mm256_unpackhi_epi64(w[0], w[1]);
  const __m256i x2 = _mm256_unpacklo_epi64(w[2], w[3]), x3 = _mm256_unpackhi_epi64(w[2], w[3]);
  r[0] = _mm256_permute2x128_si256(x0, x2, 0x20);
  r[1] = _mm256_permute2x128_si256(x1, x3, 0x20);
  r[2] = _mm256_permute2x128_si256(x0, x2, 0x31);
  r[3] = _mm256_permute2x128_si256(x1, x3, 0x31);
}
template <bool kStream>
__attribute__((target("avx2"), always_inline)) inline void store_half(uint8_t* at, __m256i v) {
  if (kStream) _mm256_stream_si256(reinterpret_cast<__m256i*>(at), v);
  else _mm256_store_si256(reinterpret_cast<__m256i*>(at), v);
}

// The same tile pair with AVX2: a line is row k of tile a then row k of
// tile b, so each tile is one 32 x 4 transpose of the lines' halves; every
// line of either side is still read and written whole (two 32-byte stores).
// Measured on a Zen 4 capped at AVX2, pinned, alternating, ratio to memcpy,
// pack / unpack, against a tile at a time (the walk of tiles then, and
// walk_tiles_32x4_dense without padding): crouton4x1 1 x 255 x 255 x 256
// 0.26-0.30 / 0.34 -> 0.72-0.83 / 0.60-0.68, crouton2x2 0.59 / 0.49-0.52 ->
// 0.81-0.86 / 0.59-0.61; 1 x 256 x 256 x 1024 crouton4x1 0.91-0.98 /
// 0.73-0.78 -> 1.27-1.31 / 1.04-1.31, crouton2x2 1.02-1.08 / 0.71-0.77 ->
// 1.23-1.31 / 0.97-1.02. Its loops and those of the transposes unrolled
// (LC_HTP_UNROLL4; the same capped, pinned, alternating, 1 x 255 x 255 x 256,
// pack / unpack: crouton4x1 0.68-0.70 / 0.63-0.65 -> 1.05 / 0.84, crouton2x2
// 0.74 / 0.63-0.64 -> 1.04-1.07 / 0.84-0.99).
struct Avx2TilePair {
  template <bool kPack, bool kStream>
  static __attribute__((target("avx2"))) inline void pair(uint8_t* a, uint8_t* b,
                                                                          uint8_t* const* lines) {
    if (!kPack) return rows<kStream>(a, b, lines, 0xF);
    __m256i ra[4], rb[4], oa[4], ob[4];
    LC_HTP_UNROLL4 for (int k = 0; k < 4; ++k) {
      ra[k] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lines[k]));
      rb[k] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lines[k] + 32));
    }
    pack_32x4_avx2(ra, oa);
    pack_32x4_avx2(rb, ob);
    LC_HTP_UNROLL4 for (int i = 0; i < 4; ++i) store_half<kStream>(a + 32 * i, oa[i]);
    LC_HTP_UNROLL4 for (int i = 0; i < 4; ++i) store_half<kStream>(b + 32 * i, ob[i]);
  }
  template <bool kStream>
  static __attribute__((target("avx2"))) inline void rows(uint8_t* a, uint8_t* b,
                                                                          uint8_t* const* lines, unsigned rows) {
    __m256i oa[4], ob[4], ra[4], rb[4];
    LC_HTP_UNROLL4 for (int i = 0; i < 4; ++i) {
      oa[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(a + 32 * i));
      ob[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + 32 * i));
    }
    unpack_32x4_avx2(oa, ra);
    unpack_32x4_avx2(ob, rb);
    LC_HTP_UNROLL4 for (int k = 0; k < 4; ++k) {
      if ((rows >> k) & 1) {
        store_half<kStream>(lines[k], ra[k]);
        store_half<kStream>(lines[k] + 32, rb[k]);
      }
    }
  }
};

// Each padded dimension: how far along it each of a 32 x 4 tile's rows lies
// from the tile's coordinate.
struct TileEdge {
  size_t dim;
  uint64_t delta[4];
};
std::vector<TileEdge> tile_edges(const Plan& p) {
  std::vector<TileEdge> edges;
  const size_t inner = p.loops.size() - p.tile_at - 1;
  for (size_t d = 0; d < p.rank; ++d) {
    if (p.padded[d] == p.extent[d]) continue;
    TileEdge e{d, {0, 0, 0, 0}};
    for (size_t k = 0; k < 4; ++k) {
      for (size_t i = 0; i < inner; ++i) {
        if (p.loops[p.tile_at + 1 + i].dim == d) e.delta[k] = p.tile_delta[k * inner + i];
      }
    }
    edges.push_back(e);
  }
  return edges;
}
// Whether row k of the tile at coordinate x lies in the tensor (not in padding).
inline bool tile_row_valid(const Plan& p, const std::vector<TileEdge>& edges, const std::vector<uint64_t>& x,
                           size_t k) {
  bool valid = true;
  for (const TileEdge& e : edges) valid = valid && x[e.dim] + e.delta[k] < p.extent[e.dim];
  return valid;
}

// The positions [begin, end) of the loops around the tile other than x
// (`loops`: p.tile_pair_outer), each a run of tile
// pairs along x; the next position's reads are fetched ahead. In a padded
// tensor a position whose tile reaches past the extent along a padded
// dimension takes its rows in padding from a line of the pad element (pack)
// or does not store them (unpack), and an unpack position wholly in padding
// is skipped. (Unpack stored them to one scratch line before: streamed, the
// stores to that line waited on each other; 1 x 255 x 255 x 256 crouton2x2
// on a Zen 4, pinned, alternating: 0.64-0.69 of memcpy against 0.81-0.95 for
// 256 x 256 and 0.83-0.85 for 254 x 254, whose positions are whole or
// wholly padding.)
template <bool kPack, bool kStream, class K>
inline __attribute__((always_inline)) void walk_tile_pairs_body(const Plan& p, const std::vector<Loop>& loops,
                                                                uint8_t* logical, uint8_t* phys, uint64_t begin,
                                                                uint64_t end) {
  const Loop& xl = p.loops[p.tile_pair_x];
  const uint64_t o[4] = {p.tile_offset[0], p.tile_offset[1], p.tile_offset[2], p.tile_offset[3]};
  const std::vector<TileEdge> edges = tile_edges(p);
  alignas(64) uint8_t pad_line[64];
  std::memset(pad_line, p.pad_element[0], sizeof pad_line);
  // Unpack: the next position's tiles (into L1) and, into L2, the tiles of
  // the innermost outer loop whose step moves past the chunks a position
  // reads (the inner ones read the rest of those chunks).
  const uint64_t next = loops.empty() ? 0 : kPack ? loops.back().ls : loops.back().ps;
  uint64_t far = 0;
  for (size_t i = loops.size(); !kPack && i-- > 0 && far == 0;) {
    if (loops[i].ps >= xl.count * xl.ps) far = loops[i].ps;
  }
  std::vector<uint64_t> value(loops.size(), 0), x(p.rank, 0);
  uint64_t lbase = 0, pbase = 0;
  seek(loops, loops.size(), begin, &value, &x, &lbase, &pbase);
  for (uint64_t left = end - begin; left != 0; --left) {
    // Each row's first line, and whether it moves along x (not a row in padding).
    uint8_t* start[4];
    uint64_t moves[4];
    unsigned rows = 0;
    for (size_t k = 0; k < 4; ++k) {
      const bool valid = tile_row_valid(p, edges, x, k);
      start[k] = valid ? logical + lbase + o[k] : pad_line;
      moves[k] = valid ? ~uint64_t{0} : 0;
      rows |= static_cast<unsigned>(valid) << k;
    }
    if (!kPack && rows == 0) {
      if (left > 1) advance(loops, loops.size(), &value, &x, &lbase, &pbase);
      continue;
    }
    uint8_t* ph = phys + pbase;
    for (uint64_t i = 0; i < xl.count; i += 2, ph += 2 * xl.ps) {
      const uint64_t at = i * 32;
      uint8_t* lines[4] = {start[0] + (at & moves[0]), start[1] + (at & moves[1]), start[2] + (at & moves[2]),
                           start[3] + (at & moves[3])};
      if (kPack) {
        for (int k = 0; k < 4; ++k) {
          // A prefetch never faults: the pad line's address past it is harmless.
          _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(lines[k]) + next), _MM_HINT_T1);
        }
      } else {
        _mm_prefetch(reinterpret_cast<const char*>(ph + next), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(ph + next + 64), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(ph + xl.ps + next), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(ph + xl.ps + next + 64), _MM_HINT_T0);
        if (far != 0) {
          _mm_prefetch(reinterpret_cast<const char*>(ph + far), _MM_HINT_T1);
          _mm_prefetch(reinterpret_cast<const char*>(ph + far + 64), _MM_HINT_T1);
          _mm_prefetch(reinterpret_cast<const char*>(ph + xl.ps + far), _MM_HINT_T1);
          _mm_prefetch(reinterpret_cast<const char*>(ph + xl.ps + far + 64), _MM_HINT_T1);
        }
      }
      if (kPack || rows == 0xF) K::template pair<kPack, kStream>(ph, ph + xl.ps, lines);
      else K::template rows<kStream>(ph, ph + xl.ps, lines, rows);
    }
    if (left > 1) advance(loops, loops.size(), &value, &x, &lbase, &pbase);
  }
  if (kStream) _mm_sfence();
}
template <bool kPack, bool kStream>
LC_HTP_AVX512 void walk_tile_pairs(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical, uint8_t* phys,
                                   uint64_t begin, uint64_t end) {
  walk_tile_pairs_body<kPack, kStream, Avx512TilePair>(p, loops, logical, phys, begin, end);
}
template <bool kPack, bool kStream>
__attribute__((target("avx2"), flatten)) void walk_tile_pairs_avx2(const Plan& p, const std::vector<Loop>& loops,
                                                          uint8_t* logical, uint8_t* phys, uint64_t begin,
                                                          uint64_t end) {
  walk_tile_pairs_body<kPack, kStream, Avx2TilePair>(p, loops, logical, phys, begin, end);
}
#endif

#ifdef LC_HTP_X86
// Pack of the same tiles with x between the loops outside it and those inside
// it, as in memory: per position of p.tile_pair_blocks (a block), each pair of
// steps of x runs every position of p.tile_pair_inner, so each pair of x's
// chunks is written front to back, and the block's logical lines are read a
// line of each row per pair, the next one fetched meanwhile. Taken when the
// block's logical lines stay in L1 (kTileBlockBytes): measured on a Zen 5,
// 1 x 255 x 255 x 256 (16 KiB blocks), pinned, alternating, ratio to memcpy:
// crouton4x1 0.60-0.62 -> 0.74-0.78, crouton2x2 0.62-0.74 -> 0.74-0.80; with
// 1 x 256 x 256 x 1024 (64 KiB blocks) 0.98 -> 0.78-0.88, so the walk of
// walk_tile_pairs stays there. The rows' starts are worked out once a block.
constexpr uint64_t kTileBlockBytes = 16 << 10;
template <bool kStream, class K>
inline __attribute__((always_inline)) void walk_tile_blocks_body(const Plan& p, const std::vector<Loop>& loops,
                                                                 uint8_t* logical, uint8_t* phys, uint64_t begin,
                                                                 uint64_t end) {
  const Loop& xl = p.loops[p.tile_pair_x];
  const std::vector<Loop>& inner = p.tile_pair_inner;
  const std::vector<TileEdge> edges = tile_edges(p);
  alignas(64) uint8_t pad_line[64];
  std::memset(pad_line, p.pad_element[0], sizeof pad_line);
  // Per inner position: the physical offset and each row's first line and
  // whether it moves along x (not a row in padding).
  struct Pos {
    uint64_t phys;
    uint8_t* start[4];
    uint64_t moves[4];
  };
  std::vector<Pos> pos(positions(inner, inner.size()));
  std::vector<uint64_t> value(loops.size(), 0), x(p.rank, 0), ivalue(inner.size(), 0);
  uint64_t lbase = 0, pbase = 0;
  seek(loops, loops.size(), begin, &value, &x, &lbase, &pbase);
  // The next block's lines (into L2).
  const uint64_t next = loops.empty() ? 0 : loops.back().ls;
  for (uint64_t left = end - begin; left != 0; --left) {
    uint64_t il = lbase, ip = pbase;
    for (size_t j = 0; j < pos.size(); ++j) {
      Pos& q = pos[j];
      for (size_t k = 0; k < 4; ++k) {
        const bool valid = tile_row_valid(p, edges, x, k);
        q.start[k] = valid ? logical + il + p.tile_offset[k] : pad_line;
        q.moves[k] = valid ? ~uint64_t{0} : 0;
      }
      q.phys = ip;
      // After the last position the odometer wraps: x is the block's coordinate again.
      advance(inner, inner.size(), &ivalue, &x, &il, &ip);
    }
    for (uint64_t i = 0; i < xl.count; i += 2) {
      const uint64_t at = i * 32;
      for (const Pos& q : pos) {
        uint8_t* ph = phys + q.phys + i * xl.ps;
        uint8_t* lines[4] = {q.start[0] + (at & q.moves[0]), q.start[1] + (at & q.moves[1]),
                             q.start[2] + (at & q.moves[2]), q.start[3] + (at & q.moves[3])};
        for (int k = 0; k < 4; ++k) {
          // A prefetch never faults: the pad line's addresses past it are harmless.
          const uintptr_t line = reinterpret_cast<uintptr_t>(lines[k]);
          _mm_prefetch(reinterpret_cast<const char*>(line + 64), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(line + next), _MM_HINT_T1);
        }
        K::template pair<true, kStream>(ph, ph + xl.ps, lines);
      }
    }
    if (left > 1) advance(loops, loops.size(), &value, &x, &lbase, &pbase);
  }
  if (kStream) _mm_sfence();
}
template <bool kStream>
LC_HTP_AVX512 void walk_tile_blocks(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical, uint8_t* phys,
                                    uint64_t begin, uint64_t end) {
  walk_tile_blocks_body<kStream, Avx512TilePair>(p, loops, logical, phys, begin, end);
}
template <bool kStream>
__attribute__((target("avx2"), flatten)) void walk_tile_blocks_avx2(const Plan& p, const std::vector<Loop>& loops,
                                                           uint8_t* logical, uint8_t* phys, uint64_t begin,
                                                           uint64_t end) {
  walk_tile_blocks_body<kStream, Avx2TilePair>(p, loops, logical, phys, begin, end);
}
#endif

#ifdef LC_HTP_X86
// 64 bytes at any byte as two 32-byte halves (each crosses a line less often
// than the whole does: measured faster for rows read 64 bytes at a time, a
// row apart).
LC_HTP_AVX512 inline __m512i load_halves(const uint8_t* at) {
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 32));
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// Unpack: a position's rows that are one run of the tensor, up to this many
// bytes, go through a stage (see walk_tile_cols).
constexpr uint64_t kTileStageBytes = 256 << 10;

// What walk_tile_cols and its AVX2 form share: the chunk-column loop (xl)
// and the one inside it (il), the four rows' offsets, and whether a
// position's rows are one block of the tensor (the weights: then the next
// position's block is fetched meanwhile, per_step lines a step, or,
// unpacking 8 MiB or more, the block is staged and streamed out).
struct TileColsWalk {
  const Loop& xl;
  const Loop& il;
  uint64_t ext, o0, o1, o2, o3;
  uint64_t span = 0, per_step = 0;
  bool block = false, staged = false;

  TileColsWalk(const Plan& p, bool pack, bool stream)
      : xl(p.tile_order[p.tile_cols_x]),
        il(p.tile_cols_in),
        ext(p.extent[xl.dim]),
        o0(p.tile_offset[0]),
        o1(p.tile_offset[1]),
        o2(p.tile_offset[2]),
        o3(p.tile_offset[3]) {
    const uint64_t o_max = std::max(std::max(o0, o1), std::max(o2, o3));
    const uint64_t written = 4 * il.count * ext;
    span = o_max + (il.count - 1) * il.ls + ext;
    block = std::min(std::min(o0, o1), std::min(o2, o3)) == 0 && span <= written + written / 8;
    const uint64_t steps = (xl.count + 1) / 2 * il.count;
    per_step = ((span + 63) / 64 + steps - 1) / steps;
    staged = !pack && stream && block && span == written && span <= kTileStageBytes;
  }
};

// Their positions [begin, end) in order, with each one's logical and
// physical bases and the next one's block.
class TileColsPositions {
 public:
  TileColsPositions(const Plan& p, const std::vector<Loop>& loops, uint64_t begin, uint64_t end)
      : loops_(loops), value_(loops.size(), 0), x_(p.rank, 0), left_(end - begin) {
    seek(loops, loops.size(), begin, &value_, nullptr, &lbase_, &pbase_);
    value_next_ = value_;
    x_next_ = x_;
    lnext_ = lbase_;
    pnext_ = pbase_;
  }
  bool done() const { return left_ == 0; }
  uint64_t lbase() const { return lbase_; }
  uint64_t pbase() const { return pbase_; }
  // The next position's block (t.span logical bytes from its first line) to
  // fetch, [*from, *to): empty after the last position, when the rows are
  // not one block, or when they are staged.
  void next_block(const TileColsWalk& t, const uint8_t* logical, uintptr_t* from, uintptr_t* to) {
    *from = *to = 0;
    if (!t.block || t.staged || left_ <= 1) return;
    advance(loops_, loops_.size(), &value_next_, &x_next_, &lnext_, &pnext_);
    *from = reinterpret_cast<uintptr_t>(logical + lnext_) & ~uintptr_t{63};
    *to = reinterpret_cast<uintptr_t>(logical + lnext_) + t.span;
  }
  void next() {
    if (left_ > 1) advance(loops_, loops_.size(), &value_, &x_, &lbase_, &pbase_);
    --left_;
  }

 private:
  const std::vector<Loop>& loops_;
  std::vector<uint64_t> value_, x_, value_next_, x_next_;
  uint64_t lbase_ = 0, pbase_ = 0, lnext_ = 0, pnext_ = 0, left_;
};

// The weights' tiles (p.tile_cols): per position of the chunk loops outside
// x, two chunk columns at a time, each step of the loop inside the chunk a
// pair of tiles against one 64-byte piece of each of four logical rows
// (unaligned; the rows are a whole chunk row of bytes apart). The last
// columns, partly or wholly padding, load over the padding pattern (pack)
// or store only their valid bytes (unpack); an odd last column is a single
// tile. Pack of 8 MiB or more on lines streams the tiles (each step writes
// two whole lines of each tile); unpack of 8 MiB or more stages a position's
// rows when they are one run of the tensor and streams the run out, the
// positions in physical order so that each chunk column is read front to
// back (measured on a Zen 4 with 3 x 3 x 1024 x 1820, medians of 14 runs
// on a shared host: 0.55 of memcpy unstaged, 0.60 staged in logical order,
// 0.63 staged in physical order). The rows' next pieces, four column pairs on,
// are fetched ahead, and when unpacking the tiles two column pairs on too
// (chunks far apart: no stream the hardware follows).
template <bool kPack, bool kStream>
LC_HTP_AVX512 void walk_tile_cols(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical, uint8_t* phys,
                                  uint64_t begin, uint64_t end) {
  const TileColsWalk t(p, kPack, kStream);
  const __m512i pad = _mm512_set1_epi8(static_cast<char>(p.pad_element[0]));
  constexpr uint64_t kAhead = 256;
  // When a position's logical rows fill one block of the tensor (the
  // weights: a chunk's rows are consecutive), that block of the next
  // position is fetched, front to back, a few lines per step: into L2 to
  // read (pack; measured on a Zen 4 with 3 x 3 x 1024 x 1820: 0.57-0.66 of
  // memcpy before, 0.81-0.86 after), or to write instead of the rows' next
  // pieces (unpack). Unpack of 8 MiB or more (kStream): when the position's
  // rows are exactly one run of the tensor (the weights), they are written
  // to a stage that stays in L2, then copied out with non-temporal stores,
  // so that the tensor's lines are not read before they are written (the
  // rows' 64-byte pieces start anywhere in a line).
  std::vector<uint8_t> stage(t.staged ? t.span : 0);
  for (TileColsPositions pos(p, loops, begin, end); !pos.done(); pos.next()) {
    const uint64_t lbase = pos.lbase(), pbase = pos.pbase();
    uintptr_t ahead, ahead_end;  // the next position's block, none after the last
    pos.next_block(t, logical, &ahead, &ahead_end);
    for (uint64_t i = 0; i < t.xl.count; i += 2) {
      const uint64_t c = i * 32, valid = t.ext > c ? std::min<uint64_t>(64, t.ext - c) : 0;
      const bool two = i + 1 < t.xl.count;
      const __mmask64 mask = valid == 64 ? ~__mmask64{0} : (__mmask64{1} << valid) - 1;
      // Columns wholly padding read (or write) no logical byte.
      uint8_t* lg = valid == 0 ? logical : (t.staged ? stage.data() : logical + lbase) + c;
      const uint64_t lstep = valid != 0 ? t.il.ls : 0;
      uint8_t* pa = phys + pbase + i * t.xl.ps;
      for (uint64_t j = 0; j < t.il.count; ++j, lg += lstep, pa += t.il.ps) {
        uint8_t* rows[4] = {lg + t.o0, lg + t.o1, lg + t.o2, lg + t.o3};
        if (valid == 0) rows[0] = rows[1] = rows[2] = rows[3] = logical;
        __m512i r[4], o[4];
        if (kPack) {
          // The test of valid outside the loops over k (here and in the
          // unpack), and those unrolled, so that r stays in registers
          // (LC_HTP_UNROLL4; measured on a Zen 4, 3 x 3 x 1024 x 1820,
          // pinned, alternating, of memcpy: pack 0.56-0.73 -> 1.26-1.32,
          // unpack 0.54-0.60 -> 0.60-0.65).
          if (valid == 64) {
            LC_HTP_UNROLL4 for (int k = 0; k < 4; ++k) {
              _mm_prefetch(reinterpret_cast<const char*>(rows[k] + kAhead), _MM_HINT_T0);
              r[k] = load_halves(rows[k]);
            }
          } else {
            LC_HTP_UNROLL4 for (int k = 0; k < 4; ++k) r[k] = masked::_mm512_mask_loadu_epi8(pad, mask, rows[k]);
          }
          for (uint64_t n = 0; n < t.per_step && ahead < ahead_end; ++n, ahead += 64) {
            _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T2);  // mutate: equivalent (a prefetch: the same bytes)
          }
          pack_32x4x2(r, o);
          if (kStream) {
            _mm512_stream_si512(reinterpret_cast<__m512i*>(pa), o[0]);
            _mm512_stream_si512(reinterpret_cast<__m512i*>(pa + 64), o[1]);
            if (two) {
              _mm512_stream_si512(reinterpret_cast<__m512i*>(pa + t.xl.ps), o[2]);
              _mm512_stream_si512(reinterpret_cast<__m512i*>(pa + t.xl.ps + 64), o[3]);
            }
          } else {
            _mm512_storeu_si512(pa, o[0]);
            _mm512_storeu_si512(pa + 64, o[1]);
            if (two) {
              _mm512_storeu_si512(pa + t.xl.ps, o[2]);
              _mm512_storeu_si512(pa + t.xl.ps + 64, o[3]);
            }
          }
        } else {
          if (valid == 0) continue;
          for (uint64_t n = 0; n < t.per_step && ahead < ahead_end; ++n, ahead += 64) {
            __builtin_prefetch(reinterpret_cast<const void*>(ahead), 1, 3);
          }
          const uint8_t* next = pa + 4 * t.xl.ps;
          _mm_prefetch(reinterpret_cast<const char*>(next), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(next + 64), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(next + t.xl.ps), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(next + t.xl.ps + 64), _MM_HINT_T0);
          o[0] = _mm512_loadu_si512(pa);
          o[1] = _mm512_loadu_si512(pa + 64);
          o[2] = two ? _mm512_loadu_si512(pa + t.xl.ps) : pad;
          o[3] = two ? _mm512_loadu_si512(pa + t.xl.ps + 64) : pad;
          unpack_32x4x2(o, r);
          if (valid == 64) {
            LC_HTP_UNROLL4 for (int k = 0; k < 4; ++k) {
              if (!t.block) _mm_prefetch(reinterpret_cast<const char*>(rows[k] + kAhead), _MM_HINT_T0);
              _mm512_storeu_si512(rows[k], r[k]);
            }
          } else {
            LC_HTP_UNROLL4 for (int k = 0; k < 4; ++k) masked::_mm512_mask_storeu_epi8(rows[k], mask, r[k]);
          }
        }
      }
    }
    // (The template arguments too: a pack or an unstreamed unpack compiles no stream-out.)
    if (!kPack && kStream && t.staged) stream_run(logical + lbase, stage.data(), t.span);
  }
  if (kStream) _mm_sfence();
}

// walk_tile_cols with AVX2: the same walk, a 64-byte piece of a logical row
// two 32-byte halves (the first one tile i's row, the second tile i + 1's),
// each tile a 32 x 4 transpose of four halves. The last columns, partly or
// wholly padding, go through rows on the stack (once per run of x).
// Measured on a Zen 4 capped at AVX2 with 3 x 3 x 1024 x 1820, pinned,
// alternating, against a tile at a time (the walk of tiles then): pack 0.32-0.36 of
// memcpy -> 0.81-0.85, unpack 0.30-0.31 -> 0.50-0.52; its loops unrolled
// (LC_HTP_UNROLL4), 0.77 / 0.49-0.51 -> 1.05 / 0.62-0.64.
template <bool kPack, bool kStream>
__attribute__((target("avx2"), flatten)) void walk_tile_cols_avx2(const Plan& p, const std::vector<Loop>& loops,
                                                                  uint8_t* logical, uint8_t* phys, uint64_t begin,
                                                                  uint64_t end) {
  const TileColsWalk t(p, kPack, kStream);
  constexpr uint64_t kAhead = 256;
  // As in walk_tile_cols: the next position's block fetched (pack), the
  // position's rows staged and streamed out (unpack of 8 MiB or more).
  std::vector<uint8_t> stage(t.staged ? t.span : 0);
  alignas(32) uint8_t buf[4][64];
  for (TileColsPositions pos(p, loops, begin, end); !pos.done(); pos.next()) {
    const uint64_t lbase = pos.lbase(), pbase = pos.pbase();
    uintptr_t ahead, ahead_end;
    pos.next_block(t, logical, &ahead, &ahead_end);
    for (uint64_t i = 0; i < t.xl.count; i += 2) {
      const uint64_t c = i * 32, valid = t.ext > c ? std::min<uint64_t>(64, t.ext - c) : 0;
      const bool two = i + 1 < t.xl.count;
      // Columns wholly padding read (or write) no logical byte.
      uint8_t* lg = valid == 0 ? logical : (t.staged ? stage.data() : logical + lbase) + c;
      const uint64_t lstep = valid != 0 ? t.il.ls : 0;
      uint8_t* pa = phys + pbase + i * t.xl.ps;
      for (uint64_t j = 0; j < t.il.count; ++j, lg += lstep, pa += t.il.ps) {
        uint8_t* rows[4] = {lg + t.o0, lg + t.o1, lg + t.o2, lg + t.o3};
        __m256i ra[4], rb[4], oa[4], ob[4];
        if (kPack) {
          if (valid == 64) {
            LC_HTP_UNROLL4 for (int k = 0; k < 4; ++k) {
              _mm_prefetch(reinterpret_cast<const char*>(rows[k] + kAhead), _MM_HINT_T0);
              ra[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[k]));
              rb[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[k] + 32));
            }
          } else {
            LC_HTP_UNROLL4 for (int k = 0; k < 4; ++k) {
              std::memset(buf[k], p.pad_element[0], 64);
              if (valid != 0) std::memcpy(buf[k], rows[k], valid);
              ra[k] = _mm256_load_si256(reinterpret_cast<const __m256i*>(buf[k]));
              rb[k] = _mm256_load_si256(reinterpret_cast<const __m256i*>(buf[k] + 32));
            }
          }
          for (uint64_t n = 0; n < t.per_step && ahead < ahead_end; ++n, ahead += 64) {
            _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T2);
          }
          pack_32x4_avx2(ra, oa);
          LC_HTP_UNROLL4 for (int h = 0; h < 4; ++h) {
            if (kStream) _mm256_stream_si256(reinterpret_cast<__m256i*>(pa + 32 * h), oa[h]);
            else _mm256_storeu_si256(reinterpret_cast<__m256i*>(pa + 32 * h), oa[h]);
          }
          if (two) {
            pack_32x4_avx2(rb, ob);
            LC_HTP_UNROLL4 for (int h = 0; h < 4; ++h) {
              if (kStream) _mm256_stream_si256(reinterpret_cast<__m256i*>(pa + t.xl.ps + 32 * h), ob[h]);
              else _mm256_storeu_si256(reinterpret_cast<__m256i*>(pa + t.xl.ps + 32 * h), ob[h]);
            }
          }
        } else {
          if (valid == 0) continue;
          for (uint64_t n = 0; n < t.per_step && ahead < ahead_end; ++n, ahead += 64) {
            __builtin_prefetch(reinterpret_cast<const void*>(ahead), 1, 3);
          }
          const uint8_t* next = pa + 4 * t.xl.ps;
          _mm_prefetch(reinterpret_cast<const char*>(next), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(next + 64), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(next + t.xl.ps), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(next + t.xl.ps + 64), _MM_HINT_T0);
          LC_HTP_UNROLL4 for (int h = 0; h < 4; ++h) oa[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pa + 32 * h));
          unpack_32x4_avx2(oa, ra);
          if (two) {
            LC_HTP_UNROLL4 for (int h = 0; h < 4; ++h) ob[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pa + t.xl.ps + 32 * h));
            unpack_32x4_avx2(ob, rb);
          } else {
            for (int k = 0; k < 4; ++k) rb[k] = ra[k];
          }
          LC_HTP_UNROLL4 for (int k = 0; k < 4; ++k) {
            if (valid == 64) {
              if (!t.block) _mm_prefetch(reinterpret_cast<const char*>(rows[k] + kAhead), _MM_HINT_T0);
              _mm256_storeu_si256(reinterpret_cast<__m256i*>(rows[k]), ra[k]);
              _mm256_storeu_si256(reinterpret_cast<__m256i*>(rows[k] + 32), rb[k]);
            } else {
              _mm256_store_si256(reinterpret_cast<__m256i*>(buf[k]), ra[k]);
              _mm256_store_si256(reinterpret_cast<__m256i*>(buf[k] + 32), rb[k]);
              std::memcpy(rows[k], buf[k], valid);
            }
          }
        }
      }
    }
    if (!kPack && kStream && t.staged) stream_run_avx2(logical + lbase, stage.data(), t.span);
  }
  if (kStream) _mm_sfence();
}
#endif

#ifdef LC_HTP_X86
// 32 x 4 bytes: physical [c][k] <-> logical rows k of 32 bytes, with SSE2 byte
// and word interleaves (pack) and three rounds of byte unpacks (unpack).
template <bool kStream>
inline void interleave_32x4_u8(uint8_t* phys, const uint8_t* const* rows) {
  for (int half = 0; half < 2; ++half) {
    const __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[0] + 16 * half));
    const __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[1] + 16 * half));
    const __m128i r2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[2] + 16 * half));
    const __m128i r3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[3] + 16 * half));
    const __m128i a = _mm_unpacklo_epi8(r0, r1), b = _mm_unpacklo_epi8(r2, r3);
    const __m128i c = _mm_unpackhi_epi8(r0, r1), d = _mm_unpackhi_epi8(r2, r3);
    __m128i* out = reinterpret_cast<__m128i*>(phys + 64 * half);
    const __m128i o[4] = {_mm_unpacklo_epi16(a, b), _mm_unpackhi_epi16(a, b), _mm_unpacklo_epi16(c, d),
                          _mm_unpackhi_epi16(c, d)};
    for (int i = 0; i < 4; ++i) {
      if (kStream) _mm_stream_si128(out + i, o[i]);  // the caller checked the alignment
      else _mm_storeu_si128(out + i, o[i]);
    }
  }
}

inline void deinterleave_32x4_u8(const uint8_t* phys, uint8_t* const* rows) {
  for (int half = 0; half < 2; ++half) {
    const __m128i* in = reinterpret_cast<const __m128i*>(phys + 64 * half);
    __m128i w[4];
    for (int pair = 0; pair < 2; ++pair) {
      const __m128i v0 = _mm_loadu_si128(in + 2 * pair), v1 = _mm_loadu_si128(in + 2 * pair + 1);
      // v0 holds depths 0..3 (4 columns each), v1 depths 4..7 of this pair of registers.
      const __m128i t0 = _mm_unpacklo_epi8(v0, v1), t1 = _mm_unpackhi_epi8(v0, v1);
      const __m128i u0 = _mm_unpacklo_epi8(t0, t1), u1 = _mm_unpackhi_epi8(t0, t1);
      w[2 * pair] = _mm_unpacklo_epi8(u0, u1);      // column 0 then 1, depths 0..7
      w[2 * pair + 1] = _mm_unpackhi_epi8(u0, u1);  // column 2 then 3
    }
    // w[0], w[1]: depths 0..7; w[2], w[3]: depths 8..15 of this half.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rows[0] + 16 * half), _mm_unpacklo_epi64(w[0], w[2]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rows[1] + 16 * half), _mm_unpackhi_epi64(w[0], w[2]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rows[2] + 16 * half), _mm_unpacklo_epi64(w[1], w[3]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rows[3] + 16 * half), _mm_unpackhi_epi64(w[1], w[3]));
  }
}
#endif

#ifdef LC_HTP_X86
// A tile of at least n = 16 / kE elements both ways, every element in the
// tensor, in n x n squares of 16-byte registers (SSE2): n logical rows' n
// elements against n physical rows' n, the last square of each row or
// column of them moved back inside the tile (its elements moved again, the
// same). The NCHW layouts of at most 64 pixels a plane (their planes' loops
// fuse into tiles of 8 x 8, 7 x 7, ... rows) went element by element (on an
// Intel Xeon, pinned, of memcpy, pack / unpack: 1 x 7 x 7 x 512 uint8 0.015
// / 0.017 -> 0.076 / 0.071, fp16 0.074 / 0.035 -> 0.27 / 0.17; 25 KiB against
// an L1 memcpy).
template <bool kPack, size_t kE>
void tile_squares(uint8_t* phys, uint8_t* logical, uint64_t t_count, uint64_t k_count, const uint64_t* row) {
  constexpr uint64_t n = 16 / kE;
  for (uint64_t t0 = 0; t0 < t_count; t0 += n) {
    const uint64_t t = std::min(t0, t_count - n);
    for (uint64_t k0 = 0; k0 < k_count; k0 += n) {
      const uint64_t k = std::min(k0, k_count - n);
      __m128i v[n];
      uint8_t* ph = phys + (t * k_count + k) * kE;
      for (uint64_t i = 0; i < n; ++i) {
        const uint8_t* from = kPack ? logical + (row[k + i] + t) * kE : ph + i * k_count * kE;
        v[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
      }
      plane_transpose::transpose_square_sse2<kE>(v);
      for (uint64_t j = 0; j < n; ++j) {
        uint8_t* to = kPack ? ph + j * k_count * kE : logical + (row[k + j] + t) * kE;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to), v[j]);
      }
    }
  }
}
#endif

// One tile: physical [t][k] (t the stride-1 loop, k the loops inside it)
// against logical rows k of `t_count` elements at offsets row[k]. Element
// (t, k) is padding unless t < valid_t and valid_k[k].
template <bool kPack, size_t kE, bool kStream>
inline void copy_tile(uint8_t* phys, uint8_t* logical, uint64_t t_count, uint64_t k_count, const uint64_t* row,
                      uint64_t valid_t, const uint8_t* valid_k, bool all_valid, const uint8_t* pad) {
#ifdef LC_HTP_X86
  if (kE == 1 && t_count == 32 && k_count == 4 && all_valid) {
    uint8_t* rows[4] = {logical + row[0], logical + row[1], logical + row[2], logical + row[3]};
    if (kPack) interleave_32x4_u8<kStream>(phys, rows);
    else deinterleave_32x4_u8(phys, rows);
    return;
  }
  if (all_valid && t_count >= 16 / kE && k_count >= 16 / kE) {
    tile_squares<kPack, kE>(phys, logical, t_count, k_count, row);
    return;
  }
#endif
  for (uint64_t t = 0; t < t_count; ++t) {
    for (uint64_t k = 0; k < k_count; ++k) {
      uint8_t* ph = phys + (t * k_count + k) * kE;
      if (all_valid || (t < valid_t && valid_k[k])) {
        uint8_t* lg = logical + (row[k] + t) * kE;
        if (kPack) std::memcpy(ph, lg, kE);
        else std::memcpy(lg, ph, kE);
      } else if (kPack) {
        std::memcpy(ph, pad, kE);
      }
    }
  }
}

#ifdef LC_HTP_X86
// The 32 x 4 byte tile with AVX2 (pack_32x4_avx2, unpack_32x4_avx2) at any byte.
template <bool kPack, bool kStream>
__attribute__((target("avx2"))) inline void tile_32x4_u8_avx2(uint8_t* phys, uint8_t* const* rows) {
  __m256i r[4], o[4];
  if (kPack) {
    for (int k = 0; k < 4; ++k) r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[k]));
    pack_32x4_avx2(r, o);
    __m128i* dst = reinterpret_cast<__m128i*>(phys);
    for (int i = 0; i < 4; ++i) {
      if (kStream) {  // 16-byte aligned (checked by the caller)
        _mm_stream_si128(dst + 2 * i, _mm256_castsi256_si128(o[i]));
        _mm_stream_si128(dst + 2 * i + 1, _mm256_extracti128_si256(o[i], 1));
      } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 2 * i), o[i]);
      }
    }
  } else {
    for (int i = 0; i < 4; ++i) o[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(phys + 32 * i));
    unpack_32x4_avx2(o, r);
    for (int k = 0; k < 4; ++k) _mm256_storeu_si256(reinterpret_cast<__m256i*>(rows[k]), r[k]);
  }
}

// 32 x 4 byte tiles of a tensor without padding (no dimension clipped): no
// coordinates to track, the innermost outer loop a plain loop, the others an
// odometer of element offsets; its positions [begin, end) run.
template <bool kPack, bool kStream>
__attribute__((target("avx2"))) void walk_tiles_32x4_dense(const Plan& p, const std::vector<Loop>&, uint8_t* logical,
                                                           uint8_t* phys, uint64_t begin, uint64_t end) {
  const size_t outer = p.tile_at;
  const uint64_t off[4] = {p.tile_offset[0], p.tile_offset[1], p.tile_offset[2], p.tile_offset[3]};
  Loop unit;  // count 1: a stand-in when the tile is the whole nest
  const Loop& last = outer >= 1 ? p.loops[outer - 1] : unit;
  const size_t odometer = outer >= 1 ? outer - 1 : 0;
  std::vector<uint64_t> value(odometer, 0);
  uint64_t lbase = 0, pbase = 0;
  // As for rows (walk_body): pack fetches the tile's rows in the block it
  // reads next, outside the loop of least logical stride.
  uint64_t ahead = 0;
  if (outer >= 2) {
    size_t least = 0;
    for (size_t i = 1; i < outer; ++i) least = p.loops[i].ls < p.loops[least].ls ? i : least;
    if (least >= 1) ahead = p.loops[least - 1].ls;
  }
  seek(p.loops, odometer, begin, &value, nullptr, &lbase, &pbase);
  for (uint64_t left = end - begin; left != 0; --left) {
    uint64_t lo = lbase, po = pbase;
    for (uint64_t i = 0; i < last.count; ++i, lo += last.ls, po += last.ps) {
      uint8_t* rows[4] = {logical + lo + off[0], logical + lo + off[1], logical + lo + off[2], logical + lo + off[3]};
      if (kPack && ahead != 0) {
        for (int k = 0; k < 4; ++k) __builtin_prefetch(rows[k] + ahead);
      } else if (kPack && kStream) {
        _mm_prefetch(reinterpret_cast<const char*>(rows[0] + kPrefetchBytes), _MM_HINT_T0);
      }
      tile_32x4_u8_avx2<kPack, kStream>(phys + po, rows);
    }
    size_t j = left > 1 ? odometer : 0;
    for (; j-- > 0;) {
      const Loop& l = p.loops[j];
      if (++value[j] < l.count) {
        lbase += l.ls;
        pbase += l.ps;
        break;
      }
      value[j] = 0;
      lbase -= l.ls * (l.count - 1);
      pbase -= l.ps * (l.count - 1);
    }
  }
  if (kStream) _mm_sfence();
}
#endif

#ifdef LC_HTP_X86
// Tiles of K = 2 or 4 rows of 32-byte pieces of E = 1, 2 or 4 byte elements
// (crouton2, and the croutons' and weights' tiles of 16- and 32-bit
// elements): the piece of each row at byte 32c is the tile's bytes
// [32Kc, 32K(c + 1)). Pack interleaves rows by elements (unpacks of E and 2E
// bytes in lanes, then the lanes' halves joined); unpack gathers each row's
// elements in a lane with a byte shuffle and joins the lanes by 8-byte pieces
// (K = 2) or transposes 4-byte pieces (K = 4).
template <int kE>
__attribute__((target("avx2"), always_inline)) inline __m256i unpack_lo(__m256i a, __m256i b) {
  if constexpr (kE == 1) return _mm256_unpacklo_epi8(a, b);
  else if constexpr (kE == 2) return _mm256_unpacklo_epi16(a, b);
  else if constexpr (kE == 4) return _mm256_unpacklo_epi32(a, b);
  else return _mm256_unpacklo_epi64(a, b);
}
template <int kE>
__attribute__((target("avx2"), always_inline)) inline __m256i unpack_hi(__m256i a, __m256i b) {
  if constexpr (kE == 1) return _mm256_unpackhi_epi8(a, b);
  else if constexpr (kE == 2) return _mm256_unpackhi_epi16(a, b);
  else if constexpr (kE == 4) return _mm256_unpackhi_epi32(a, b);
  else return _mm256_unpackhi_epi64(a, b);
}

// The byte shuffle of one lane of a tile (16 bytes, elements t-major, K per
// t) into K groups of 16 / K bytes, k-major.
template <int kK, int kE>
struct TileGroups {
  alignas(16) uint8_t mask[16] = {};
  constexpr TileGroups() {
    constexpr int g = 16 / (kK * kE);  // elements of one row in a lane
    for (int k = 0; k < kK; ++k) {
      for (int t = 0; t < g; ++t) {
        for (int b = 0; b < kE; ++b) mask[(k * g + t) * kE + b] = static_cast<uint8_t>((t * kK + k) * kE + b);
      }
    }
  }
};

// One 32-byte piece of each of the kK rows, r[k], to the tile's 32 * kK
// bytes at ph.
template <int kK, int kE, bool kStream>
__attribute__((target("avx2"), always_inline)) inline void pack_piece_wide(uint8_t* ph, const __m256i* r) {
  __m256i o[kK];
  if constexpr (kK == 2) {
    const __m256i lo = unpack_lo<kE>(r[0], r[1]), hi = unpack_hi<kE>(r[0], r[1]);
    o[0] = _mm256_permute2x128_si256(lo, hi, 0x20);
    o[1] = _mm256_permute2x128_si256(lo, hi, 0x31);
  } else {
    const __m256i a = unpack_lo<kE>(r[0], r[1]), b = unpack_lo<kE>(r[2], r[3]);
    const __m256i d = unpack_hi<kE>(r[0], r[1]), e = unpack_hi<kE>(r[2], r[3]);
    const __m256i o0 = unpack_lo<2 * kE>(a, b), o1 = unpack_hi<2 * kE>(a, b);
    const __m256i o2 = unpack_lo<2 * kE>(d, e), o3 = unpack_hi<2 * kE>(d, e);
    o[0] = _mm256_permute2x128_si256(o0, o1, 0x20);
    o[1] = _mm256_permute2x128_si256(o2, o3, 0x20);
    o[2] = _mm256_permute2x128_si256(o0, o1, 0x31);
    o[3] = _mm256_permute2x128_si256(o2, o3, 0x31);
  }
  LC_HTP_UNROLL4 for (int i = 0; i < kK; ++i) {
    __m256i* dst = reinterpret_cast<__m256i*>(ph + 32 * i);
    if (kStream) _mm256_stream_si256(dst, o[i]);  // 32-byte aligned (checked by the caller)
    else _mm256_storeu_si256(dst, o[i]);
  }
}

// The tile's 32 * kK bytes at ph to one 32-byte piece of each row, r[k].
template <int kK, int kE>
__attribute__((target("avx2"), always_inline)) inline void unpack_piece_wide(const uint8_t* ph, __m256i* r) {
  static constexpr TileGroups<kK, kE> kGroups;
  const __m256i groups = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(kGroups.mask)));
  __m256i o[kK];
  LC_HTP_UNROLL4 for (int i = 0; i < kK; ++i) {
    o[i] = _mm256_shuffle_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ph + 32 * i)), groups);
  }
  if constexpr (kK == 2) {
    // Lane l of o[i] holds 8 bytes of row 0 then 8 of row 1: the tile's lane 2i + l.
    r[0] = _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(o[0], o[1]), 0xD8);
    r[1] = _mm256_permute4x64_epi64(_mm256_unpackhi_epi64(o[0], o[1]), 0xD8);
  } else {
    // Lane l of o[i]: 4 bytes of each row, the tile's lane 2i + l.
    const __m256i lanes = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const __m256i a = _mm256_unpacklo_epi32(o[0], o[1]), b = _mm256_unpacklo_epi32(o[2], o[3]);
    const __m256i d = _mm256_unpackhi_epi32(o[0], o[1]), e = _mm256_unpackhi_epi32(o[2], o[3]);
    r[0] = _mm256_permutevar8x32_epi32(_mm256_unpacklo_epi64(a, b), lanes);
    r[1] = _mm256_permutevar8x32_epi32(_mm256_unpackhi_epi64(a, b), lanes);
    r[2] = _mm256_permutevar8x32_epi32(_mm256_unpacklo_epi64(d, e), lanes);
    r[3] = _mm256_permutevar8x32_epi32(_mm256_unpackhi_epi64(d, e), lanes);
  }
}

template <bool kPack, int kK, int kE, bool kStream>
__attribute__((target("avx2"), always_inline)) inline void tile_wide_avx2(uint8_t* phys, uint8_t* const* rows,
                                                                          uint64_t pieces) {
  for (uint64_t c = 0; c < pieces; ++c) {
    __m256i r[kK];
    uint8_t* ph = phys + 32 * kK * c;
    if (kPack) {
      LC_HTP_UNROLL4 for (int k = 0; k < kK; ++k) {
        r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[k] + 32 * c));
      }
      pack_piece_wide<kK, kE, kStream>(ph, r);
    } else {
      unpack_piece_wide<kK, kE>(ph, r);
      LC_HTP_UNROLL4 for (int k = 0; k < kK; ++k) {
        if (kStream) _mm256_stream_si256(reinterpret_cast<__m256i*>(rows[k] + 32 * c), r[k]);
        else _mm256_storeu_si256(reinterpret_cast<__m256i*>(rows[k] + 32 * c), r[k]);
      }
    }
  }
}

// One tile by tile_wide_avx2: a tile partly padding goes a 32-byte piece at a
// time in registers. Packing, a row in padding is the padding pattern and a
// piece cut by it load_head_avx2's; unpacking, a cut piece's valid bytes are
// stored by halving stores.
template <bool kPack, int kK, size_t kE, bool kStream>
__attribute__((target("avx2"))) inline void copy_tile_wide(uint8_t* phys, uint8_t* logical, uint64_t t_count,
                                                          const uint64_t* row, uint64_t valid_t,
                                                          const uint8_t* valid_k, bool all_valid,
                                                          const uint8_t* pad_line, const uint8_t* logical_end) {
  const uint64_t bytes = t_count * kE;
  if (all_valid) {
    uint8_t* rows[kK];
    for (int k = 0; k < kK; ++k) rows[k] = logical + row[k] * kE;
    tile_wide_avx2<kPack, kK, kE, kStream>(phys, rows, bytes / 32);
    return;
  }
  const __m256i pad = _mm256_load_si256(reinterpret_cast<const __m256i*>(pad_line));
  const uint64_t v = valid_t * kE;  // the valid bytes of every valid row
  for (uint64_t at = 0; at < bytes; at += 32) {
    const uint64_t part = at >= v ? 0 : std::min<uint64_t>(32, v - at);  // of this piece
    __m256i r[kK];
    if (kPack) {
      LC_HTP_UNROLL4 for (int k = 0; k < kK; ++k) {
        r[k] = valid_k[k] ? load_head_avx2(logical + row[k] * kE + at, part, logical_end, pad, pad_line) : pad;
      }
      pack_piece_wide<kK, kE, kStream>(phys + kK * at, r);
      continue;
    }
    if (part == 0) continue;
    unpack_piece_wide<kK, kE>(phys + kK * at, r);
    LC_HTP_UNROLL4 for (int k = 0; k < kK; ++k) {
      if (!valid_k[k]) continue;
      uint8_t* lg = logical + row[k] * kE + at;
      if (part == 32) _mm256_storeu_si256(reinterpret_cast<__m256i*>(lg), r[k]);
      else store_head_avx2(lg, r[k], part);
    }
  }
}
#endif

#ifdef LC_HTP_X86
// A tile without padding by tile_wide_avx2 (a call the portable walks never make).
template <bool kPack, size_t kE, bool kStream, int kWide>
__attribute__((target("avx2"))) inline void whole_tile_avx2(uint8_t* phys, uint8_t* const* rows, uint64_t t_count) {
  if constexpr (kWide != 0) tile_wide_avx2<kPack, kWide, kE, kStream>(phys, rows, t_count * kE / 32);
}
#endif

#ifdef LC_HTP_X86
// The whole tiles of one run of the plain loop `last` from lg / ph, fetching
// ahead as the walk's tiles do.
template <bool kPack, size_t kE, bool kStream, int kWide>
__attribute__((target("avx2"))) inline void whole_tiles_avx2(const Plan& p, uint8_t* lg, uint8_t* ph, const Loop& last,
                                                             uint64_t next_ps, uint64_t t_count) {
  if constexpr (kWide != 0) {
    for (uint64_t i = 0; i < last.count; ++i, lg += last.ls * kE, ph += last.ps * kE) {
      uint8_t* rows[kWide];
      for (int k = 0; k < kWide; ++k) rows[k] = lg + p.tile_offset[k] * kE;
      if (p.tile_logical) {
        __builtin_prefetch(ph + next_ps * kE, kPack ? 1 : 0, 3);
        __builtin_prefetch(ph + next_ps * kE + 64, kPack ? 1 : 0, 3);
        for (int k = 0; k < kWide; ++k) __builtin_prefetch(rows[k] + kPrefetchBytes, kPack ? 0 : 1, 3);
      } else if (kPack && kStream) {
        // Each row's next line into L2 too: the next chunk's piece of it, a
        // line of each of the tile's rows (pixels 1 KiB or more apart) that
        // the hardware's prefetchers do not follow (on a Zen 5, pinned, of
        // memcpy: crouton4x1 fp16 1 x 256 x 256 x 512 pack 0.44-0.61 ->
        // 0.64-0.83; that line alone, without the fetch 256 bytes on into
        // L1, 0.57-0.78; neither 0.27-0.28).
        for (int k = 0; k < kWide; ++k) {
          _mm_prefetch(reinterpret_cast<const char*>(rows[k] + 64), _MM_HINT_T1);
          __builtin_prefetch(rows[k] + kPrefetchBytes);
        }
      }
      whole_tile_avx2<kPack, kE, kStream, kWide>(ph, rows, t_count);
    }
  }
}
#endif

// Walks the tiles along `loops` (p.loops, or p.tile_order): the tile's
// outer loops as an odometer around a plain innermost loop. Which physical
// elements of a tile are padding depends on the coordinates; along the plain
// loop it is recomputed only where it can change: never when that loop's
// dimension has no padding, only the tile's valid length when the loop runs
// along the tile's stride-1 dimension (and no loop inside the tile does), the
// whole tile otherwise. kWide (2 or 4): tiles of that many rows of 32-byte
// pieces with AVX2 (tile_wide_avx2, copy_tile_wide). The odometer's positions
// [begin, end) run.
template <bool kPack, size_t kE, bool kStream, int kWide = 0>
inline __attribute__((always_inline)) void walk_tiles_body(const Plan& p, const std::vector<Loop>& loops,
                                                          uint8_t* logical, uint8_t* phys, uint64_t begin,
                                                          uint64_t end) {
  const size_t m = loops.size();
  const Loop& tl = loops[p.tile_at];
  const size_t outer = p.tile_at, inner = m - p.tile_at - 1;
  const uint64_t k_count = p.tile_k;
  Loop unit;  // count 1: a stand-in when the tile is the whole nest
  unit.dim = tl.dim;
  const Loop& last = outer >= 1 ? loops[outer - 1] : unit;
  const size_t odometer = outer >= 1 ? outer - 1 : 0;
  std::vector<bool> in_tile(p.rank, false);
  in_tile[tl.dim] = true;
  bool last_inside = false;  // a loop inside the tile runs along the plain loop's dimension
  for (size_t i = p.tile_at + 1; i < m; ++i) {
    in_tile[loops[i].dim] = true;
    last_inside = last_inside || loops[i].dim == last.dim;
  }
  bool tile_clipped = tl.clipped;
  for (size_t i = p.tile_at + 1; i < m; ++i) tile_clipped = tile_clipped || loops[i].clipped;
  const bool dense = p.padded == p.extent;
  const bool along_t = last.clipped && last.dim == tl.dim && !last_inside;
  [[maybe_unused]] constexpr int kTileRows = kWide != 0 ? kWide : 1;  // of a tile by tile_wide_avx2
  std::vector<uint64_t> value(odometer, 0), x(p.rank, 0), row(k_count);
  std::vector<uint8_t> valid_k(k_count, 1);
  uint64_t lbase = 0, pbase = 0;
  const uint64_t next_ps = outer >= 2 ? loops[outer - 2].ps : 0;
  constexpr uint64_t kAhead = 1;
  uint64_t logical_bytes = kE;
  for (uint64_t n : p.extent) logical_bytes *= n;
  [[maybe_unused]] const uint8_t* const logical_end = logical + logical_bytes;
  bool all_valid = true;
  uint64_t valid_t = tl.count;
  // What the validity of a tile checks, made once: the padded dimensions
  // outside the tile (its coordinate inside the extent), and for each row k
  // those of the clipped loops inside it (coordinate plus the row's delta).
  struct Bound {
    size_t dim;
    uint64_t delta, extent;
  };
  std::vector<Bound> outside, inside;
  std::vector<size_t> inside_end(k_count, 0);
  for (size_t d = 0; d < p.rank; ++d) {
    if (!in_tile[d] && p.padded[d] != p.extent[d]) outside.push_back({d, 0, p.extent[d]});
  }
  for (uint64_t k = 0; k < k_count; ++k) {
    for (size_t i = 0; i < inner && tile_clipped; ++i) {
      const Loop& l = loops[p.tile_at + 1 + i];
      if (l.clipped) inside.push_back({l.dim, p.tile_delta[k * inner + i], p.extent[l.dim]});
    }
    inside_end[k] = inside.size();
  }
  // The validity of the tile at coordinate x, its rows at logical offset lo.
  auto compute = [&](uint64_t lo) {
    bool ok = true;
    for (const Bound& b : outside) ok &= x[b.dim] < b.extent;
    const uint64_t xt = x[tl.dim], et = p.extent[tl.dim];
    valid_t = !ok ? 0 : !tl.clipped ? tl.count : xt < et ? std::min(tl.count, et - xt) : 0;
    all_valid = valid_t == tl.count;
    for (uint64_t k = 0, i = 0; k < k_count; ++k) {
      bool v = valid_t != 0;
      for (; i < inside_end[k]; ++i) v = v && x[inside[i].dim] + inside[i].delta < inside[i].extent;
      valid_k[k] = v;
      all_valid = all_valid && v;
      row[k] = v ? lo + p.tile_offset[k] : 0;
    }
  };
  // The padded dimensions, each with the farthest a tile reaches along it
  // from its coordinate: a tile is whole when every one stays inside.
  std::vector<std::pair<size_t, uint64_t>> reach;
  for (size_t d = 0; d < p.rank; ++d) {
    if (p.padded[d] == p.extent[d]) continue;
    uint64_t far = d == tl.dim && tl.clipped ? tl.count - 1 : 0;
    for (uint64_t k = 0; k < k_count; ++k) {
      for (size_t i = 0; i < inner; ++i) {
        const Loop& l = loops[p.tile_at + 1 + i];
        if (l.dim == d && l.clipped) far = std::max(far, p.tile_delta[k * inner + i]);
      }
    }
    reach.emplace_back(d, far);
  }
  [[maybe_unused]] auto whole_at = [&] {
    for (const auto& [d, far] : reach) {
      if (x[d] + far >= p.extent[d]) return false;
    }
    return true;
  };
  seek(loops, odometer, begin, &value, &x, &lbase, &pbase);
  for (uint64_t left = end - begin; left != 0; --left) {
    const uint64_t x_last = x[last.dim];
    bool rows_valid = true;  // every valid_k set (when only valid_t changes along the loop)
#ifdef LC_HTP_X86
    if (kWide != 0 && odometer >= 1 && value[odometer - 1] == 0 && left >= loops[odometer - 1].count) {
      // A whole run of the loop around the plain one, or the run's first
      // positions while they are whole (a position's tiles are when its
      // farthest is: coordinates only grow along both loops), goes without
      // the odometer: short plain loops (crouton2's 2) would spend more on
      // it than on their tiles.
      const Loop& l2 = loops[odometer - 1];
      uint64_t run = l2.count;
      if (!dense) {
        const uint64_t x2 = x[l2.dim];
        for (run = 0; run < l2.count; ++run) {
          x[l2.dim] = x2 + run * l2.step;
          x[last.dim] += (last.count - 1) * last.step;
          const bool whole = whole_at();
          x[last.dim] -= (last.count - 1) * last.step;
          if (!whole) break;
        }
        x[l2.dim] = x2;
      }
      if (run != 0) {
        for (uint64_t j = 0; j < run; ++j) {
          whole_tiles_avx2<kPack, kE, kStream, kWide>(p, logical + (lbase + j * l2.ls) * kE,
                                                      phys + (pbase + j * l2.ps) * kE, last, next_ps, tl.count);
        }
        // To the last position run, where the odometer moves on as after any.
        value[odometer - 1] = run - 1;
        x[l2.dim] += (run - 1) * l2.step;
        lbase += (run - 1) * l2.ls;
        pbase += (run - 1) * l2.ps;
        left -= run - 1;
        if (left > 1) advance(loops, odometer, &value, &x, &lbase, &pbase);
        continue;
      }
    }
    if (kWide != 0) {
      // Validity cannot change along an unpadded plain loop: when its first
      // tile is whole, all are, and the loop runs without coordinates.
      bool whole = dense;
      if (!dense && !last.clipped) {
        compute(lbase);
        whole = all_valid;
      } else if (!dense && !along_t) {
        // Coordinates only grow along the loop: whole if its last tile is.
        x[last.dim] = x_last + (last.count - 1) * last.step;
        whole = whole_at();
        x[last.dim] = x_last;
      }
      if (whole) {
        whole_tiles_avx2<kPack, kE, kStream, kWide>(p, logical + lbase * kE, phys + pbase * kE, last, next_ps,
                                                    tl.count);
        if (left > 1) advance(loops, odometer, &value, &x, &lbase, &pbase);
        continue;
      }
    }
#endif
    for (uint64_t i = 0; i < last.count; ++i) {
      const uint64_t lo = lbase + i * last.ls, po = pbase + i * last.ps;
      if (dense) {
        for (uint64_t k = 0; k < k_count; ++k) row[k] = lo + p.tile_offset[k];
      } else if (i == 0 || (last.clipped && !along_t)) {
        x[last.dim] = x_last + i * last.step;
#ifdef LC_HTP_X86
        if (kWide != 0 && last.clipped && !along_t && whole_at()) {
          // Every tile of the loop is checked anew: a whole one needs no
          // more than its reach (the rows of a tile at the padded edge do).
          uint8_t* rows[kTileRows];
          for (int k = 0; k < kTileRows; ++k) rows[k] = logical + (lo + p.tile_offset[k]) * kE;
          whole_tile_avx2<kPack, kE, kStream, kWide>(phys + po * kE, rows, tl.count);
          continue;
        }
#endif
        compute(lo);
        rows_valid = valid_t != 0 && std::all_of(valid_k.begin(), valid_k.end(), [](uint8_t v) { return v != 0; });
      } else {
        if (along_t && valid_t != 0) {
          const uint64_t xt = x_last + i * last.step, et = p.extent[tl.dim];
          valid_t = xt < et ? std::min(tl.count, et - xt) : 0;
          all_valid = rows_valid && valid_t == tl.count;
        }
        for (uint64_t k = 0; k < k_count; ++k) row[k] = valid_k[k] ? lo + p.tile_offset[k] : 0;
      }
      if (kPack && kStream) {
        __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(logical + row[0] * kE) + kPrefetchBytes));
      }
      if (p.tile_logical) {
        // The chunks are scattered; each is visited front to back, a step of
        // the loop around `last` apart: fetch the next chunk's tile (writing
        // it when packing), and the tile's rows a few tiles on.
        const uintptr_t ahead = reinterpret_cast<uintptr_t>(phys) + (po + kAhead * next_ps) * kE;
        __builtin_prefetch(reinterpret_cast<const void*>(ahead), kPack ? 1 : 0, 3);
        __builtin_prefetch(reinterpret_cast<const void*>(ahead + 64), kPack ? 1 : 0, 3);
        if (tl.count * k_count * kE > 128) __builtin_prefetch(reinterpret_cast<const void*>(ahead + 128), kPack ? 1 : 0, 3);
        for (uint64_t k = 0; k < k_count && k < 8; ++k) {
          __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(logical + row[k] * kE) + kPrefetchBytes), kPack ? 0 : 1, 3);
        }
      }
#ifdef LC_HTP_X86
      if constexpr (kWide != 0) {
        copy_tile_wide<kPack, kWide, kE, kStream>(phys + po * kE, logical, tl.count, row.data(), valid_t,
                                                  valid_k.data(), all_valid, p.pad_line, logical_end);
        continue;
      }
#endif
      copy_tile<kPack, kE, kStream>(phys + po * kE, logical, tl.count, k_count, row.data(), valid_t, valid_k.data(),
                                    all_valid, p.pad_element);
    }
    x[last.dim] = x_last;
    if (left > 1) advance(loops, odometer, &value, &x, &lbase, &pbase);
  }
#ifdef LC_HTP_X86
  if (kStream) _mm_sfence();
#endif
}

template <bool kPack, size_t kE, bool kStream>
void walk_tiles(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical, uint8_t* phys, uint64_t begin,
                uint64_t end) {
  walk_tiles_body<kPack, kE, kStream>(p, loops, logical, phys, begin, end);
}

#ifdef LC_HTP_X86
template <bool kPack, int kK, size_t kE, bool kStream>
__attribute__((target("avx2"))) void walk_tiles_wide(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical,
                                                     uint8_t* phys, uint64_t begin, uint64_t end) {
  walk_tiles_body<kPack, kE, kStream, kK>(p, loops, logical, phys, begin, end);
}

// The walk of tiles of kK rows of elem-byte elements by copy_tile_wide.
template <bool kPack, int kK>
WalkFn wide_tiles_walk(uint64_t elem, bool stream) {
  switch (elem) {
    case 1: return stream ? &walk_tiles_wide<kPack, kK, 1, true> : &walk_tiles_wide<kPack, kK, 1, false>;
    case 2: return stream ? &walk_tiles_wide<kPack, kK, 2, true> : &walk_tiles_wide<kPack, kK, 2, false>;
    default: return stream ? &walk_tiles_wide<kPack, kK, 4, true> : &walk_tiles_wide<kPack, kK, 4, false>;
  }
}
#endif

// ---- plane transposes (optimized/plane_transpose.h) ---------------------------

#ifdef LC_HTP_X86
// Planes of few columns (fewer than a half tile: the channels of an image,
// 3 for RGB) whose last loop around them (w) is logically just outside the
// columns, so that a run of w of them is logically one plane of H rows of
// run x C elements (the pixels' channels, row h at h * h.ls), physically
// run x C rows (w, c) of H elements at w * w.ps + c * c.ps: in bands of rows
// (packs of rows of at most kFewWholeBytes: all of them; otherwise 4n, the
// last one moved back over the one before, or the plane's rows if fewer)
// through a stage of 64 KiB (a run too long for it in pieces), each band
// transposed between the logical plane and the stage (plane_transpose.h's
// tiles) and each of its rows copied between the stage and its physical row.
// A plane at a time they went in blocks writing (or reading) a few elements
// of each of 16 rows (on an Intel Xeon, pinned, alternating, of memcpy, pack
// / unpack: uint8 1 x 224 x 224 x 3 0.10 / 0.04 -> 0.29 / 0.25, 8 x 224 x
// 224 x 3 0.19 / 0.08 -> 0.47 / 0.37, 1 x 64 x 64 x 15 0.09 / 0.08 -> 0.27 /
// 0.34; fp16 1 x 224 x 224 x 3 0.27 / 0.09 -> 0.40 / 0.38).
constexpr uint64_t kFewStageBytes = 64u << 10;
constexpr uint64_t kFewWholeBytes = 256;  // planes' rows of at most this many bytes go in one band

template <bool kPack, size_t kE>
__attribute__((target("avx2"))) void few_columns(const Plan& p, const Loop& w, uint8_t* logical, uint8_t* phys,
                                                 uint64_t run) {
  constexpr uint64_t tile = 64 / kE;
  const Loop& r = p.loops[p.plane_r];
  const Loop& c = p.loops[p.plane_c];
  // Packs of rows of at most kFewWholeBytes in one band, so that each
  // physical row (w, c) is written whole and a channel's rows of the run one
  // after another (uint8 1 x 224 x 224 x 3 0.26 -> 0.29 of memcpy, 8 x 224 x
  // 224 x 3 0.38 -> 0.48; unpacks so 0.26 -> 0.24, 0.38 alike); the others
  // in bands of a line.
  const bool whole = kPack && r.count * kE <= kFewWholeBytes;  // mutate: equivalent (a choice of path)
  const uint64_t band = whole ? r.count : std::min(tile, r.count), bytes = band * kE;
  const uint64_t pitch = (bytes + 63) / 64 * 64, chunk = std::max<uint64_t>(1, kFewStageBytes / (pitch * c.count));
  const uint64_t channels = c.count, w_step = w.ps * kE, c_step = c.ps * kE;
  alignas(64) static thread_local uint8_t stage[kFewStageBytes];
  for (uint64_t w0 = 0; w0 < run; w0 += chunk) {
    const uint64_t n = std::min(chunk, run - w0), cols = n * channels;
    for (uint64_t at = 0; at < r.count; at += band) {
      const uint64_t h0 = std::min(at, r.count - band);
      uint8_t* lg = logical + (w0 * w.ls + h0 * r.ls) * kE;
      if (kPack) plane_transpose::transpose_plane_avx2<kE, false>(lg, r.ls, stage, pitch / kE, band, cols);
      uint8_t* st = stage;
      uint8_t* at_w = phys + w0 * w_step + h0 * kE;
      for (uint64_t wi = 0; wi < n; ++wi, at_w += w_step) {
        uint8_t* ph = at_w;
        for (uint64_t ci = 0; ci < channels; ++ci, st += pitch, ph += c_step) {
          copy_run(kPack ? ph : st, kPack ? st : ph, bytes);  // memcpy: fp16 1 x 224 x 224 x 3 0.34 -> 0.08
        }
      }
      if (!kPack) plane_transpose::transpose_plane_avx2<kE, false>(stage, pitch / kE, lg, r.ls, cols, band);
    }
  }
}

// The R x R transposes of kE-byte elements in each 128-bit lane of R = 16 /
// kE registers: element j of v[i] ends in v[j] at element i.
template <size_t kE>
LC_HTP_AVX512 inline __attribute__((always_inline)) void lane_transpose(__m512i* v) {
  if constexpr (kE == 1) byte_transpose::transpose16x16_epi8_x4(v);
  else if constexpr (kE == 2) byte_transpose::transpose8x8_epi16_x4(v, v);
  else byte_transpose::transpose4x4_epi32_x4(v);
}

// A group of n planes of kE-byte elements with AVX-512, each plane H rows h
// by C columns c on the logical side (both multiples of 4R elements, R = 16
// / kE: 64 bytes), C rows of H on the physical side, through a stage (in L1
// in cache, in L2 streamed) in two passes whose reads and writes run along
// whole rows of both tensors. Each step takes R rows h of 4R columns (the
// 64 bytes of each of R logical rows) and transposes the R x R elements of
// each 128-bit lane, which leaves lane q of register k the R h of column Rq
// + k; four such registers of four steps of h (one line of the stage each)
// become four physical lines (h 0..4R-1 of columns k, R + k, 2R + k, 3R +
// k) by one 4 x 4 transpose of their lanes. Packing, the steps read the
// logical rows (source row h of plane g at src + g * s_step + h * sb) and
// write the stage; the lane transposes read it and write the physical rows
// (row c at dst + c * db, the n planes' H elements one run). Unpacking runs
// the other way (physical row c of plane g at src + g * s_step + c * sb,
// logical row h at dst + h * db, the n planes' C elements one run), the
// stage in the lane transposes' order, each physical line read fetching the
// one `next` bytes on into L2 (0: none; the next group's, streamed). kStream:
// the destination's lines non-temporal (dst and db on lines, the caller's).
// As many shuffles a line as a 4R x 4R tile in registers, but where such a
// tile reads or writes 4R rows a line each, often in one L1 set (HTP NCHW 1
// x 32 x 32 x 128 fp16: rows 8 KiB apart) or each row a DRAM page of its own
// (1 x 256 x 256 x 1024 uint8: 256 KiB apart), these steps take R of them
// 64 bytes after 64 bytes along each row, and the lane transposes a run of
// the planes' whole lines of each physical row. Measured on a Zen 5, one
// thread, pinned, alternating, of memcpy, against plane_transpose.h's tiles
// and a stage of the planes side by side, pack / unpack: fp16 1 x 32 x 32 x
// 128 0.19 / 0.22 -> 0.33 / 0.32 (medians of 7); lines of 16 bytes stored
// or loaded one by one in place of the lane transposes 0.18 / 0.17; groups
// of two planes 0.27 / 0.23 against 0.28 / 0.25 for four in one run, of
// eight 0.26 / 0.25 against 0.32 / 0.30 in another; unpacking with the
// steps' planes outermost, each logical row's run written a plane at a
// time, 0.30 -> 0.17. uint8 1 x 256 x 256 x 1024 0.35 / 0.42 -> 0.56 / 0.53
// (medians of 3), with the unpack's fetch of the next plane 0.51 -> 0.63
// (medians of 5; 1 x 128 x 128 x 1024 0.58 -> 0.69); the same fetch in the
// packs' steps 0.59 -> 0.62 there, 0.62 -> 0.65 for fp16 1 x 128 x 128 x
// 1024 and 0.60 -> 0.57 for uint8 1 x 128 x 128 x 1024: not taken.
template <bool kPack, size_t kE, bool kStream>
LC_HTP_AVX512 void group_lanes(const uint8_t* src, uint64_t s_step, uint64_t sb, uint8_t* dst, uint64_t db,
                               uint64_t n, uint64_t H, uint64_t C, uint8_t* stage, uint64_t next) {
  constexpr uint64_t R = 16 / kE;  // rows h a step; a step's 64 bytes of each hold 4R columns
  const uint64_t HB = H / R, CB = C / (4 * R);
  // The stage's line of step (g, hb, cb), register k: the steps' stores
  // (pack) or loads (unpack) one after another.
  const auto line = [=](uint64_t g, uint64_t hb, uint64_t cb, uint64_t k) {
    return stage + 64 * (kPack ? ((g * HB + hb) * CB + cb) * R + k : ((g * CB + cb) * R + k) * HB + hb);
  };
  __m512i v[R];
  if (kPack) {
    for (uint64_t hb = 0; hb < HB; ++hb) {
      for (uint64_t g = 0; g < n; ++g) {
        for (uint64_t cb = 0; cb < CB; ++cb) {
          const uint8_t* in = src + g * s_step + R * hb * sb + 64 * cb;
#pragma GCC unroll 16
          for (uint64_t i = 0; i < R; ++i) v[i] = _mm512_loadu_si512(in + i * sb);
          lane_transpose<kE>(v);
#pragma GCC unroll 16
          for (uint64_t k = 0; k < R; ++k) _mm512_store_si512(line(g, hb, cb, k), v[k]);
        }
      }
    }
  }
  // The lane transposes: physical rows 4R cb + k + Rq, each a run over the
  // planes g and their lines of 4R h (four steps of h).
  for (uint64_t cb = 0; cb < CB; ++cb) {
    for (uint64_t k = 0; k < R; ++k) {
      uint8_t* row = kPack ? dst + (4 * R * cb + k) * db : nullptr;
      const uint8_t* from = kPack ? nullptr : src + (4 * R * cb + k) * sb;
      for (uint64_t g = 0; g < n; ++g) {
        for (uint64_t h0 = 0; h0 < HB; h0 += 4) {
          __m512i o[4];
#pragma GCC unroll 4
          for (uint64_t j = 0; j < 4; ++j) {
            if (kPack) {
              o[j] = _mm512_load_si512(line(g, h0 + j, cb, k));
              continue;
            }
            const uint8_t* in = from + R * j * sb + g * s_step + 16 * h0;
            const char* ahead = reinterpret_cast<const char*>(in + next);
            if (next != 0) _mm_prefetch(ahead, _MM_HINT_T1);  // mutate: equivalent (a fetch: the same bytes)
            o[j] = _mm512_loadu_si512(in);
          }
          byte_transpose::transpose_lanes4x4(o);
#pragma GCC unroll 4
          for (uint64_t q = 0; q < 4; ++q) {
            if (!kPack) {
              _mm512_store_si512(line(g, h0 + q, cb, k), o[q]);
            } else {
              uint8_t* to = row + R * q * db + (g * H + R * h0) * kE;
              if (kStream) _mm512_stream_si512(reinterpret_cast<__m512i*>(to), o[q]);
              else _mm512_storeu_si512(to, o[q]);
            }
          }
        }
      }
    }
  }
  if (kPack) return;
  for (uint64_t hb = 0; hb < HB; ++hb) {
    for (uint64_t g = 0; g < n; ++g) {
      for (uint64_t cb = 0; cb < CB; ++cb) {
#pragma GCC unroll 16
        for (uint64_t k = 0; k < R; ++k) v[k] = _mm512_load_si512(line(g, hb, cb, k));
        lane_transpose<kE>(v);
        uint8_t* out = dst + R * hb * db + (g * C + 4 * R * cb) * kE;
#pragma GCC unroll 16
        for (uint64_t i = 0; i < R; ++i) {
          if (kStream) _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i * db), v[i]);
          else _mm512_storeu_si512(out + i * db, v[i]);
        }
      }
    }
  }
}

// The R x R transposes of kE-byte elements in each 128-bit lane of R = 16 /
// kE registers of 256 bits.
template <size_t kE>
__attribute__((target("avx2"), always_inline)) inline void lane_transpose(__m256i* v) {
  if constexpr (kE == 1) byte_transpose::transpose16x16_epi8_x2(v);
  else if constexpr (kE == 2) byte_transpose::transpose8x8_epi16_x2(v, v);
  else byte_transpose::transpose4x4_epi32_x2(v);
}

// group_lanes with 256-bit registers, for hosts without AVX-512: a step
// takes the 32 bytes (2R columns) of each of R logical rows h, which leaves
// lane q of register k the R h of column Rq + k, and the lines of four
// steps of h become the 64 bytes of h 0..4R-1 of two physical rows (columns
// k and R + k) by two 2 x 2 lane exchanges, each row's line stored as its
// two halves one after the other. Unpacking runs the other way (the same
// arguments as group_lanes), its last pass two column blocks of 2R at a time
// so that each logical row's line is stored whole too.
template <bool kPack, size_t kE, bool kStream>
__attribute__((target("avx2"))) void group_lanes_avx2(const uint8_t* src, uint64_t s_step, uint64_t sb, uint8_t* dst,
                                                       uint64_t db, uint64_t n, uint64_t H, uint64_t C, uint8_t* stage,
                                                       uint64_t next) {
  constexpr uint64_t R = 16 / kE;  // rows h a step; a step's 32 bytes of each hold 2R columns
  const uint64_t HB = H / R, CB = C / (2 * R);
  // The stage's 32 bytes of step (g, hb, cb), register k: the steps' stores
  // (pack) or loads (unpack) one after another.
  const auto entry = [=](uint64_t g, uint64_t hb, uint64_t cb, uint64_t k) {
    return reinterpret_cast<__m256i*>(
        stage + 32 * (kPack ? ((g * HB + hb) * CB + cb) * R + k : ((g * CB + cb) * R + k) * HB + hb));
  };
  const auto put = [](uint8_t* to, __m256i v) __attribute__((target("avx2"), always_inline)) {
    if (kStream) _mm256_stream_si256(reinterpret_cast<__m256i*>(to), v);
    else _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), v);
  };
  __m256i v[2][R];
  if (kPack) {
    for (uint64_t hb = 0; hb < HB; ++hb) {
      for (uint64_t g = 0; g < n; ++g) {
        for (uint64_t cb = 0; cb < CB; ++cb) {
          const uint8_t* in = src + g * s_step + R * hb * sb + 32 * cb;
#pragma GCC unroll 16
          for (uint64_t i = 0; i < R; ++i) v[0][i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i * sb));
          lane_transpose<kE>(v[0]);
#pragma GCC unroll 16
          for (uint64_t k = 0; k < R; ++k) _mm256_store_si256(entry(g, hb, cb, k), v[0][k]);
        }
      }
    }
  }
  // The lane exchanges: physical rows 2R cb + k and 2R cb + k + R, each a
  // run over the planes g and their lines of 4R h (four steps of h).
  for (uint64_t cb = 0; cb < CB; ++cb) {
    for (uint64_t k = 0; k < R; ++k) {
      uint8_t* row = kPack ? dst + (2 * R * cb + k) * db : nullptr;
      const uint8_t* from = kPack ? nullptr : src + (2 * R * cb + k) * sb;
      for (uint64_t g = 0; g < n; ++g) {
        for (uint64_t h0 = 0; h0 < HB; h0 += 4) {
          if (kPack) {
            const __m256i o0 = _mm256_load_si256(entry(g, h0, cb, k));
            const __m256i o1 = _mm256_load_si256(entry(g, h0 + 1, cb, k));
            const __m256i o2 = _mm256_load_si256(entry(g, h0 + 2, cb, k));
            const __m256i o3 = _mm256_load_si256(entry(g, h0 + 3, cb, k));
            uint8_t* to = row + (g * H + R * h0) * kE;
            put(to, _mm256_permute2x128_si256(o0, o1, 0x20));
            put(to + 32, _mm256_permute2x128_si256(o2, o3, 0x20));
            put(to + R * db, _mm256_permute2x128_si256(o0, o1, 0x31));
            put(to + R * db + 32, _mm256_permute2x128_si256(o2, o3, 0x31));
            continue;
          }
          const uint8_t* in = from + g * s_step + R * h0 * kE;
          if (next != 0) {  // mutate: equivalent (a fetch: the same bytes)
            _mm_prefetch(reinterpret_cast<const char*>(in + next), _MM_HINT_T1);
            _mm_prefetch(reinterpret_cast<const char*>(in + R * sb + next), _MM_HINT_T1);
          }
          const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
          const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 32));
          const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + R * sb));
          const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + R * sb + 32));
          _mm256_store_si256(entry(g, h0, cb, k), _mm256_permute2x128_si256(a0, b0, 0x20));
          _mm256_store_si256(entry(g, h0 + 1, cb, k), _mm256_permute2x128_si256(a0, b0, 0x31));
          _mm256_store_si256(entry(g, h0 + 2, cb, k), _mm256_permute2x128_si256(a1, b1, 0x20));
          _mm256_store_si256(entry(g, h0 + 3, cb, k), _mm256_permute2x128_si256(a1, b1, 0x31));
        }
      }
    }
  }
  if (kPack) return;
  for (uint64_t hb = 0; hb < HB; ++hb) {
    for (uint64_t g = 0; g < n; ++g) {
      for (uint64_t cb = 0; cb < CB; cb += 2) {
#pragma GCC unroll 2
        for (uint64_t c = 0; c < 2; ++c) {
#pragma GCC unroll 16
          for (uint64_t k = 0; k < R; ++k) v[c][k] = _mm256_load_si256(entry(g, hb, cb + c, k));
          lane_transpose<kE>(v[c]);
        }
        uint8_t* out = dst + R * hb * db + (g * C + 2 * R * cb) * kE;
#pragma GCC unroll 16
        for (uint64_t i = 0; i < R; ++i) {
          put(out + i * db, v[0][i]);
          put(out + i * db + 32, v[1][i]);
        }
      }
    }
  }
}

// Planes (see make_plan): each position of the loops around the plane is one
// transpose, rows the innermost loop (physical stride 1), columns the loop
// of logical stride 1. Outputs of 8 MiB and more stream the planes whose
// destination rows are whole lines apart.
//
// Packs whose planes' rows (h) are not whole tiles and whose last loop
// around the plane (w) is the one just outside the rows in physical order
// take the planes of a run of consecutive w as one transpose of w x h rows:
// physically one row after another (offset w * H + h), logically each at its
// own offset (w * w.ls + h * h.ls), gathered by address (RunRows), so that
// the tiles cover the run whole, where a plane of few rows takes tiles of 32
// bytes of rows (each destination line written twice, in two planes) or
// tiles moved back over each other (on an Intel Xeon, pinned, alternating,
// of memcpy: HTP NCHW uint8 1 x 14 x 14 x 256 0.13 -> 0.28, 1 x 28 x 28 x 128
// 0.22 -> 0.38, 1 x 56 x 56 x 64 0.26 -> 0.45, fp16 1 x 28 x 28 x 128 0.37 ->
// 0.58, 1 x 17 x 17 x 160 0.28 -> 0.45). Unpacks so (the destination's rows
// scattered by address) measured slower as often as faster, and stay a
// plane at a time.
constexpr uint64_t kGroupStageBytes = 32u << 10;
constexpr uint64_t kGroupRunBytes = 512;     // a group's pieces of a destination row: at most this many bytes
constexpr uint64_t kGroupMinRunBytes = 256;  // and at least this many
constexpr uint64_t kGroupLargeStageBytes = 256u << 10;  // streamed outputs: a stage in L2
// group_lanes' stage, streamed: half the L2 of the CPUs with AVX-512 (1 MiB
// or more; on a Zen 5, pinned, uint8 1 x 256 x 256 x 1024 pack 0.63-0.66 of
// memcpy with 256 KiB, 0.67-0.73 with 512, 0.63-0.68 with 1 MiB; the unpack
// par).
constexpr uint64_t kLanesLargeStageBytes = 512u << 10;
constexpr uint64_t kGroupLargeRunBytes = 2048;

template <bool kPack, size_t kE>
__attribute__((target("avx2"))) void walk_planes(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical,
                                                 uint8_t* phys, uint64_t begin, uint64_t end) {
  constexpr uint64_t half = 32 / kE, tile = 64 / kE;
  const Loop& r = p.loops[p.plane_r];
  const Loop& c = p.loops[p.plane_c];
  const bool large = p.elements * kE >= kStreamBytes;
  const size_t m = loops.size();
  // Packs of planes whose rows are not whole tiles in runs of the loop w: the
  // last one around the plane, physically just outside its rows (the rows
  // are the innermost loop, physical stride 1: w's is the rows' count)
  // unless that is the columns' loop.
  const bool runs = kPack && r.count % tile != 0 &&  // mutate: equivalent (whole tiles: a path for the same bytes)
                    p.plane_c + 1 != p.plane_r && c.count >= half;
  // Planes of fewer columns than a half tile whose last loop around them (w)
  // is logically just outside the columns: runs of w in bands of rows
  // through a stage (few_columns).
  // 32-bit packs stay a plane at a time (fp32 1 x 224 x 224 x 3 0.43 -> 0.35
  // of memcpy so; its unpack 0.24 -> 0.33).
  const bool few = (kE < 4 || !kPack) &&  // mutate: equivalent (a choice of path: the same bytes)
                   c.count < half && m != 0 && loops[m - 1].ls == c.count;
  // Planes whose destination rows are a multiple of 1 KiB apart and whose
  // last loop around them (w) puts the next plane's pieces of those rows
  // right after its own: a group of planes through a stage, each
  // destination row then written as one run of at least 256 bytes. In
  // cache, a tile's destination lines fall in at most 4 of the L1 cache's
  // 64 sets, and a tile at a time each store waits for its line (on a Zen
  // 5, pinned, of memcpy: HTP NCHW fp16 1 x 32 x 32 x 128 unpack 0.11 ->
  // 0.22-0.23 in groups of 2, pack 0.12 -> 0.18-0.19 in groups of 4; stores
  // alone to 32 rows 8 KiB apart, 64 bytes of each row in turn, 0.12; runs
  // of 256 bytes 0.84, of 512 0.90; a stage of 64 KiB, packs in groups of 8,
  // 0.17). Streamed, the stage (256 KiB) is in L2 and its rows are streamed
  // out, each a run of a DRAM page where a tile's streamed lines each went
  // to a page of its own (uint8 1 x 256 x 256 x 1024 pack 0.24 -> 0.32,
  // unpack 0.28 -> 0.35; 1 x 128 x 128 x 512 0.17 -> 0.37 and 0.19 -> 0.34;
  // fp32 1 x 128 x 128 x 512 pack 0.35 -> 0.59); pieces of 2 KiB or more
  // are runs enough (uint8 1 x 64 x 64 x 2048 unpack 0.23 so, 0.22 in
  // groups of 1, 0.16 of 2).
  // A plane: `rows` source rows ss elements apart, `cols` destination rows ds apart.
  const uint64_t ss = kPack ? r.ls : c.ps, ds = kPack ? c.ps : r.ls;
  const uint64_t rows = kPack ? r.count : c.count, cols = kPack ? c.count : r.count;
  const uint64_t piece = rows * kE, db = ds * kE;  // a plane's piece of a destination row; their stride
  const uint64_t s_step = m != 0 ? (kPack ? loops[m - 1].ls : loops[m - 1].ps) * kE : 0;  // the next plane's source
  uint64_t group = 0;
  const uint64_t stage_bytes = large ? kGroupLargeStageBytes : kGroupStageBytes;
  const uint64_t run_bytes = large ? kGroupLargeRunBytes : kGroupRunBytes;
  if (!runs && !few && m != 0 && db % 1024 == 0 &&  // mutate: equivalent (a choice of path)
      (kPack ? loops[m - 1].ps : loops[m - 1].ls) == rows && piece < run_bytes) {
    const uint64_t fit = stage_bytes / (cols * piece);
    group = std::min(fit, (run_bytes + piece - 1) / piece);  // mutate: equivalent (a choice of path)
    if (group * piece < kGroupMinRunBytes) group = 0;  // mutate: equivalent (a choice of path)
  }
  // Planes of whole tiles (64 bytes of rows and of columns) go through
  // group_lanes with AVX-512 (group_lanes_avx2 without it), as many a group
  // as the stage holds: packs, in-cache 16-bit unpacks and streamed 8-bit
  // ones (on a Zen 5, one thread, pinned, of memcpy, against the tiles of
  // plane_transpose.h, pack
  // / unpack: uint8 1 x 256 x 256 x 1024 0.35 / 0.42 -> 0.56 / 0.53, fp16 1
  // x 32 x 32 x 128 0.19 / 0.22 -> 0.33 / 0.32 (medians, alternating); fp16
  // 1 x 128 x 128 x 1024 0.47 / 0.39 -> 0.60-0.64 / 0.34-0.37, fp32 1 x 64
  // x 64 x 1024 0.39-0.43 / 0.46-0.49 -> 0.45-0.52 / 0.41-0.46, fp32 1 x 32
  // x 32 x 128 0.21 / 0.14 -> 0.31 / 0.14, uint8 1 x 64 x 64 x 256 0.17 /
  // 0.28 -> 0.17 / 0.26: the unpacks that lose stay with the tiles).
  // Streamed, every destination row of every group starts on a line.
  uint64_t dst_starts = reinterpret_cast<uintptr_t>(kPack ? phys : logical);
  for (const Loop& l : loops) dst_starts |= (kPack ? l.ps : l.ls) * kE;
  const bool lanes_fit = (kPack || (kE == 2 ? !large : kE == 1 && large)) &&  // mutate: equivalent (a choice of path)
                         group > 0 && (kPack ? rows : cols) * kE % 64 == 0 && (kPack ? cols : rows) * kE % 64 == 0 &&
                         (!large || dst_starts % 64 == 0);  // mutate: equivalent (a choice of path)
  // Where 512-bit operations split in two (a Zen 4) packs take group_lanes
  // too, unpacks the tiles (one thread, pinned, alternating, medians of 5,
  // of memcpy, tiles -> group_lanes / group_lanes_avx2, pack: fp16 1 x 32 x
  // 32 x 128 0.25 -> 0.48 / 0.44, 1 x 128 x 128 x 1024 0.71 -> 0.89 / 0.69,
  // fp32 1 x 32 x 32 x 128 0.35 -> 0.43 / 0.45, uint8 1 x 256 x 256 x 1024
  // 0.58 -> 0.72 / 0.59; unpack: that uint8 one 0.65 -> 0.60 / 0.63 (medians
  // of 9), fp16 1 x 32 x 32 x 128 par (0.36-0.43 all three), 1 x 128 x 128 x
  // 1024 0.62 -> 0.58 / 0.59).
  const bool lanes =
      lanes_fit && has_avx512() && (kPack || !splits_512bit_ops());  // mutate: equivalent (a choice of path)
  // Without AVX-512 the same through group_lanes_avx2 (on a Zen 3, one
  // thread, pinned, alternating, medians of 5, of memcpy, against the
  // tiles: uint8 1 x 256 x 256 x 1024 pack 0.37 -> 0.58, unpack par at
  // 0.50; fp16 1 x 32 x 32 x 128 0.28 / 0.26 -> 0.36 / 0.32).
  const bool lanes256 = lanes_fit && !has_avx512();  // mutate: equivalent (a choice of path)
  const uint64_t large_bytes = lanes ? kLanesLargeStageBytes : kGroupLargeStageBytes;
  if (lanes || lanes256) group = (large ? large_bytes : stage_bytes) / (rows * cols * kE);  // at least one: group > 0
  alignas(64) static thread_local uint8_t small_stage[kGroupStageBytes];
  std::unique_ptr<uint8_t[]> large_stage;
  uint8_t* group_stage = small_stage;
  if (large && group > 0) {
    large_stage.reset(new uint8_t[large_bytes + 64]);
    group_stage = large_stage.get() + (64 - reinterpret_cast<uintptr_t>(large_stage.get()) % 64) % 64;
  }
  std::vector<uint64_t> value(m, 0);
  uint64_t pos = begin;
  while (pos < end) {
    uint64_t lbase = 0, pbase = 0;
    seek(loops, m, pos, &value, nullptr, &lbase, &pbase);
    const uint64_t run = runs || few ? std::min(end - pos, loops[m - 1].count - value[m - 1]) : 1;
    if (few) {
      few_columns<kPack, kE>(p, loops[m - 1], logical + lbase * kE, phys + pbase * kE, run);
      pos += run;
      continue;
    }
    if (runs && run * r.count >= half) {
      const Loop& w = loops[m - 1];
      const plane_transpose::RunRows run_rows{logical + lbase * kE, r.count, r.ls * kE, w.ls * kE};
      uint8_t* dst = phys + pbase * kE;
      if (large) plane_transpose::gather_tiles_avx2<kE, true>(run_rows, run * r.count, c.count, dst, c.ps);
      else plane_transpose::gather_tiles_avx2<kE, false>(run_rows, run * r.count, c.count, dst, c.ps);
      pos += run;
      continue;
    }
    const uint8_t* src = kPack ? logical + lbase * kE : phys + pbase * kE;
    uint8_t* dst = kPack ? phys + pbase * kE : logical + lbase * kE;
    // mutate: equivalent (past `end`: the next thread's planes, the same bytes)
    const uint64_t n = group > 0 ? std::min(group, std::min(end - pos, loops[m - 1].count - value[m - 1])) : 1;
    // Streamed, each source line a tile reads fetches the same line of the
    // planes after these (the next step of w) into L2: a plane's rows are
    // far apart, more streams than the hardware follows, so that each tile
    // waited on its rows' first lines from memory (on a Zen 5, pinned, of
    // memcpy: HTP NCHW uint8 1 x 256 x 256 x 1024 pack 0.25-0.29 ->
    // 0.32-0.43, unpack 0.34-0.36 -> 0.34-0.47; two groups on, or four,
    // no better).
    // mutate: equivalent (a fetch: the same bytes)
    const uint64_t next = large && m != 0 && value[m - 1] + n < loops[m - 1].count ? n * s_step : 0;
    if (lanes || lanes256) {  // `next` is 0 in cache
      using Lanes = void (*)(const uint8_t*, uint64_t, uint64_t, uint8_t*, uint64_t, uint64_t, uint64_t, uint64_t,
                             uint8_t*, uint64_t);
      const Lanes group_fn = lanes ? (large ? group_lanes<kPack, kE, true> : group_lanes<kPack, kE, false>)
                                   : (large ? group_lanes_avx2<kPack, kE, true> : group_lanes_avx2<kPack, kE, false>);
      group_fn(src, s_step, ss * kE, dst, db, n, kPack ? rows : cols, kPack ? cols : rows, group_stage, next);
      pos += n;
      continue;
    }
    if (group > 0) {
      // `n` planes side by side in the stage, then each destination row's
      // n pieces out as one run.
      for (uint64_t g = 0; g < n; ++g) {
        plane_transpose::transpose_plane_avx2<kE, false>(src + g * s_step, ss, group_stage + g * piece, group * rows,
                                                         rows, cols, next);
      }
      const uint64_t pitch = group * piece;
      if (large) {
        for (uint64_t j = 0; j < cols; ++j) stream_run_avx2(dst + j * db, group_stage + j * pitch, n * piece);
      } else {
        for (uint64_t j = 0; j < cols; ++j) copy_run(dst + j * db, group_stage + j * pitch, n * piece);
      }
      pos += n;
      continue;
    }
    if (large && db % 64 == 0 && reinterpret_cast<uintptr_t>(dst) % kE == 0) {
      plane_transpose::transpose_plane_avx2<kE, true>(src, ss, dst, ds, rows, cols, next);
    } else {
      plane_transpose::transpose_plane_avx2<kE, false>(src, ss, dst, ds, rows, cols, next);
    }
    ++pos;
  }
  if (large) _mm_sfence();
}
#endif

#ifdef LC_HTP_X86
// Unpacking, each step fetches the block kRunAhead steps on: a crouton's
// rows are read a step (1 KiB) apart, a stride the hardware does not follow
// (crouton2 uint8 on a Zen 5, pinned: padded 16 MiB 0.27 -> 0.42-0.45 of
// memcpy; 4 or 8 steps on 0.30-0.35, 32 or 64 no better than 16).
constexpr uint64_t kRunAhead = 16;

// The most logical bytes a position of walk_tile_runs reads with the blocks
// of each step in turn: past them the position's rows' pieces (4 pixels of
// 8 rows for crouton2, a step's 32 bytes of each) are more runs at once
// than the hardware fetches ahead (crouton2 uint8 streamed, pinned, on a
// Zen 5: 1 x 255 x 255 x 128 and 256 (4 and 8 KiB a position) 0.33-0.44
// -> 0.69-0.72 and 0.62 -> 0.76 of memcpy; 512 and 1024 (16 and 32 KiB)
// 0.75-0.83 -> 0.56-0.80).
constexpr uint64_t kRunInBytes = 8 << 10;

// The whole tiles of one position of walk_tile_runs: `count` steps of
// `step` bytes (physical) and t_bytes (each of the rows), each step the
// in_count blocks (in_ps bytes apart, their rows in_ls bytes on) of subs
// tiles. Every bound is a value, not a field the stores could alias.
template <bool kPack, size_t kE, bool kStream>
__attribute__((target("avx2"), always_inline)) inline void run_tiles_whole(uint8_t* const* rows, uint64_t subs,
                                                                           uint64_t count, uint64_t t_bytes,
                                                                           uint64_t step, uint8_t* ph,
                                                                           uint64_t in_count, uint64_t in_ls,
                                                                           uint64_t in_ps) {
  constexpr int kK = 2;  // a tile's rows (Plan::tile_run)
  const uint64_t tile_bytes = t_bytes * kK;
  if (subs == 2 && t_bytes == 32 && in_count == 1) {  // crouton2 (bytes): two tiles of one piece a step
    uint8_t* const r0 = rows[0];
    uint8_t* const r1 = rows[1];
    uint8_t* const r2 = rows[2];
    uint8_t* const r3 = rows[3];
    for (uint64_t at = 0; at < count * 32; at += 32, ph += step) {
      if (!kPack) {
        __builtin_prefetch(ph + kRunAhead * step);
        __builtin_prefetch(ph + kRunAhead * step + 64);
      }
      uint8_t* a[2] = {r0 + at, r1 + at};
      uint8_t* b[2] = {r2 + at, r3 + at};
      tile_wide_avx2<kPack, kK, kE, kStream>(ph, a, 1);
      tile_wide_avx2<kPack, kK, kE, kStream>(ph + tile_bytes, b, 1);
    }
    return;
  }
  if (subs == 2 && t_bytes == 32) {  // the same, in_count blocks a step
    for (uint64_t at = 0; at < count * 32; at += 32, ph += step) {
      uint64_t in_at = at;
      uint8_t* block = ph;
      for (uint64_t r = 0; r < in_count; ++r, in_at += in_ls, block += in_ps) {
        uint8_t* a[2] = {rows[0] + in_at, rows[1] + in_at};
        uint8_t* b[2] = {rows[2] + in_at, rows[3] + in_at};
        tile_wide_avx2<kPack, kK, kE, kStream>(block, a, 1);
        tile_wide_avx2<kPack, kK, kE, kStream>(block + tile_bytes, b, 1);
      }
    }
    return;
  }
  for (uint64_t i = 0; i < count; ++i, ph += step) {
    if (!kPack && in_count == 1) {
      for (uint64_t b = 0; b < subs * tile_bytes; b += 64) __builtin_prefetch(ph + kRunAhead * step + b);
    }
    for (uint64_t r = 0; r < in_count; ++r) {
      for (uint64_t s = 0; s < subs; ++s) {
        uint8_t* rr[kK];
        for (int k = 0; k < kK; ++k) rr[k] = rows[s * kK + k] + i * t_bytes + r * in_ls;
        tile_wide_avx2<kPack, kK, kE, kStream>(ph + r * in_ps + s * tile_bytes, rr, t_bytes / 32);
      }
    }
  }
}

// Runs of tiles (Plan::tile_run) by tile_wide_avx2's pieces: at each position
// of the odometer (physical order) the run's rows are stepped a tile at a
// time along the chunk loop, each step one physical block of the run's tiles
// (loops: p.tile_run_outer) or, with the odometer p.tile_run_in_outer, the
// blocks along tile_run_in in turn, one physical run (crouton2: a step is a
// crouton, its eight rows h the blocks, a position 4 pixels of 8 rows).
// Measured on a Zen 5 (pinned, the bench's rows, against the tile walk):
// crouton2 uint8 1 x 32 x 32 x 256 pack 0.24 -> 0.40-0.45 of memcpy, unpack
// 0.23 -> 0.35-0.38; 1 x 256 x 256 x 1024 0.54 -> 0.75 and 0.58 -> 0.72-0.81;
// 1 x 255 x 255 x 256 0.39 -> 0.53-0.66 and 0.41 -> 0.60. The tile walk's
// odometer had cost more than the tiles (crouton2's plain loop around the
// tile counts 2). Its positions had been in logical order, each row read
// (unpacking, written) front to back, not streamed; in physical order and
// streamed past 8 MiB (the small packs a step's blocks in turn), crouton2
// uint8 1 x 256 x 256 x 1024 0.70 -> 0.86 (pack) and 0.70 -> 0.86 (unpack),
// 1 x 255 x 255 x 256 0.52 -> 0.72 and 0.50 -> 0.71 (binaries alternating,
// medians of 5). Croutons of four rows (crouton4x1 fp16, the padded byte
// croutons the tile pairs leave, crouton2x2 fp16 in cache) measured slower
// this way and keep the tile walk. With padding each position checks its
// rows' coordinates once (a block's, when not all of them are whole) and the
// tile's dimension a step at a time: packing, a row in padding is the
// padding pattern and a cut piece load_head_avx2's; unpacking, neither is
// written past the extent.
template <bool kPack, size_t kE, bool kStream>
__attribute__((target("avx2"))) void walk_tile_runs(const Plan& p, const std::vector<Loop>& loops, uint8_t* logical,
                                                    uint8_t* phys, uint64_t begin, uint64_t end) {
  constexpr int kK = 2;  // a tile's rows (Plan::tile_run)
  const Loop& tl = p.loops[p.tile_at];
  const Loop& cx = p.loops[p.tile_run_x];
  const Loop in = &loops == &p.tile_run_in_outer ? p.tile_run_in : Loop{};
  const size_t outer = loops.size(), tdim = tl.dim;
  const uint64_t rows_n = p.tile_run_offset.size(), subs = rows_n / kK;
  const uint64_t t_bytes = tl.count * kE, tile_bytes = t_bytes * kK;
  const uint64_t step_bytes = cx.ps * kE, in_lb = in.ls * kE, in_pb = in.ps * kE;
  const bool dense = p.padded == p.extent, t_padded = p.padded[tdim] != p.extent[tdim];
  uint64_t logical_bytes = kE;
  for (uint64_t n : p.extent) logical_bytes *= n;
  const uint8_t* const logical_end = logical + logical_bytes;
  const __m256i pad = _mm256_load_si256(reinterpret_cast<const __m256i*>(p.pad_line));
  // The padded dimensions but the tile's: their loops are never fused, so
  // their coordinates are exact (a fused loop's are not).
  std::vector<size_t> padded_dims;
  for (size_t d = 0; d < p.rank; ++d) {
    if (d != tdim && p.padded[d] != p.extent[d]) padded_dims.push_back(d);
  }
  std::vector<uint64_t> value(outer, 0), x(p.rank, 0);
  uint64_t lbase = 0, pbase = 0;
  seek(loops, outer, begin, &value, &x, &lbase, &pbase);
  uint8_t* rows[kMaxRunRows];
  bool valid[kMaxRunRows];
  // Whether every row of block r is in the extent (valid: each row's).
  auto rows_valid = [&](uint64_t r) {
    bool all = true;
    for (uint64_t j = 0; j < rows_n; ++j) {
      bool v = true;
      for (size_t d : padded_dims) {
        v = v && x[d] + p.tile_run_delta[j * p.rank + d] + (d == in.dim ? r * in.step : 0) < p.extent[d];
      }
      valid[j] = v;
      all = all && v;
    }
    return all;
  };
  for (uint64_t left = end - begin; left != 0; --left) {
    uint8_t* const lg = logical + lbase * kE;
    uint8_t* const ph = phys + pbase * kE;
    for (uint64_t j = 0; j < rows_n; ++j) rows[j] = lg + p.tile_run_offset[j] * kE;
    const bool t_whole = !t_padded || x[tdim] + cx.count * tl.count <= p.extent[tdim];
    // A block's rows are further along in.dim than the one before: the last in the extent, all are.
    if (dense || (t_whole && rows_valid(in.count - 1))) {
      run_tiles_whole<kPack, kE, kStream>(rows, subs, cx.count, t_bytes, step_bytes, ph, in.count, in_lb, in_pb);
      if (left > 1) advance(loops, outer, &value, &x, &lbase, &pbase);
      continue;
    }
    for (uint64_t r = 0; r < in.count; ++r) {
      const bool whole = rows_valid(r) && t_whole;
      bool any = false;
      for (uint64_t j = 0; j < rows_n; ++j) any = any || valid[j];
      uint8_t* rr[kMaxRunRows];
      for (uint64_t j = 0; j < rows_n; ++j) rr[j] = rows[j] + r * in_lb;
      uint8_t* pr = ph + r * in_pb;
      if (whole) {
        run_tiles_whole<kPack, kE, kStream>(rr, subs, cx.count, t_bytes, step_bytes, pr, 1, 0, 0);
        continue;
      }
      if (!kPack && !any) continue;
      for (uint64_t i = 0; i < cx.count; ++i, pr += step_bytes) {
        const uint64_t xt = x[tdim] + i * tl.count, et = p.extent[tdim];
        const uint64_t vb = !t_padded ? t_bytes : (xt < et ? std::min(tl.count, et - xt) : 0) * kE;  // of each row
        if (!kPack && vb == 0) break;
        for (uint64_t s = 0; s < subs; ++s) {
          for (uint64_t at = 0; at < t_bytes; at += 32) {
            const uint64_t part = at >= vb ? 0 : std::min<uint64_t>(32, vb - at);
            uint8_t* const tp = pr + s * tile_bytes + kK * at;
            __m256i v[kK];
            if (kPack) {
              for (int k = 0; k < kK; ++k) {
                const uint64_t j = s * kK + k;
                v[k] = valid[j] ? load_head_avx2(rr[j] + i * t_bytes + at, part, logical_end, pad, p.pad_line) : pad;
              }
              pack_piece_wide<kK, kE, kStream>(tp, v);
              continue;
            }
            if (part == 0) break;
            unpack_piece_wide<kK, kE>(tp, v);
            for (int k = 0; k < kK; ++k) {
              const uint64_t j = s * kK + k;
              if (!valid[j]) continue;
              uint8_t* const to = rr[j] + i * t_bytes + at;
              if (part == 32) _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), v[k]);
              else store_head_avx2(to, v[k], part);
            }
          }
        }
      }
    }
    if (left > 1) advance(loops, outer, &value, &x, &lbase, &pbase);
  }
  if (kStream) _mm_sfence();
}

// Whether walk_tile_runs streams its output: past 8 MiB, when every tile
// (packing) or every run row's bytes (unpacking) are whole lines.
inline bool tile_runs_stream(const Plan& p, bool pack, const uint8_t* logical, const uint8_t* phys) {
  if (p.elements * p.elem < kStreamBytes) return false;
  const Loop& tl = p.loops[p.tile_at];
  if (pack) return (reinterpret_cast<uintptr_t>(phys) & 63) == 0;  // tiles of 2 x 32 bytes at multiples of them
  uint64_t starts = reinterpret_cast<uintptr_t>(logical) | (p.loops[p.tile_run_x].count * tl.count * p.elem);
  for (uint64_t o : p.tile_run_offset) starts |= o * p.elem;
  for (const Loop& l : p.tile_run_outer) starts |= l.ls * p.elem;
  return p.extent[tl.dim] == p.padded[tl.dim] && (starts & 63) == 0;
}

// The walk of runs of tiles of two rows of elem-byte elements.
template <bool kPack>
WalkFn tile_runs_walk(uint64_t elem, bool stream) {
  switch (elem) {
    case 1: return stream ? &walk_tile_runs<kPack, 1, true> : &walk_tile_runs<kPack, 1, false>;
    case 2: return stream ? &walk_tile_runs<kPack, 2, true> : &walk_tile_runs<kPack, 2, false>;
    default: return stream ? &walk_tile_runs<kPack, 4, true> : &walk_tile_runs<kPack, 4, false>;
  }
}
#endif

// The walk for this plan, its loops and the number of odometer positions
// they split into (the tiles' loops outside the plain one; the rows' loops
// outside the middle one).
template <bool kPack>
WalkFn choose_walk(const Plan& p, const uint8_t* logical, const uint8_t* phys, const std::vector<Loop>** loops,
                   size_t* outer) {
  if (p.tile) {
    *loops = &p.tile_order;
    *outer = p.tile_at >= 1 ? p.tile_at - 1 : 0;
    const bool by_32x4 = p.elem == 1 && p.tile_k == 4 && p.loops[p.tile_at].count == 32;
#ifdef LC_HTP_X86
    if (p.tile_pair && ((reinterpret_cast<uintptr_t>(logical) | reinterpret_cast<uintptr_t>(phys)) & 63) == 0 &&
        has_avx2()) {
      const bool wide = has_avx512(), stream = p.elements >= kStreamBytes;
      // Pack by blocks when a block's logical lines stay in L1 (see walk_tile_blocks).
      const uint64_t block_bytes =
          positions(p.tile_pair_inner, p.tile_pair_inner.size()) * 4 * p.loops[p.tile_pair_x].count * 32;
      if (kPack && !p.tile_pair_inner.empty() && block_bytes <= kTileBlockBytes) {
        *loops = &p.tile_pair_blocks;
        *outer = (*loops)->size();
        if (wide) return stream ? &walk_tile_blocks<true> : &walk_tile_blocks<false>;
        return stream ? &walk_tile_blocks_avx2<true> : &walk_tile_blocks_avx2<false>;
      }
      *loops = &p.tile_pair_outer;
      *outer = (*loops)->size();
      if (wide) return stream ? &walk_tile_pairs<kPack, true> : &walk_tile_pairs<kPack, false>;
      return stream ? &walk_tile_pairs_avx2<kPack, true> : &walk_tile_pairs_avx2<kPack, false>;
    }
    if (p.tile_cols && has_avx2()) {
      const bool wide = has_avx512();
      *loops = &p.tile_cols_outer;
      *outer = p.tile_cols_outer.size();
      // Pack streams whole tile lines; unpack stages runs of rows (see walk_tile_cols).
      if (p.elements >= kStreamBytes &&
          (!kPack || (p.tile_cols_lines && (reinterpret_cast<uintptr_t>(phys) & 63) == 0))) {
        if (!kPack) *loops = &p.tile_cols_outer_phys;
        return wide ? &walk_tile_cols<kPack, true> : &walk_tile_cols_avx2<kPack, true>;
      }
      return wide ? &walk_tile_cols<kPack, false> : &walk_tile_cols_avx2<kPack, false>;
    }
    if (by_32x4 && p.padded == p.extent && !p.tile_logical && has_avx2()) {
      *loops = &p.loops;
      if (kPack && p.elements >= kStreamBytes && (reinterpret_cast<uintptr_t>(phys) & 15) == 0) {
        return &walk_tiles_32x4_dense<kPack, true>;
      }
      return &walk_tiles_32x4_dense<kPack, false>;
    }
#endif
    // Streaming stores need 16-byte aligned 128-byte tiles (byte elements, 32 x 4)
    // written in physical order (the weights' tiles, in logical chunk order,
    // measured faster with ordinary stores).
    const bool stream = kPack && by_32x4 && !p.tile_logical && p.elements >= kStreamBytes &&
                        (reinterpret_cast<uintptr_t>(phys) & 15) == 0;
#ifdef LC_HTP_X86
    // Tiles of 2 or 4 rows of 32-byte pieces (croutons, weights) the walks
    // above leave: padded ones, crouton2, 16- and 32-bit elements.
    if (p.tile_run && has_avx2()) {
      *loops = &p.tile_run_outer;
      *outer = p.tile_run_outer.size();
      const bool run_stream = tile_runs_stream(p, kPack, logical, phys);
      // A streamed pack whose position reads at most kRunInBytes runs the
      // blocks of a step in turn (see walk_tile_runs).
      const uint64_t in_bytes = p.tile_run_in.count * p.tile_run_offset.size() * p.loops[p.tile_run_x].count *
                                p.loops[p.tile_at].count * p.elem;
      if (kPack && run_stream && p.tile_run_has_in && in_bytes <= kRunInBytes) {
        *loops = &p.tile_run_in_outer;
        *outer = p.tile_run_in_outer.size();
      }
      return tile_runs_walk<kPack>(p.elem, run_stream);
    }
    const uint64_t t_bytes = p.loops[p.tile_at].count * p.elem;
    if ((p.tile_k == 2 || p.tile_k == 4) && t_bytes % 32 == 0 && has_avx2()) {
      const bool wide_stream = kPack ? !p.tile_logical && p.elements * p.elem >= kStreamBytes &&
                                           (reinterpret_cast<uintptr_t>(phys) & 63) == 0
                                     : can_stream_tile_rows(p, logical);
      return p.tile_k == 2 ? wide_tiles_walk<kPack, 2>(p.elem, wide_stream)
                           : wide_tiles_walk<kPack, 4>(p.elem, wide_stream);
    }
#endif
    switch (p.elem) {
      case 1: return stream ? &walk_tiles<kPack, 1, true> : &walk_tiles<kPack, 1, false>;
      case 2: return &walk_tiles<kPack, 2, false>;
      default: return &walk_tiles<kPack, 4, false>;  // no dtype is wider than 32 bits
    }
  }
#ifdef LC_HTP_X86
  if (p.plane && has_avx2()) {
    *loops = &p.plane_outer;
    *outer = p.plane_outer.size();
    switch (p.elem) {
      case 1: return &walk_planes<kPack, 1>;
      case 2: return &walk_planes<kPack, 2>;
      default: return &walk_planes<kPack, 4>;  // no dtype is wider than 32 bits
    }
  }
  const bool lines = ((reinterpret_cast<uintptr_t>(logical) | reinterpret_cast<uintptr_t>(phys)) & 63) == 0;
  if (p.pair && lines && has_avx2()) {
    *loops = &p.pair_outer;
    *outer = (*loops)->size();
    const bool stream = p.elements * p.elem >= kStreamBytes, half = p.loops.back().count * p.elem == 32;
    if (has_avx512()) {
      if (half) return stream ? &walk_pairs<kPack, true, true, true> : &walk_pairs<kPack, false, true, true>;
      return stream ? &walk_pairs<kPack, true, false, true> : &walk_pairs<kPack, false, false, true>;
    }
    if (half) return stream ? &walk_pairs<kPack, true, true, false> : &walk_pairs<kPack, false, true, false>;
    return stream ? &walk_pairs<kPack, true, false, false> : &walk_pairs<kPack, false, false, false>;
  }
#endif
#ifdef LC_HTP_X86
  if (kPack && p.pair_pad && p.pair_pad_lines && (reinterpret_cast<uintptr_t>(phys) & 63) == 0 && has_avx2()) {
    *loops = &p.pair_pad_pack;
    *outer = p.pair_pad_pack.size();
    const bool stream = p.elements * p.elem >= kStreamBytes, half = p.loops.back().count * p.elem == 32;
    if (!has_avx512()) {
      if (half) return stream ? &walk_pairs_padded_pack_avx2<true, true> : &walk_pairs_padded_pack_avx2<true, false>;
      return stream ? &walk_pairs_padded_pack_avx2<false, true> : &walk_pairs_padded_pack_avx2<false, false>;
    }
    if (half) return stream ? &walk_pairs_padded_pack<true, true> : &walk_pairs_padded_pack<true, false>;
    return stream ? &walk_pairs_padded_pack<false, true> : &walk_pairs_padded_pack<false, false>;
  }
  if (!kPack && p.pair_pad && !has_avx512() && has_avx2() &&
      ((reinterpret_cast<uintptr_t>(phys) | (p.loops[p.pair_x].ps * p.elem)) & 31) == 0) {
    *loops = &p.pair_pad_outer;
    *outer = p.pair_pad_outer.size();
    const bool half = p.loops.back().count * p.elem == 32;
    const bool run = rows_one_run(p) && p.loops[p.pair_m].count * p.loops[p.pair_m].ls * p.elem <= kTileStageBytes;
    if (p.elements * p.elem >= kStreamBytes && run) {
      return half ? &walk_pairs_padded_avx2<true, true> : &walk_pairs_padded_avx2<false, true>;
    }
    return half ? &walk_pairs_padded_avx2<true, false> : &walk_pairs_padded_avx2<false, false>;
  }
  if (!kPack && p.pair_pad && has_avx512()) {
    *loops = &p.pair_pad_outer;
    *outer = p.pair_pad_outer.size();
    const bool half = p.loops.back().count * p.elem == 32;
    if (p.elements * p.elem >= kStreamBytes && has_avx512_vbmi()) {
      return half ? &walk_pairs_padded_seq<true> : &walk_pairs_padded_seq<false>;
    }
    if (p.elements * p.elem >= kStreamBytes && !half && rows_one_run(p)) {
      return &walk_pairs_padded_staged;
    }
    return half ? &walk_pairs_padded<true> : &walk_pairs_padded<false>;
  }
#endif
  *loops = kPack ? &p.loops : &p.logical_order;
  *outer = (*loops)->size() >= 2 ? (*loops)->size() - 2 : 0;
  const size_t row_bytes = p.loops.back().count * p.elem;
  switch (row_bytes) {
    case 32: return walk_sized<kPack, 32>(p, logical, phys);
    case 64: return walk_sized<kPack, 64>(p, logical, phys);
    case 128: return walk_sized<kPack, 128>(p, logical, phys);
    default: return walk_sized<kPack, 0>(p, logical, phys);
  }
}

// Threads (optimized/threads.h) take disjoint ranges of the odometer's
// positions: each position writes its own rows or tiles (physical ones when
// packing, logical ones when unpacking), so no output byte is written twice,
// and each walk fences its own non-temporal stores. One thread calls the walk
// directly.
template <bool kPack>
void walk(const Plan& p, uint8_t* logical, uint8_t* phys) {
  const std::vector<Loop>* loops = nullptr;
  size_t outer = 0;
  const WalkFn fn = choose_walk<kPack>(p, logical, phys, &loops, &outer);
  const uint64_t n = positions(*loops, outer), bytes = p.elements * p.elem;
  if (n <= 1 || resolve_threads(requested_threads(), bytes) <= 1) return fn(p, *loops, logical, phys, 0, n);
  parallel_ranges(n, bytes, [&](uint64_t begin, uint64_t end) { fn(p, *loops, logical, phys, begin, end); });
}

// The checker asks one case many questions: each derives the plan once (core/case_cache.h).
Result<std::shared_ptr<const Plan>> cached_make_plan(const Case& c) {
  thread_local CaseCache<Plan> cache;
  return cache.get(c, make_plan);
}

class HtpOptimized : public Impl {
 public:
  std::string name() const override { return "optimized"; }
  Status supports(const Case& c) const override { return cached_make_plan(c).status(); }
  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_make_plan(c));
    const Plan& p = *p_ptr;
    return p.size;
  }
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_make_plan(c));
    const Plan& p = *p_ptr;
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
    if (p.placed) {
      const uint64_t byte = offset * p.elem, k = byte / p.chunk_bytes;
      return ((p.start.empty() ? k * p.stride : p.start[k]) + byte % p.chunk_bytes) * 8;
    }
    return offset * p.elem * 8;
  }
  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_make_plan(c));
    const Plan& p = *p_ptr;
    LC_RETURN_IF_ERROR(check_buffers(c, p.size, logical_size, physical_size));
    if (p.placed) {
      // Packed consecutively, then each chunk copied to its start: one copy
      // per chunk, none across chunks.
      std::vector<uint8_t> chunks(p.elements * p.elem);
      walk<true>(p, const_cast<uint8_t*>(static_cast<const uint8_t*>(logical)), chunks.data());
      auto* dst = static_cast<uint8_t*>(physical);
      for (uint64_t k = 0, from = 0; from < chunks.size(); ++k, from += p.chunk_bytes) {
        std::memcpy(dst + (p.start.empty() ? k * p.stride : p.start[k]), chunks.data() + from, p.chunk_bytes);
      }
      return Status();
    }
    walk<true>(p, const_cast<uint8_t*>(static_cast<const uint8_t*>(logical)), static_cast<uint8_t*>(physical));
    return Status();
  }
  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    LC_ASSIGN_OR_RETURN(auto p_ptr, cached_make_plan(c));
    const Plan& p = *p_ptr;
    LC_RETURN_IF_ERROR(check_buffers(c, p.size, logical_size, physical_size));
    if (p.placed) {
      std::vector<uint8_t> chunks(p.elements * p.elem);
      const auto* src = static_cast<const uint8_t*>(physical);
      for (uint64_t k = 0, to = 0; to < chunks.size(); ++k, to += p.chunk_bytes) {
        std::memcpy(chunks.data() + to, src + (p.start.empty() ? k * p.stride : p.start[k]), p.chunk_bytes);
      }
      walk<false>(p, static_cast<uint8_t*>(logical), chunks.data());
      return Status();
    }
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
