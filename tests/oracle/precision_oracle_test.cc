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

// "... = error ~ TEXT" or "-> error ~ TEXT": the expected message fragment.
std::string error_fragment(const std::string& line) {
  const size_t at = line.find("error ~ ");
  return at == std::string::npos ? "" : line.substr(at + 8);
}

// A value in the oracle text: bit patterns (0x...) or signed decimals, to raw bits.
uint64_t value_bits(const std::string& t, DType type) {
  const int bits = static_cast<int>(dtype_bits(type));
  const long long v = std::strtoll(t.c_str(), nullptr, 0);
  return static_cast<uint64_t>(v) & (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
}

void run_table(const PrecisionCase& c, const PrecisionCheck& chk) {
  const auto t = split(chk.text);
  SCOPED_TRACE(c.id + ": " + chk.text);
  ASSERT_GE(t.size(), 6u);
  ASSERT_EQ(t[4], "=");
  auto layer = parse_precision_layer(t[1]);
  auto input = parse_precision_input(t[2]);
  auto output = parse_dtype(t[3]);
  ASSERT_TRUE(layer.ok() && input.ok() && output.ok());
  auto row = nvdla_precision(*layer, *input, *output);
  if (t[5] == "error") {
    ASSERT_FALSE(row.ok());
    EXPECT_NE(row.status().message().find(error_fragment(chk.text)), std::string::npos) << row.status().message();
    return;
  }
  ASSERT_TRUE(row.ok()) << row.status().message();
  if (t[5] == "invalid") {
    EXPECT_FALSE((*row)->valid) << describe_precision_row(**row);
    return;
  }
  ASSERT_TRUE((*row)->valid) << describe_precision_row(**row);
  EXPECT_EQ(dtype_name((*row)->pipeline), t[5]);
  if (t.size() >= 8 && t[6] == "weight") {
    ASSERT_TRUE((*row)->has_weight);
    EXPECT_EQ(dtype_name((*row)->weight), t[7]);
  } else {
    EXPECT_FALSE((*row)->has_weight);
  }
}

void run_convert(const PrecisionCase& c, const PrecisionCheck& chk) {
  const auto t = split(chk.text);
  SCOPED_TRACE(c.id + ": " + chk.text);
  ASSERT_GE(t.size(), 6u);
  ConvertSpec s;
  auto rule = parse_convert_rule(t[1]);
  auto from = parse_dtype(t[2]);
  auto to = parse_dtype(t[3]);
  ASSERT_TRUE(rule.ok() && from.ok() && to.ok());
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
      ASSERT_TRUE(u.ok()) << u.status().message();
      s.unit = *u;
    } else if (w.rfind("offset=", 0) == 0) {
      s.offset = static_cast<int32_t>(std::strtol(w.c_str() + 7, nullptr, 10));
    } else if (w.rfind("scale=", 0) == 0) {
      s.scale = std::strtof(w.c_str() + 6, nullptr);
    } else if (w.rfind("truncate=", 0) == 0) {
      auto m = parse_truncate_mode(w.substr(9));
      ASSERT_TRUE(m.ok()) << m.status().message();
      s.truncate = *m;
    } else {
      inputs.push_back(w);
    }
  }
  ASSERT_LT(i, t.size()) << "no ->";
  for (++i; i < t.size(); ++i) {
    if (t[i] == "nan") {
      ASSERT_LT(i + 1, t.size());
      nan = t[++i];
    } else {
      outputs.push_back(t[i]);
    }
  }
  const size_t from_bytes = dtype_bits(s.from) / 8, to_bytes = dtype_bits(s.to) / 8;
  std::vector<uint8_t> src(inputs.size() * from_bytes);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const uint64_t v = value_bits(inputs[k], s.from);
    for (size_t b = 0; b < from_bytes; ++b) src[k * from_bytes + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  std::vector<const Converter*> impls = {&precision_reference()};
  for (SimdPath p : simd_paths()) impls.push_back(&precision_optimized(p));
  for (const Converter* impl : impls) {
    SCOPED_TRACE(impl->name());
    std::vector<uint8_t> dst(inputs.size() * to_bytes, 0xee);
    NanCounts counts;
    Status st = impl->convert(s, src.data(), src.size(), dst.data(), dst.size(), &counts);
    if (!outputs.empty() && outputs[0] == "error") {
      ASSERT_FALSE(st.ok());
      EXPECT_NE(st.message().find(error_fragment(chk.text)), std::string::npos) << st.message();
      continue;
    }
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(outputs.size(), inputs.size());
    for (size_t k = 0; k < outputs.size(); ++k) {
      uint64_t got = 0;
      for (size_t b = 0; b < to_bytes; ++b) got |= static_cast<uint64_t>(dst[k * to_bytes + b]) << (8 * b);
      EXPECT_EQ(got, value_bits(outputs[k], s.to)) << "value " << k << " (input " << inputs[k] << ")";
    }
    if (!nan.empty()) {
      EXPECT_EQ(std::to_string(counts.input) + "/" + std::to_string(counts.output), nan);
    }
  }
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
  const auto cases = load_all();
  ASSERT_GE(cases.size(), 60u);
  size_t checks = 0;
  for (const auto& c : cases) {
    EXPECT_FALSE(c.checks.empty()) << c.id;
    for (const auto& chk : c.checks) {
      ++checks;
      if (chk.text.rfind("table ", 0) == 0) {
        run_table(c, chk);
      } else {
        run_convert(c, chk);
      }
    }
  }
  std::printf("%zu precision oracle cases, %zu checks\n", cases.size(), checks);
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

}  // namespace
}  // namespace layoutcheck::testing
