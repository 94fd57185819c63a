#include "layoutcheck/oracle.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "layoutcheck/checker.h"
#include "layoutcheck/int_tuple.h"
#include "layoutcheck/precision.h"

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

bool read_text(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *text = ss.str();
  return static_cast<bool>(in) || in.eof();
}

bool is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\f' || ch == '\v'; }

// Collapses whitespace runs to one space and trims; drops a trailing pilcrow
// and a leading section number ("3", "3.2", "3.2." followed by a space).
std::string normalize_heading(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (is_space(ch)) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += ch;
    }
  }
  const std::string pilcrow = "\xC2\xB6";
  for (;;) {
    while (!out.empty() && out.back() == ' ') out.pop_back();
    if (out.size() >= pilcrow.size() && out.compare(out.size() - pilcrow.size(), pilcrow.size(), pilcrow) == 0) {
      out.resize(out.size() - pilcrow.size());
      continue;
    }
    break;
  }
  size_t i = 0;
  while (i < out.size() && (std::isdigit(static_cast<unsigned char>(out[i])) || out[i] == '.')) ++i;
  if (i > 0 && i < out.size() && out[i] == ' ' && std::isdigit(static_cast<unsigned char>(out[0]))) {
    out.erase(0, i + 1);
  }
  return out;
}

