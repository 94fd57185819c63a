#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "layoutcheck/oracle.h"
#include "layoutcheck/plugin.h"
#include "layoutcheck/precision.h"
#include "support.h"

namespace layoutcheck {
namespace {

const std::string kOracleDir = std::string(LAYOUTCHECK_SOURCE_DIR) + "/oracles";
const std::string kSpecDir = LAYOUTCHECK_SPEC_DIR;

std::vector<OracleCase> all_cases() {
  auto cases = load_oracle_dir(kOracleDir, kSpecDir);
  EXPECT_TRUE(cases.ok()) << cases.status().message();
  return cases.ok() ? *cases : std::vector<OracleCase>{};
}

// The cases an implementation is handed: not those whose layout text the
// parser rejects by a rule of the document (tested in OracleLayoutText).
std::vector<OracleCase> implementation_cases() {
  std::vector<OracleCase> out;
  for (auto& oc : all_cases()) {
    if (parse_case(oc.layout, oc.dtype, oc.shape).ok()) out.push_back(std::move(oc));
  }
  return out;
}

// An implementation without offset_bits (like a plugin that leaves it out):
// the oracle run finds its offsets through pack.
class NoOffsets : public testing::ForwardingImpl {
 public:
  explicit NoOffsets(const Impl& inner) : ForwardingImpl(inner, inner.name() + "-without-offset_bits") {}
  Result<uint64_t> offset_bits(const Case&, const Coord&) const override {
    return Status::unsupported(name() + " has no offset_bits");
  }
};

OracleOptions with_reference_facts() {
  OracleOptions options;
  options.describer = &reference_impl();
  return options;
}

void expect_passes(const OracleCase& oc, const Impl& impl) {
  OracleResult r = run_oracle_case(oc, impl, with_reference_facts());
  EXPECT_EQ(r.outcome, OracleResult::kPassed) << oc.id;
  for (const auto& f : r.failures) ADD_FAILURE() << f;
}

class OracleTest : public ::testing::TestWithParam<OracleCase> {};

TEST_P(OracleTest, reference) {
  for (const auto& f : run_oracle(GetParam(), reference_impl())) ADD_FAILURE() << f;
}

TEST_P(OracleTest, optimized) { expect_passes(GetParam(), optimized_impl()); }

// An implementation without nested coordinates (a plugin of ABI 1.0 or 1.1).
class NoNested : public testing::ForwardingImpl {
 public:
  explicit NoNested(const Impl& inner) : ForwardingImpl(inner, inner.name() + "-without-nested") {}
  Result<uint64_t> offset_bits_nested(const Case&, const IntTuple&) const override {
    return Status::unsupported(name() + " has no offset_bits_tuple");
  }
};

// Its nested lines are reported as not checked, never failed, when they are right.
TEST(OracleNested, lines_an_implementation_cannot_answer_are_reported_unchecked) {
  size_t unchecked = 0;
  for (const auto& oc : implementation_cases()) {
    OracleResult r = run_oracle_case(oc, NoNested(optimized_impl()), with_reference_facts());
    EXPECT_EQ(r.outcome, OracleResult::kPassed) << oc.id;
    for (const auto& f : r.failures) ADD_FAILURE() << f;
    for (const auto& u : r.unchecked) EXPECT_NE(u.find("not checked"), std::string::npos) << u;
    unchecked += r.unchecked.size();
  }
  EXPECT_GT(unchecked, 0u);
}

// A wrong nested line fails, with or without the entry.
TEST(OracleNested, a_wrong_nested_line_fails) {
  auto cases = parse_oracles("source: catlass-tla-layouts.txt § Layout 坐标与索引\ncase: tla/wrong_nested\n"
                             "layout: ((_4,_2),(_4,_3)):((_4,_16),(_1,_32))\n"
                             "dtype: int8\nshape: 8,12\noffset ((1,0),(1,1)) = 36\n", "mem");
  ASSERT_TRUE(cases.ok()) << cases.status().message();
  ASSERT_EQ(cases->size(), 1u);
  for (const Impl* impl : {&optimized_impl(), static_cast<const Impl*>(nullptr)}) {
    NoNested without(optimized_impl());
    OracleResult r = run_oracle_case(cases->front(), impl ? *impl : without, with_reference_facts());
    EXPECT_EQ(r.outcome, OracleResult::kFailed);
    EXPECT_TRUE(r.unchecked.empty());
  }
}

// Offsets found by packing agree with offset_bits on every oracle case.
TEST(OracleThroughPack, reference) {
  for (const auto& oc : implementation_cases()) expect_passes(oc, NoOffsets(reference_impl()));
}

TEST(OracleThroughPack, optimized) {
  for (const auto& oc : implementation_cases()) expect_passes(oc, NoOffsets(optimized_impl()));
}

std::string case_name(const ::testing::TestParamInfo<OracleCase>& info) {
  std::string name;
  for (char ch : info.param.id) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Oracles, OracleTest, ::testing::ValuesIn(all_cases()), case_name);

TEST(OracleFiles, ids_are_unique) {
  std::set<std::string> ids;
  for (const auto& oc : all_cases()) EXPECT_TRUE(ids.insert(oc.id).second) << "duplicate id " << oc.id;
}

TEST(OracleFiles, every_family_has_oracles) {
  std::set<std::string> families;
  for (const auto& oc : all_cases()) {
    auto c = parse_case(oc.layout, oc.dtype, oc.shape);
    if (c.ok()) families.insert(c->layout.family());
  }
  for (const auto& spec : layout_specs()) {
    std::string family = spec.name.substr(0, spec.name.find('.'));
    EXPECT_TRUE(families.count(family)) << "family " << family << " has no oracle case";
  }
}

TEST(OracleFiles, every_fact_is_a_key_the_reference_reports) {
  Status s = check_oracle_facts(all_cases(), reference_impl());
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(OracleLoader, rejects_a_case_without_source) {
  auto r = parse_oracles("case: x\nlayout: tpu.continuous\ndtype: fp32\nshape: 1,1,1,1\nsize = 4\n", "mem");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no source"), std::string::npos) << r.status().message();
}

TEST(OracleLoader, rejects_a_malformed_source) {
  auto r = parse_oracles("source: somewhere\ncase: x\n", "mem");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("§"), std::string::npos);
}

TEST(OracleLoader, a_wrong_expectation_fails) {
  auto r = parse_oracles(
      "source: d.txt § S\ncase: x\nlayout: tpu.continuous\ndtype: fp32\nshape: 1,2,3,4\n"
      "offset 0,1,0,0 = 13\nsize = 96\n",
      "mem");
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto failures = run_oracle(r->front(), reference_impl());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("expected byte 13, got byte 48"), std::string::npos) << failures[0];
}

// ---- every directive can fail ------------------------------------------------
// Each expectation of every oracle case, changed on its own, must fail the case:
// no directive can silently stop checking.

const char* kind_name(OracleExpect::Kind k) {
  switch (k) {
    case OracleExpect::kOffset: return "offset";
    case OracleExpect::kOffsetBits: return "offset_bits";
    case OracleExpect::kSize: return "size";
    case OracleExpect::kFact: return "fact";
    case OracleExpect::kError: return "error";
    case OracleExpect::kOrder: return "order";
  }
  return "?";
}

// Changes expectation i of a case; false if it cannot be changed meaningfully.
bool mutate(OracleCase* oc, size_t i) {
  OracleExpect& e = oc->expects[i];
  switch (e.kind) {
    case OracleExpect::kOffset:
    case OracleExpect::kOffsetBits:
    case OracleExpect::kSize:
      e.number += 1;
      return true;
    case OracleExpect::kFact:
      e.value += "0";
      return true;
    case OracleExpect::kError:
      e.value = "wording no rule has";
      return true;
    case OracleExpect::kOrder:
      if (e.order.size() < 2) return false;
      std::swap(e.order[0], e.order[1]);
      return true;
  }
  return false;
}

// Runs every single-expectation mutation of every case against impl; returns
// the number of mutations per directive.
std::map<std::string, int> expect_every_mutation_fails(const Impl& impl, bool error_wording) {
  std::map<std::string, int> mutated;
  for (const auto& original : implementation_cases()) {
    for (size_t i = 0; i < original.expects.size(); ++i) {
      OracleCase oc = original;
      if (!mutate(&oc, i)) continue;
      const OracleExpect& e = oc.expects[i];
      if (e.kind == OracleExpect::kError && !error_wording) continue;
      ++mutated[kind_name(e.kind)];
      OracleResult r = run_oracle_case(oc, impl, with_reference_facts());
      EXPECT_EQ(r.outcome, OracleResult::kFailed)
          << oc.file << ":" << e.line << ": changing this " << kind_name(e.kind) << " of " << oc.id
          << " does not fail the case against " << impl.name();
      const std::string line = oc.file + ":" + std::to_string(e.line) + ":";
      EXPECT_TRUE(std::any_of(r.failures.begin(), r.failures.end(),
                              [&](const std::string& f) { return f.rfind(line, 0) == 0; }))
          << "no failure names " << line;
    }
  }
  return mutated;
}

TEST(OracleMutation, every_expectation_changed_fails_the_reference) {
  auto mutated = expect_every_mutation_fails(reference_impl(), true);
  for (const char* kind : {"offset", "offset_bits", "size", "fact", "error", "order"}) {
    EXPECT_GT(mutated[kind], 0) << "no oracle line uses " << kind;
  }
}

TEST(OracleMutation, every_expectation_changed_fails_the_optimized) {
  // Only the reference must word a rejection as the document does.
  auto mutated = expect_every_mutation_fails(optimized_impl(), false);
  EXPECT_GT(mutated["fact"], 0);
}

TEST(OracleMutation, every_expectation_changed_fails_through_pack) {
  auto mutated = expect_every_mutation_fails(NoOffsets(optimized_impl()), false);
  EXPECT_GT(mutated["offset"], 0);
  EXPECT_GT(mutated["order"], 0);
}

class Accepts : public testing::ForwardingImpl {
 public:
  Accepts() : ForwardingImpl(optimized_impl(), "accepts") {}
  Status supports(const Case&) const override { return Status(); }
};

TEST(OracleMutation, an_error_case_accepted_fails) {
  int errors = 0;
  for (const auto& oc : implementation_cases()) {
    for (const auto& e : oc.expects) {
      if (e.kind != OracleExpect::kError) continue;
      ++errors;
      OracleResult r = run_oracle_case(oc, Accepts(), with_reference_facts());
      EXPECT_EQ(r.outcome, OracleResult::kFailed) << oc.id << " passes on an implementation that accepts it";
      break;
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(OracleMutation, a_fact_is_checked_in_every_mode) {
  // tpu/aligned/npu2 reports n_stride = 64 (the document's 32 * 2).
  auto r = parse_oracles(
      "source: d.txt § S\ncase: x\nlayout: tpu.aligned(npus=4,lmem=1024,addr=2048)\ndtype: fp32\nshape: 2,3,4,5\n"
      "fact n_stride = 999\n",
      "mem");
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    OracleResult res = run_oracle_case(r->front(), *impl, with_reference_facts());
    EXPECT_EQ(res.outcome, OracleResult::kFailed) << impl->name();
    EXPECT_EQ(res.facts_from, "reference") << impl->name();
    ASSERT_EQ(res.failures.size(), 1u);
    EXPECT_NE(res.failures[0].find("mem:6: x: n_stride: expected 999, got 64"), std::string::npos) << res.failures[0];
  }
  // Without an implementation that describes the case, the fact fails: never skipped.
  OracleResult alone = run_oracle_case(r->front(), optimized_impl(), OracleOptions{});
  EXPECT_EQ(alone.outcome, OracleResult::kFailed);
}

TEST(OracleMutation, an_unknown_fact_names_the_line_and_the_known_keys) {
  auto r = parse_oracles(
      "source: d.txt § S\ncase: x\nlayout: tpu.aligned(npus=4,lmem=1024)\ndtype: fp32\nshape: 2,3,4,5\n"
      "fact n_strid = 32\n",
      "mem");
  ASSERT_TRUE(r.ok()) << r.status().message();
  Status s = check_oracle_facts(*r, reference_impl());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("mem:6: case x: unknown fact 'n_strid'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("n_stride"), std::string::npos) << s.message();
  OracleResult res = run_oracle_case(r->front(), optimized_impl(), with_reference_facts());
  EXPECT_EQ(res.outcome, OracleResult::kFailed);
  ASSERT_EQ(res.failures.size(), 1u);
  EXPECT_NE(res.failures[0].find("unknown fact 'n_strid'"), std::string::npos) << res.failures[0];
  EXPECT_NE(res.failures[0].find("c_stride"), std::string::npos) << res.failures[0];
}

// ---- the loader checks the documents and the ids ------------------------------

class OracleDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("layoutcheck_oracle_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  Result<std::vector<OracleCase>> load() { return load_oracle_dir(dir_.string(), kSpecDir); }
  static std::string a_case(const std::string& source, const std::string& id) {
    return "source: " + source + "\ncase: " + id +
           "\nlayout: tpu.continuous\ndtype: fp32\nshape: 1,2,3,4\nsize = 96\n";
  }
  std::filesystem::path dir_;
};

TEST_F(OracleDir, accepts_a_real_document_and_section) {
  write("a.oracle", a_case("sophgo-tpu-okkernel-local-memory.txt § Continuous Layout", "x"));
  auto r = load();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->size(), 1u);
}

TEST_F(OracleDir, rejects_a_missing_document) {
  write("a.oracle", a_case("sophgo-tpu-handbook.txt § Continuous Layout", "x"));
  auto r = load();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a.oracle:1: source of case x: no document 'sophgo-tpu-handbook.txt'"),
            std::string::npos)
      << r.status().message();
}

TEST_F(OracleDir, rejects_a_missing_section) {
  write("a.oracle", a_case("sophgo-tpu-okkernel-local-memory.txt § Continuous Layouts", "x"));
  auto r = load();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a.oracle:1: source of case x: no section heading 'Continuous Layouts'"),
            std::string::npos)
      << r.status().message();
}

TEST_F(OracleDir, rejects_a_missing_section_of_a_flattened_document) {
  // nvdla-in-memory-data-formats.txt is one line of reStructuredText.
  write("a.oracle", a_case("nvdla-in-memory-data-formats.txt § Feature Data Layout", "x"));
  EXPECT_FALSE(load().ok());
  write("a.oracle", a_case("nvdla-in-memory-data-formats.txt § Feature Data Format", "x"));
  EXPECT_TRUE(load().ok());
}

TEST_F(OracleDir, a_case_source_is_checked_at_its_own_line) {
  write("a.oracle", a_case("sophgo-tpu-okkernel-local-memory.txt § Continuous Layout", "x") + "case: y\n" +
                        "source: sophgo-tpu-okkernel-local-memory.txt § Nowhere\n" +
                        "layout: tpu.continuous\ndtype: fp32\nshape: 1,1,1,1\nsize = 4\n");
  auto r = load();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a.oracle:8: source of case y"), std::string::npos) << r.status().message();
}

TEST_F(OracleDir, rejects_a_duplicate_id_across_files) {
  write("a.oracle", a_case("sophgo-tpu-okkernel-local-memory.txt § Continuous Layout", "tpu/x"));
  write("b.oracle", "\n" + a_case("sophgo-tpu-okkernel-local-memory.txt § Compact Layout", "tpu/x"));
  auto r = load();
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_NE(m.find("duplicate case id 'tpu/x'"), std::string::npos) << m;
  EXPECT_NE(m.find("a.oracle:2 and "), std::string::npos) << m;
  EXPECT_NE(m.find("b.oracle:3"), std::string::npos) << m;
}

TEST_F(OracleDir, rejects_a_duplicate_id_within_a_file) {
  write("a.oracle", a_case("sophgo-tpu-okkernel-local-memory.txt § Continuous Layout", "x") +
                        a_case("sophgo-tpu-okkernel-local-memory.txt § Continuous Layout", "x"));
  auto r = load();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("duplicate case id 'x': "), std::string::npos) << r.status().message();
}

