#include "tools/cli_junit.h"

#include <cstdint>
#include <cstdio>

#include "tools/cli_io.h"

namespace layoutcheck::cli {

namespace {

// The length of the UTF-8 sequence at s[i] that XML 1.0 allows, or 0.
size_t xml_char_length(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) return (b >= 0x20 || b == '\t' || b == '\n' || b == '\r') ? 1 : 0;
  size_t n = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t cp = b & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  const uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff) return 0;
  return n;
}

std::string escape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = xml_char_length(s, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++i;
      continue;
    }
    if (n == 1) {
      switch (s[i]) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default: out += s[i];
      }
    } else {
      out.append(s, i, n);
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string junit_xml(const std::string& suite, const std::vector<JunitCase>& cases, double elapsed_seconds) {
  size_t failed = 0, skipped = 0;
  for (const JunitCase& c : cases) {
    failed += c.outcome == JunitCase::kFailed;
    skipped += c.outcome == JunitCase::kSkipped;
  }
  char time[32];
  std::snprintf(time, sizeof time, "%.3f", elapsed_seconds);
  const std::string counts = "tests=\"" + std::to_string(cases.size()) + "\" failures=\"" + std::to_string(failed) +
                             "\" errors=\"0\" skipped=\"" + std::to_string(skipped) + "\" time=\"" + time + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"" + escape(suite) + "\" " + counts + ">\n";
  out += "  <testsuite name=\"" + escape(suite) + "\" " + counts + ">\n";
  for (const JunitCase& c : cases) {
    out += "    <testcase classname=\"" + escape(c.classname) + "\" name=\"" + escape(c.name) + "\" time=\"0\"";
    if (c.outcome == JunitCase::kPassed) {
      out += "/>\n";
      continue;
    }
    out += ">\n";
    if (c.outcome == JunitCase::kFailed) {
      out += "      <failure message=\"" + escape(c.message) + "\" type=\"failure\">" + escape(c.details) + "</failure>\n";
    } else {
      out += "      <skipped message=\"" + escape(c.message) + "\"/>\n";
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

Status write_junit(const std::string& path, const std::string& suite, const std::vector<JunitCase>& cases,
                   double elapsed_seconds) {
  const std::string xml = junit_xml(suite, cases, elapsed_seconds);
  return write_output(path, reinterpret_cast<const uint8_t*>(xml.data()), xml.size());
}

}  // namespace layoutcheck::cli
