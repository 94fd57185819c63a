#include <filesystem>
#include <fstream>
#include <sstream>

#include "layoutcheck/nvdla.h"
#include "layoutcheck/oracle.h"
#include "support.h"

namespace layoutcheck {
namespace {

const std::string kFile = std::string(LAYOUTCHECK_SOURCE_DIR) + "/oracles/nvdla/figures.values";
const std::string kSpecDir = LAYOUTCHECK_SPEC_DIR;

struct ValuesCase {
  std::string id, source;
  std::vector<std::pair<int, std::string>> checks;  // line, text
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// Cases, each with its source checked against the documents.
Result<std::vector<ValuesCase>> load_values(const std::string& text) {
  std::vector<ValuesCase> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(": ");
    const std::string key = colon == std::string::npos ? "" : line.substr(0, colon);
    if (key == "case") {
      out.push_back({trim(line.substr(colon + 2)), "", {}});
    } else if (out.empty()) {
      return Status::invalid("line " + std::to_string(n) + ": outside a case");
    } else if (key == "source") {
      out.back().source = trim(line.substr(colon + 2));
    } else if (key != "note") {
      out.back().checks.push_back({n, line});
    }
  }
  for (const ValuesCase& c : out) {
    const size_t sep = c.source.find(" § ");
    if (sep == std::string::npos) return Status::invalid("case " + c.id + " has no source");
    const std::string doc = read_text(kSpecDir + "/" + c.source.substr(0, sep));
    if (doc.empty() || !document_has_heading(doc, c.source.substr(sep + std::string(" § ").size()))) {
      return Status::invalid("case " + c.id + ": source '" + c.source + "' is no heading of the documents");
    }
    if (c.checks.empty()) return Status::invalid("case " + c.id + " checks nothing");
  }
  return out;
}

std::vector<int64_t> numbers(const std::string& text) {
  std::vector<int64_t> out;
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) out.push_back(std::stoll(tok, nullptr, 0));
  return out;
}

// Little-endian elements of `bytes` bytes each (two's complement for negatives).
std::vector<uint8_t> to_bytes(const std::vector<int64_t>& values, uint64_t bytes) {
  std::vector<uint8_t> out;
  for (int64_t v : values) {
    for (uint64_t b = 0; b < bytes; ++b) out.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * b)));
  }
  return out;
}

std::string hex(const std::vector<uint8_t>& v) {
  std::ostringstream s;
  for (uint8_t b : v) s << std::hex << static_cast<int>(b) << ' ';
  return s.str();
}