TEST_F(OracleDir, rejects_a_missing_spec_directory) {
  write("a.oracle", a_case("sophgo-tpu-okkernel-local-memory.txt § Continuous Layout", "x"));
  auto r = load_oracle_dir(dir_.string(), (dir_ / "no-such-dir").string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("spec directory"), std::string::npos) << r.status().message();
}

TEST(OracleHeading, lines_numbers_pilcrows_and_underlines) {
  EXPECT_TRUE(document_has_heading("intro\nCompact Layout\xC2\xB6\ntext\n", "Compact Layout"));
  EXPECT_TRUE(document_has_heading("  3.2   Compact   Layout \n", "Compact Layout"));
  EXPECT_TRUE(document_has_heading("x\nLayout \xE6\x9E\x84\xE9\x80\xA0\n", "Layout \xE6\x9E\x84\xE9\x80\xA0"));
  EXPECT_FALSE(document_has_heading("the Compact Layout stores\n", "Compact Layout"));
  EXPECT_FALSE(document_has_heading("Compact Layout\n", "Compact"));
  EXPECT_FALSE(document_has_heading("Compact Layout\n", ""));
  // Flattened reStructuredText: the heading, then an underline at least as long.
  const std::string flat = "text. Pixel Format ------------ DLA engine supports Bias Data ~~~~~~~ more";
  EXPECT_TRUE(document_has_heading(flat, "Pixel Format"));
  EXPECT_FALSE(document_has_heading(flat, "Pixel Formats"));
  EXPECT_FALSE(document_has_heading(flat, "Bias Data"));  // underline shorter than the heading
  EXPECT_FALSE(document_has_heading(flat, "DLA engine"));
}

