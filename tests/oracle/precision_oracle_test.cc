// The precision oracles: oracles/precision/*.precision, loaded by a small loader
// of their own (the layout oracle format does not fit values and tables).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "layoutcheck/oracle.h"
#include "layoutcheck/precision.h"
#include "layoutcheck/rules.h"
#include "precision_support.h"

namespace layoutcheck::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDocument = "nvdla-in-memory-data-formats.txt";

struct PrecisionCheck {
  int line;
  std::string text;  // "table ..." or "convert ..."
};

struct PrecisionCase {
  std::string id, source_heading, where;
  std::vector<PrecisionCheck> checks;
};

// Every case of oracles/**/*.precision, read by the library's loader (which
// checks each source against the document and each id for uniqueness).
std::vector<PrecisionCase> load_all() {
  std::vector<PrecisionCase> all;
  auto cases = load_precision_oracle_dir(std::string(LAYOUTCHECK_SOURCE_DIR) + "/oracles", LAYOUTCHECK_SPEC_DIR);
  EXPECT_TRUE(cases.ok()) << cases.status().message();
  if (!cases.ok()) return all;
  for (const auto& pc : *cases) {
    const size_t sep = pc.source.find(" § ");
    EXPECT_EQ(pc.source.substr(0, sep), kDocument) << pc.id;
    PrecisionCase c{pc.id, sep == std::string::npos ? "" : pc.source.substr(sep + std::strlen(" § ")),
                    pc.file + ":" + std::to_string(pc.line), {}};
    for (const auto& [line, text] : pc.checks) c.checks.push_back({line, text});
    all.push_back(c);
  }
  return all;
}

std::vector<std::string> split(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

TEST(PrecisionOracleLoader, rejects_a_case_without_source) {
  auto r = parse_precision_oracles("case: a\nconvert ieee fp16 fp32 0x3c00 -> 0x3f800000\n", "x.precision");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("case a has no source"), std::string::npos) << r.status().message();
  auto second = parse_precision_oracles(
      "case: a\nsource: nvdla-in-memory-data-formats.txt § FP16 Supporting\ntable conv fp16 fp16 = fp16\n"
      "case: b\ntable conv fp16 fp16 = fp16\n",
      "x.precision");
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("case b has no source"), std::string::npos) << second.status().message();
}

TEST(PrecisionOracleLoader, rejects_a_source_without_document_and_heading) {
  EXPECT_FALSE(parse_precision_oracles("case: a\nsource: FP16 Supporting\n", "x").ok());
  EXPECT_FALSE(parse_precision_oracles("case: a\nsource: nvdla-in-memory-data-formats.txt § \n", "x").ok());
  EXPECT_FALSE(parse_precision_oracles("case: a\nsource: nvdla-in-memory-data-formats.txt § X\nbogus\n", "x").ok());
}

TEST(PrecisionOracles, every_case_passes_on_reference_and_optimized) {
  auto cases = load_precision_oracle_dir(std::string(LAYOUTCHECK_SOURCE_DIR) + "/oracles", LAYOUTCHECK_SPEC_DIR);
  ASSERT_TRUE(cases.ok()) << cases.status().message();
  ASSERT_GE(cases->size(), 60u);
  std::vector<const Converter*> impls = {&precision_reference()};
  for (SimdPath p : simd_paths()) impls.push_back(&precision_optimized(p));
  size_t checks = 0;
  for (const auto& pc : *cases) {
    EXPECT_FALSE(pc.checks.empty()) << pc.id;
    checks += pc.checks.size();
    for (const Converter* impl : impls) {
      for (const auto& f : run_precision_oracle(pc, *impl)) ADD_FAILURE() << impl->name() << ": " << f;
    }
  }
  std::printf("%zu precision oracle cases, %zu checks\n", cases->size(), checks);
}

TEST(PrecisionOracles, every_source_heading_is_in_the_document) {
  const fs::path doc = fs::path(LAYOUTCHECK_SPEC_DIR) / kDocument;
  if (!fs::exists(doc)) GTEST_SKIP() << "document not found at " << doc;
  std::ifstream f(doc);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  for (const auto& c : load_all()) {
    EXPECT_NE(text.find(c.source_heading), std::string::npos) << c.id << ": no section '" << c.source_heading << "'";
  }
}

TEST(PrecisionOracles, cover_every_table_row_and_every_unit) {
  const auto cases = load_all();
  std::set<std::string> tables, units;
  for (const auto& c : cases) {
    for (const auto& chk : c.checks) {
      const auto t = split(chk.text);
      if (t[0] == "table" && t.size() >= 4) {
        auto in = parse_precision_input(t[2]);
        if (in.ok()) tables.insert(t[1] + "/" + std::to_string(static_cast<int>(*in)) + "/" + t[3]);
      }
      for (const auto& w : t) {
        if (w.rfind("unit=", 0) == 0 && (chk.text.find("0x7c00") != std::string::npos ||
                                         chk.text.find("0x7f800000") != std::string::npos)) {
          units.insert(w.substr(5));
        }
      }
    }
  }
  size_t n = 0;
  const PrecisionRow* rows = nvdla_precision_rows(&n);
  EXPECT_EQ(n, 42u);
  for (size_t i = 0; i < n; ++i) {
    const std::string key = std::string(precision_layer_name(rows[i].layer)) + "/" +
                            std::to_string(static_cast<int>(rows[i].input)) + "/" + dtype_name(rows[i].output);
    EXPECT_TRUE(tables.count(key)) << "no oracle for " << describe_precision_row(rows[i]);
  }
  for (NvdlaUnit u : {NvdlaUnit::kConv, NvdlaUnit::kConvWinograd, NvdlaUnit::kSdp, NvdlaUnit::kCdp, NvdlaUnit::kPdp,
                      NvdlaUnit::kPdpMinMax}) {
    EXPECT_TRUE(units.count(nvdla_unit_name(u))) << "no INF oracle for unit " << nvdla_unit_name(u);
  }
}


// Every valid nvdla-float pair and unit has a value oracle, every invalid one an error
// oracle, and every SDP layer rule a layer line that breaks it.
TEST(PrecisionOracles, cover_the_float_path_and_every_sdp_layer_rule) {
  std::set<std::string> float_keys, layer_results;
  for (const auto& c : load_all()) {
    for (const auto& chk : c.checks) {
      const auto t = split(chk.text);
      if (t[0] == "convert" && t.size() > 4 && t[1] == "nvdla-float") {
        std::string unit = "conv";
        for (const auto& w : t) {
          if (w.rfind("unit=", 0) == 0) unit = w.substr(5);
        }
        const bool error = chk.text.find("-> error") != std::string::npos;
        float_keys.insert(unit + "/" + t[3] + (error ? "/error" : ""));
      }
      if (t[0] == "layer") layer_results.insert(t.back());
    }
  }
  for (const char* key : {"conv/fp16", "sdp/fp16", "sdp/int16", "sdp/int8/error", "conv/int16/error"}) {
    EXPECT_EQ(float_keys.count(key), 1u) << "no nvdla-float oracle for " << key;
  }
  EXPECT_EQ(layer_results.count("ok"), 1u);
  for (const Rule& r : rules()) {
    if (r.id.rfind("nvdla.precision/", 0) != 0) continue;
    EXPECT_EQ(layer_results.count(r.id), 1u) << "no layer oracle breaks " << r.id;
  }
}

}  // namespace
}  // namespace layoutcheck::testing
