// The Qualcomm HTP memory-layout document in executable form.
// Document: ../shared/spec/qualcomm-htp-memory-layout.txt
//
// A layout is ChunkedMemoryLayout<rank, pairs...> (FlatMemoryLayout<rank> and
// the named layouts are spellings of it; core/htp_notation.h turns any of them
// into the pairs). pack and unpack walk memory from its first element to its
// last in the order the document describes: the chunks in the order of the
// zero-size pairs, and inside each chunk the sized pairs, first pair slowest.
// Each step of the walk is one element of memory; where the walk's logical
// coordinate lies outside the tensor, the element is padding.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

#include "core/case_cache.h"
#include "core/htp_notation.h"
#include "layoutcheck/byte_rules.h"
#include "layoutcheck/checked.h"
#include "reference/families.h"

namespace layoutcheck {
namespace {

std::string num(uint64_t v) { return std::to_string(v); }

std::string list(const std::vector<uint64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + num(v[i]);
  return out;
}

// One digit of the walk. "The rest of the parameters are done in
// (dimension,size) pairs, and it's easiest to explain the pairs right-to-left"
// (Flat Layout): the rightmost pair moves fastest.
struct Digit {
  size_t dim = 0;       // the dimension this pair counts along
  uint64_t count = 0;   // how many values the digit takes
  uint64_t step = 0;    // how far one unit of the digit moves along dim
  bool outer = false;   // a zero-size pair: which chunk
};

struct HtpModel {
  HtpNotation notation;
  Shape shape;                      // logical extents
  std::vector<uint64_t> chunk;      // chunk extent per dimension
  std::vector<uint64_t> padded;     // extent after padding
  std::vector<uint64_t> chunks;     // chunks per dimension
  std::vector<Digit> digits;        // slowest first
  uint64_t chunk_elements = 1, chunk_count = 1, padded_elements = 1;
  uint64_t element_bytes = 1;
  std::vector<uint8_t> pad;  // the padding element, little-endian
  // Where each chunk starts, in bytes: chunk k at k * chunk_stride, or at
  // bases[k] when the layout has a table (htp.chunk_table).
  uint64_t chunk_stride = 0;
  std::vector<uint64_t> bases;
  bool table = false;
  uint64_t size_bytes = 0;
};

// "chunks are not consecutive in memory (i.e. there's gap in memory between
// each chunk)"; "usually use get_raw(first element's idx in chunk) to retrieve
// the start memory location for such chunk" (Practical tips working with
// Crouton): each chunk has its own start, from a stride or a table. A start is
// where get_raw points, so it is a whole number of elements (oracles/ERRATA.md);
// chunks may not share bytes, and the last byte lies below 2^60.
Status place_chunks(const Case& c, const std::string& text, HtpModel* m) {
  const uint64_t chunk_bytes = m->chunk_elements * m->element_bytes;
  const uint64_t stride = static_cast<uint64_t>(c.layout.get_int("chunk_stride"));
  const std::string& given = c.layout.get("bases");
  const std::string table = given == kHtpNoBases ? std::string() : given;
  const std::string where = "htp.chunk_table of " + text + ": ";
  if (stride != 0 && !table.empty()) {
    return Status::invalid(where + "chunk_stride=" + num(stride) + " and a table of bases both place the chunks; give one")
        .with_rule("htp.chunk_table/stride-or-bases");
  }
  if (table.empty()) {
    if (stride == 0) return Status();  // consecutive: chunk k at k * chunk bytes
    if (stride < chunk_bytes) {
      return Status::invalid(where + "chunk_stride " + num(stride) + " is less than the " + num(chunk_bytes) +
                             " bytes of a chunk; chunks would overlap")
          .with_rule("htp.chunk_table/stride-covers-chunk");
    }
    if (stride % m->element_bytes != 0) {
      return Status::invalid(where + "chunk_stride " + num(stride) + " is not a multiple of the " +
                             num(m->element_bytes) + "-byte element; get_raw of a chunk's first element would be misaligned")
          .with_rule("htp.chunk_table/base-align-element");
    }
    Checked last = Checked(m->chunk_count - 1) * stride + chunk_bytes;
    if (!last.ok() || last.value() > kHtpMaxTableBytes) {
      return Status::invalid(where + num(m->chunk_count) + " chunks at a stride of " + num(stride) +
                             " bytes end past 2^60 bytes")
          .with_rule("htp.chunk_table/size-overflow");
    }
    m->chunk_stride = stride;
    m->size_bytes = last.value();
    return Status();
  }
  auto bases = parse_htp_bases(table);
  if (!bases.ok()) return Status::invalid(where + bases.status().message()).with_rule("htp.chunk_table/bases-one-per-chunk");
  if (bases->size() != m->chunk_count) {
    return Status::invalid(where + "the table has " + num(bases->size()) + " bases, the shape " + clip_input(shape_to_string(c.shape)) +
                           " has " + num(m->chunk_count) + " chunks (" + list(m->chunks) + " per dimension)")
        .with_rule("htp.chunk_table/bases-one-per-chunk");
  }
  m->table = true;
  m->bases = std::move(bases).value();
  m->size_bytes = 0;
  for (uint64_t k = 0; k < m->chunk_count; ++k) {
    const uint64_t base = m->bases[k];
    if (base % m->element_bytes != 0) {
      return Status::invalid(where + "chunk " + num(k) + " starts at byte " + num(base) + ", not a multiple of the " +
                             num(m->element_bytes) + "-byte element")
          .with_rule("htp.chunk_table/base-align-element");
    }
    Checked end = Checked(base) + chunk_bytes;
    if (!end.ok() || end.value() > kHtpMaxTableBytes) {
      return Status::invalid(where + "chunk " + num(k) + " at byte " + num(base) + " ends past 2^60 bytes")
          .with_rule("htp.chunk_table/size-overflow");
    }
    m->size_bytes = std::max(m->size_bytes, end.value());
  }
  // No two chunks share a byte: in order of their starts, each ends before the next begins.
  std::vector<uint64_t> order(m->chunk_count);
  for (uint64_t k = 0; k < m->chunk_count; ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) { return m->bases[a] < m->bases[b]; });
  for (size_t i = 1; i < order.size(); ++i) {
    const uint64_t a = order[i - 1], b = order[i];
    if (m->bases[a] + chunk_bytes > m->bases[b]) {
      return Status::invalid(where + "chunk " + num(a) + " at byte " + num(m->bases[a]) + " (" + num(chunk_bytes) +
                             " bytes) overlaps chunk " + num(b) + " at byte " + num(m->bases[b]))
          .with_rule("htp.chunk_table/bases-disjoint");
    }
  }
  return Status();
}

Result<HtpModel> model(const Case& c) {
  if (!dtype_info(c.dtype).logical) {
    return Status::invalid(std::string(dtype_name(c.dtype)) + " is a packed storage type, not a logical element type").with_rule("htp/logical-dtype");
  }
  if (dtype_bits(c.dtype) % 8 != 0) {
    return Status::unsupported(std::string("the HTP document lays out whole-byte elements; ") + dtype_name(c.dtype) +
                               " is a sub-byte type");
  }
  HtpModel m;
  auto notation = htp_notation_of(c.layout);
  if (!notation.ok()) return notation.status().code() == StatusCode::kInvalid ? notation.status().with_rule("htp/notation") : notation.status();
  m.notation = std::move(notation).value();
  const HtpNotation& n = m.notation;
  const std::string text = htp_notation_text(n);
  // "4, the zeroth parameter, is the rank of the layout" (Flat Layout).
  if (c.shape.size() != static_cast<size_t>(n.rank)) {
    return Status::invalid(text + ": shape " + clip_input(shape_to_string(c.shape)) + " has rank " + num(c.shape.size()) +
                           ", the layout has rank " + num(static_cast<uint64_t>(n.rank))).with_rule("layout/rank");
  }
  for (size_t d = 0; d < c.shape.size(); ++d) {
    if (c.shape[d] <= 0) {
      return Status::invalid(text + ": dimension " + num(d) + " = " + std::to_string(c.shape[d]) + " must be positive").with_rule("layout/positive-extent");
    }
  }
  LC_RETURN_IF_ERROR(element_count(c.shape).status());
  m.shape = c.shape;
  m.element_bytes = dtype_bits(c.dtype) / 8;
  // "user padding need to be explicitly set to quantized 0 (or other specified
  // value)" (Practical tips): a value of the element type; for a
  // ScaleOffsetInterface tensor ("applies the offset and scale value",
  // Details about Tensors) the default is the stored value of 0, the offset.
  LC_ASSIGN_OR_RETURN(m.pad, htp_pad_element(c.layout, c.dtype));
  const size_t rank = c.shape.size();

  // "The numbers 1,8, 2,8, 3,32 mean that the croutons have a chunk size of
  // 1x8x8x32" (Crouton Layout): a dimension's chunk extent is the product of its
  // sized pairs; a dimension without one has extent 1 (FlatMemoryLayout is "the
  // special case ... where the Chunk Size is the minimal one").
  m.chunk.assign(rank, 1);
  for (const HtpPair& p : n.pairs) {
    if (p.size != 0) m.chunk[static_cast<size_t>(p.dim)] *= p.size;  // validated: the product fits
  }
  // "If the dimensions is less than 8 or 32, it is padded to the respective
  // dimensions"; "2x9x20x50 ... gets padded to 2x16x24x64": each dimension is
  // padded up to a multiple of its chunk extent.
  Checked padded_elements = 1, chunk_count = 1, chunk_elements = 1;
  for (size_t d = 0; d < rank; ++d) {
    const uint64_t chunks = ceil_div(static_cast<uint64_t>(c.shape[d]), m.chunk[d]);
    m.chunks.push_back(chunks);
    Checked padded = Checked(chunks) * m.chunk[d];
    m.padded.push_back(padded.value());
    padded_elements *= padded;
    chunk_count *= chunks;
    chunk_elements *= m.chunk[d];
  }
  Checked bytes = padded_elements * m.element_bytes;
  if (!bytes.ok() || padded_elements.value() > (uint64_t{1} << 56)) {
    return Status::invalid(text + ": shape " + shape_to_string(c.shape) +
                           " padded to whole chunks has too many elements (limit 2^56) or bytes (limit 2^64)").with_rule("htp/padded-size");
  }
  m.padded_elements = padded_elements.value();
  m.chunk_count = chunk_count.value();
  m.chunk_elements = chunk_elements.value();
  m.chunk_stride = m.chunk_elements * m.element_bytes;  // fits: padded bytes fit
  m.size_bytes = m.padded_elements * m.element_bytes;
  if (c.layout.name == "htp.chunk_table") LC_RETURN_IF_ERROR(place_chunks(c, text, &m));

  // "That is what the 0-sized dimensions mean in the MemoryLayout": one digit
  // per zero-size pair, counting whole chunks, first pair slowest.
  for (const HtpPair& p : n.pairs) {
    if (p.size != 0) continue;
    const size_t d = static_cast<size_t>(p.dim);
    m.digits.push_back({d, m.chunks[d], m.chunk[d], true});
  }
  // "3,32 means 32 elements in dimension 3; 2,8 means 8 contiguous chunks of
  // everything to the right in dimension 2": one digit per sized pair. When a
  // dimension has several sized pairs (2,2 ... 2,4 in R4Crouton4x1Layout), the
  // rightmost is its finest part: a unit of an earlier pair steps over all the
  // later pairs of the same dimension.
  for (size_t i = 0; i < n.pairs.size(); ++i) {
    const HtpPair& p = n.pairs[i];
    if (p.size == 0) continue;
    uint64_t step = 1;
    for (size_t j = i + 1; j < n.pairs.size(); ++j) {
      if (n.pairs[j].dim == p.dim && n.pairs[j].size != 0) step *= n.pairs[j].size;
    }
    m.digits.push_back({static_cast<size_t>(p.dim), p.size, step, false});
  }
  return m;
}

// The checker asks for the offset of every element of a case in turn; the
// model of the last case asked about is kept.
const Result<HtpModel>& model_of(const Case& c) {
  thread_local std::optional<Case> key;
  thread_local std::optional<Result<HtpModel>> cached;
  if (!key || !(*key == c)) {
    key.reset();
    cached = model(c);
    key = c;
  }
  return *cached;
}

Status check_coord(const HtpModel& m, const Coord& at) {
  if (at.size() != m.shape.size()) {
    return Status::invalid("coordinate (" + shape_to_string(at) + ") has rank " + num(at.size()) + ", the shape " +
                           shape_to_string(m.shape) + " has rank " + num(m.shape.size()));
  }
  for (size_t i = 0; i < at.size(); ++i) {
    if (at[i] < 0 || at[i] >= m.shape[i]) {
      return Status::invalid("coordinate (" + shape_to_string(at) + ") is outside the shape " +
                             shape_to_string(m.shape));
    }
  }
  return Status();
}

// The element index in memory of a logical coordinate: which chunk (the
// zero-size pairs, first slowest) times the chunk size, plus the position
// inside the chunk (the sized pairs, first slowest).
uint64_t element_offset(const HtpModel& m, const Coord& at) {
  uint64_t chunk_index = 0, inside = 0;
  for (const Digit& g : m.digits) {
    const uint64_t x = static_cast<uint64_t>(at[g.dim]);
    if (g.outer) {
      chunk_index = chunk_index * g.count + x / g.step;
    } else {
      inside = inside * g.count + (x % m.chunk[g.dim]) / g.step % g.count;
    }
  }
  return chunk_index * m.chunk_elements + inside;
}

// The byte of the memory-th element of the walk: chunk k = memory / chunk
// elements starts at its own base (get_raw of its first element), and the
// chunk's elements follow it contiguously.
uint64_t byte_of(const HtpModel& m, uint64_t memory) {
  const uint64_t chunk = memory / m.chunk_elements, inside = memory % m.chunk_elements;
  const uint64_t base = m.table ? m.bases[chunk] : chunk * m.chunk_stride;
  return base + inside * m.element_bytes;
}

constexpr uint64_t kPadding = UINT64_MAX;  // "pad introduced by the memory layout"

// Walks memory front to back, as the 2x9x20x50 example does: "(0,0,0,0) ...
// (0,7,7,31) > end of chunk", then the next chunk "(0,0,0,32) ...", until
// "finished traversing all 64 in dimension 3", and so on outwards. For every
// element of memory calls visit(memory_index, logical_index), with kPadding as
// the logical index where the walk is outside the tensor.
template <typename Visit>
void walk(const HtpModel& m, Visit visit) {
  const size_t rank = m.shape.size();
  std::vector<uint64_t> value(m.digits.size(), 0);  // the odometer
  Coord at(rank, 0);
  for (uint64_t memory = 0; memory < m.padded_elements; ++memory) {
    // The logical coordinate of this step: the sum of its digits along each dimension.
    std::fill(at.begin(), at.end(), 0);
    for (size_t i = 0; i < m.digits.size(); ++i) at[m.digits[i].dim] += static_cast<int64_t>(value[i] * m.digits[i].step);
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) inside = inside && at[d] < m.shape[d];
    visit(memory, inside ? index_of_coord(m.shape, at) : kPadding);
    // Next step: the rightmost digit moves fastest.
    for (size_t i = m.digits.size(); i-- > 0;) {
      if (++value[i] < m.digits[i].count) break;
      value[i] = 0;
    }
  }
}

