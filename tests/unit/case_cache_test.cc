#include "core/case_cache.h"

#include "support.h"

namespace layoutcheck {
namespace {

struct Made {
  int serial = 0;
};

TEST(CaseCache, a_case_asked_again_is_made_once_and_a_release_makes_it_again) {
  const Case c = testing::must_case("tpu.aligned(npus=4,lmem=1024)", "fp32", "1,2,3,4");
  const Case d = testing::must_case("tpu.aligned(npus=4,lmem=1024)", "fp32", "1,2,3,5");
  int made = 0;
  auto make = [&](const Case&) -> Result<Made> { return Made{++made}; };
  CaseCache<Made> cache;
  EXPECT_EQ((*cache.get(c, make))->serial, 1);
  EXPECT_EQ((*cache.get(c, make))->serial, 1);
  EXPECT_EQ((*cache.get(d, make))->serial, 2);
  release_case_caches();
  EXPECT_EQ((*cache.get(d, make))->serial, 3);
  EXPECT_EQ(made, 3);
}

TEST(CaseCache, a_release_keeps_a_value_a_caller_holds_and_reaches_every_cache_of_the_thread) {
  const Case c = testing::must_case("tpu.aligned(npus=4,lmem=1024)", "fp32", "1,2,3,4");
  int made = 0;
  auto make = [&](const Case&) -> Result<Made> { return Made{++made}; };
  CaseCache<Made> first, second;
  auto held = *first.get(c, make);
  (void)*second.get(c, make);
  release_case_caches();
  EXPECT_EQ(held->serial, 1);
  EXPECT_EQ((*first.get(c, make))->serial, 3);
  EXPECT_EQ((*second.get(c, make))->serial, 4);
}

TEST(CaseCache, an_error_is_kept_like_a_value) {
  const Case c = testing::must_case("tpu.aligned(npus=4,lmem=1024)", "fp32", "1,2,3,4");
  int made = 0;
  auto fail = [&](const Case&) -> Result<Made> { ++made; return Status::invalid("no"); };
  CaseCache<Made> cache;
  EXPECT_FALSE(cache.get(c, fail).ok());
  EXPECT_FALSE(cache.get(c, fail).ok());
  EXPECT_EQ(made, 1);
  release_case_caches();
  EXPECT_FALSE(cache.get(c, fail).ok());
  EXPECT_EQ(made, 2);
}

}  // namespace
}  // namespace layoutcheck
