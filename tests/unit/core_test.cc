#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "layoutcheck/plugin.h"
#include "support.h"

namespace layoutcheck {
namespace {

using testing::ForwardingImpl;
using testing::must_case;

TEST(DType, table) {
  EXPECT_EQ(dtype_bits(*parse_dtype("fp16")), 16u);
  EXPECT_EQ(dtype_bits(*parse_dtype("int4")), 4u);
  EXPECT_EQ(dtype_bits(DType::kInt8x4), 32u);
  EXPECT_EQ(dtype_info(DType::kFp32x2).lanes, 2u);
  EXPECT_EQ(dtype_info(DType::kFp32x2).lane, DType::kFp32);
  for (const char* name : {"int8", "uint8", "int16", "uint16", "int32", "uint32", "fp16", "bf16", "fp32"}) {
    auto t = parse_dtype(name);
    ASSERT_TRUE(t.ok()) << name;
    EXPECT_STREQ(dtype_name(*t), name);
  }
}

TEST(DType, errors_name_the_value) {
  auto t = parse_dtype("float33");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("float33"), std::string::npos);
  EXPECT_NE(t.status().message().find("fp32"), std::string::npos);
  EXPECT_FALSE(parse_dtype("int8x4").ok());
}

TEST(LayoutText, canonical_round_trip) {
  for (const char* text : {"tpu.aligned", "tpu.aligned(npus=4,lmem=1024,addr=256)", "tpu.continuous",
                           "tpu.compact(chip=bm1684x,mode=4n)", "tpu.strided(npus=4,lmem=1024,n=120,w=2)",
                           "tpu.matrix(npus=4,lmem=1024,w=15)"}) {
    auto l = parse_layout(text);
    ASSERT_TRUE(l.ok()) << text << ": " << l.status().message();
    EXPECT_EQ(to_string(*l), text);
    auto again = parse_layout(to_string(*l));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *l);
  }
}

TEST(LayoutText, defaults_are_omitted_and_order_is_canonical) {
  auto l = parse_layout(" tpu.aligned( addr = 0x100 , lmem=1024, npus=4, mode=1n ) ");
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(to_string(*l), "tpu.aligned(npus=4,lmem=1024,addr=256)");
}

TEST(LayoutText, chip_presets) {
  auto l = parse_layout("tpu.aligned(chip=bm1684x,lmem=262144)");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->get_int("npus"), 64);
  EXPECT_EQ(l->get_int("eu"), 64);
  EXPECT_EQ(to_string(*l), "tpu.aligned(chip=bm1684x)");
  EXPECT_EQ(parse_layout("tpu.aligned")->get_int("lmem"), 512 * 1024);
}

TEST(LayoutText, errors_name_what_is_wrong) {
  struct Bad { const char* text; const char* needle; };
  for (Bad b : {Bad{"tpu.nonesuch", "unknown layout 'tpu.nonesuch'"}, Bad{"tpu.aligned(color=3)", "unknown parameter 'color'"},
                Bad{"tpu.aligned(mode=8n)", "mode='8n' is not one of: 1n, 4n, 2n, 2ic"},
                Bad{"tpu.aligned(npus=four)", "npus=four"}, Bad{"tpu.aligned(npus=0)", "outside [1, 65536]"},
                Bad{"tpu.aligned(npus=4,npus=5)", "given twice"}, Bad{"tpu.aligned(npus=4", "missing ')'"},
                Bad{"tpu.aligned(npus=4,)", "trailing ','"}, Bad{"tpu.aligned(npus)", "not key=value"},
                Bad{"tpu.matrix", "parameter w is required"}, Bad{"", "empty layout"},
                Bad{"tpu.aligned(addr=99999999999999999999999)", "out of range"}}) {
    auto l = parse_layout(b.text);
    ASSERT_FALSE(l.ok()) << b.text;
    EXPECT_NE(l.status().message().find(b.needle), std::string::npos) << b.text << " -> " << l.status().message();
  }
}

TEST(Shape, parse_and_count) {
  EXPECT_EQ(*parse_shape("2, 3,4"), (Shape{2, 3, 4}));
  EXPECT_FALSE(parse_shape("2,,3").ok());
  EXPECT_FALSE(parse_shape("").ok());
  EXPECT_FALSE(element_count({1 << 30, 1 << 30, 1 << 30}).ok());
  EXPECT_EQ(index_of_coord({2, 3, 4}, coord_of_index({2, 3, 4}, 17)), 17u);
}

