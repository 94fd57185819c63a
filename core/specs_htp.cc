// Registration of the Qualcomm HTP layouts: the generic ChunkedMemoryLayout in
// vendor notation, FlatMemoryLayout, and the named layouts of the document's
// table, with their parser/printer and case generators. No layout arithmetic
// lives here beyond the chunk extents the generators need to place shapes
// below, at and above every chunk boundary.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/families.h"
#include "core/htp_notation.h"
#include "layoutcheck/checked.h"

namespace layoutcheck {
namespace {

constexpr const char* kDoc = "qualcomm-htp-memory-layout.txt";

// The document's table ("Different memory layouts") and its convolution weight
// layout ("A More complicated example of Memory Layout"). The vendor name
// R4NCHWMemoryLayout means what the table and the SDK header say; the Flat
// Layout prose's other notation has its own name; see oracles/ERRATA.md.
struct NamedLayout {
  const char* name;
  const char* vendor;  // the document's type name, accepted as an alias ("" = none)
  const char* pairs;   // parameter form of the pairs
  const char* section;
  const char* summary;
  bool weights;
};
constexpr NamedLayout kNamed[] = {
    {"htp.nchw", "R4NCHWMemoryLayout", "0:0 3:0 2:0 1:0", "Different memory layouts",
     "NHWC tensor stored N, C, W, H: ChunkedMemoryLayout<4, 0,0, 3,0, 2,0, 1,0> (the table's and the SDK's)", false},
    {"htp.nchw_prose", "", "0:0 3:0 1:0 2:0", "Flat Layout",
     "NHWC tensor stored N, C, H, W: ChunkedMemoryLayout<4, 0,0, 3,0, 1,0, 2,0> (the Flat Layout prose's)", false},
    {"htp.depth32", "R4Depth32MemoryLayout", "0:0 1:0 3:0 2:0 2:4 3:32", "Different memory layouts",
     "d32: per batch and row, depth chunks of 32 holding width in 4x32 (width x depth) chunks", false},
    {"htp.crouton", "R4CroutonLayout", "0:0 1:0 2:0 3:0 1:8 2:8 3:32", "Crouton Layout",
     "8x8x32 (height x width x depth) croutons in batch, height, width, depth order", false},
    {"htp.crouton4x1", "R4Crouton4x1Layout", "0:0 1:0 2:0 3:0 1:8 2:2 3:32 2:4", "Different memory layouts",
     "8x8x32 croutons, width split 2x4 with the inner 4 columns beside each depth", false},
    {"htp.crouton2x2", "R4Crouton2x2Layout", "0:0 1:0 2:0 3:0 1:4 2:4 3:32 1:2 2:2",
     "Different memory layouts", "8x8x32 croutons of 4x4x32 blocks with 2x2 (height x width) innermost", false},
    {"htp.crouton2", "R4Crouton2Layout", "0:0 1:0 2:0 3:0 1:8 2:2 3:32 2:2", "Different memory layouts",
     "8x4x32 croutons, width split 2x2 with the inner 2 columns beside each depth", false},
    {"htp.weights", "", "3:0 2:0 0:0 1:0 2:8 3:32 2:4", "A More complicated example of Memory Layout",
     "convolution weights (fh, fw, in, out): 32x32 in x out chunks, 4 inputs innermost, out-chunk slowest",
     true},
    // The annotated listings of "Details about Tensors", by the names they are declared with.
    {"htp.channel_major_crouton", "ChannelMajorCrouton", "0:0 1:0 2:0 3:0 1:8 2:8 3:32", "Details about Tensors",
     "ChannelMajorCrouton: 8x8x32 (height x width x depth) croutons, as R4CroutonLayout", false},
    {"htp.spatial_xy_major", "SpatialXYMajor", "0:0 1:0 2:0 3:0 1:4 2:4 3:32 1:2 2:2", "Details about Tensors",
     "SpatialXYMajor: 8x8x32 croutons of 4x4x32 blocks with 2x2 (rows x cols) innermost, as R4Crouton2x2Layout", false},
    {"htp.spatial_x_major", "SpatialXMajor", "0:0 1:0 2:0 3:0 1:4 2:2 3:32 2:4", "Details about Tensors",
     "SpatialXMajor as written (1,4: 4x8x32 croutons, width split 2x4 with 4 columns beside each depth)", false},
};

// The NCHW layouts have chunks of one element: nothing to pad.
bool has_pad(const std::string& name) { return name != "htp.nchw" && name != "htp.nchw_prose"; }

const NamedLayout* named_layout(const std::string& name) {
  for (const auto& n : kNamed) {
    if (name == n.name) return &n;
  }
  return nullptr;
}

std::string quoted(std::string_view s) { return quote_input(s); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string pair_text(const HtpPair& p) { return "(" + std::to_string(p.dim) + "," + std::to_string(p.size) + ")"; }

// Non-negative decimal integer; rejects signs, other bases and overflow.
Result<uint64_t> parse_count(std::string_view token, const char* what) {
  token = trim(token);
  if (token.empty()) return Status::invalid(std::string("htp notation: missing ") + what);
  uint64_t v = 0;
  for (char ch : token) {
    if (!std::isdigit(static_cast<unsigned char>(ch))) {
      return Status::invalid(std::string("htp notation: ") + what + " " + quoted(token) +
                             " is not a non-negative decimal integer");
    }
    if (!checked_mul(v, 10, &v) || !checked_add(v, static_cast<uint64_t>(ch - '0'), &v)) {
      return Status::invalid(std::string("htp notation: ") + what + " " + quoted(token) + " overflows 64 bits");
    }
  }
  return v;
}

// Removes /* ... */ comments (the document's annotated listings use them).
Result<std::string> strip_comments(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 2, "/*") == 0) {
      size_t end = text.find("*/", i + 2);
      if (end == std::string_view::npos) return Status::invalid("htp notation: unterminated /* comment");
      out += ' ';
      i = end + 2;
      continue;
    }
    out += text[i++];
  }
  return out;
}

