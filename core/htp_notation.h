// core/htp_notation.h — the Qualcomm HTP memory-layout notation, parsed.
//
// The document (qualcomm-htp-memory-layout.txt) writes a layout as
//
//   ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,8, 3,32>
//                       ^rank  ^ zero-size pairs:    ^ sized pairs: the chunk
//                              chunk order,            and the order inside it,
//                              first = slowest         first = slowest
//
// and FlatMemoryLayout<4> for ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0>.
// This header is shared by the reference and the optimized implementation:
// it turns text and descriptors into the list of pairs and validates the
// rules of the notation, nothing more. What the pairs mean for offsets is
// computed independently by each implementation.
//
//   auto n = parse_htp_notation("ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,8, 3,32>");
//   n->rank == 4;  n->pairs[4].dim == 1 && n->pairs[4].size == 8;
//   htp_notation_text(*n) == "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,8, 3,32>";
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "layoutcheck/dtype.h"
#include "layoutcheck/layout.h"
#include "layoutcheck/status.h"

namespace layoutcheck {

// Limits of this implementation of the notation (the document sets none).
constexpr int64_t kHtpMaxRank = 64;
constexpr uint64_t kHtpMaxChunkElements = uint64_t{1} << 56;  // as element_count()
constexpr size_t kHtpMaxPairs = 256;

struct HtpPair {
  int64_t dim = 0;
  uint64_t size = 0;  // 0: "all the rest of dimension dim"
  bool operator==(const HtpPair& o) const { return dim == o.dim && size == o.size; }
};

struct HtpNotation {
  int64_t rank = 0;
  std::vector<HtpPair> pairs;  // as written: zero-size pairs first, then sized pairs
  bool operator==(const HtpNotation& o) const { return rank == o.rank && pairs == o.pairs; }
};

// Checks the rules of the notation: rank in [1, kHtpMaxRank], every dimension
// in [0, rank), exactly one zero-size pair per dimension, zero-size pairs
// before sized pairs, at most kHtpMaxPairs pairs, chunk sizes whose product
// fits kHtpMaxChunkElements.
Status validate_htp_notation(const HtpNotation& n);

// The body between '<' and '>' of ChunkedMemoryLayout<...>: "4, 0,0, 1,0, ...".
// C comments (/* ... */) and whitespace are ignored, as in the document's listings.
Result<HtpNotation> parse_htp_notation_body(std::string_view body);
// "ChunkedMemoryLayout<...>" or "FlatMemoryLayout<R>".
Result<HtpNotation> parse_htp_notation(std::string_view text);
// The flat layout of a rank: <R, 0,0, 1,0, ..., R-1,0>.
HtpNotation flat_htp_notation(int64_t rank);

// "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,8, 2,8, 3,32>" (the document's spacing).
std::string htp_notation_text(const HtpNotation& n);
// The comma-free parameter form of the pairs: "0:0 1:0 2:0 3:0 1:8 2:8 3:32".
std::string htp_pairs_param(const HtpNotation& n);
Result<HtpNotation> parse_htp_pairs_param(int64_t rank, std::string_view pairs);

// htp.chunk_table: chunks that are not consecutive in memory ("chunks are not
// consecutive in memory (i.e. there's gap in memory between each chunk)",
// Practical tips working with Crouton). Chunk k, in the order of the zero-size
// pairs, starts at byte k * chunk_stride, or at the k-th byte offset of the
// `bases` table ("0 4096 12288 ..."); chunk_stride 0 with no table is the
// consecutive layout. The reference and the optimized implementation place the
// chunks themselves; this only reads the table.
constexpr int64_t kHtpMaxChunkStride = int64_t{1} << 48;      // bytes, parameter maximum
constexpr uint64_t kHtpMaxTableBytes = uint64_t{1} << 60;     // the last byte of any chunk
constexpr size_t kHtpMaxTableEntries = 4096;
constexpr const char* kHtpNoBases = "none";  // the bases parameter's default: no table
Result<std::vector<uint64_t>> parse_htp_bases(std::string_view bases);

// The notation of any htp.* layout (named layouts through the document's table),
// validated, and its padding byte.
Result<HtpNotation> htp_notation_of(const Layout& layout);
// The padding element of a case, little-endian, dtype_bits / 8 bytes: the
// `pad` parameter read as a value of the element type ("user padding need to be
// explicitly set to quantized 0 (or other specified value)", Practical tips):
// an integer in the type's range for integer types, a decimal (or inf, -inf)
// rounded to nearest-even for fp16, bf16 and fp32 (pad=31.0 in fp16 is 0x4FC0).
// With interface=scale_offset the default pad is the quantized 0, the stored
// value `offset` that ScaleOffsetInterface decodes to 0 (oracles/ERRATA.md).
// Errors name the rules htp/pad-value, htp/scale-offset-dtype, htp/offset-range.
//
//   htp_pad_element(*parse_layout("htp.crouton(pad=31.0)"), DType::kFp16) == {0xC0, 0x4F}
//   htp_pad_element(*parse_layout("htp.crouton(interface=scale_offset,offset=128)"), DType::kUInt8) == {0x80}
Result<std::vector<uint8_t>> htp_pad_element(const Layout& layout, DType dtype);

}  // namespace layoutcheck
