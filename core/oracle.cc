#include "layoutcheck/oracle.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace layoutcheck {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

Result<uint64_t> parse_u64(const std::string& s) {
  auto v = parse_shape(s);
  if (!v.ok() || v->size() != 1 || (*v)[0] < 0) return Status::invalid("not a non-negative integer: '" + s + "'");
  return static_cast<uint64_t>((*v)[0]);
}

}  // namespace

Result<std::vector<OracleCase>> parse_oracles(const std::string& text, const std::string& file) {
  std::vector<OracleCase> cases;
  std::string file_source;
  std::istringstream in(text);
  std::string raw;
  int lineno = 0;
  auto fail = [&](const std::string& why) {
    return Status::invalid(file + ":" + std::to_string(lineno) + ": " + why);
  };
  while (std::getline(in, raw)) {
    ++lineno;
    std::string line = raw;
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    size_t colon = line.find(':');
    std::string head = colon == std::string::npos ? "" : trim(line.substr(0, colon));
    std::string rest = colon == std::string::npos ? "" : trim(line.substr(colon + 1));
    if (head == "source") {
      if (rest.find(" § ") == std::string::npos) {
        return fail("source must be 'DOCUMENT.txt § Section heading', got '" + rest + "'");
      }
      (cases.empty() ? file_source : cases.back().source) = rest;
      continue;
    }
    if (head == "case") {
      OracleCase oc;
      oc.id = rest;
      oc.file = file;
      oc.line = lineno;
      oc.source = file_source;
      cases.push_back(oc);
      continue;
    }
    if (cases.empty()) {
      if (head == "note") continue;
      return fail("'" + line + "' before the first 'case:'");
    }
    OracleCase& oc = cases.back();
    if (head == "layout") { oc.layout = rest; continue; }
    if (head == "dtype") { oc.dtype = rest; continue; }
    if (head == "shape") { oc.shape = rest; continue; }
    if (head == "note") { oc.notes.push_back(rest); continue; }
    OracleExpect e{};
    e.line = lineno;
    size_t eq = line.find('=');
    size_t tilde = line.find('~');
    if (line.rfind("error", 0) == 0 && tilde != std::string::npos) {
      e.kind = OracleExpect::kError;
      e.value = trim(line.substr(tilde + 1));
    } else if (eq == std::string::npos) {
      return fail("expected 'offset COORD = N', 'size = N', 'fact KEY = V', 'order = ...' or 'error ~ TEXT'");
    } else {
      std::string lhs = trim(line.substr(0, eq)), rhs = trim(line.substr(eq + 1));
      std::string verb = lhs.substr(0, lhs.find(' '));
      std::string arg = lhs.size() > verb.size() ? trim(lhs.substr(verb.size())) : "";
      if (verb == "offset" || verb == "offset_bits") {
        e.kind = verb == "offset" ? OracleExpect::kOffset : OracleExpect::kOffsetBits;
        auto at = parse_shape(arg);
        if (!at.ok()) return fail(at.status().message());
        e.at = *at;
        auto n = parse_u64(rhs);
        if (!n.ok()) return fail(n.status().message());
        e.number = *n;
      } else if (verb == "size") {
        e.kind = OracleExpect::kSize;
        auto n = parse_u64(rhs);
        if (!n.ok()) return fail(n.status().message());
        e.number = *n;
      } else if (verb == "fact") {
        e.kind = OracleExpect::kFact;
        e.key = arg;
        e.value = rhs;
      } else if (verb == "order") {
        e.kind = OracleExpect::kOrder;
        std::istringstream items(rhs);
        std::string item;
        while (std::getline(items, item, ';')) {
          auto at = parse_shape(trim(item));
          if (!at.ok()) return fail(at.status().message());
          e.order.push_back(*at);
        }
      } else {
        return fail("unknown directive '" + verb + "'");
      }
    }
    oc.expects.push_back(e);
  }
  for (const auto& oc : cases) {
    std::string where = file + ":" + std::to_string(oc.line) + ": case " + oc.id;
    if (oc.source.empty()) return Status::invalid(where + " has no source: (document and section)");
    if (oc.layout.empty() || oc.dtype.empty() || oc.shape.empty()) {
      return Status::invalid(where + " needs layout:, dtype: and shape:");
    }
    if (oc.expects.empty()) return Status::invalid(where + " expects nothing");
  }
  return cases;
}