HtpNotation rank_only(uint64_t rank) {
  HtpNotation n;
  n.rank = static_cast<int64_t>(std::min<uint64_t>(rank, INT64_MAX));
  return n;
}

// "The interface is the way information is encoded/decoded into the
// underlying data type. For example, PlainInterface just returns the value, but
// ScaleOffsetInterface applies the offset and scale value (for quantized
// types)" (Details about Tensors). The offset is the stored value of 0.
constexpr int64_t kMinOffset = -(int64_t{1} << 31);
constexpr int64_t kMaxOffset = (int64_t{1} << 32) - 1;

std::vector<ParamSpec> pad_params() {
  ParamSpec interface;
  interface.key = "interface";
  interface.kind = ParamKind::kEnum;
  interface.choices = {"plain", "scale_offset"};
  interface.default_value = [](const ParamMap&) { return std::string("plain"); };
  interface.doc = "PlainInterface or ScaleOffsetInterface (quantized: real = scale * (stored - offset))";
  ParamSpec pad;
  pad.key = "pad";
  pad.kind = ParamKind::kText;
  pad.default_value = [](const ParamMap& p) {
    auto i = p.find("interface");
    auto o = p.find("offset");
    return i != p.end() && i->second == "scale_offset" && o != p.end() ? o->second : std::string("0");
  };
  pad.doc = "value of every padding element, in element units (an integer, or a decimal for fp16/bf16/fp32); "
            "default 0, or the quantized 0 (offset) with interface=scale_offset";
  return {interface, int_param("offset", kMinOffset, kMaxOffset, "0", "ScaleOffsetInterface offset: the stored value of 0"),
          pad};
}

// Rounds v to the float format with `exp_bits` exponent and `man_bits` fraction
// bits, to nearest-even; false if a finite v rounds past the largest finite value.
bool encode_float(double v, int exp_bits, int man_bits, uint64_t* bits) {
  const uint64_t sign = std::signbit(v) ? uint64_t{1} << (exp_bits + man_bits) : 0;
  const int64_t bias = (int64_t{1} << (exp_bits - 1)) - 1, max_field = (int64_t{1} << exp_bits) - 1;
  const double a = std::fabs(v);
  if (std::isinf(a)) {
    *bits = sign | (static_cast<uint64_t>(max_field) << man_bits);
    return true;
  }
  if (a == 0) {
    *bits = sign;
    return true;
  }
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
  const int64_t x = std::max<int64_t>(e - 1, 1 - bias);  // exponent of the quantum's binade (subnormals share emin)
  const double q = std::nearbyint(std::ldexp(a, static_cast<int>(man_bits - x)));  // in quanta, ties to even
  const uint64_t field = static_cast<uint64_t>(q);
  // A normal number's field carries its implicit bit into the exponent: (x + bias - 1) << man + q.
  const uint64_t enc = e - 1 >= 1 - bias ? (static_cast<uint64_t>(x + bias - 1) << man_bits) + field : field;
  if ((enc >> man_bits) >= static_cast<uint64_t>(max_field)) return false;
  *bits = sign | enc;
  return true;
}

Status pad_error(const std::string& msg) { return Status::invalid(msg).with_rule("htp/pad-value"); }

// ---- vendor notation as a layout name ------------------------------------------

// "key=value,key=value" after a notation, e.g. ChunkedMemoryLayout<...>(pad=31).
Result<ParamMap> parse_suffix_params(std::string_view text, std::string_view whole) {
  ParamMap given;
  text = trim(text);
  if (text.empty()) return given;
  if (text.front() != '(' || text.back() != ')') {
    return Status::invalid("htp notation " + quoted(whole) + ": unexpected text " + quoted(text) +
                           " after '>' (only parameters may follow: "
                           "(pad=N,interface=plain|scale_offset,offset=N,chunk_stride=N,bases=...))");
  }
  std::string_view body = text.substr(1, text.size() - 2);
  while (!trim(body).empty()) {
    size_t comma = body.find(',');
    std::string_view item = trim(body.substr(0, comma));
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Status::invalid("htp notation " + quoted(whole) + ": parameter " + quoted(item) + " is not key=value");
    }
    std::string key(trim(item.substr(0, eq)));
    if (given.count(key)) return Status::invalid("htp notation " + quoted(whole) + ": parameter " + key + " given twice");
    given[key] = std::string(trim(item.substr(eq + 1)));
    if (comma == std::string_view::npos) break;
    body.remove_prefix(comma + 1);
    if (trim(body).empty()) return Status::invalid("htp notation " + quoted(whole) + ": trailing ','");
  }
  return given;
}

bool starts_with_word(std::string_view text, std::string_view word) {
  if (text.substr(0, word.size()) != word) return false;
  if (text.size() == word.size()) return true;
  char next = text[word.size()];
  return !(std::isalnum(static_cast<unsigned char>(next)) || next == '_' || next == '.');
}

