#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "layoutcheck/nvdla.h"
#include "layoutcheck/oracle.h"
#include "support.h"

namespace layoutcheck {
namespace {

const std::string kOracleDir = std::string(LAYOUTCHECK_SOURCE_DIR) + "/oracles";
const std::string kSpecDir = LAYOUTCHECK_SPEC_DIR;

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<ValuesOracleCase> all_cases() {
  auto cases = load_values_oracle_dir(kOracleDir, kSpecDir);
  EXPECT_TRUE(cases.ok()) << cases.status().message();
  return cases.ok() ? *cases : std::vector<ValuesOracleCase>{};
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

// "NAME=SIZE" or "NAME=SIZE@ADDR" words: a placement and, when z is set, zero-filled surfaces of those sizes.
bool read_surfaces(std::istringstream& in, nvdla::SurfacePlacement* p, nvdla::CompressedWeights* z, std::string* rest) {
  int seen = 0;
  for (std::string w; in >> w;) {
    if (w == "->") {
      std::getline(in, *rest);
      *rest = trim(*rest);
      return seen == 3 && !rest->empty();
    }
    const size_t eq = w.find('='), atsign = w.find('@');
    if (eq == std::string::npos) return false;
    const std::string name = w.substr(0, eq);
    const uint64_t size = std::stoull(w.substr(eq + 1, atsign == std::string::npos ? std::string::npos : atsign - eq - 1), nullptr, 0);
    const uint64_t addr = atsign == std::string::npos ? 0 : std::stoull(w.substr(atsign + 1), nullptr, 0);
    if (name != "wgs" && name != "wmb" && name != "data") return false;
    (name == "wgs" ? p->wgs_size : name == "wmb" ? p->wmb_size : p->data_size) = size;
    (name == "wgs" ? p->wgs_address : name == "wmb" ? p->wmb_address : p->data_address) = addr;
    if (z) (name == "wgs" ? z->wgs : name == "wmb" ? z->wmb : z->data).assign(size, 0);
    ++seen;
  }
  return false;
}

// surfaces wgs=SIZE@ADDR wmb=SIZE@ADDR data=SIZE@ADDR -> ok|RULE
//   nvdla::check_placement, the placement check of the reference library (there is no second one)
// decompress LAYOUT DTYPE SHAPE wgs=SIZE wmb=SIZE data=SIZE -> ok|RULE
//   zero-filled surfaces; the reference names the rule, the optimized decompress rejects them
std::string run_surface_check(const std::string& check, const std::string& verb, bool reference) {
  std::istringstream in(check);
  std::string word, layout_text, dtype_text, shape_text, expected;
  in >> word;
  if (verb == "decompress") in >> layout_text >> dtype_text >> shape_text;
  nvdla::CompressedWeights z;
  nvdla::SurfacePlacement placement;
  if (!read_surfaces(in, &placement, verb == "surfaces" ? nullptr : &z, &expected)) return "malformed: " + check;
  Status st;
  if (verb == "surfaces") {
    st = nvdla::check_placement(placement);
  } else {
    auto c = parse_case(layout_text, dtype_text, shape_text);
    if (!c.ok()) return c.status().message();
    const Impl& layout = reference ? reference_impl() : optimized_impl();
    std::vector<uint8_t> packed(*layout.size_bytes(*c));
    st = (reference ? nvdla::decompress_reference : nvdla::decompress)(*c, z, packed.data(), packed.size());
    if (!reference && expected != "ok") return st.ok() ? "expected a rejection (" + expected + "), got ok" : "";
  }
  const std::string got = st.ok() ? "ok" : st.rule();
  return got == expected ? "" : "expected " + expected + ", got " + (st.ok() ? "ok" : st.rule() + ": " + st.message());
}

// "" when `check` holds for the reference (reference = true) or the optimized functions.
std::string run_check(const std::string& check, bool reference) {
  std::istringstream in(check);
  std::string verb;
  in >> verb;
  if (verb == "surfaces" || verb == "decompress") return run_surface_check(check, verb, reference);
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
  if (check.compare(0, 8, "surfaces") == 0 || check.compare(0, 10, "decompress") == 0) {
    const size_t arrow = check.find(" -> ") + 4;
    const bool ok = check.compare(arrow, std::string::npos, "ok") == 0;
    return check.substr(0, arrow) + (ok ? "nvdla.sparse/wgs-size-align-128" : "ok");
  }
  size_t from = check.find(" -> ") + 4;
  if (check.compare(0, 8, "compress") == 0) from = check.find(':', from) + 1;
  const size_t at = check.find_first_of("0123456789", from);
  std::string out = check;
  out[at] = out[at] == '1' ? '2' : '1';
  return out;
}

// "surfaces" checks the reference library's nvdla::check_surfaces; the optimized library has none.
bool has_optimized(const std::string& check) { return check.compare(0, 9, "surfaces ") != 0; }

TEST(NvdlaValuesOracle, every_check_holds_for_reference_and_optimized) {
  const std::vector<ValuesOracleCase> cases = all_cases();
  EXPECT_GE(cases.size(), 15u);
  for (const ValuesOracleCase& c : cases) {
    for (const auto& [line, check] : c.checks) {
      EXPECT_EQ(run_check(check, true), "") << c.file << ":" << line << " (" << c.id << ") reference";
      if (has_optimized(check)) {
        EXPECT_EQ(run_check(check, false), "") << c.file << ":" << line << " (" << c.id << ") optimized";
      }
    }
  }
}

TEST(NvdlaValuesOracle, a_changed_expectation_fails) {
  for (const ValuesOracleCase& c : all_cases()) {
    for (const auto& [line, check] : c.checks) {
      const std::string changed = mutate(check);
      ASSERT_NE(changed, check);
      EXPECT_NE(run_check(changed, true), "") << c.file << ":" << line << " changed to '" << changed << "' still passes";
      if (has_optimized(check)) {
        EXPECT_NE(run_check(changed, false), "") << c.file << ":" << line << " changed to '" << changed << "' still passes";
      }
    }
  }
}

TEST(NvdlaValuesOracle, every_alignment_rule_of_the_surfaces_is_expected_by_a_case) {
  std::set<std::string> expected;
  for (const ValuesOracleCase& c : all_cases()) {
    for (const auto& [line, check] : c.checks) {
      if (!has_optimized(check) || check.compare(0, 10, "decompress") == 0) expected.insert(check.substr(check.find(" -> ") + 4));
    }
  }
  for (const char* rule : {"ok", "nvdla.sparse/wgs-start-address-align-256", "nvdla.sparse/wmb-start-address-align-256",
                           "nvdla.weight/start-address-align-256", "nvdla.sparse/wgs-size-align-128",
                           "nvdla.sparse/wmb-size-align-128", "nvdla.sparse/data-size-align-128",
                           "nvdla.sparse/address-overflow", "nvdla.sparse/surfaces-overlap"}) {
    EXPECT_TRUE(expected.count(rule)) << rule;
  }
}

TEST(NvdlaValuesOracle, a_case_needs_a_source_and_known_checks) {
  EXPECT_FALSE(parse_values_oracles("case: a\ntransform int16 1,1,3,3 = 0 0 0 0 0 0 0 0 0 -> 0\n", "f").ok());
  EXPECT_FALSE(parse_values_oracles("case: a\nsource: nvdla-in-memory-data-formats.txt § Sparse Compression option\n", "f").ok());
  EXPECT_FALSE(parse_values_oracles("case: a\nsource: nvdla-in-memory-data-formats.txt § Sparse Compression option\n"
                                    "rotate int16 1,1,3,3 = 0 -> 0\n", "f")
                   .ok());
  EXPECT_TRUE(parse_values_oracles("case: a\nsource: nvdla-in-memory-data-formats.txt § Sparse Compression option\n"
                                   "transform int16 1,1,3,3 = 0 0 0 0 0 0 0 0 0 -> 0\n", "f")
                  .ok());
  const std::string dir = ::testing::TempDir() + "/layoutcheck_values_sources";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/a.values") << "case: a\nsource: nvdla-in-memory-data-formats.txt § No Such Heading\n"
                                      "transform int16 1,1,3,3 = 0 0 0 0 0 0 0 0 0 -> 0\n";
  EXPECT_FALSE(load_values_oracle_dir(dir, kSpecDir).ok());
  std::ofstream(dir + "/a.values") << "case: a\nsource: nvdla-in-memory-data-formats.txt § Sparse Compression option\n"
                                      "transform int16 1,1,3,3 = 0 0 0 0 0 0 0 0 0 -> 0\n";
  EXPECT_TRUE(load_values_oracle_dir(dir, kSpecDir).ok());
}

}  // namespace
}  // namespace layoutcheck
