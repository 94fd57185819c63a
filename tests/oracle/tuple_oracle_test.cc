#include <algorithm>
#include <string>
#include <vector>

#include "layoutcheck/tla_api.h"
#include "support.h"

namespace layoutcheck {
namespace {

const std::string kOracleDir = std::string(LAYOUTCHECK_SOURCE_DIR) + "/oracles";
const std::string kSpecDir = LAYOUTCHECK_SPEC_DIR;

std::vector<TupleOracleCase> all_tuple_cases() {
  auto cases = load_tuple_oracle_dir(kOracleDir, kSpecDir);
  EXPECT_TRUE(cases.ok()) << cases.status().message();
  return cases.ok() ? *cases : std::vector<TupleOracleCase>{};
}

// depth counts an integer as one level: the document says 0.
class DepthOfIntegerOne : public TupleApi {
 public:
  std::string name() const override { return "depth-of-integer-1"; }
  Result<uint64_t> rank(const IntTuple& t) const override { return reference_tuple_api().rank(t); }
  Result<uint64_t> depth(const IntTuple& t) const override {
    if (t.is_integer()) return 1;
    uint64_t d = 0;
    for (const IntTuple& i : t.items()) d = std::max(d, *depth(i));
    return d + 1;
  }
  Result<IntTuple> get(const IntTuple& t, uint64_t i) const override { return reference_tuple_api().get(t, i); }
  Result<IntTuple> get(const IntTuple& t, const std::vector<uint64_t>& p) const override {
    return reference_tuple_api().get(t, p);
  }
};

TEST(TupleOracles, reference_and_optimized_answer_every_line) {
  const auto cases = all_tuple_cases();
  ASSERT_GE(cases.size(), 10u);
  for (const auto& oc : cases) {
    for (const TupleApi* api : {&reference_tuple_api(), &optimized_tuple_api()}) {
      for (const auto& f : run_tuple_oracle(oc, *api)) ADD_FAILURE() << f;
    }
  }
}

TEST(TupleOracles, cite_the_intuple_and_layout_sections) {
  size_t inttuple = 0, layout = 0;
  for (const auto& oc : all_tuple_cases()) {
    inttuple += oc.source == "catlass-tla-layouts.txt § IntTuple";
    layout += oc.source == "catlass-tla-layouts.txt § Layout 使用";
  }
  EXPECT_GE(inttuple, 5u);
  EXPECT_GE(layout, 5u);
}

TEST(TupleOracles, a_wrong_implementation_fails) {
  size_t failures = 0;
  for (const auto& oc : all_tuple_cases()) failures += run_tuple_oracle(oc, DepthOfIntegerOne()).size();
  EXPECT_GT(failures, 0u);
}

TEST(TupleOracles, a_wrong_line_fails) {
  auto cases = parse_tuple_oracles("source: catlass-tla-layouts.txt § IntTuple\ncase: x\ntuple: (2,_3)\n"
                                   "rank = 2\nget 1 = 3\ndepth 0 = 1\n", "mem");
  ASSERT_TRUE(cases.ok()) << cases.status().message();
  const auto failures = run_tuple_oracle(cases->front(), reference_tuple_api());
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_NE(failures[0].find("get<1> of (2,_3): expected 3, reference gives _3"), std::string::npos) << failures[0];
  auto layout = parse_tuple_oracles("source: catlass-tla-layouts.txt § Layout 使用\ncase: y\n"
                                    "layout: ((4,2),(4,3)):((4,16),(1,32))\nget 1,0 = 4:2\nget 2 = (4,3):(1,32)\n", "mem");
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  EXPECT_EQ(run_tuple_oracle(layout->front(), optimized_tuple_api()).size(), 2u);
}

TEST(TupleOracles, loader_rejects_malformed_cases) {
  for (const char* text : {"case: x\ntuple: 2\nrank = 1\n",                                       // no source
                           "source: d.txt § S\ncase: x\ntuple: 2\nwidth = 1\n",                  // unknown function
                           "source: d.txt § S\ncase: x\ntuple: 2\nshape = 2\n",                  // a layout's function
                           "source: d.txt § S\ncase: x\ntuple: (2,\nrank = 1\n",                 // not an IntTuple
                           "source: d.txt § S\ncase: x\nrank = 1\n",                             // no tuple
                           "source: d.txt § S\ncase: x\ntuple: 2\nget a = 1\n",                  // bad path
                           "source: d.txt § S\ncase: x\ntuple: 2\n"}) {                          // expects nothing
    EXPECT_FALSE(parse_tuple_oracles(text, "mem").ok()) << text;
  }
}

TEST(TupleOracles, node_form_round_trips_and_rejects_broken_nodes) {
  const IntTuple t = *parse_int_tuple("(2,(_3,4))");
  const auto nodes = tuple_nodes(t);
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_EQ(nodes[2].items, 2u);
  EXPECT_EQ(nodes[3].is_static, 1u);
  EXPECT_EQ(*tuple_of_nodes(nodes.data(), nodes.size()), t);
  EXPECT_FALSE(tuple_of_nodes(nodes.data(), 4).ok());          // ends inside an element
  EXPECT_FALSE(tuple_of_nodes(nodes.data() + 2, 4).ok());      // nodes past the end of the tuple
  std::vector<lc_tuple_node> negative = {{0, 0, -1}};
  EXPECT_FALSE(tuple_of_nodes(negative.data(), 1).ok());
}

}  // namespace
}  // namespace layoutcheck