std::optional<Result<Layout>> parse_htp_text(std::string_view raw) {
  std::string_view text = trim(raw);
  // Vendor type names of the table are aliases of the named layouts.
  if (starts_with_word(text, "R4FlatMemoryLayout")) {
    return parse_layout("htp.flat" + std::string(text.substr(18)));
  }
  for (const auto& n : kNamed) {
    std::string_view vendor = n.vendor;
    if (!vendor.empty() && starts_with_word(text, vendor)) {
      return parse_layout(std::string(n.name) + std::string(text.substr(vendor.size())));
    }
  }
  const bool chunked = starts_with_word(text, "ChunkedMemoryLayout") ||
                       (text.substr(0, 19) == "ChunkedMemoryLayout" && text.size() > 19 && text[19] == '<');
  const bool flat = starts_with_word(text, "FlatMemoryLayout") ||
                    (text.substr(0, 16) == "FlatMemoryLayout" && text.size() > 16 && text[16] == '<');
  if (!chunked && !flat) return std::nullopt;
  size_t open = text.find('<');
  size_t close = text.find('>');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    const std::string form = chunked ? "ChunkedMemoryLayout<rank, dim,size, ...>" : "FlatMemoryLayout<rank>";
    const std::string where = "htp notation " + quoted(text) + ": ";
    if (open == std::string_view::npos) {
      return Result<Layout>(Status::invalid(where + "missing '<' after " + (chunked ? "ChunkedMemoryLayout" : "FlatMemoryLayout") +
                                            " (the form is " + form + ")"));
    }
    if (close == std::string_view::npos) {
      return Result<Layout>(Status::invalid(where + "missing '>' closing the '<' at column " + std::to_string(open + 1) +
                                            " (the form is " + form + ")"));
    }
    return Result<Layout>(Status::invalid(where + "'>' at column " + std::to_string(close + 1) + " comes before the '<' at column " +
                                          std::to_string(open + 1) + " (the form is " + form + ")"));
  }
  if (!trim(text.substr(chunked ? 19 : 16, open - (chunked ? 19 : 16))).empty()) {
    return Result<Layout>(Status::invalid("htp notation " + quoted(text) + ": unexpected text before '<'"));
  }
  auto given = parse_suffix_params(text.substr(close + 1), text);
  if (!given.ok()) return Result<Layout>(given.status());
  std::string_view body = text.substr(open + 1, close - open - 1);
  if (flat) {
    auto stripped = strip_comments(body);
    if (!stripped.ok()) return Result<Layout>(stripped.status());
    auto rank = parse_count(*stripped, "rank");
    if (!rank.ok()) return Result<Layout>(rank.status());
    if (*rank < 1 || *rank > static_cast<uint64_t>(kHtpMaxRank)) {
      return Result<Layout>(Status::invalid("htp notation " + quoted(text) + ": rank " + std::to_string(*rank) +
                                            " is outside the supported range [1, " + std::to_string(kHtpMaxRank) + "]"));
    }
    Status s = validate_htp_notation(flat_htp_notation(static_cast<int64_t>(*rank)));
    if (!s.ok()) return Result<Layout>(s);
    ParamMap p = *given;
    if (p.count("rank")) return Result<Layout>(Status::invalid("htp notation " + quoted(text) + ": the rank is given in <...>"));
    p["rank"] = std::to_string(*rank);
    return make_layout("htp.flat", p);
  }
  auto n = parse_htp_notation_body(body);
  if (!n.ok()) return Result<Layout>(n.status());
  ParamMap p = *given;
  if (p.count("rank") || p.count("pairs")) {
    return Result<Layout>(Status::invalid("htp notation " + quoted(text) + ": rank and pairs are given in <...>"));
  }
  p["rank"] = std::to_string(n->rank);
  p["pairs"] = htp_pairs_param(*n);
  // A chunk stride or a table of chunk bases places the chunks apart.
  const bool table = p.count("chunk_stride") || p.count("bases");
  return make_layout(table ? "htp.chunk_table" : "htp.chunked", p);
}

std::string format_chunked(const Layout& layout) {
  auto n = parse_htp_pairs_param(layout.get_int("rank"), layout.get("pairs"));
  // Every padding parameter that differs from its default (the interface and
  // its offset too), so that parse(to_string(d)) == d.
  std::string pad_args;
  ParamMap resolved;
  for (const ParamSpec& p : pad_params()) {
    const std::string& value = layout.get(p.key);
    if (value != p.default_value(resolved)) pad_args += (pad_args.empty() ? "" : ",") + p.key + "=" + value;
    resolved[p.key] = value;
  }
  if (n.ok() && htp_pairs_param(*n) == layout.get("pairs")) {
    return htp_notation_text(*n) + (pad_args.empty() ? "" : "(" + pad_args + ")");
  }
  // Not a valid notation: the generic form, so that the text still round-trips.
  std::string args = "rank=" + layout.get("rank") + ",pairs=" + layout.get("pairs");
  if (!pad_args.empty()) args += "," + pad_args;
  return "htp.chunked(" + args + ")";
}

std::string format_flat(const Layout& layout) { return "FlatMemoryLayout<" + layout.get("rank") + ">"; }

// ---- generators --------------------------------------------------------------

DType pick_dtype(std::mt19937_64& rng) {
  static const DType kTypes[] = {DType::kUInt8, DType::kInt8, DType::kFp16, DType::kUInt16,
                                 DType::kBf16,  DType::kInt32, DType::kFp32};
  return kTypes[pick(rng, 0, 6)];
}

// Chunk extent of every dimension: the product of its sized pairs.
std::vector<int64_t> chunk_extents(const HtpNotation& n) {
  std::vector<int64_t> e(static_cast<size_t>(n.rank), 1);
  for (const auto& p : n.pairs) {
    if (p.size != 0) e[static_cast<size_t>(p.dim)] *= static_cast<int64_t>(p.size);
  }
  return e;
}

// An extent below, at or above the chunk extent (or a multiple of it).
int64_t boundary_extent(std::mt19937_64& rng, int64_t chunk, int size_class) {
  switch (pick(rng, 0, 5)) {
    case 0: return std::max<int64_t>(1, chunk - 1);
    case 1: return chunk;
    case 2: return chunk + 1;
    case 3: return chunk * pick(rng, 2, 3);
    case 4: return std::max<int64_t>(1, pick(rng, 1, chunk * 2));
    default: return pick(rng, 1, 3 + 4 * size_class);
  }
}