// ---- implementations that claim part of the layouts ---------------------------

const OracleCase& case_named(const std::vector<OracleCase>& cases, const std::string& id) {
  static const OracleCase none;
  for (const auto& oc : cases) {
    if (oc.id == id) return oc;
  }
  ADD_FAILURE() << "no oracle case " << id;
  return none;
}

class Declines : public testing::ForwardingImpl {
 public:
  Declines() : ForwardingImpl(optimized_impl(), "declines") {}
  Status supports(const Case&) const override { return Status::unsupported("declines everything"); }
};

TEST(OracleClaims, an_unclaimed_case_is_skipped_and_a_claimed_declined_case_fails) {
  auto cases = all_cases();
  const OracleCase& oc = case_named(cases, "tpu/aligned/npu2");
  OracleOptions options = with_reference_facts();
  options.claimed = [](const Case& c) { return c.layout.name != "tpu.aligned"; };
  OracleResult skipped = run_oracle_case(oc, Declines(), options);
  EXPECT_EQ(skipped.outcome, OracleResult::kSkipped);
  EXPECT_TRUE(skipped.failures.empty());
  EXPECT_NE(skipped.skip_reason.find("does not claim"), std::string::npos) << skipped.skip_reason;
  options.claimed = [](const Case&) { return true; };
  OracleResult failed = run_oracle_case(oc, Declines(), options);
  EXPECT_EQ(failed.outcome, OracleResult::kFailed);
  ASSERT_FALSE(failed.failures.empty());
  EXPECT_NE(failed.failures[0].find("declines the case"), std::string::npos) << failed.failures[0];
}

