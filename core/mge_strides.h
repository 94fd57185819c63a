// The text of mge.strided's `strides` parameter (shared parsing, no layout
// arithmetic): "row" for the document's row-major strides s^row ("Generalize"),
// or one element stride per dimension, outermost first, separated by ':'
// ("20:1", "0:1" for a broadcast row, "1:5" for a transpose by strides).
//
//   parse_mge_strides("row")   -> nullopt
//   parse_mge_strides("6:0:1") -> {6, 0, 1}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "layoutcheck/status.h"

namespace layoutcheck {

inline Result<std::optional<std::vector<uint64_t>>> parse_mge_strides(const std::string& text) {
  if (text == "row") return std::optional<std::vector<uint64_t>>();
  std::vector<uint64_t> out;
  size_t i = 0;
  while (true) {
    size_t j = i;
    uint64_t v = 0;
    bool fits = true;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') {
      const uint64_t digit = static_cast<uint64_t>(text[j] - '0');
      if (v > (uint64_t{INT64_MAX} - digit) / 10) fits = false;
      else v = v * 10 + digit;
      ++j;
    }
    if (j == i || !fits || out.size() >= 64) break;
    out.push_back(v);
    if (j == text.size()) return std::optional<std::vector<uint64_t>>(std::move(out));
    if (text[j] != ':') break;
    i = j + 1;
  }
  return Status::invalid("mge.strided: strides '" + text +
                         "' is not 'row' or non-negative element strides below 2^63 separated by ':'")
      .with_rule("mge.strided/strides-text");
}

}  // namespace layoutcheck