// Shrinks the largest dimension until the padded element count is under the budget.
Shape draw_shape(std::mt19937_64& rng, const std::vector<int64_t>& chunk, int size_class) {
  Shape s;
  for (int64_t e : chunk) s.push_back(boundary_extent(rng, e, size_class));
  const uint64_t budget = uint64_t{1} << (11 + 3 * std::min(size_class, 3));
  for (int guard = 0; guard < 256; ++guard) {
    Checked padded = 1;
    for (size_t i = 0; i < s.size(); ++i) padded *= ceil_div(static_cast<uint64_t>(s[i]), static_cast<uint64_t>(chunk[i])) * static_cast<uint64_t>(chunk[i]);
    if (padded.ok() && padded.value() <= budget) break;
    auto big = std::max_element(s.begin(), s.end());
    *big = std::max<int64_t>(1, *big / 2);
    if (*big == 1 && std::all_of(s.begin(), s.end(), [](int64_t v) { return v == 1; })) break;
  }
  if (pick(rng, 0, 60) == 0) s[static_cast<size_t>(pick(rng, 0, static_cast<int64_t>(s.size()) - 1))] = 0;  // invalid now and then
  return s;
}

Case make_case(Layout layout, DType dtype, Shape shape) {
  Case c;
  c.layout = std::move(layout);
  c.dtype = dtype;
  c.shape = std::move(shape);
  return c;
}

// Pad values of every kind: bytes, negative integers, decimals (some not of
// every type), infinities; now and then a scale/offset tensor with its quantized 0.
ParamMap draw_pad(std::mt19937_64& rng) {
  static const char* kValues[] = {"-1", "-128", "31.0", "0.5", "-0.0", "1e-7", "65504", "inf", "-3.25", "70000"};
  ParamMap p;
  switch (pick(rng, 0, 7)) {
    case 0: p["pad"] = std::to_string(pick(rng, 0, 255)); break;
    case 1: p["pad"] = kValues[pick(rng, 0, 9)]; break;
    case 2:
      p["interface"] = "scale_offset";
      p["offset"] = std::to_string(pick(rng, -8, 255));
      break;
    case 3:  // the widest offsets: an int32's and a uint32's extremes
      p["interface"] = "scale_offset";
      p["offset"] = std::to_string(pick(rng, 0, 1) ? kMinOffset : kMaxOffset);
      break;
    default: break;
  }
  return p;
}

HtpNotation random_notation(std::mt19937_64& rng, int size_class) {
  HtpNotation n;
  n.rank = pick(rng, 1, 5);
  std::vector<int64_t> order(static_cast<size_t>(n.rank));
  for (int64_t i = 0; i < n.rank; ++i) order[static_cast<size_t>(i)] = i;
  if (pick(rng, 0, 3) != 0) std::shuffle(order.begin(), order.end(), rng);
  for (int64_t d : order) n.pairs.push_back({d, 0});
  static const uint64_t kSizes[] = {1, 2, 3, 4, 8, 5, 32};
  const int64_t sized = pick(rng, 0, 2 + size_class);
  uint64_t volume = 1;
  for (int64_t i = 0; i < sized; ++i) {
    uint64_t size = kSizes[pick(rng, 0, size_class >= 2 ? 6 : 5)];
    if (volume * size > 4096) continue;
    volume *= size;
    n.pairs.push_back({pick(rng, 0, n.rank - 1), size});
  }
  return n;
}

Case chunked_case(std::mt19937_64& rng, int size_class) {
  HtpNotation n = random_notation(rng, size_class);
  ParamMap p = draw_pad(rng);
  p["rank"] = std::to_string(n.rank);
  p["pairs"] = htp_pairs_param(n);
  Shape s = draw_shape(rng, chunk_extents(n), size_class);
  return make_case(*make_layout("htp.chunked", p), pick_dtype(rng), s);
}

Case flat_case(std::mt19937_64& rng, int size_class) {
  const int64_t rank = pick(rng, 0, 2) ? 4 : pick(rng, 1, 6);
  Shape s = draw_shape(rng, std::vector<int64_t>(static_cast<size_t>(rank), 4), size_class);
  return make_case(*make_layout("htp.flat", {{"rank", std::to_string(rank)}}), pick_dtype(rng), s);
}

// ---- chunk tables ----------------------------------------------------------------

// Chunks of a shape under a notation (the generators size chunk tables).
uint64_t chunk_count_of(const HtpNotation& n, const Shape& s) {
  const std::vector<int64_t> e = chunk_extents(n);
  Checked count = 1;
  for (size_t d = 0; d < s.size() && d < e.size(); ++d) {
    count *= ceil_div(static_cast<uint64_t>(std::max<int64_t>(s[d], 1)), static_cast<uint64_t>(e[d]));
  }
  return count.ok() ? count.value() : UINT64_MAX;
}

uint64_t chunk_elements_of(const HtpNotation& n) {
  uint64_t v = 1;
  for (int64_t e : chunk_extents(n)) v *= static_cast<uint64_t>(e);
  return v;
}

