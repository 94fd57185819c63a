#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "layoutcheck/plugin.h"
#include "support.h"

namespace layoutcheck {
namespace {

namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/layoutcheck_" + name;
  fs::remove_all(dir);
  return dir;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

std::string error_of(const std::string& text) {
  auto r = parse_regression(text, "f.txt");
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.status().message();
}

TEST(RegressionFile, fnv1a64_test_vectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(RegressionFile, named_after_the_fnv1a_hash_of_the_case_line) {
  const std::string dir = fresh_dir("regression_name");
  Case c = testing::must_case("tpu.aligned(npus=4,lmem=1024)", "fp32", "2,3,4,5");
  auto path = save_regression(dir, c, "mine.so", "FAIL x");
  ASSERT_TRUE(path.ok()) << path.status().message();
  EXPECT_EQ(fs::path(*path).filename(), "97cdee6104cf99ae.txt");
  EXPECT_TRUE(fs::path(*path).is_absolute()) << *path;
}

TEST(RegressionFile, saved_with_its_seed_and_replayed_from_the_text) {
  const std::string dir = fresh_dir("regression_seed");
  Case c = testing::must_case("tpu.compact(npus=4,lmem=1024)", "int8", "1,2,3,4");
  CheckOptions co;
  co.seed = 18446744073709551615ull;
  auto path = save_regression(dir, c, "/x/libmine.so", "FAIL first\n  second", co);
  ASSERT_TRUE(path.ok()) << path.status().message();
  const std::string text = read_all(*path);
  EXPECT_EQ(text,
            "case: tpu.compact(npus=4,lmem=1024) | int8 | 1,2,3,4\nseed: 18446744073709551615\n"
            "# found in: /x/libmine.so\n# FAIL first\n#   second\n");
  auto r = parse_regression(text, *path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->c == c);
  EXPECT_EQ(r->seed, co.seed);
  EXPECT_EQ(names_in(dir), (std::set<std::string>{fs::path(*path).filename().string()}));
}

TEST(RegressionFile, files_without_a_seed_line_replay_with_seed_1) {
  auto r = parse_regression("case: tpu.aligned(npus=4,lmem=1024) | fp32 | 2,3,4,5\n# found in: x\n", "old.txt");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->seed, 1u);
  EXPECT_EQ(r->c.shape, (Shape{2, 3, 4, 5}));
  auto crlf = parse_regression("# note\r\n\r\n  case:  tpu.compact | fp16 |  1,1,1,1 \r\nseed: 3\r\n", "crlf.txt");
  ASSERT_TRUE(crlf.ok()) << crlf.status().message();
  EXPECT_EQ(crlf->seed, 3u);
}

TEST(RegressionFile, a_malformed_file_is_named_with_its_line) {
  EXPECT_EQ(error_of("case: tpu.compact | fp32 | 1,1,1,1\n\nfoo: 1\n"),
            "f.txt:3: unknown key 'foo' (keys: case, seed)");
  EXPECT_EQ(error_of("case: tpu.compact | fp32 | 1,1,1,1\nseed: -4\n"),
            "f.txt:2: 'seed:' takes a number from 0 to 18446744073709551615, got '-4'");
  EXPECT_EQ(error_of("case: tpu.compact | fp32 | 1,1,1,1\nseed: 18446744073709551616\n"),
            "f.txt:2: 'seed:' takes a number from 0 to 18446744073709551615, got '18446744073709551616'");
  EXPECT_EQ(error_of("case: tpu.compact | fp32 | 1,1,1,1\nseed: 1\nseed: 2\n"),
            "f.txt:3: a second 'seed:' line (the first is line 2)");
  EXPECT_EQ(error_of("case: tpu.compact | fp32 | 1,1,1,1\ncase: tpu.compact | fp32 | 1,1,1,1\n"),
            "f.txt:2: a second 'case:' line (the first is line 1)");
  EXPECT_EQ(error_of("# only\nseed: 2\n"), "f.txt:2: no 'case: LAYOUT | DTYPE | SHAPE' line");
  EXPECT_EQ(error_of("case: tpu.compact | fp32\n"), "f.txt:1: 'case:' takes LAYOUT | DTYPE | SHAPE, got 'tpu.compact | fp32'");
  EXPECT_NE(error_of("# x\ncase: tpu.nonesuch | fp32 | 1,1,1,1\n").find("f.txt:2: unknown layout 'tpu.nonesuch'"),
            std::string::npos);
  EXPECT_EQ(error_of(std::string("\0\x01zz", 4)), "f.txt:1: expected 'key: value' (keys: case, seed), got '??zz'");
}

TEST(RegressionFile, fuzzer_inputs_and_readmes_are_not_regression_files) {
  EXPECT_TRUE(is_regression_text("case: tpu.compact | fp32 | 1,1,1,1\n"));
  EXPECT_TRUE(is_regression_text("# saved\n\nseed: 1\ncase: x\n"));
  EXPECT_TRUE(is_regression_text("case: not even a layout"));
  EXPECT_FALSE(is_regression_text("# Regressions\n\nOne folder per fuzzer.\n"));
  EXPECT_FALSE(is_regression_text(std::string("\0\0\x02l", 4)));
  EXPECT_FALSE(is_regression_text(""));
}

TEST(RegressionFile, stale_temporaries_of_a_killed_save_are_removed) {
  const std::string dir = fresh_dir("regression_stale");
  fs::create_directories(dir);
  for (const char* name : {".0123456789abcdef.txt.tmp", ".notmine.tmp", "0123456789abcdef.txt"}) {
    std::ofstream(dir + "/" + name) << "case: partial";
  }
  auto removed = remove_stale_regression_temporaries(dir);
  ASSERT_TRUE(removed.ok()) << removed.status().message();
  EXPECT_EQ(*removed, 1u);
  EXPECT_EQ(names_in(dir), (std::set<std::string>{".notmine.tmp", "0123456789abcdef.txt"}));
  auto none = remove_stale_regression_temporaries(dir + "/missing");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0u);
}

}  // namespace
}  // namespace layoutcheck
