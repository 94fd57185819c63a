// Messages that echo a user's input quote a bounded, printable part of it.
#include <string>

#include "support.h"

namespace layoutcheck {
namespace {

TEST(Messages, quote_input_caps_and_counts_the_rest) {
  EXPECT_EQ(quote_input("tpu.aligned"), "'tpu.aligned'");
  EXPECT_EQ(quote_input(std::string("a\nb\0c", 5)), "'a?b?c'");
  const std::string at_cap(kQuotedInputMax, 'x');
  EXPECT_EQ(quote_input(at_cap), "'" + at_cap + "'");
  const std::string longer(kQuotedInputMax + 4800, 'y');
  EXPECT_EQ(quote_input(longer), "'" + std::string(kQuotedInputMax, 'y') + "... (4800 more characters)'");
  EXPECT_EQ(clip_input(longer), std::string(kQuotedInputMax, 'y') + "... (4800 more characters)");
}

// Each message kind that echoes input: shape, coordinate, layout name, dtype, parameter.
TEST(Messages, long_inputs_give_short_messages) {
  std::string dims = "1";
  for (int i = 0; i < 60000; ++i) dims += ",1";
  auto c = parse_case("tpu.compact", "fp32", dims);
  ASSERT_TRUE(c.ok()) << c.status().message();
  Status s = check_shape(*find_spec("tpu.compact"), c->shape);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("has rank 60001"), std::string::npos) << s.message();
  EXPECT_LT(s.message().size(), 1000u) << s.message().size();
  Case small = *parse_case("tpu.compact", "fp32", "1,1,1,1");
  Status at = check_coord(small, c->shape);
  EXPECT_NE(at.message().find("has rank 60001"), std::string::npos) << at.message().substr(0, 300);
  EXPECT_LT(at.message().size(), 1000u) << at.message().size();

  const std::string junk(5000, 'z');
  for (const Status& st : {parse_layout("tpu." + junk).status(), parse_dtype(junk).status(),
                           parse_layout("tpu.aligned(addr=" + junk + ")").status(), parse_shape(junk + ",1").status(),
                           parse_layout("ChunkedMemoryLayout<" + junk).status()}) {
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("more characters)"), std::string::npos) << st.message().substr(0, 300);
    EXPECT_LT(st.message().size(), 2000u) << st.message().substr(0, 300);
  }
}

}  // namespace
}  // namespace layoutcheck
