// HTP notation fuzzer: any text is rejected with a message or parses to a
// valid notation whose canonical text parses back to the same pairs; the same
// holds for the comma-free parameter form. Valid layouts are then asked about
// a few shapes of their rank, which must not crash.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/htp_notation.h"
#include "layoutcheck/impl.h"

using namespace layoutcheck;

namespace {

void fail(const char* what, const std::string& text, const std::string& detail) {
  std::fprintf(stderr, "%s: '%s': %s\n", what, text.c_str(), detail.c_str());
  std::abort();
}

void exercise(const Layout& layout, const HtpNotation& n) {
  for (int64_t extent : {1, 5, 9}) {
    Case c{layout, extent == 5 ? DType::kFp16 : DType::kUInt8, Shape(static_cast<size_t>(n.rank), extent)};
    Status a = reference_impl().supports(c), b = optimized_impl().supports(c);
    if (a.code() != b.code()) fail("supports differs", to_string(layout), a.to_string() + " vs " + b.to_string());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto n = parse_htp_notation(text);
  if (!n.ok()) {
    if (n.status().message().empty() || n.status().code() != StatusCode::kInvalid) fail("bad error", text, n.status().to_string());
  } else {
    if (!validate_htp_notation(*n).ok()) fail("accepted an invalid notation", text, validate_htp_notation(*n).message());
    const std::string canonical = htp_notation_text(*n);
    auto again = parse_htp_notation(canonical);
    if (!again.ok() || !(*again == *n) || htp_notation_text(*again) != canonical) {
      fail("round trip", text, canonical);
    }
    auto layout = parse_layout(text);
    if (!layout.ok()) fail("notation parses but the layout does not", text, layout.status().message());
    exercise(*layout, *n);
  }
  // The parameter form: "RANK;dim:size dim:size ...".
  const size_t semi = text.find(';');
  if (semi != std::string::npos && semi < 4) {
    const int64_t rank = std::strtoll(text.substr(0, semi).c_str(), nullptr, 10);
    auto p = parse_htp_pairs_param(rank, text.substr(semi + 1));
    if (p.ok()) {
      auto back = parse_htp_pairs_param(rank, htp_pairs_param(*p));
      if (!back.ok() || !(*back == *p)) fail("pairs round trip", text, htp_pairs_param(*p));
    } else if (p.status().message().empty()) {
      fail("bad error", text, "empty message");
    }
  }
  return 0;
}
