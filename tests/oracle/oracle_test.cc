#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "layoutcheck/oracle.h"
#include "support.h"

namespace layoutcheck {
namespace {

const std::string kOracleDir = std::string(LAYOUTCHECK_SOURCE_DIR) + "/oracles";

std::vector<OracleCase> all_cases() {
  auto cases = load_oracle_dir(kOracleDir);
  EXPECT_TRUE(cases.ok()) << cases.status().message();
  return cases.ok() ? *cases : std::vector<OracleCase>{};
}

class OracleTest : public ::testing::TestWithParam<OracleCase> {};

TEST_P(OracleTest, reference) {
  for (const auto& f : run_oracle(GetParam(), reference_impl())) ADD_FAILURE() << f;
}

TEST_P(OracleTest, optimized) {
  for (const auto& f : run_oracle(GetParam(), optimized_impl())) ADD_FAILURE() << f;
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

TEST(OracleFiles, citations_name_a_document_section) {
  namespace fs = std::filesystem;
  const fs::path spec_dir = LAYOUTCHECK_SPEC_DIR;
  if (!fs::is_directory(spec_dir)) GTEST_SKIP() << "documents not found at " << spec_dir;
  for (const auto& oc : all_cases()) {
    size_t sep = oc.source.find(" § ");
    ASSERT_NE(sep, std::string::npos) << oc.id;
    std::string doc = oc.source.substr(0, sep), section = oc.source.substr(sep + 4);
    std::ifstream in(spec_dir / doc);
    ASSERT_TRUE(in.good()) << oc.id << ": no document " << doc;
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find(section), std::string::npos) << oc.id << ": no section '" << section << "' in " << doc;
  }
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

}  // namespace
}  // namespace layoutcheck