TEST(Case, rank_and_extent_errors) {
  const Impl& ref = reference_impl();
  Status s = ref.supports(must_case("tpu.continuous", "fp32", "2,3,4"));
  EXPECT_EQ(s.code(), StatusCode::kInvalid);
  EXPECT_NE(s.message().find("rank 3"), std::string::npos) << s.message();
  s = ref.supports(must_case("tpu.continuous", "fp32", "2,0,4,5"));
  EXPECT_NE(s.message().find("dimension C = 0 must be positive"), std::string::npos) << s.message();
}

TEST(Glob, matches) {
  EXPECT_TRUE(glob_match("tpu*", "tpu.aligned"));
  EXPECT_TRUE(glob_match("*.a?igned", "tpu.aligned"));
  EXPECT_FALSE(glob_match("htp*", "tpu.aligned"));
}

// ---- the checker catches planted bugs ------------------------------------------

class PaddingNotZeroed : public ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status pack(const Case& c, const void* l, size_t, void* p, size_t ps) const override {
    std::vector<uint8_t> junk(ps, 0xEE);
    std::memcpy(p, junk.data(), ps);
    // Write only the elements, leaving padding as it was.
    const uint64_t n = *element_count(c.shape);
    const uint64_t bytes = dtype_bits(c.dtype) / 8;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t off = *inner_.offset_bits(c, coord_of_index(c.shape, i)) / 8;
      std::memcpy(static_cast<uint8_t*>(p) + off, static_cast<const uint8_t*>(l) + i * bytes, bytes);
    }
    return Status();
  }
};

class SwapsHW : public ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override {
    Coord t = at;
    std::swap(t[2], t[3]);
    return inner_.offset_bits(c, t);
  }
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    const auto* src = static_cast<const uint8_t*>(l);
    std::vector<uint8_t> t(ls);
    const uint64_t n = *element_count(c.shape), bytes = dtype_bits(c.dtype) / 8;
    for (uint64_t i = 0; i < n; ++i) {
      Coord at = coord_of_index(c.shape, i);
      std::swap(at[2], at[3]);
      std::memcpy(t.data() + index_of_coord(c.shape, at) * bytes, src + i * bytes, bytes);
    }
    return inner_.pack(c, t.data(), ls, p, ps);
  }
};

class WritesPastEnd : public ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    Status s = inner_.pack(c, l, ls, p, ps);
    static_cast<uint8_t*>(p)[ps] = 0;  // inside the checker's guard zone
    return s;
  }
};

class AcceptsAnything : public ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status supports(const Case&) const override { return Status(); }
};

TEST(Checker, passes_the_optimized_implementation) {
  CheckReport r = check(must_case("tpu.aligned(npus=4,lmem=4096,addr=1152)", "fp16", "3,7,3,5"), reference_impl(),
                        optimized_impl());
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
}

TEST(Checker, padding_not_zeroed_passes_where_the_document_leaves_it_free) {
  PaddingNotZeroed mutant(optimized_impl());
  CheckReport r = check(must_case("tpu.aligned(npus=4,lmem=1024)", "fp32", "2,3,2,3"), reference_impl(), mutant);
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
}

TEST(Checker, catches_padding_not_zeroed_with_strict_padding) {
  PaddingNotZeroed mutant(optimized_impl());
  CheckOptions strict;
  strict.strict_padding = true;
  CheckReport r =
      check(must_case("tpu.aligned(npus=4,lmem=1024)", "fp32", "2,3,2,3"), reference_impl(), mutant, strict);
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("belongs to no element"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("rule tpu.empty-block"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("layoutcheck repro 'tpu.aligned(npus=4,lmem=1024)' --dtype fp32 --shape 2,3,2,3 --impl "
                           "mutant --seed 1 --strict-padding"),
            std::string::npos)
      << r.message;
}

TEST(Checker, diagnoses_swapped_dimensions) {
  SwapsHW mutant(optimized_impl());
  CheckReport r = check(must_case("tpu.compact(npus=4,lmem=1024)", "int16", "1,2,4,4"), reference_impl(), mutant);
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("dimensions H and W look swapped"), std::string::npos) << r.message;
}

TEST(Checker, catches_writes_past_the_buffer) {
  WritesPastEnd mutant(optimized_impl());
  CheckReport r = check(must_case("tpu.continuous", "int8", "1,2,3,4"), reference_impl(), mutant);
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("outside the physical buffer, at byte 24"), std::string::npos) << r.message;
}