TEST(OracleClaims, a_plugin_without_offset_bits_is_checked_through_pack) {
  auto plugin = load_plugin(LAYOUTCHECK_NO_OFFSET_PLUGIN);
  ASSERT_TRUE(plugin.ok()) << plugin.status().message();
  const PluginImpl& impl = **plugin;
  OracleOptions options = with_reference_facts();
  options.claimed = [&impl](const Case& c) { return impl.claims(c); };
  int passed = 0, skipped = 0, through_pack = 0;
  for (const auto& oc : all_cases()) {
    OracleResult r = run_oracle_case(oc, impl, options);
    for (const auto& f : r.failures) ADD_FAILURE() << f;
    passed += r.outcome == OracleResult::kPassed;
    skipped += r.outcome == OracleResult::kSkipped;
    through_pack += r.offsets_from_pack;
  }
  EXPECT_GT(passed, 0);
  EXPECT_GT(skipped, 0);
  EXPECT_GT(through_pack, 0);
  // A wrong offset is still caught.
  OracleCase wrong = case_named(all_cases(), "tpu/aligned/npu2");
  for (auto& e : wrong.expects) {
    if (e.kind == OracleExpect::kOffset) e.number += 4;
  }
  OracleResult r = run_oracle_case(wrong, impl, options);
  EXPECT_EQ(r.outcome, OracleResult::kFailed);
  EXPECT_TRUE(r.offsets_from_pack);
}