// Chunk placements: consecutive, a stride with a gap (now and then too short
// or not a multiple of the element), the largest stride, and explicit tables
// (shuffled slots with gaps; now and then a base too few or too many, two
// chunks overlapping, a base between elements).
Case chunk_table_case(std::mt19937_64& rng, int size_class) {
  HtpNotation n = random_notation(rng, size_class);
  ParamMap p = draw_pad(rng);
  p["rank"] = std::to_string(n.rank);
  p["pairs"] = htp_pairs_param(n);
  const std::vector<int64_t> e = chunk_extents(n);
  Shape s = draw_shape(rng, e, size_class);
  const DType dtype = pick_dtype(rng);
  const int64_t elem = static_cast<int64_t>(dtype_bits(dtype) / 8);
  const int64_t chunk_bytes = static_cast<int64_t>(chunk_elements_of(n)) * elem;
  const uint64_t count = chunk_count_of(n, s);
  const int64_t kind = pick(rng, 0, 6);
  if (kind == 1 || kind == 2) {
    int64_t stride = chunk_bytes + elem * pick(rng, 0, 16) * (pick(rng, 0, 2) ? 1 : 8);
    if (pick(rng, 0, 5) == 0) stride = std::max<int64_t>(1, chunk_bytes - elem * pick(rng, 1, 4));
    if (elem > 1 && pick(rng, 0, 5) == 0) stride += pick(rng, 1, elem - 1);
    p["chunk_stride"] = std::to_string(std::min(stride, kHtpMaxChunkStride));
  } else if (kind == 3) {
    // The largest stride: one chunk, or so many that the last one lies past 2^60.
    p["chunk_stride"] = std::to_string(kHtpMaxChunkStride);
    if (pick(rng, 0, 1) == 0) {
      for (size_t d = 0; d < s.size(); ++d) s[d] = std::max<int64_t>(1, std::min(s[d], e[d]));
    } else {
      n = flat_htp_notation(1);
      p["rank"] = "1";
      p["pairs"] = htp_pairs_param(n);
      s = {pick(rng, 4098, 5000)};
    }
  } else if (kind >= 4 && count <= 64) {
    std::vector<uint64_t> slot(count);
    for (uint64_t i = 0; i < count; ++i) slot[i] = i;
    if (pick(rng, 0, 2) != 0) std::shuffle(slot.begin(), slot.end(), rng);
    const uint64_t pitch = static_cast<uint64_t>(chunk_bytes + elem * pick(rng, 0, 8));
    const uint64_t first = static_cast<uint64_t>(elem * pick(rng, 0, 4));
    std::vector<uint64_t> bases;
    for (uint64_t i = 0; i < count; ++i) bases.push_back(first + slot[i] * pitch);
    switch (pick(rng, 0, 9)) {
      case 0: if (count >= 2) bases.pop_back(); break;
      case 1: bases.push_back(first + count * pitch); break;
      case 2: if (count >= 2) bases[1] = bases[0] + static_cast<uint64_t>(elem); break;
      case 3: if (elem > 1) bases.back() += 1; break;
      default: break;
    }
    std::string text;
    for (uint64_t b : bases) text += (text.empty() ? "" : " ") + std::to_string(b);
    p["bases"] = text;
    if (pick(rng, 0, 15) == 0) p["chunk_stride"] = std::to_string(chunk_bytes);  // both placements
  }
  return make_case(*make_layout("htp.chunk_table", p), dtype, s);
}

std::function<Case(std::mt19937_64&, int)> named_generator(const NamedLayout& named) {
  std::string name = named.name;
  bool padded = has_pad(name);
  return [name, padded](std::mt19937_64& rng, int size_class) {
    Layout layout = *make_layout(name, padded ? draw_pad(rng) : ParamMap{});
    auto n = htp_notation_of(layout);
    Shape s = draw_shape(rng, chunk_extents(*n), size_class);
    return make_case(layout, pick_dtype(rng), s);
  };
}

// Every dimension below, at and above its chunk extent, in one pass per
// dimension (the others at their chunk extent), plus all-below and all-above.
std::vector<Case> boundaries_of(const Layout& layout) {
  std::vector<Case> out;
  auto n = htp_notation_of(layout);
  if (!n.ok()) return out;
  std::vector<int64_t> e = chunk_extents(*n);
  const DType types[] = {DType::kUInt8, DType::kFp16, DType::kFp32};
  int t = 0;
  for (size_t d = 0; d < e.size(); ++d) {
    for (int64_t v : {e[d] - 1, e[d], e[d] + 1, 2 * e[d], 2 * e[d] + 1}) {
      if (v < 1) continue;
      Shape s(e.begin(), e.end());
      s[d] = v;
      out.push_back(make_case(layout, types[t++ % 3], s));
    }
  }
  Shape below, above;
  for (int64_t v : e) below.push_back(std::max<int64_t>(1, v - 1)), above.push_back(v + 1);
  out.push_back(make_case(layout, DType::kUInt8, below));
  out.push_back(make_case(layout, DType::kFp16, above));
  return out;
}

}  // namespace

// ---- notation ------------------------------------------------------------------

namespace {
Status validate_notation_pairs(const HtpNotation& n);
}  // namespace

// A notation that breaks the document's rules is rejected by rule htp/notation,
// whether a layout name or a case spells it.
Status validate_htp_notation(const HtpNotation& n) {
  Status s = validate_notation_pairs(n);
  if (s.ok() || !s.rule().empty()) return s;
  return std::move(s).with_rule("htp/notation");
}