Result<std::vector<OracleCase>> load_oracle_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::invalid("cannot read oracle file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_oracles(ss.str(), path);
}

Result<std::vector<OracleCase>> load_oracle_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::invalid("oracle directory " + dir + " does not exist");
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".oracle") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<OracleCase> all;
  for (const auto& f : files) {
    LC_ASSIGN_OR_RETURN(auto cases, load_oracle_file(f));
    all.insert(all.end(), cases.begin(), cases.end());
  }
  return all;
}

std::vector<std::string> run_oracle(const OracleCase& oc, const Impl& impl) {
  std::vector<std::string> failures;
  auto where = [&](int line) { return oc.file + ":" + std::to_string(line) + ": " + oc.id + ": "; };
  auto c = parse_case(oc.layout, oc.dtype, oc.shape);
  if (!c.ok()) {
    failures.push_back(where(oc.line) + c.status().message());
    return failures;
  }
  Status s = impl.supports(*c);
  for (const auto& e : oc.expects) {
    if (e.kind == OracleExpect::kError) {
      // Every implementation must reject the case; the reference must also name the rule.
      const bool wording = impl.name() == "reference";
      if (s.code() != StatusCode::kInvalid || (wording && s.message().find(e.value) == std::string::npos)) {
        failures.push_back(where(e.line) + "expected rejection containing '" + e.value + "', got " + s.to_string());
      }
      continue;
    }
    if (!s.ok()) {
      failures.push_back(where(e.line) + impl.name() + " rejects the case: " + s.to_string());
      break;
    }
    switch (e.kind) {
      case OracleExpect::kOffset:
      case OracleExpect::kOffsetBits: {
        auto bits = impl.offset_bits(*c, e.at);
        uint64_t want = e.kind == OracleExpect::kOffset ? e.number * 8 : e.number;
        if (!bits.ok() && bits.status().code() == StatusCode::kUnsupported) break;
        if (!bits.ok() || *bits != want) {
          failures.push_back(where(e.line) + "offset of (" + shape_to_string(e.at) + "): expected " +
                             (e.kind == OracleExpect::kOffset ? "byte " + std::to_string(e.number)
                                                              : "bit " + std::to_string(e.number)) +
                             ", got " +
                             (bits.ok() ? (e.kind == OracleExpect::kOffset && *bits % 8 == 0
                                               ? "byte " + std::to_string(*bits / 8)
                                               : "bit " + std::to_string(*bits))
                                        : bits.status().to_string()));
        }
        break;
      }
      case OracleExpect::kSize: {
        auto size = impl.size_bytes(*c);
        if (!size.ok() || *size != e.number) {
          failures.push_back(where(e.line) + "size_bytes: expected " + std::to_string(e.number) + ", got " +
                             (size.ok() ? std::to_string(*size) : size.status().to_string()));
        }
        break;
      }
      case OracleExpect::kFact: {
        auto facts = impl.describe(*c);
        if (!facts.ok()) {
          if (facts.status().code() != StatusCode::kUnsupported) {
            failures.push_back(where(e.line) + "describe: " + facts.status().to_string());
          }
          break;
        }
        auto it = std::find_if(facts->begin(), facts->end(), [&](const Fact& f) { return f.first == e.key; });
        if (it == facts->end()) {
          failures.push_back(where(e.line) + "describe has no fact '" + e.key + "'");
        } else if (it->second != e.value) {
          failures.push_back(where(e.line) + e.key + ": expected " + e.value + ", got " + it->second);
        }
        break;
      }
      case OracleExpect::kOrder: {
        uint64_t prev = 0;
        for (size_t i = 0; i < e.order.size(); ++i) {
          auto bits = impl.offset_bits(*c, e.order[i]);
          if (!bits.ok()) {
            if (bits.status().code() != StatusCode::kUnsupported) {
              failures.push_back(where(e.line) + "offset of (" + shape_to_string(e.order[i]) +
                                 "): " + bits.status().to_string());
            }
            break;
          }
          if (i > 0 && *bits <= prev) {
            failures.push_back(where(e.line) + "(" + shape_to_string(e.order[i]) + ") at bit " +
                               std::to_string(*bits) + " does not follow (" + shape_to_string(e.order[i - 1]) +
                               ") at bit " + std::to_string(prev));
            break;
          }
          prev = *bits;
        }
        break;
      }
      case OracleExpect::kError:
        break;
    }
  }
  return failures;
}

}  // namespace layoutcheck