// ---- precision oracles through the library ------------------------------------

std::vector<PrecisionOracleCase> all_precision_cases() {
  auto cases = load_precision_oracle_dir(kOracleDir, kSpecDir);
  EXPECT_TRUE(cases.ok()) << cases.status().message();
  return cases.ok() ? *cases : std::vector<PrecisionOracleCase>{};
}

std::vector<const Converter*> converters() {
  std::vector<const Converter*> out = {&precision_reference()};
  for (SimdPath p : {SimdPath::kPortable, SimdPath::kF16cAvx2, SimdPath::kAvx512}) {
    if (simd_path_available(p)) out.push_back(&precision_optimized(p));
  }
  return out;
}

TEST(PrecisionOracleRun, every_case_passes_on_every_converter) {
  const auto cases = all_precision_cases();
  EXPECT_GE(cases.size(), 60u);
  for (const Converter* conv : converters()) {
    for (const auto& pc : cases) {
      for (const auto& f : run_precision_oracle(pc, *conv)) ADD_FAILURE() << f;
    }
  }
}

// Changes the expected result of one check line.
std::string mutate_precision(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> t;
  for (std::string w; in >> w;) t.push_back(w);
  const bool table = t[0] == "table";
  size_t k = 0;
  while (k < t.size() && t[k] != (table ? "=" : "->")) ++k;
  ++k;
  if (k >= t.size()) return text;
  if (t[k] == "error") return text.substr(0, text.find("error ~ ")) + "error ~ wording no rule has";
  if (table) {
    t[k] = t[k] == "invalid" ? "int8" : "invalid";
  } else {
    t[k] = std::to_string(std::strtoll(t[k].c_str(), nullptr, 0) + 1);
  }
  std::string out;
  for (const auto& w : t) out += (out.empty() ? "" : " ") + w;
  return out;
}