// Characters (UTF-8 code points) of s.
size_t code_points(const std::string& s) {
  size_t n = 0;
  for (char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

std::string keys_of(const std::vector<Fact>& facts) {
  std::string keys;
  for (const auto& f : facts) keys += (keys.empty() ? "" : ", ") + f.first;
  return keys.empty() ? "(none)" : keys;
}

std::string where_of(const std::string& file, int line) { return file + ":" + std::to_string(line); }

}  // namespace

OracleLine split_oracle_line(const std::string& raw) {
  OracleLine l;
  l.text = trim(raw.substr(0, raw.find('#')));
  const size_t colon = l.text.find(':');
  if (colon != std::string::npos) {
    l.head = trim(l.text.substr(0, colon));
    l.rest = trim(l.text.substr(colon + 1));
  }
  return l;
}

Result<std::vector<OracleCase>> parse_oracles(const std::string& text, const std::string& file) {
  std::vector<OracleCase> cases;
  std::string file_source;
  int file_source_line = 0;
  std::istringstream in(text);
  std::string raw;
  int lineno = 0;
  auto fail = [&](const std::string& why) {
    return Status::invalid(file + ":" + std::to_string(lineno) + ": " + why);
  };
  while (std::getline(in, raw)) {
    ++lineno;
    const OracleLine split = split_oracle_line(raw);
    const std::string& line = split.text;
    if (line.empty()) continue;
    const std::string& head = split.head;
    const std::string& rest = split.rest;
    if (head == "source" && rest.find(" § ") == std::string::npos) {
      return fail("source must be 'DOCUMENT.txt § Section heading', got '" + rest + "'");
    }
    if (take_case_or_source(split, file, lineno, &file_source, &file_source_line, &cases)) continue;
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
        if (arg.find('(') != std::string::npos) {
          auto tuple = parse_int_tuple(arg);
          if (!tuple.ok()) return fail(tuple.status().message());
          e.tuple = to_string(*tuple);
        } else {
          auto at = parse_shape(arg);
          if (!at.ok()) return fail(at.status().message());
          e.at = *at;
        }
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
  LC_RETURN_IF_ERROR(check_unique_ids(cases));
  return cases;
}

Result<std::vector<OracleCase>> load_oracle_file(const std::string& path, const std::string& spec_dir) {
  std::string text;
  if (!read_text(path, &text)) return Status::invalid("cannot read oracle file " + path);
  LC_ASSIGN_OR_RETURN(auto cases, parse_oracles(text, path));
  LC_RETURN_IF_ERROR(check_oracle_sources(cases, spec_dir));
  return cases;
}

// The directory the oracle files are read from: it must be one.
static Status require_oracle_dir(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return Status();
  return Status::invalid("oracle directory " + dir +
                         (std::filesystem::exists(dir, ec) ? " is not a directory" : " does not exist"));
}

Result<std::vector<OracleCase>> load_oracle_dir(const std::string& dir, const std::string& spec_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  LC_RETURN_IF_ERROR(require_oracle_dir(dir));
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".oracle") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<OracleCase> all;
  for (const auto& f : files) {
    LC_ASSIGN_OR_RETURN(auto cases, load_oracle_file(f, spec_dir));
    all.insert(all.end(), cases.begin(), cases.end());
  }
  LC_RETURN_IF_ERROR(check_unique_ids(all));
  return all;
}

namespace {

// The headings of one document, found once for all the sources citing it:
// every line normalized, and the text flattened to one line for the
// reStructuredText underlines.
class DocumentHeadings {
 public:
  explicit DocumentHeadings(const std::string& document_text) {
    std::istringstream in(document_text);
    std::string line;
    while (std::getline(in, line)) lines_.insert(normalize_heading(line));
    for (char ch : document_text) {
      if (is_space(ch)) {
        if (!flat_.empty() && flat_.back() != ' ') flat_ += ' ';
      } else {
        flat_ += ch;
      }
    }
  }

  bool has(const std::string& heading) const {
    const std::string want = normalize_heading(heading);
    if (want.empty()) return false;
    if (lines_.count(want) != 0) return true;
    // A reStructuredText document flattened to one line: "... Heading ------- ...",
    // the underline at least as long as the heading (as reStructuredText requires).
    const size_t length = code_points(want);
    static const char kUnderline[] = "=-~^\"'`*+#";
    for (size_t pos = flat_.find(want); pos != std::string::npos; pos = flat_.find(want, pos + 1)) {
      const size_t after = pos + want.size();
      if ((pos != 0 && flat_[pos - 1] != ' ') || after + 1 >= flat_.size() || flat_[after] != ' ') continue;
      const char mark = flat_[after + 1];
      if (std::strchr(kUnderline, mark) == nullptr) continue;
      size_t end = after + 1;
      while (end < flat_.size() && flat_[end] == mark) ++end;
      if (end - (after + 1) >= length && (end == flat_.size() || flat_[end] == ' ')) return true;
    }
    return false;
  }

 private:
  std::set<std::string> lines_;
  std::string flat_;
};

}  // namespace

bool document_has_heading(const std::string& document_text, const std::string& heading) {
  return DocumentHeadings(document_text).has(heading);
}

namespace {

// Checks one source: against the documents of spec_dir (headings cached in docs).
Status check_source(const std::string& where, const std::string& source, const std::string& spec_dir,
                    std::map<std::string, DocumentHeadings>* docs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (spec_dir.empty() || !fs::is_directory(spec_dir, ec)) {
    return Status::invalid("spec directory '" + spec_dir +
                           "' (the documents the oracles cite) does not exist; name it with --spec-dir or "
                           "LAYOUTCHECK_SPEC_DIR");
  }
  const size_t sep = source.find(" § ");
  if (sep == std::string::npos) return Status::invalid(where + "'" + source + "' is not 'DOCUMENT § Section'");
  const std::string doc = trim(source.substr(0, sep));
  const std::string section = trim(source.substr(sep + std::strlen(" § ")));
  if (doc.empty() || doc.find('/') != std::string::npos || doc == "." || doc == "..") {
    return Status::invalid(where + "the document must be a file name of the spec directory, got '" + doc + "'");
  }
  auto it = docs->find(doc);
  if (it == docs->end()) {
    const fs::path path = fs::path(spec_dir) / doc;
    std::string text;
    if (!fs::is_regular_file(path, ec) || !read_text(path.string(), &text)) {
      return Status::invalid(where + "no document '" + doc + "' in the spec directory " + spec_dir);
    }
    it = docs->emplace(doc, DocumentHeadings(text)).first;
  }
  if (!it->second.has(section)) {
    return Status::invalid(where + "no section heading '" + section + "' in " + doc +
                           " (a heading is a line of the document equal to it, or a heading underlined with "
                           "=, -, ~ at least as long)");
  }
  return Status();
}

}  // namespace

Status check_oracle_sources(const std::vector<OracleCase>& cases, const std::string& spec_dir) {
  std::map<std::string, DocumentHeadings> documents;  // name -> headings
  for (const auto& oc : cases) {
    LC_RETURN_IF_ERROR(check_source(where_of(oc.file, oc.source_line) + ": source of case " + oc.id + ": ",
                                    oc.source, spec_dir, &documents));
  }
  return Status();
}

Status check_unique_ids(const std::vector<OracleCase>& cases) {
  std::map<std::string, const OracleCase*> seen;
  for (const auto& oc : cases) {
    auto [it, fresh] = seen.emplace(oc.id, &oc);
    if (!fresh) {
      return Status::invalid("duplicate case id '" + oc.id + "': " + where_of(it->second->file, it->second->line) +
                             " and " + where_of(oc.file, oc.line));
    }
  }
  return Status();
}

Status check_oracle_facts(const std::vector<OracleCase>& cases, const Impl& describer) {
  for (const auto& oc : cases) {
    const bool has_facts = std::any_of(oc.expects.begin(), oc.expects.end(),
                                       [](const OracleExpect& e) { return e.kind == OracleExpect::kFact; });
    if (!has_facts) continue;
    auto c = parse_case(oc.layout, oc.dtype, oc.shape);
    if (!c.ok()) return Status::invalid(where_of(oc.file, oc.line) + ": case " + oc.id + ": " + c.status().message());
    Status s = describer.supports(*c);
    auto facts = s.ok() ? describer.describe(*c) : Result<std::vector<Fact>>(s);
    for (const auto& e : oc.expects) {
      if (e.kind != OracleExpect::kFact) continue;
      const std::string where = where_of(oc.file, e.line) + ": case " + oc.id + ": ";
      if (!facts.ok()) {
        return Status::invalid(where + "fact '" + e.key + "' cannot be known: " + describer.name() +
                               " does not describe the case: " + facts.status().to_string());
      }
      if (std::none_of(facts->begin(), facts->end(), [&](const Fact& f) { return f.first == e.key; })) {
        return Status::invalid(where + "unknown fact '" + e.key + "'; " + describer.name() +
                               " describes this case with: " + keys_of(*facts));
      }
    }
  }
  return Status();
}

namespace {

// Finds an element's physical bit offset without offset_bits: packs
// position-unique values, then again with the element's kept bits inverted;
// the lowest bit that changes is where the element starts.
class PackLocator {
 public:
  PackLocator(const Impl& impl, const Case& c, uint64_t max_bytes) : impl_(impl), c_(c), max_bytes_(max_bytes) {}

  Result<uint64_t> offset_bits(const Coord& at) {
    LC_RETURN_IF_ERROR(check_coord(c_, at));
    if (!started_) {
      started_ = true;
      init_ = start();
    }
    LC_RETURN_IF_ERROR(init_);
    std::vector<uint8_t> logical = logical_;
    const uint64_t bits = dtype_bits(c_.dtype);
    const uint64_t keep = std::min<uint64_t>(bits, value_bits(c_, at));
    // Elements that read one physical element (a broadcast view) change together.
    const uint64_t index = index_of_coord(c_.shape, at);
    std::vector<uint64_t> together{index};
    const LayoutSpec* spec = find_spec(c_.layout.name);
    if (spec != nullptr && spec->value_source) {
      const uint64_t source = spec->value_source(c_, index), n = *element_count(c_.shape);
      together.clear();
      for (uint64_t j = 0; j < n; ++j) {
        if (spec->value_source(c_, j) == source) together.push_back(j);
      }
    }
    for (uint64_t e : together) {
      for (uint64_t b = e * bits; b < e * bits + keep; ++b) logical[b / 8] ^= static_cast<uint8_t>(1u << (b % 8));
    }
    std::vector<uint8_t> physical(physical_.size());
    Status s = impl_.pack(c_, logical.data(), logical.size(), physical.data(), physical.size());
    if (!s.ok()) return Status::invalid("pack (to find offsets without offset_bits): " + s.to_string());
    for (size_t i = 0; i < physical.size(); ++i) {
      const unsigned diff = static_cast<unsigned>(physical[i] ^ physical_[i]);
      if (diff == 0) continue;
      unsigned bit = 0;
      while (((diff >> bit) & 1u) == 0) ++bit;
      return uint64_t{i} * 8 + bit;
    }
    return Status::invalid("pack (to find offsets without offset_bits): the element's value reaches no physical bit");
  }

 private:
  Status start() {
    LC_ASSIGN_OR_RETURN(uint64_t logical_size, logical_bytes(c_));
    auto physical_size = impl_.size_bytes(c_);
    if (!physical_size.ok()) return Status::invalid("size_bytes: " + physical_size.status().to_string());
    if (logical_size > max_bytes_ || *physical_size > max_bytes_) {
      return Status::invalid("finding offsets without offset_bits packs the case, which needs " +
                             std::to_string(std::max(logical_size, *physical_size)) + " bytes; the limit is " +
                             std::to_string(max_bytes_));
    }
    fill_position_unique(c_, 1, &logical_);
    physical_.assign(static_cast<size_t>(*physical_size), 0);
    Status s = impl_.pack(c_, logical_.data(), logical_.size(), physical_.data(), physical_.size());
    if (!s.ok()) return Status::invalid("pack (to find offsets without offset_bits): " + s.to_string());
    return Status();
  }

  const Impl& impl_;
  const Case& c_;
  const uint64_t max_bytes_;
  bool started_ = false;
  Status init_;
  std::vector<uint8_t> logical_, physical_;
};

}  // namespace

const char* outcome_name(OracleResult::Outcome outcome) {
  switch (outcome) {
    case OracleResult::kPassed: return "passed";
    case OracleResult::kFailed: return "failed";
    case OracleResult::kSkipped: return "skipped";
  }
  return "failed";
}

OracleResult run_oracle_case(const OracleCase& oc, const Impl& impl, const OracleOptions& options) {
  OracleResult r;
  auto fail = [&](int line, const std::string& what) {
    r.failures.push_back(where_of(oc.file, line) + ": " + oc.id + ": " + what);
  };
  auto c = parse_case(oc.layout, oc.dtype, oc.shape);
  if (!c.ok()) {
    // A case whose text breaks a rule of the document (a notation naming a
    // dimension twice) and expects only rejection: the parser rejects it by that
    // rule before any implementation sees it. It passes for layoutcheck's own
    // implementations; another one is never handed it.
    const bool only_errors = !oc.expects.empty() && std::all_of(oc.expects.begin(), oc.expects.end(), [](const auto& e) {
      return e.kind == OracleExpect::kError;
    });
    if (!only_errors || c.status().code() != StatusCode::kInvalid || c.status().rule().empty()) {
      fail(oc.line, c.status().message());
      r.outcome = OracleResult::kFailed;
      return r;
    }
    for (const auto& e : oc.expects) {
      if (c.status().message().find(e.value) == std::string::npos) {
        fail(e.line, "expected rejection containing '" + e.value + "', got " + c.status().to_string());
      }
    }
    const bool own = impl.name() == "reference" || impl.name() == "optimized";
    r.outcome = !r.failures.empty() ? OracleResult::kFailed : own ? OracleResult::kPassed : OracleResult::kSkipped;
    if (r.outcome == OracleResult::kSkipped) {
      r.skip_reason = "the layout text breaks rule " + c.status().rule() + ": no implementation is handed it";
    }
    return r;
  }
  if (options.claimed && !options.claimed(*c)) {
    r.outcome = OracleResult::kSkipped;
    r.skip_reason = impl.name() + " does not claim " + to_string(*c) + " in its capabilities";
    return r;
  }
  const Status s = impl.supports(*c);

  // Offsets: offset_bits, or pack when the implementation has none.
  std::unique_ptr<PackLocator> locator;
  auto offset_of = [&](const Coord& at) -> Result<uint64_t> {
    if (!r.offsets_from_pack) {
      auto bits = impl.offset_bits(*c, at);
      if (bits.ok() || bits.status().code() != StatusCode::kUnsupported) return bits;
      r.offsets_from_pack = true;
    }
    if (!locator) locator = std::make_unique<PackLocator>(impl, *c, options.max_pack_bytes);
    return locator->offset_bits(at);
  };

  // Facts: the implementation's describe, or the describer's.
  bool facts_loaded = false;
  std::vector<Fact> facts;
  std::string facts_error;
  auto load_facts = [&]() {
    facts_loaded = true;
    auto own = impl.describe(*c);
    if (own.ok()) {
      facts = *own;
      r.facts_from = impl.name();
      return;
    }
    if (own.status().code() != StatusCode::kUnsupported || options.describer == nullptr ||
        options.describer == &impl) {
      facts_error = impl.name() + " describe: " + own.status().to_string() +
                    (own.status().code() == StatusCode::kUnsupported ? " (and no other describer)" : "");
      return;
    }
    const Impl& other = *options.describer;
    Status so = other.supports(*c);
    auto theirs = so.ok() ? other.describe(*c) : Result<std::vector<Fact>>(so);
    if (!theirs.ok()) {
      facts_error = other.name() + " describe: " + theirs.status().to_string();
      return;
    }
    facts = *theirs;
    r.facts_from = other.name();
  };

  for (const auto& e : oc.expects) {
    if (e.kind == OracleExpect::kError) {
      // Every implementation must reject the case; the reference must also name the rule.
      const bool wording = impl.name() == "reference";
      if (s.code() != StatusCode::kInvalid || (wording && s.message().find(e.value) == std::string::npos)) {
        fail(e.line, "expected rejection containing '" + e.value + "', got " + s.to_string());
      }
      continue;
    }
    if (!s.ok()) {
      fail(e.line, impl.name() + (s.code() == StatusCode::kUnsupported ? " declines" : " rejects") +
                       " the case: " + s.to_string());
      break;
    }
    switch (e.kind) {
      case OracleExpect::kOffset:
      case OracleExpect::kOffsetBits: {
        if (!e.tuple.empty()) {
          // A nested coordinate: only the implementation's own offset_bits_nested answers it.
          // An implementation without that entry (a plugin of ABI 1.0 or 1.1) leaves the line
          // unchecked, said in the result, when the describer answers it: the line is right
          // and the implementation has no way to be asked.
          auto bits = impl.offset_bits_nested(*c, *parse_int_tuple(e.tuple));
          const uint64_t want = e.kind == OracleExpect::kOffset ? e.number * 8 : e.number;
          if (!bits.ok() && bits.status().code() == StatusCode::kUnsupported && options.describer != nullptr &&
              options.describer != &impl) {
            auto theirs = options.describer->offset_bits_nested(*c, *parse_int_tuple(e.tuple));
            if (theirs.ok() && *theirs == want) {
              r.unchecked.push_back(where_of(oc.file, e.line) + ": " + oc.id + ": offset of " + e.tuple +
                                    " not checked: " + bits.status().message());
              break;
            }
          }
          if (!bits.ok() || *bits != want) {
            fail(e.line, "offset of " + e.tuple + ": expected bit " + std::to_string(want) + ", got " +
                             (bits.ok() ? "bit " + std::to_string(*bits) : bits.status().to_string()));
          }
          break;
        }
        auto bits = offset_of(e.at);
        uint64_t want = e.kind == OracleExpect::kOffset ? e.number * 8 : e.number;
        if (!bits.ok() || *bits != want) {
          fail(e.line, std::string("offset of (") + shape_to_string(e.at) + ")" +
                           (r.offsets_from_pack ? " through pack" : "") + ": expected " +
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
          fail(e.line, "size_bytes: expected " + std::to_string(e.number) + ", got " +
                           (size.ok() ? std::to_string(*size) : size.status().to_string()));
        }
        break;
      }
      case OracleExpect::kFact: {
        if (!facts_loaded) load_facts();
        if (!facts_error.empty()) {
          fail(e.line, "fact " + e.key + ": " + facts_error);
          break;
        }
        auto it = std::find_if(facts.begin(), facts.end(), [&](const Fact& f) { return f.first == e.key; });
        if (it == facts.end()) {
          fail(e.line, "unknown fact '" + e.key + "'; " + r.facts_from + " describes this case with: " +
                           keys_of(facts));
        } else if (it->second != e.value) {
          fail(e.line, e.key + ": expected " + e.value + ", got " + it->second + " (from " + r.facts_from + ")");
        }
        break;
      }
      case OracleExpect::kOrder: {
        uint64_t prev = 0;
        for (size_t i = 0; i < e.order.size(); ++i) {
          auto bits = offset_of(e.order[i]);
          if (!bits.ok()) {
            fail(e.line, "offset of (" + shape_to_string(e.order[i]) + ")" +
                             (r.offsets_from_pack ? " through pack" : "") + ": " + bits.status().to_string());
            break;
          }
          if (i > 0 && *bits <= prev) {
            fail(e.line, "(" + shape_to_string(e.order[i]) + ") at bit " + std::to_string(*bits) +
                             " does not follow (" + shape_to_string(e.order[i - 1]) + ") at bit " +
                             std::to_string(prev) + (r.offsets_from_pack ? " (offsets through pack)" : ""));
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
  r.outcome = r.failures.empty() ? OracleResult::kPassed : OracleResult::kFailed;
  return r;
}

std::vector<std::string> run_oracle(const OracleCase& oc, const Impl& impl) {
  OracleOptions options;
  options.describer = &impl;
  return run_oracle_case(oc, impl, options).failures;
}

// ---- precision oracles -------------------------------------------------------

namespace {

// The lines of a .precision or .values file: '#' comments, `case: ID` (an id
// required when `id_required`), then the case's `source:`, `note:` and checks.
// `unknown_line` says why a line is no check ("" when it is one); every case
// needs a source and a check.
template <typename Case, typename UnknownLine>
Result<std::vector<Case>> parse_check_cases(const std::string& text, const std::string& file, bool id_required,
                                            UnknownLine unknown_line) {
  std::vector<Case> cases;
  std::istringstream in(text);
  std::string raw;
  int lineno = 0;
  while (std::getline(in, raw)) {
    ++lineno;
    const std::string line = trim(raw);
    const std::string where = where_of(file, lineno) + ": ";
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("case:", 0) == 0) {
      Case c;
      c.id = trim(line.substr(5));
      c.file = file;
      c.line = lineno;
      if (id_required && c.id.empty()) return Status::invalid(where + "a case needs an id");
      cases.push_back(c);
      continue;
    }
    if (cases.empty()) return Status::invalid(where + "'" + line + "' before the first 'case:'");
    Case& c = cases.back();
    if (line.rfind("source:", 0) == 0) {
      c.source = trim(line.substr(7));
      c.source_line = lineno;
      const size_t sep = c.source.find(" § ");
      if (sep == std::string::npos || trim(c.source.substr(sep + std::strlen(" § "))).empty()) {
        return Status::invalid(where + "source must be 'DOCUMENT.txt § Section heading', got '" + c.source + "'");
      }
      continue;
    }
    if (line.rfind("note:", 0) == 0) continue;
    if (std::string why = unknown_line(line); !why.empty()) return Status::invalid(where + why);
    c.checks.emplace_back(lineno, line);
  }
  for (const auto& c : cases) {
    const std::string where = where_of(file, c.line) + ": case " + c.id;
    if (c.source.empty()) return Status::invalid(where + " has no source: (document and section)");
    if (c.checks.empty()) return Status::invalid(where + " checks nothing");
  }
  return cases;
}

}  // namespace

Result<std::vector<PrecisionOracleCase>> parse_precision_oracles(const std::string& text, const std::string& file) {
  return parse_check_cases<PrecisionOracleCase>(text, file, false, [](const std::string& line) {
    if (line.rfind("table ", 0) == 0 || line.rfind("convert ", 0) == 0 || line.rfind("layer ", 0) == 0) return std::string();
    return "unknown line '" + line + "' (case:, source:, note:, table, convert or layer)";
  });
}

namespace {

// The cases of every file with `extension` under `dir`, in file-name order, each
// file parsed by `parse`: every source found in spec_dir, every id once.
template <typename Case, typename Parse>
Result<std::vector<Case>> load_cases_dir(const std::string& dir, const std::string& spec_dir, const char* extension,
                                         Parse parse) {
  namespace fs = std::filesystem;
  std::error_code ec;
  LC_RETURN_IF_ERROR(require_oracle_dir(dir));
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == extension) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<Case> all;
  std::map<std::string, DocumentHeadings> documents;
  for (const auto& f : files) {
    std::string text;
    if (!read_text(f, &text)) return Status::invalid("cannot read oracle file " + f);
    LC_ASSIGN_OR_RETURN(std::vector<Case> cases, parse(text, f));
    for (const auto& c : cases) {
      LC_RETURN_IF_ERROR(check_source(where_of(c.file, c.source_line) + ": source of case " + c.id + ": ", c.source,
                                      spec_dir, &documents));
    }
    all.insert(all.end(), cases.begin(), cases.end());
  }
  std::map<std::string, const Case*> ids;
  for (const auto& c : all) {
    auto [it, fresh] = ids.emplace(c.id, &c);
    if (!fresh) {
      return Status::invalid("duplicate case id '" + c.id + "': " + where_of(it->second->file, it->second->line) +
                             " and " + where_of(c.file, c.line));
    }
  }
  return all;
}

}  // namespace

Result<std::vector<PrecisionOracleCase>> load_precision_oracle_dir(const std::string& dir,
                                                                   const std::string& spec_dir) {
  return load_cases_dir<PrecisionOracleCase>(dir, spec_dir, ".precision", parse_precision_oracles);
}

namespace {

std::vector<std::string> words_of(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// "... error ~ TEXT": the expected message fragment.
std::string error_fragment(const std::string& line) {
  const size_t at = line.find("error ~ ");
  return at == std::string::npos ? "" : trim(line.substr(at + 8));
}

// A value of the oracle text, 0x... bits or a signed decimal, as raw bits of type.
Result<uint64_t> value_of(const std::string& t, DType type) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(t.c_str(), &end, 0);
  if (t.empty() || end == nullptr || *end != 0 || errno != 0) return Status::invalid("not a value: '" + t + "'");
  const uint32_t bits = dtype_bits(type);
  return static_cast<uint64_t>(v) & (bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
}

std::string hex(uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

// Returns "" on success, else what failed.
std::string run_table_line(const std::string& text) {
  const auto t = words_of(text);
  if (t.size() < 6 || t[4] != "=") return "expected 'table LAYER INPUT OUTPUT = PIPELINE [weight W]'";
  auto layer = parse_precision_layer(t[1]);
  auto input = parse_precision_input(t[2]);
  auto output = parse_dtype(t[3]);
  if (!layer.ok()) return layer.status().message();
  if (!input.ok()) return input.status().message();
  if (!output.ok()) return output.status().message();
  auto row = nvdla_precision(*layer, *input, *output);
  if (t[5] == "error") {
    if (row.ok()) return "expected an error containing '" + error_fragment(text) + "', got a row";
    if (row.status().message().find(error_fragment(text)) == std::string::npos) {
      return "expected an error containing '" + error_fragment(text) + "', got " + row.status().message();
    }
    return "";
  }
  if (!row.ok()) return row.status().to_string();
  const PrecisionRow& r = **row;
  if (t[5] == "invalid") return r.valid ? "expected invalid, got " + describe_precision_row(r) : "";
  if (!r.valid) return "expected pipeline " + t[5] + ", got " + describe_precision_row(r);
  if (dtype_name(r.pipeline) != t[5]) return "expected pipeline " + t[5] + ", got " + describe_precision_row(r);
  const bool weight = t.size() >= 8 && t[6] == "weight";
  if (weight != r.has_weight || (weight && dtype_name(r.weight) != t[7])) {
    return "expected " + (weight ? "weight " + t[7] : std::string("no weight")) + ", got " + describe_precision_row(r);
  }
  return "";
}

// "layer offline|on-flying INPUT OUTPUT [conv=MODE/INPUT/OUTPUT] [data=LAYOUT@DTYPE@SHAPE]... -> ok|RULE"
std::string run_layer_line(const std::string& text) {
  const size_t arrow = text.rfind(" -> ");
  const std::string head = "layer ";
  if (text.compare(0, head.size(), head) != 0 || arrow == std::string::npos) {
    return "expected 'layer offline|on-flying INPUT OUTPUT [conv=MODE/INPUT/OUTPUT] [data=LAYOUT@DTYPE@SHAPE] -> ok|RULE'";
  }
  auto l = parse_sdp_layer(text.substr(head.size(), arrow - head.size()));
  if (!l.ok()) return l.status().message();
  const auto want = words_of(text.substr(arrow + 4));
  if (want.size() != 1) return "expected one result after '->': ok or a rule id";
  const Status st = check_sdp_layer(*l);
  const std::string got = st.ok() ? "ok" : st.rule();
  if (got != want[0]) return "expected " + want[0] + ", got " + (st.ok() ? "ok" : st.rule() + ": " + st.message());
  return "";
}

std::string run_convert_line(const std::string& text, const Converter& converter) {
  const auto t = words_of(text);
  if (t.size() < 6) return "expected 'convert RULE FROM TO [options] VALUES -> VALUES'";
  ConvertSpec s;
  auto rule = parse_convert_rule(t[1]);
  auto from = parse_dtype(t[2]);
  auto to = parse_dtype(t[3]);
  if (!rule.ok()) return rule.status().message();
  if (!from.ok()) return from.status().message();
  if (!to.ok()) return to.status().message();
  s.rule = *rule;
  s.from = *from;
  s.to = *to;
  std::vector<std::string> inputs, outputs;
  std::string nan;
  size_t i = 4;
  for (; i < t.size() && t[i] != "->"; ++i) {
    const std::string& w = t[i];
    if (w == "flush-nan") {
      s.flush_nan = true;
    } else if (w.rfind("unit=", 0) == 0) {
      auto u = parse_nvdla_unit(w.substr(5));
      if (!u.ok()) return u.status().message();
      s.unit = *u;
    } else if (w.rfind("offset=", 0) == 0) {
      s.offset = static_cast<int32_t>(std::strtol(w.c_str() + 7, nullptr, 10));
    } else if (w.rfind("scale=", 0) == 0) {
      s.scale = std::strtof(w.c_str() + 6, nullptr);
    } else if (w.rfind("truncate=", 0) == 0) {
      auto m = parse_truncate_mode(w.substr(9));
      if (!m.ok()) return m.status().message();
      s.truncate = *m;
    } else {
      inputs.push_back(w);
    }
  }
  if (i >= t.size()) return "no '->'";
  for (++i; i < t.size(); ++i) {
    if (t[i] == "nan" && i + 1 < t.size()) {
      nan = t[++i];
    } else {
      outputs.push_back(t[i]);
    }
  }
  const size_t from_bytes = dtype_bits(s.from) / 8, to_bytes = dtype_bits(s.to) / 8;
  std::vector<uint8_t> src(inputs.size() * from_bytes);
  for (size_t k = 0; k < inputs.size(); ++k) {
    auto v = value_of(inputs[k], s.from);
    if (!v.ok()) return v.status().message();
    for (size_t b = 0; b < from_bytes; ++b) src[k * from_bytes + b] = static_cast<uint8_t>(*v >> (8 * b));
  }
  std::vector<uint8_t> dst(inputs.size() * to_bytes, 0xee);
  NanCounts counts;
  Status st = converter.convert(s, src.data(), src.size(), dst.data(), dst.size(), &counts);
  const std::string who = converter.name() + ": ";
  if (!outputs.empty() && outputs[0] == "error") {
    if (st.ok()) return who + "expected an error containing '" + error_fragment(text) + "', got success";
    if (st.message().find(error_fragment(text)) == std::string::npos) {
      return who + "expected an error containing '" + error_fragment(text) + "', got " + st.message();
    }
    return "";
  }
  if (!st.ok()) return who + st.to_string();
  if (outputs.size() != inputs.size()) return "as many outputs as inputs expected after '->'";
  for (size_t k = 0; k < outputs.size(); ++k) {
    uint64_t got = 0;
    for (size_t b = 0; b < to_bytes; ++b) got |= static_cast<uint64_t>(dst[k * to_bytes + b]) << (8 * b);
    auto want = value_of(outputs[k], s.to);
    if (!want.ok()) return want.status().message();
    if (got != *want) {
      return who + "value " + std::to_string(k) + " (input " + inputs[k] + "): expected " + hex(*want) + ", got " +
             hex(got);
    }
  }
  if (!nan.empty() && std::to_string(counts.input) + "/" + std::to_string(counts.output) != nan) {
    return who + "NaN counts: expected " + nan + ", got " + std::to_string(counts.input) + "/" +
           std::to_string(counts.output);
  }
  return "";
}

}  // namespace

std::vector<std::string> run_precision_oracle(const PrecisionOracleCase& pc, const Converter& converter) {
  std::vector<std::string> failures;
  for (const auto& [line, text] : pc.checks) {
    std::string why = text.rfind("table ", 0) == 0   ? run_table_line(text)
                      : text.rfind("layer ", 0) == 0 ? run_layer_line(text)
                                                     : run_convert_line(text, converter);
    if (!why.empty()) failures.push_back(where_of(pc.file, line) + ": " + pc.id + ": " + why);
  }
  return failures;
}

// ---- value oracles -----------------------------------------------------------

Result<std::vector<ValuesOracleCase>> parse_values_oracles(const std::string& text, const std::string& file) {
  return parse_check_cases<ValuesOracleCase>(text, file, true, [](const std::string& line) {
    const std::string verb = line.substr(0, line.find(' '));
    bool known = false;
    std::string verbs;
    for (const char* v : kValuesVerbs) {
      known = known || verb == v;
      verbs += (verbs.empty() ? "" : ", ") + std::string(v);
    }
    return known ? std::string() : "unknown line '" + line + "' (case:, source:, note: or a check: " + verbs + ")";
  });
}

Result<std::vector<ValuesOracleCase>> load_values_oracle_dir(const std::string& dir, const std::string& spec_dir) {
  return load_cases_dir<ValuesOracleCase>(dir, spec_dir, ".values", parse_values_oracles);
}

}  // namespace layoutcheck
