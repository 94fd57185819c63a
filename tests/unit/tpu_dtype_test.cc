#include <gtest/gtest.h>

#include <string>

#include "support.h"

namespace layoutcheck {
namespace {

TEST(TpuDtype, both_implementations_reject_4_bit_elements_naming_rule_and_type) {
  size_t layouts = 0;
  for (const LayoutSpec& spec : layout_specs()) {
    if (spec.name.rfind("tpu.", 0) != 0) continue;
    Case ok;
    for (const Case& b : spec.boundary_cases()) {
      if (reference_impl().supports(b).ok()) ok = b;
    }
    ASSERT_FALSE(ok.layout.name.empty()) << spec.name;
    ASSERT_TRUE(optimized_impl().supports(ok).ok()) << to_string(ok);
    ++layouts;
    for (DType t : {DType::kInt4, DType::kUInt4}) {
      Case c = ok;
      c.dtype = t;
      for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
        Status s = impl->supports(c);
        EXPECT_EQ(s.code(), StatusCode::kInvalid) << impl->name() << " " << to_string(c);
        EXPECT_EQ(s.rule(), "tpu/dtype") << impl->name() << " " << to_string(c) << ": " << s.to_string();
        EXPECT_NE(s.message().find(dtype_name(t)), std::string::npos) << impl->name() << ": " << s.message();
        EXPECT_NE(s.message().find("8-, 16-"), std::string::npos) << impl->name() << ": " << s.message();
        EXPECT_FALSE(impl->size_bytes(c).ok()) << impl->name() << " " << to_string(c);
      }
    }
  }
  EXPECT_GE(layouts, 5u);
}

}  // namespace
}  // namespace layoutcheck