TEST(PrecisionOracleRun, every_check_changed_fails) {
  int mutated = 0;
  for (const auto& original : all_precision_cases()) {
    for (size_t i = 0; i < original.checks.size(); ++i) {
      PrecisionOracleCase pc = original;
      pc.checks[i].second = mutate_precision(pc.checks[i].second);
      ASSERT_NE(pc.checks[i].second, original.checks[i].second);
      ++mutated;
      EXPECT_FALSE(run_precision_oracle(pc, precision_reference()).empty())
          << pc.file << ":" << pc.checks[i].first << ": changed to '" << pc.checks[i].second << "' still passes";
      EXPECT_FALSE(run_precision_oracle(pc, precision_optimized()).empty())
          << pc.file << ":" << pc.checks[i].first << ": changed to '" << pc.checks[i].second << "' still passes";
    }
  }
  EXPECT_GT(mutated, 60);
}

TEST_F(OracleDir, precision_sources_and_ids_are_checked) {
  const std::string ok_case =
      "case: p\nsource: nvdla-in-memory-data-formats.txt § Precision Conversion\n"
      "table conv image-uint8 int8 = int8 weight int8\n";
  write("a.precision", ok_case);
  auto r = load_precision_oracle_dir(dir_.string(), kSpecDir);
  ASSERT_TRUE(r.ok()) << r.status().message();
  write("b.precision", ok_case);
  r = load_precision_oracle_dir(dir_.string(), kSpecDir);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("duplicate case id 'p'"), std::string::npos) << r.status().message();
  std::filesystem::remove(dir_ / "b.precision");
  write("a.precision", "case: p\nsource: nvdla-in-memory-data-formats.txt § Precision Conversions\n"
                       "table conv image-uint8 int8 = int8 weight int8\n");
  r = load_precision_oracle_dir(dir_.string(), kSpecDir);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a.precision:2: source of case p: no section heading"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace layoutcheck

namespace layoutcheck {
namespace {

// A case whose layout text breaks a rule of the notation passes only when it
// expects nothing but rejection, with the parser's words; a plugin is never
// handed it (skipped); a text error without a rule, or a wrong fragment, fails.
OracleResult run_text(const std::string& layout, const std::string& expect, const Impl& impl) {
  auto cases = parse_oracles("source: qualcomm-htp-memory-layout.txt § Crouton Layout\ncase: htp/text\nlayout: " +
                                 layout + "\ndtype: int8\nshape: 3,10\n" + expect + "\n",
                             "mem");
  EXPECT_TRUE(cases.ok()) << cases.status().message();
  return run_oracle_case(cases->front(), impl, with_reference_facts());
}

TEST(OracleLayoutText, a_rejected_notation_passes_only_with_the_right_rejection) {
  const std::string twice = "ChunkedMemoryLayout<2, 0,0, 0,0, 1,0>";
  EXPECT_EQ(run_text(twice, "error ~ more than one zero-size pair", reference_impl()).outcome, OracleResult::kPassed);
  EXPECT_EQ(run_text(twice, "error ~ more than one zero-size pair", optimized_impl()).outcome, OracleResult::kPassed);
  NoOffsets other(reference_impl());
  const OracleResult skipped = run_text(twice, "error ~ more than one zero-size pair", other);
  EXPECT_EQ(skipped.outcome, OracleResult::kSkipped);
  EXPECT_NE(skipped.skip_reason.find("htp/notation"), std::string::npos) << skipped.skip_reason;
  EXPECT_EQ(run_text(twice, "error ~ no such words", reference_impl()).outcome, OracleResult::kFailed);
  EXPECT_EQ(run_text(twice, "size = 30", reference_impl()).outcome, OracleResult::kFailed);
  // Text the parser rejects without a rule of the document (a syntax error) fails.
  EXPECT_EQ(run_text("ChunkedMemoryLayout<2, 0,0, 1,0", "error ~ missing '>'", reference_impl()).outcome,
            OracleResult::kFailed);
}

}  // namespace
}  // namespace layoutcheck