// "" when `check` holds for the reference (reference = true) or the optimized functions.
std::string run_check(const std::string& check, bool reference) {
  std::istringstream in(check);
  std::string verb;
  in >> verb;
  const size_t eq = check.find(" = "), arrow = check.find(" -> ");
  if (eq == std::string::npos || arrow == std::string::npos || arrow < eq) return "malformed: " + check;
  std::istringstream head(check.substr(verb.size(), eq - verb.size()));
  std::string dtype_text, shape_text, layout_text, word;
  if (verb == "compress") head >> layout_text;
  head >> dtype_text >> shape_text;
  auto t = parse_dtype(dtype_text);
  auto shape = parse_shape(shape_text);
  if (!t.ok() || !shape.ok()) return "bad dtype or shape: " + check;
  const uint64_t eb = dtype_bits(*t) / 8;
  const std::vector<uint8_t> in_bytes = to_bytes(numbers(check.substr(eq + 3, arrow - eq - 3)), eb);
  const std::string expected_text = check.substr(arrow + 4);
  if (verb == "transform" || verb == "extend") {
    int64_t stride = 1;
    if (verb == "extend" && !(head >> word >> stride && word == "stride")) return "extend needs 'stride N': " + check;
    auto r = verb == "extend"
                 ? (reference ? nvdla::winograd_extend_reference : nvdla::winograd_extend)(*t, *shape, stride, in_bytes.data(),
                                                                                            in_bytes.size())
                 : (reference ? nvdla::winograd_transform_reference : nvdla::winograd_transform)(*t, *shape, in_bytes.data(),
                                                                                                  in_bytes.size());
    if (!r.ok()) return r.status().message();
    const std::vector<uint8_t> expected = to_bytes(numbers(expected_text), eb);
    if (*r != expected) return "got " + hex(*r) + "expected " + hex(expected);
    return "";
  }
  if (verb != "compress") return "unknown check: " + check;
  auto c = parse_case(layout_text, dtype_text, shape_text);
  if (!c.ok()) return c.status().message();
  const Impl& layout = reference ? reference_impl() : optimized_impl();
  std::vector<uint8_t> packed(*layout.size_bytes(*c));
  Status s = layout.pack(*c, in_bytes.data(), in_bytes.size(), packed.data(), packed.size());
  if (!s.ok()) return s.message();
  auto z = (reference ? nvdla::compress_reference : nvdla::compress)(*c, packed.data(), packed.size());
  if (!z.ok()) return z.status().message();
  std::istringstream surfaces(expected_text);
  std::string part;
  int seen = 0;
  while (std::getline(surfaces, part, ';')) {
    std::istringstream p(part);
    std::string name, size_text;
    p >> name >> size_text;
    const std::vector<uint8_t>* got = name == "wgs" ? &z->wgs : name == "wmb" ? &z->wmb : name == "data" ? &z->data : nullptr;
    if (got == nullptr || size_text.empty() || size_text.back() != ':') return "bad surface '" + part + "'";
    std::vector<uint8_t> expected = to_bytes(numbers(part.substr(part.find(':') + 1)), 1);
    expected.resize(std::stoull(size_text), 0);
    if (*got != expected) return name + ": got " + hex(*got) + "expected " + hex(expected);
    ++seen;
  }
  return seen == 3 ? "" : "compress names wgs, wmb and data: " + check;
}

// The first number of a check's expected side changed (past "wgs 128:" for compress).
std::string mutate(const std::string& check) {
  size_t from = check.find(" -> ") + 4;
  if (check.compare(0, 8, "compress") == 0) from = check.find(':', from) + 1;
  const size_t at = check.find_first_of("0123456789", from);
  std::string out = check;
  out[at] = out[at] == '1' ? '2' : '1';
  return out;
}

TEST(NvdlaValuesOracle, every_check_holds_for_reference_and_optimized) {
  auto cases = load_values(read_text(kFile));
  ASSERT_TRUE(cases.ok()) << cases.status().message();
  EXPECT_GE(cases->size(), 9u);
  for (const ValuesCase& c : *cases) {
    for (const auto& [line, check] : c.checks) {
      EXPECT_EQ(run_check(check, true), "") << kFile << ":" << line << " (" << c.id << ") reference";
      EXPECT_EQ(run_check(check, false), "") << kFile << ":" << line << " (" << c.id << ") optimized";
    }
  }
}

TEST(NvdlaValuesOracle, a_changed_expectation_fails) {
  auto cases = load_values(read_text(kFile));
  ASSERT_TRUE(cases.ok()) << cases.status().message();
  for (const ValuesCase& c : *cases) {
    for (const auto& [line, check] : c.checks) {
      const std::string changed = mutate(check);
      ASSERT_NE(changed, check);
      EXPECT_NE(run_check(changed, true), "") << kFile << ":" << line << " changed to '" << changed << "' still passes";
      EXPECT_NE(run_check(changed, false), "") << kFile << ":" << line << " changed to '" << changed << "' still passes";
    }
  }
}

TEST(NvdlaValuesOracle, a_case_needs_a_source_of_the_documents) {
  EXPECT_FALSE(load_values("case: a\ntransform int16 1,1,3,3 = 0 0 0 0 0 0 0 0 0 -> 0\n").ok());
  EXPECT_FALSE(load_values("case: a\nsource: nvdla-in-memory-data-formats.txt § No Such Heading\n"
                           "transform int16 1,1,3,3 = 0 0 0 0 0 0 0 0 0 -> 0\n")
                   .ok());
  EXPECT_TRUE(load_values("case: a\nsource: nvdla-in-memory-data-formats.txt § Sparse Compression option\n"
                          "transform int16 1,1,3,3 = 0 0 0 0 0 0 0 0 0 -> 0\n")
                  .ok());
}

}  // namespace
}  // namespace layoutcheck