namespace {
Status validate_notation_pairs(const HtpNotation& n) {
  const std::string where = "htp notation <" + std::to_string(n.rank) + ", ...>";
  if (n.rank < 1) {
    return Status::invalid(where + ": rank " + std::to_string(n.rank) +
                           " (the zeroth parameter) must be at least 1");
  }
  if (n.rank > kHtpMaxRank) {
    return Status::invalid(where + ": rank " + std::to_string(n.rank) + " exceeds the supported maximum " +
                           std::to_string(kHtpMaxRank));
  }
  if (n.pairs.size() > kHtpMaxPairs) {
    return Status::invalid(where + ": " + std::to_string(n.pairs.size()) + " pairs exceed the supported maximum " +
                           std::to_string(kHtpMaxPairs));
  }
  for (const auto& p : n.pairs) {
    if (p.dim < 0 || p.dim >= n.rank) {
      return Status::invalid(where + ": pair " + pair_text(p) + " names dimension " + std::to_string(p.dim) +
                             ", outside [0, " + std::to_string(n.rank - 1) + "] for rank " + std::to_string(n.rank));
    }
  }
  size_t zeros = 0;
  for (size_t i = 0; i < n.pairs.size(); ++i) {
    if (n.pairs[i].size != 0) continue;
    ++zeros;
    if (i > 0 && n.pairs[i - 1].size != 0) {
      return Status::invalid(where + ": zero-size pair " + pair_text(n.pairs[i]) + " follows the sized pair " +
                             pair_text(n.pairs[i - 1]) + "; the chunk-order (dim,0) pairs come first");
    }
  }
  std::vector<int> outer(static_cast<size_t>(n.rank), 0);
  for (const auto& p : n.pairs) {
    if (p.size == 0 && ++outer[static_cast<size_t>(p.dim)] > 1) {
      return Status::invalid(where + ": dimension " + std::to_string(p.dim) + " has more than one zero-size pair");
    }
  }
  if (zeros != static_cast<size_t>(n.rank)) {
    for (int64_t d = 0; d < n.rank; ++d) {
      if (outer[static_cast<size_t>(d)] == 0) {
        return Status::invalid(where + ": rank " + std::to_string(n.rank) + " needs one zero-size pair per dimension, " +
                               "got " + std::to_string(zeros) + "; dimension " + std::to_string(d) +
                               " has no (" + std::to_string(d) + ",0) \"all the rest\" pair");
      }
    }
  }
  Checked volume = 1;
  for (const auto& p : n.pairs) {
    if (p.size != 0) volume *= p.size;
  }
  if (!volume.ok() || volume.value() > kHtpMaxChunkElements) {
    return Status::invalid(where + ": the chunk sizes multiply to " +
                           (volume.ok() ? std::to_string(volume.value()) : std::string("more than 2^64")) +
                           " elements, more than the 2^56 limit");
  }
  return Status();
}
}  // namespace

Result<HtpNotation> parse_htp_notation_body(std::string_view body) {
  LC_ASSIGN_OR_RETURN(std::string text, strip_comments(body));
  std::vector<std::string_view> tokens;
  std::string_view rest = text;
  while (true) {
    size_t comma = rest.find(',');
    tokens.push_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  LC_ASSIGN_OR_RETURN(uint64_t rank, parse_count(tokens[0], "rank"));
  if ((tokens.size() - 1) % 2 != 0) {
    return Status::invalid("htp notation <" + std::to_string(rank) + ", ...>: " + std::to_string(tokens.size() - 1) +
                           " values after the rank do not form (dimension,size) pairs; the last dimension " +
                           quoted(trim(tokens.back())) + " has no size");
  }
  HtpNotation n = rank_only(rank);
  if (rank < 1 || rank > static_cast<uint64_t>(kHtpMaxRank)) return validate_htp_notation(n);
  if ((tokens.size() - 1) / 2 > kHtpMaxPairs) {
    return Status::invalid("htp notation <" + std::to_string(rank) + ", ...>: " + std::to_string((tokens.size() - 1) / 2) +
                           " pairs exceed the supported maximum " + std::to_string(kHtpMaxPairs));
  }
  for (size_t i = 1; i + 1 < tokens.size(); i += 2) {
    LC_ASSIGN_OR_RETURN(uint64_t dim, parse_count(tokens[i], "dimension"));
    LC_ASSIGN_OR_RETURN(uint64_t size, parse_count(tokens[i + 1], "size"));
    n.pairs.push_back({static_cast<int64_t>(std::min<uint64_t>(dim, INT64_MAX)), size});
  }
  LC_RETURN_IF_ERROR(validate_htp_notation(n));
  return n;
}

Result<HtpNotation> parse_htp_notation(std::string_view text) {
  text = trim(text);
  auto parsed = parse_htp_text(text);
  if (!parsed) return Status::invalid("not an htp notation: " + quoted(text));
  if (!parsed->ok()) return parsed->status();
  return htp_notation_of(parsed->value());
}

HtpNotation flat_htp_notation(int64_t rank) {
  HtpNotation n;
  n.rank = rank;
  for (int64_t d = 0; d < rank && d <= kHtpMaxRank; ++d) n.pairs.push_back({d, 0});
  return n;
}

std::string htp_notation_text(const HtpNotation& n) {
  std::string out = "ChunkedMemoryLayout<" + std::to_string(n.rank);
  for (const auto& p : n.pairs) out += ", " + std::to_string(p.dim) + "," + std::to_string(p.size);
  return out + ">";
}

std::string htp_pairs_param(const HtpNotation& n) {
  std::string out;
  for (const auto& p : n.pairs) {
    out += (out.empty() ? "" : " ") + std::to_string(p.dim) + ":" + std::to_string(p.size);
  }
  return out;
}

Result<HtpNotation> parse_htp_pairs_param(int64_t rank, std::string_view pairs) {
  HtpNotation n;
  n.rank = rank;
  if (rank < 1 || rank > kHtpMaxRank) {
    LC_RETURN_IF_ERROR(validate_htp_notation(n));
  }
  std::string_view rest = trim(pairs);
  while (!rest.empty()) {
    size_t space = rest.find(' ');
    std::string_view item = rest.substr(0, space);
    size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      return Status::invalid("htp pairs " + quoted(pairs) + ": item " + quoted(item) + " is not dim:size");
    }
    LC_ASSIGN_OR_RETURN(uint64_t dim, parse_count(item.substr(0, colon), "dimension"));
    LC_ASSIGN_OR_RETURN(uint64_t size, parse_count(item.substr(colon + 1), "size"));
    n.pairs.push_back({static_cast<int64_t>(std::min<uint64_t>(dim, INT64_MAX)), size});
    if (space == std::string_view::npos) break;
    rest = trim(rest.substr(space + 1));
  }
  LC_RETURN_IF_ERROR(validate_htp_notation(n));
  return n;
}