// The checker asks one case many questions: each derives the model once (core/case_cache.h).
Result<std::shared_ptr<const HtpModel>> cached_model(const Case& c) {
  thread_local CaseCache<HtpModel> cache;
  return cache.get(c, model);
}

class HtpReference : public Impl {
 public:
  std::string name() const override { return "reference"; }

  Status supports(const Case& c) const override { return cached_model(c).status(); }

  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const HtpModel& m = *m_ptr;
    return m.size_bytes;
  }

  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    const Result<HtpModel>& cached = model_of(c);
    if (!cached.ok()) return cached.status();
    const HtpModel& m = cached.value();
    LC_RETURN_IF_ERROR(check_coord(m, at));
    return byte_of(m, element_offset(m, at)) * 8;
  }

  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const HtpModel& m = *m_ptr;
    const uint64_t e = m.element_bytes;
    auto* dst = static_cast<uint8_t*>(physical);
    const auto* src = static_cast<const uint8_t*>(logical);
    // "user padding need to be explicitly set to quantized 0 (or other specified
    // value)" (Practical tips): every padding element holds the pad value.
    // Bytes between chunks belong to no chunk: pack leaves them as they are.
    walk(m, [&](uint64_t memory, uint64_t index) {
      if (index == kPadding) std::memcpy(dst + byte_of(m, memory), m.pad.data(), e);
      else std::memcpy(dst + byte_of(m, memory), src + index * e, e);
    });
    return Status();
  }

  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override {
    LC_RETURN_IF_ERROR(check_buffers(*this, c, logical_size, physical_size));
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const HtpModel& m = *m_ptr;
    const uint64_t e = m.element_bytes;
    auto* dst = static_cast<uint8_t*>(logical);
    const auto* src = static_cast<const uint8_t*>(physical);
    walk(m, [&](uint64_t memory, uint64_t index) {
      if (index != kPadding) std::memcpy(dst + index * e, src + byte_of(m, memory), e);
    });
    return Status();
  }

  // Every byte of memory is an element's or a padding element's; "user padding
  // need to be explicitly set to quantized 0 (or other specified value)"
  // (Practical tips): padding bytes are fixed to the pad value (oracles/ERRATA.md,
  // HTP 10). No byte is free.
  Result<ByteRules> byte_rules(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const HtpModel& m = *m_ptr;
    const uint64_t size = m.size_bytes;
    if (size > (uint64_t{1} << 30)) return Status::unsupported("byte rules are mapped for buffers of up to 1 GiB");
    const char* doc = "qualcomm-htp-memory-layout.txt";
    const ByteRule pad_rule{"htp.pad", doc, "Practical tips working with Crouton",
                            "a padding element (pad introduced by the memory layout)",
                            "user padding need to be explicitly set to quantized 0 (or other specified value)"};
    // Between chunks placed apart: "there's gap in memory between each chunk"
    // (Practical tips working with Crouton), and the document says nothing of
    // its contents: free (oracles/ERRATA.md, HTP 13).
    const ByteRule gap_rule{"htp.chunk-gap", doc, "Practical tips working with Crouton",
                            "a byte between chunks (no chunk's)",
                            "chunks are not consecutive in memory (i.e. there's gap in memory between each chunk)"};
    ByteRulesBuilder b = m.size_bytes == m.padded_elements * m.element_bytes && !m.table
                             ? ByteRulesBuilder(size, pad_rule, ByteKind::kFixed, m.pad[0])
                             : ByteRulesBuilder(size, gap_rule, ByteKind::kFree);
    // Byte j of a padding element is byte j of the pad value (little-endian).
    std::vector<uint8_t> padding;
    for (uint8_t v : m.pad) padding.push_back(b.add(pad_rule, ByteKind::kFixed, v));
    const LayoutSpec* spec = find_spec(c.layout.name);
    const uint8_t element = b.add(element_rule(doc, spec ? spec->section : "Crouton Layout"), ByteKind::kElement);
    const uint64_t e = m.element_bytes;
    walk(m, [&](uint64_t memory, uint64_t index) {
      if (index != kPadding) b.paint(byte_of(m, memory), e, element);
      for (uint64_t j = 0; index == kPadding && j < e; ++j) b.paint(byte_of(m, memory) + j, 1, padding[j]);
    });
    return std::move(b).finish();
  }

  Result<std::vector<Fact>> describe(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const HtpModel& m = *m_ptr;
    std::vector<Fact> f;
    f.push_back({"notation", htp_notation_text(m.notation)});
    f.push_back({"rank", num(m.shape.size())});
    f.push_back({"padded_shape", list(m.padded)});
    f.push_back({"chunk_shape", list(m.chunk)});
    f.push_back({"chunk_grid", list(m.chunks)});
    std::vector<uint64_t> order;
    for (const Digit& g : m.digits) {
      if (g.outer) order.push_back(g.dim);
    }
    f.push_back({"chunk_order", list(order)});
    f.push_back({"chunk_count", num(m.chunk_count)});
    f.push_back({"chunk_elements", num(m.chunk_elements)});
    f.push_back({"chunk_bytes", num(m.chunk_elements * m.element_bytes)});
    f.push_back({"padded_elements", num(m.padded_elements)});
    f.push_back({"padding_elements", num(m.padded_elements - *element_count(m.shape))});
    f.push_back({"size_bytes", num(m.size_bytes)});
    if (c.layout.name == "htp.chunk_table") {
      // get_raw(first element's idx in chunk) of the first chunks, in chunk order.
      std::vector<uint64_t> starts;
      for (uint64_t k = 0; k < std::min<uint64_t>(m.chunk_count, 16); ++k) starts.push_back(byte_of(m, k * m.chunk_elements));
      f.push_back({"chunk_bases", list(starts) + (m.chunk_count > 16 ? ",..." : "")});
      // "operations such as aligned copy can't go across chunks": the longest
      // run of bytes a copy may treat as one is a chunk.
      f.push_back({"contiguous_run_bytes", num(m.chunk_elements * m.element_bytes)});
      f.push_back({"gap_bytes", num(m.size_bytes - m.padded_elements * m.element_bytes)});
    }
    if (m.pad.size() == 1) f.push_back({"pad_byte", num(m.pad[0])});
    uint64_t pad_bits = 0;
    for (size_t j = m.pad.size(); j-- > 0;) pad_bits = pad_bits << 8 | m.pad[j];
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%0*llx", static_cast<int>(2 * m.pad.size()), static_cast<unsigned long long>(pad_bits));
    f.push_back({"pad_bits", hex});
    return f;
  }
};

}  // namespace

const Impl& htp_reference() {
  static const HtpReference impl;
  return impl;
}

}  // namespace layoutcheck
