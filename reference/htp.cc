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
  uint8_t pad = 0;
  // The walk below, recorded once for small models: the logical index (or
  // kPadding) of every memory element in turn. pack, unpack and the byte rules
  // each follow the walk; the record saves re-deriving it three times a check.
  std::vector<uint64_t> walk_record;
};

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
    return Status::invalid(text + ": shape " + shape_to_string(c.shape) + " has rank " + num(c.shape.size()) +
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
  m.pad = htp_pad_byte(c.layout);
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

constexpr uint64_t kPadding = UINT64_MAX;  // "pad introduced by the memory layout"

// Walks memory front to back, as the 2x9x20x50 example does: "(0,0,0,0) ...
// (0,7,7,31) > end of chunk", then the next chunk "(0,0,0,32) ...", until
// "finished traversing all 64 in dimension 3", and so on outwards. For every
// element of memory calls visit(memory_index, logical_index), with kPadding as
// the logical index where the walk is outside the tensor.
template <typename Visit>
void walk_memory(const HtpModel& m, Visit visit) {
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

// walk_memory(), or its record when the model keeps one.
template <typename Visit>
void walk(const HtpModel& m, Visit visit) {
  if (m.walk_record.empty()) return walk_memory(m, visit);
  for (uint64_t memory = 0; memory < m.walk_record.size(); ++memory) visit(memory, m.walk_record[memory]);
}

constexpr uint64_t kMaxRecordedWalk = 1u << 16;  // memory elements

// The model with its walk recorded, when small.
Result<HtpModel> recorded_model(const Case& c) {
  LC_ASSIGN_OR_RETURN(HtpModel m, model(c));
  if (m.padded_elements <= kMaxRecordedWalk) {
    std::vector<uint64_t> record(m.padded_elements, kPadding);
    walk_memory(m, [&](uint64_t memory, uint64_t index) { record[memory] = index; });
    m.walk_record = std::move(record);
  }
  return m;
}

// The checker asks one case many questions: each derives the model once (core/case_cache.h).
Result<std::shared_ptr<const HtpModel>> cached_model(const Case& c) {
  thread_local CaseCache<HtpModel> cache;
  return cache.get(c, recorded_model);
}

class HtpReference : public Impl {
 public:
  std::string name() const override { return "reference"; }

  Status supports(const Case& c) const override { return cached_model(c).status(); }

  Result<uint64_t> size_bytes(const Case& c) const override {
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const HtpModel& m = *m_ptr;
    return m.padded_elements * m.element_bytes;
  }

  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    LC_ASSIGN_OR_RETURN(auto m_ptr, cached_model(c));
    const HtpModel& m = *m_ptr;
    LC_RETURN_IF_ERROR(check_coord(m, at));
    return element_offset(m, at) * m.element_bytes * 8;
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
    // value)" (Practical tips): every byte of a padding element is the pad byte.
    walk(m, [&](uint64_t memory, uint64_t index) {
      if (index == kPadding) std::memset(dst + memory * e, m.pad, e);
      else std::memcpy(dst + memory * e, src + index * e, e);
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
      if (index != kPadding) std::memcpy(dst + index * e, src + memory * e, e);
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
    const uint64_t size = m.padded_elements * m.element_bytes;
    if (size > (uint64_t{1} << 30)) return Status::unsupported("byte rules are mapped for buffers of up to 1 GiB");
    const char* doc = "qualcomm-htp-memory-layout.txt";
    ByteRulesBuilder b(size,
                       {"htp.pad", doc, "Practical tips working with Crouton",
                        "a padding element (pad introduced by the memory layout)",
                        "user padding need to be explicitly set to quantized 0 (or other specified value)"},
                       ByteKind::kFixed, m.pad);
    const LayoutSpec* spec = find_spec(c.layout.name);
    const uint8_t element = b.add(element_rule(doc, spec ? spec->section : "Crouton Layout"), ByteKind::kElement);
    const uint64_t e = m.element_bytes;
    walk(m, [&](uint64_t memory, uint64_t index) {
      if (index != kPadding) b.paint(memory * e, e, element);
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
    f.push_back({"size_bytes", num(m.padded_elements * m.element_bytes)});
    f.push_back({"pad_byte", num(m.pad)});
    return f;
  }
};

}  // namespace

const Impl& htp_reference() {
  static const HtpReference impl;
  return impl;
}

}  // namespace layoutcheck