Result<HtpNotation> htp_notation_of(const Layout& layout) {
  if (layout.name == "htp.chunked" || layout.name == "htp.chunk_table") {
    return parse_htp_pairs_param(layout.get_int("rank"), layout.get("pairs"));
  }
  if (layout.name == "htp.flat") {
    HtpNotation n = flat_htp_notation(layout.get_int("rank"));
    LC_RETURN_IF_ERROR(validate_htp_notation(n));
    return n;
  }
  if (const NamedLayout* named = named_layout(layout.name)) return parse_htp_pairs_param(4, named->pairs);
  return Status::invalid("not an htp layout: " + layout.name);
}

Result<std::vector<uint64_t>> parse_htp_bases(std::string_view bases) {
  std::vector<uint64_t> out;
  std::string_view rest = trim(bases);
  while (!rest.empty()) {
    if (out.size() == kHtpMaxTableEntries) {
      return Status::invalid("htp chunk table: more than " + std::to_string(kHtpMaxTableEntries) + " bases");
    }
    size_t space = rest.find(' ');
    LC_ASSIGN_OR_RETURN(uint64_t base, parse_count(rest.substr(0, space), "chunk base"));
    out.push_back(base);
    if (space == std::string_view::npos) break;
    rest = trim(rest.substr(space + 1));
  }
  return out;
}

Result<std::vector<uint8_t>> htp_pad_element(const Layout& layout, DType dtype) {
  const DTypeInfo& info = dtype_info(dtype);
  const size_t bytes = info.bits / 8;
  std::vector<uint8_t> out(bytes, 0);
  auto it = layout.params.find("pad");
  if (it == layout.params.end()) return out;  // no padding in this layout
  const bool integer = info.kind != DTypeKind::kFloat;
  const int64_t lo = info.kind == DTypeKind::kSignedInt ? -(int64_t{1} << (info.bits - 1)) : 0;
  const int64_t hi = info.kind == DTypeKind::kSignedInt ? (int64_t{1} << (info.bits - 1)) - 1
                                                        : static_cast<int64_t>((uint64_t{1} << info.bits) - 1);
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (layout.get("interface") == "scale_offset") {
    if (!integer) {
      return Status::invalid(std::string("ScaleOffsetInterface decodes quantized integer types; ") + info.name +
                             " is a floating-point type")
          .with_rule("htp/scale-offset-dtype");
    }
    const int64_t offset = layout.get_int("offset");
    if (offset < lo || offset > hi) {
      return Status::invalid("ScaleOffsetInterface offset " + std::to_string(offset) + " (the quantized 0) is not a value of " +
                             info.name + ", " + range)
          .with_rule("htp/offset-range");
    }
  }
  const std::string text(trim(it->second));
  uint64_t bits = 0;
  if (integer) {
    std::string_view digits = text;
    const bool negative = !digits.empty() && digits.front() == '-';
    if (negative) digits.remove_prefix(1);
    uint64_t magnitude = 0;
    bool ok = !digits.empty() && digits.size() <= 19;
    for (char ch : digits) ok = ok && std::isdigit(static_cast<unsigned char>(ch));
    if (ok) magnitude = std::strtoull(std::string(digits).c_str(), nullptr, 10);
    const int64_t v = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    if (!ok || magnitude > static_cast<uint64_t>(INT64_MAX) || v < lo || v > hi) {
      return pad_error("pad " + quoted(text) + " is not a value of " + info.name + ": an integer in " + range);
    }
    bits = static_cast<uint64_t>(v);
  } else {
    // A decimal (or inf, -inf), through the nearest double; NaN is not a pad value.
    char* end = nullptr;
    const double v = text.empty() ? std::nan("") : std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || std::isnan(v) ||
        text.find_first_of("xXpP") != std::string::npos) {
      return pad_error("pad " + quoted(text) + " is not a value of " + info.name + ": a decimal number, inf or -inf");
    }
    const int exp_bits = dtype == DType::kFp16 ? 5 : 8, man_bits = dtype == DType::kFp16 ? 10 : dtype == DType::kBf16 ? 7 : 23;
    if (!encode_float(v, exp_bits, man_bits, &bits)) {
      return pad_error("pad " + quoted(text) + " is beyond the largest finite " + info.name + " value");
    }
  }
  for (size_t b = 0; b < bytes; ++b) out[b] = static_cast<uint8_t>(bits >> (8 * b));
  return out;
}

