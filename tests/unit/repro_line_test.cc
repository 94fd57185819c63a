#include "layoutcheck/checker.h"
#include "support.h"

namespace layoutcheck {
namespace {

TEST(Repro, the_line_carries_the_seed_and_quotes_the_implementation) {
  Case c = testing::must_case("tpu.aligned(npus=4,lmem=1024)", "fp32", "1,2,3,4");
  CheckOptions co;
  co.seed = 42;
  EXPECT_EQ(repro_command(c, "/abs/libmine.so", co),
            "layoutcheck repro 'tpu.aligned(npus=4,lmem=1024)' --dtype fp32 --shape 1,2,3,4 --impl /abs/libmine.so "
            "--seed 42");
  EXPECT_NE(repro_command(c, "/my plugins/it's.so").find("--impl '/my plugins/it'\\''s.so' --seed 1"), std::string::npos);
}

TEST(Repro, a_failure_names_the_seed_it_was_found_with) {
  Case c = testing::must_case("tpu.aligned(npus=4,lmem=1024)", "fp32", "1,2,3,4");
  CheckOptions co;
  co.seed = 77;
  CheckReport r = check(c, reference_impl(), reference_impl(), co);
  EXPECT_EQ(r.repro, repro_command(c, reference_impl().name(), co));
}

}  // namespace
}  // namespace layoutcheck