TEST(Checker, catches_accepting_an_invalid_case) {
  AcceptsAnything mutant(optimized_impl());
  CheckReport r = check(must_case("tpu.aligned(npus=4,lmem=1024,addr=100)", "fp32", "1,1,1,1"), reference_impl(), mutant);
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("not divisible by 128"), std::string::npos) << r.message;
}

TEST(Checker, both_invalid_is_not_a_failure) {
  CheckReport r = check(must_case("tpu.aligned(npus=4,lmem=1024,addr=100)", "fp32", "1,1,1,1"), reference_impl(),
                        optimized_impl());
  EXPECT_EQ(r.verdict, Verdict::kBothInvalid) << r.message;
}

TEST(Checker, position_unique_fill) {
  Case c = must_case("tpu.continuous", "int16", "1,1,256,256");
  std::vector<uint8_t> buf;
  fill_position_unique(c, 7, &buf);
  std::vector<bool> seen(65536, false);
  for (size_t i = 0; i < buf.size(); i += 2) {
    uint16_t v = static_cast<uint16_t>(buf[i] | buf[i + 1] << 8);
    EXPECT_FALSE(seen[v]) << "value repeated at element " << i / 2;
    seen[v] = true;
  }
}

// With 8-bit elements the values repeat every 256 elements; each period is
// offset on its own, so that a kernel putting element i + 256 where i belongs
// (a block of columns read from one block too far) writes other bytes.
TEST(Checker, position_unique_fill_differs_a_period_apart) {
  Case c = must_case("mge.nchw", "int8", "1,64,64,64");
  std::vector<uint8_t> buf;
  fill_position_unique(c, 1, &buf);
  for (size_t apart : {256, 512, 256 * 255}) {
    for (size_t i = 0; i + apart < buf.size(); ++i) {
      ASSERT_NE(buf[i], buf[i + apart]) << "elements " << i << " and " << i + apart;
    }
  }
}

// With 4-bit elements the period is 16 elements and there are more digits
// above it: elements m * 16^k apart (0 < m < 16) differ wherever adding
// carries into no higher digit (a block of 256 elements read from the next
// block equalled the right one before each digit had its own term).
TEST(Checker, position_unique_fill_differs_every_digit_apart) {
  Case c = must_case("mge.nchw", "int4", "1,16,64,64");
  std::vector<uint8_t> buf;
  fill_position_unique(c, 3, &buf);
  const auto nibble = [&](uint64_t e) { return (buf[e / 2] >> (e % 2 * 4)) & 0xF; };
  const uint64_t n = buf.size() * 2;
  for (uint64_t k = 0, unit = 1; unit * 16 <= n; ++k, unit *= 16) {
    for (uint64_t m = 1; m < 16; ++m) {
      for (uint64_t i = 0; i + m * unit < n; ++i) {
        if ((i / unit) % 16 + m >= 16) continue;  // a carry into the digit above
        ASSERT_NE(nibble(i), nibble(i + m * unit)) << "elements " << i << " and " << i + m * unit;
      }
    }
  }
}

// A 4-bit implementation that writes the second 256 elements where the first
// belong (and the other way round) is failed.
class SwapsBlocksOf256Nibbles : public ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    Status s = inner_.pack(c, l, ls, p, ps);
    auto* bytes = static_cast<uint8_t*>(p);
    if (ps >= 256) std::swap_ranges(bytes, bytes + 128, bytes + 128);
    return s;
  }
};

TEST(Checker, fails_int4_blocks_of_256_elements_swapped) {
  SwapsBlocksOf256Nibbles swaps(reference_impl());
  const CheckReport r = check(must_case("mge.nchw", "int4", "1,1,32,32"), reference_impl(), swaps);
  EXPECT_EQ(r.verdict, Verdict::kFail) << r.message;
}

}  // namespace
}  // namespace layoutcheck