void add_htp_specs(std::vector<LayoutSpec>* specs) {
  LayoutSpec chunked;
  chunked.name = "htp.chunked";
  chunked.document = kDoc;
  chunked.section = "Crouton Layout";
  chunked.summary = "ChunkedMemoryLayout<rank, d,0 ..., d,size ...> in vendor notation: (d,0) pairs order the "
                    "chunks (first slowest), sized pairs shape each chunk; dims padded to the chunk";
  chunked.dims = {"dim0", "dim1", "dim2", "dim3"};
  chunked.params.push_back(int_param("rank", 1, kHtpMaxRank, "4", "the zeroth parameter"));
  ParamSpec pairs;
  pairs.key = "pairs";
  pairs.kind = ParamKind::kText;
  pairs.default_value = [](const ParamMap& p) {
    auto it = p.find("rank");
    int64_t rank = it == p.end() ? 4 : std::strtoll(it->second.c_str(), nullptr, 10);
    return htp_pairs_param(flat_htp_notation(std::clamp<int64_t>(rank, 1, kHtpMaxRank)));
  };
  pairs.doc = "the (dimension,size) pairs as 'dim:size dim:size ...'";
  chunked.params.push_back(pairs);
  for (const ParamSpec& p : pad_params()) chunked.params.push_back(p);
  chunked.parse_notation = parse_htp_text;
  chunked.format = format_chunked;
  chunked.random_case = chunked_case;
  chunked.boundary_cases = [] {
    std::vector<Case> out;
    for (const char* text : {"ChunkedMemoryLayout<4, 0,0, 3,0, 2,0, 1,0>", "ChunkedMemoryLayout<3, 2,0, 0,0, 1,0, 1,3, 2,5, 1,2>",
                             "ChunkedMemoryLayout<2, 1,0, 0,0, 0,1, 1,1>", "ChunkedMemoryLayout<1, 0,0, 0,4, 0,2>",
                             "ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0, 1,4, 2,2, 3,32, 2,4>(pad=31)"}) {
      auto l = parse_layout(text);
      if (!l.ok()) continue;
      auto b = boundaries_of(*l);
      out.insert(out.end(), b.begin(), b.end());
    }
    // The quantized 0 of a ScaleOffsetInterface tensor on either side of its
    // type's range, and the widest offset the parameter takes.
    struct Quantized { DType dtype; int64_t offset; };
    for (const Quantized& q : {Quantized{DType::kUInt8, 255}, Quantized{DType::kUInt8, 256}, Quantized{DType::kInt8, -128},
                               Quantized{DType::kInt8, -129}, Quantized{DType::kUInt32, kMaxOffset},
                               Quantized{DType::kInt32, kMinOffset}}) {
      auto l = parse_layout("ChunkedMemoryLayout<2, 0,0, 1,0, 1,4>(interface=scale_offset,offset=" + std::to_string(q.offset) + ")");
      if (l.ok()) out.push_back(make_case(*l, q.dtype, {2, 6}));
    }
    return out;
  };
  specs->push_back(chunked);

  LayoutSpec table = chunked;
  table.name = "htp.chunk_table";
  table.section = "Practical tips working with Crouton";
  table.summary = "ChunkedMemoryLayout whose chunks are not consecutive: chunk k (chunk order) at byte "
                  "k*chunk_stride or at the k-th entry of a table of bases; the gaps are not the tensor's";
  table.params.push_back(int_param("chunk_stride", 0, kHtpMaxChunkStride, "0",
                                   "bytes from one chunk's start to the next (0: chunk bytes, consecutive)"));
  ParamSpec bases;
  bases.key = "bases";
  bases.kind = ParamKind::kText;
  bases.default_value = [](const ParamMap&) { return std::string(kHtpNoBases); };
  bases.doc = "byte offset of every chunk, in chunk order, as 'b0 b1 ...' (get_raw of the chunk's first element); "
              "none: placed by chunk_stride";
  table.params.push_back(bases);
  table.parse_notation = nullptr;
  table.format = nullptr;
  table.random_case = chunk_table_case;
  table.boundary_cases = [] {
    std::vector<Case> out;
    for (const char* text : {"htp.chunk_table(rank=4,pairs=0:0 1:0 2:0 3:0 1:8 2:8 3:32,chunk_stride=4096)",
                             "htp.chunk_table(rank=2,pairs=0:0 1:0 0:2 1:4,chunk_stride=64,pad=31)",
                             "htp.chunk_table(rank=1,pairs=0:0 0:4)",
                             "htp.chunk_table(rank=4,pairs=0:0 1:0 3:0 2:0 2:4 3:32,chunk_stride=160)"}) {
      auto l = parse_layout(text);
      if (!l.ok()) continue;
      auto b = boundaries_of(*l);
      out.insert(out.end(), b.begin(), b.end());
    }
    // A table of two chunks, the second before the first, with a gap.
    for (const char* table_text : {"96 0", "0 40", "0 32"}) {
      auto l = make_layout("htp.chunk_table", {{"rank", "2"}, {"pairs", "0:0 1:0 1:8"}, {"bases", table_text}});
      if (l.ok()) out.push_back(make_case(*l, DType::kFp32, Shape{1, 16}));
    }
    return out;
  };
  specs->push_back(table);

  LayoutSpec flat;
  flat.name = "htp.flat";
  flat.document = kDoc;
  flat.section = "Flat Layout";
  flat.summary = "FlatMemoryLayout<rank>: row-major, dimension rank-1 fastest, no padding";
  flat.dims = {"batch", "height", "width", "depth"};
  flat.params.push_back(int_param("rank", 1, kHtpMaxRank, "4", "the rank of FlatMemoryLayout<rank>"));
  flat.format = format_flat;
  flat.random_case = flat_case;
  flat.boundary_cases = [] {
    std::vector<Case> out;
    for (Shape s : {Shape{2, 3, 5, 30}, Shape{1, 1, 1, 1}, Shape{1, 8, 8, 32}, Shape{3, 1, 7, 1}}) {
      out.push_back(make_case(*make_layout("htp.flat"), DType::kUInt8, s));
    }
    return out;
  };
  specs->push_back(flat);

  for (const auto& n : kNamed) {
    LayoutSpec spec;
    spec.name = n.name;
    spec.document = kDoc;
    spec.section = n.section;
    spec.summary = n.summary;
    spec.dims = n.weights ? std::vector<std::string>{"filter_height", "filter_width", "in_channels", "out_channels"}
                          : std::vector<std::string>{"batch", "height", "width", "depth"};
    if (has_pad(n.name)) {
      for (const ParamSpec& p : pad_params()) spec.params.push_back(p);
    }
    spec.random_case = named_generator(n);
    std::string name = n.name;
    spec.boundary_cases = [name] {
      auto b = boundaries_of(*make_layout(name));
      auto p = boundaries_of(*make_layout(name, has_pad(name) ? ParamMap{{"pad", "31"}} : ParamMap{}));
      b.insert(b.end(), p.begin(), p.begin() + std::min<size_t>(p.size(), 4));
      return b;
    };
    specs->push_back(spec);
  }
}

}  // namespace layoutcheck