namespace layoutcheck {
namespace {

class Crashes : public testing::ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status pack(const Case&, const void*, size_t, void*, size_t) const override { std::abort(); }
};

class Hangs : public testing::ForwardingImpl {
 public:
  using ForwardingImpl::ForwardingImpl;
  Status pack(const Case&, const void*, size_t, void*, size_t) const override {
    for (volatile bool forever = true; forever;) {
    }
    return Status();
  }
};

TEST(Isolation, a_crash_fails_the_case_and_the_run_goes_on) {
  Crashes mutant(optimized_impl());
  Case c = testing::must_case("tpu.continuous", "int8", "1,2,3,4");
  CheckReport r = check_isolated(c, reference_impl(), mutant, {}, 30);
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("crashed with signal 6"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("repro: layoutcheck repro"), std::string::npos) << r.message;
  EXPECT_EQ(check_isolated(c, reference_impl(), optimized_impl(), {}, 30).verdict, Verdict::kPass);
}

TEST(Isolation, a_hang_fails_the_case) {
  Hangs mutant(optimized_impl());
  CheckReport r = check_isolated(testing::must_case("tpu.continuous", "int8", "1,2,3,4"), reference_impl(), mutant, {}, 1);
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("did not finish within"), std::string::npos) << r.message;
}

// Counts, in a page the children share with this process, the processes
// that packed: slot 0 the pid of the latest, slot 1 how many times the
// packing process changed (processes() for children used one after the
// other). From the `from`-th case (shape) a process packs on (0: never), it
// stops conforming: `kind` says how (0 a wrong byte, 1 a crash, 2 a hang).
class Remembers : public testing::ForwardingImpl {
 public:
  Remembers(const Impl& base, uint64_t from, int kind) : ForwardingImpl(base), from_(from), kind_(kind) {
    void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    shared_ = p == MAP_FAILED ? nullptr : static_cast<uint64_t*>(p);
    if (shared_) std::memset(shared_, 0, 4096);
  }
  ~Remembers() override {
    if (shared_) munmap(shared_, 4096);
  }
  uint64_t processes() const { return shared_ ? shared_[1] : 0; }
  uint64_t last_pid() const { return shared_ ? shared_[0] : 0; }
  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override {
    const uint64_t pid = static_cast<uint64_t>(getpid());
    if (shared_[0] != pid) shared_[0] = pid, ++shared_[1];
    if (c.shape != shape_) shape_ = c.shape, ++cases_;  // this process's cases
    Status s = ForwardingImpl::pack(c, logical, logical_size, physical, physical_size);
    if (from_ == 0 || cases_ < from_) return s;
    if (kind_ == 1) std::abort();
    if (kind_ == 2) {
      for (volatile bool forever = true; forever;) {
      }
    }
    if (physical_size) static_cast<uint8_t*>(physical)[0] ^= 0x5A;
    return s;
  }

 private:
  uint64_t from_;
  int kind_;
  uint64_t* shared_ = nullptr;
  mutable uint64_t cases_ = 0;
  mutable Shape shape_;
};

std::vector<Case> small_cases(int n) {
  std::vector<Case> cases;
  for (int i = 1; i <= n; ++i) {
    cases.push_back(testing::must_case("tpu.continuous", "int8", "1,2,3," + std::to_string(i)));
  }
  return cases;
}

TEST(ReusedIsolation, one_child_checks_case_after_case) {
  Remembers impl(optimized_impl(), 0, 0);
  {
    ReusedChildren children;
    for (const Case& c : small_cases(20)) {
      CheckReport r = check_isolated_reused(c, reference_impl(), impl, {}, 30, children);
      ASSERT_EQ(r.verdict, Verdict::kPass) << r.message;
      EXPECT_NE(r.repro.find("layoutcheck repro"), std::string::npos);
    }
    EXPECT_EQ(impl.processes(), 1u);
    EXPECT_EQ(kill(static_cast<pid_t>(impl.last_pid()), 0), 0);
  }
  // Gone with its ReusedChildren (and reaped).
  EXPECT_NE(kill(static_cast<pid_t>(impl.last_pid()), 0), 0);
  // A new implementation, or another time limit, takes a fresh child.
  Remembers other(optimized_impl(), 0, 0);
  ReusedChildren children;
  ASSERT_EQ(check_isolated_reused(small_cases(1)[0], reference_impl(), other, {}, 30, children).verdict, Verdict::kPass);
  ASSERT_EQ(check_isolated_reused(small_cases(1)[0], reference_impl(), other, {}, 20, children).verdict, Verdict::kPass);
  EXPECT_EQ(other.processes(), 2u);
}

TEST(ReusedIsolation, a_child_per_thread) {
  Remembers impl(optimized_impl(), 0, 0);
  ReusedChildren children;
  const std::vector<Case> cases = small_cases(8);
  const auto check_all = [&] {
    for (const Case& c : cases) {
      ASSERT_EQ(check_isolated_reused(c, reference_impl(), impl, {}, 30, children).verdict, Verdict::kPass);
    }
  };
  for (int round = 0; round < 2; ++round) {
    std::thread t(check_all);
    t.join();
    check_all();
  }
  // The packing process changed four times: the first thread's child, this
  // thread's, the second thread's (or the first's again: a thread id may be
  // reused), this thread's again.
  EXPECT_EQ(impl.processes(), 4u);
}

TEST(ReusedIsolation, a_child_checks_at_most_1024_cases) {
  Remembers impl(optimized_impl(), 0, 0);
  ReusedChildren children;
  const std::vector<Case> cases = small_cases(8);
  for (int i = 0; i < 1025; ++i) {
    ASSERT_EQ(check_isolated_reused(cases[i % 8], reference_impl(), impl, {}, 30, children).verdict, Verdict::kPass);
  }
  EXPECT_EQ(impl.processes(), 2u);
}

TEST(ReusedIsolation, a_failure_on_a_first_case_is_check_isolateds) {
  for (int kind : {0, 1, 2}) {
    Remembers fresh(optimized_impl(), 1, kind), alone(optimized_impl(), 1, kind);
    ReusedChildren children;
    const Case c = small_cases(1)[0];
    const double limit = kind == 2 ? 1 : 30;
    CheckReport r = check_isolated_reused(c, reference_impl(), fresh, {}, limit, children);
    CheckReport want = check_isolated(c, reference_impl(), alone, {}, limit);
    ASSERT_EQ(r.verdict, Verdict::kFail) << kind;
    EXPECT_EQ(r.message, want.message) << kind;
    EXPECT_EQ(fresh.processes(), 1u) << kind;  // not checked twice
  }
}

// A plugin that stops conforming after some cases in one process: the case
// where it does passes alone, and its verdict is that of a fresh child.
TEST(ReusedIsolation, a_later_failure_is_the_verdict_of_a_fresh_child) {
  for (int kind : {0, 1, 2}) {
    Remembers impl(optimized_impl(), 4, kind);
    ReusedChildren children;
    const double limit = kind == 2 ? 1 : 30;
    for (const Case& c : small_cases(6)) {
      CheckReport r = check_isolated_reused(c, reference_impl(), impl, {}, limit, children);
      ASSERT_EQ(r.verdict, Verdict::kPass) << kind << " " << to_string(c) << ": " << r.message;
    }
    // Child 1 fails its 4th case, which passes in child 2; child 3 takes cases 5 and 6.
    EXPECT_EQ(impl.processes(), 3u) << kind;
  }
  // From the first case on: every case fails, in its fresh child as in the reused one.
  Remembers always(optimized_impl(), 1, 0);
  ReusedChildren children;
  for (const Case& c : small_cases(3)) {
    CheckReport r = check_isolated_reused(c, reference_impl(), always, {}, 30, children);
    ASSERT_EQ(r.verdict, Verdict::kFail);
    EXPECT_NE(r.message.find("repro: layoutcheck repro"), std::string::npos) << r.message;
  }
}

TEST(ReusedIsolation, an_out_of_range_time_limit_is_named) {
  ReusedChildren children;
  CheckReport r = check_isolated_reused(small_cases(1)[0], reference_impl(), optimized_impl(), {}, -1, children);
  ASSERT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.message.find("is out of range"), std::string::npos) << r.message;
}

TEST(Shrinking, finds_the_smallest_failing_shape) {
  Case big = testing::must_case("tpu.continuous", "int8", "7,9,5,8");
  // Fails whenever H >= 3 and W >= 2: the smallest failing shape is 1,1,3,2.
  Case small = shrink_case(big, [](const Case& c) { return c.shape[2] >= 3 && c.shape[3] >= 2; });
  EXPECT_EQ(small.shape, (Shape{1, 1, 3, 2}));
}

TEST(Regressions, saved_atomically_in_the_replayable_form) {
  const std::string dir = ::testing::TempDir() + "/layoutcheck_regressions";
  Case c = testing::must_case("tpu.aligned(npus=4,lmem=1024)", "fp32", "2,3,4,5");
  auto path = save_regression(dir, c, "mine.so", "FAIL something\n  detail");
  ASSERT_TRUE(path.ok()) << path.status().message();
  std::ifstream in(*path);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "case: tpu.aligned(npus=4,lmem=1024) | fp32 | 2,3,4,5");
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(e.path().extension(), ".txt") << "left behind: " << e.path();
  }
}

}  // namespace
}  // namespace layoutcheck
