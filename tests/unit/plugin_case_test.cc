// What a plugin receives through the ABI (c_api.h lc_case) is the case the
// host was given: the canonical text alone rebuilds it, for every registered
// layout; a plugin that reads less than the text gets caught by the check.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

#include "layoutcheck/c_api.h"
#include "layoutcheck/plugin.h"
#include "support.h"

namespace layoutcheck {
namespace {

using testing::must_case;

lc_status to_lc(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk: return LC_OK;
    case StatusCode::kInvalid: return LC_INVALID;
    case StatusCode::kUnsupported: return LC_UNSUPPORTED;
    default: return LC_ERROR;
  }
}

// The case a plugin rebuilds from the text of lc_case::layout only; `keep_suffix`
// false models a plugin that reads the vendor notation up to its '>' and no further.
bool g_keep_suffix = true;
Result<Case> case_from_text(const lc_case* c) {
  std::string text = c->layout;
  if (!g_keep_suffix && text.find('>') != std::string::npos) text.resize(text.find('>') + 1);
  std::string shape;
  for (uint32_t i = 0; i < c->rank; ++i) shape += (i ? "," : "") + std::to_string(c->shape[i]);
  return parse_case(text, c->dtype, shape);
}

lc_status text_supports(const lc_case* c, char* why, size_t n) {
  auto k = case_from_text(c);
  Status s = k.ok() ? reference_impl().supports(*k) : k.status();
  if (!s.ok()) std::snprintf(why, n, "%s", s.message().c_str());
  return to_lc(s);
}
lc_status text_size(const lc_case* c, uint64_t* bytes) {
  auto k = case_from_text(c);
  if (!k.ok()) return to_lc(k.status());
  auto r = reference_impl().size_bytes(*k);
  if (r.ok()) *bytes = *r;
  return to_lc(r.status());
}
lc_status text_pack(const lc_case* c, const void* in, size_t in_size, void* out, size_t out_size) {
  auto k = case_from_text(c);
  return k.ok() ? to_lc(reference_impl().pack(*k, in, in_size, out, out_size)) : to_lc(k.status());
}
lc_status text_unpack(const lc_case* c, const void* in, size_t in_size, void* out, size_t out_size) {
  auto k = case_from_text(c);
  return k.ok() ? to_lc(reference_impl().unpack(*k, in, in_size, out, out_size)) : to_lc(k.status());
}

const lc_capability kAll[] = {{"*", "*", 0}};
const lc_plugin kTextPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), "text-reader", kAll, 1,
                               text_supports, text_size, nullptr, text_pack, text_unpack,
                               nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};

// What arrived, field by field, against the case.
const Case* g_expected = nullptr;
std::string g_differs;
lc_status recording_supports(const lc_case* c, char*, size_t) {
  const Case& e = *g_expected;
  g_differs.clear();
  auto layout = parse_layout(c->layout);
  if (!layout.ok() || *layout != e.layout) g_differs += " layout text '" + std::string(c->layout) + "'";
  if (e.layout.name != c->layout_name) g_differs += " layout name";
  ParamMap params;
  for (uint32_t i = 0; i < c->param_count; ++i) params[c->param_keys[i]] = c->param_values[i];
  if (params != e.layout.params) g_differs += " parameters";
  if (std::string(c->dtype) != dtype_name(e.dtype) || c->dtype_bits != dtype_bits(e.dtype)) g_differs += " dtype";
  if (c->rank != e.shape.size() || !std::equal(e.shape.begin(), e.shape.end(), c->shape)) g_differs += " shape";
  return LC_OK;
}
const lc_plugin kRecorder = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), "recorder", kAll, 1,
                             recording_supports, text_size, nullptr, text_pack, text_unpack,
                             nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};

std::string arrived_changed(const PluginImpl& plugin, const Case& c) {
  g_expected = &c;
  Status s = plugin.supports(c);
  g_expected = nullptr;
  return s.ok() ? g_differs : " the call failed: " + s.message();
}

std::vector<Case> cases_of(const LayoutSpec& spec) {
  std::vector<Case> out;
  if (spec.boundary_cases) out = spec.boundary_cases();
  if (out.size() > 256) out.resize(256);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 32 && spec.random_case; ++i) out.push_back(spec.random_case(rng, i % 3));
  return out;
}

TEST(PluginCase, canonical_text_rebuilds_every_case_of_every_layout) {
  for (const LayoutSpec& spec : layout_specs()) {
    for (const Case& c : cases_of(spec)) {
      const std::string text = to_string(c.layout);
      auto again = parse_layout(text);
      ASSERT_TRUE(again.ok()) << spec.name << ": " << text << ": " << again.status().message();
      ASSERT_EQ(*again, c.layout) << spec.name << ": " << text;
    }
  }
}

TEST(PluginCase, every_case_of_every_layout_arrives_intact) {
  auto plugin = plugin_from_table(&kRecorder, "recorder");
  ASSERT_TRUE(plugin.ok()) << plugin.status().message();
  for (const LayoutSpec& spec : layout_specs()) {
    for (const Case& c : cases_of(spec)) {
      ASSERT_EQ(arrived_changed(**plugin, c), "") << spec.name << ": " << to_string(c);
    }
  }
}

TEST(PluginCase, chunked_scale_offset_text_names_the_interface) {
  Case c = must_case("ChunkedMemoryLayout<2, 0,0, 1,0, 1,2>(interface=scale_offset,offset=58)", "uint8", "2,3");
  EXPECT_EQ(c.layout.get("pad"), "58");
  EXPECT_EQ(to_string(c.layout), "ChunkedMemoryLayout<2, 0,0, 1,0, 1,2>(interface=scale_offset,offset=58)");
  Case p = must_case("ChunkedMemoryLayout<2, 0,0, 1,0, 1,2>(interface=scale_offset,offset=-3,pad=4)", "int8", "2,3");
  EXPECT_EQ(to_string(p.layout), "ChunkedMemoryLayout<2, 0,0, 1,0, 1,2>(interface=scale_offset,offset=-3,pad=4)");
  Case q = must_case("htp.chunked(rank=2,pairs=0:0 1:0 1:2,offset=9)", "int8", "2,3");
  EXPECT_EQ(to_string(q.layout), "ChunkedMemoryLayout<2, 0,0, 1,0, 1,2>(offset=9)");
  auto plugin = plugin_from_table(&kRecorder, "recorder");
  ASSERT_TRUE(plugin.ok()) << plugin.status().message();
  for (const Case& k : {c, p, q}) EXPECT_EQ(arrived_changed(**plugin, k), "") << to_string(k);
}

TEST(PluginCase, recorder_names_a_field_that_arrives_changed) {
  auto plugin = plugin_from_table(&kRecorder, "recorder");
  ASSERT_TRUE(plugin.ok());
  Case c = must_case("ChunkedMemoryLayout<2, 0,0, 1,0, 1,2>(interface=scale_offset,offset=58)", "uint8", "2,3");
  Case other = c;
  other.layout.params["offset"] = "57";
  g_expected = &other;
  ASSERT_TRUE((*plugin)->supports(c).ok());
  g_expected = nullptr;
  EXPECT_NE(g_differs.find("layout text"), std::string::npos) << g_differs;
  EXPECT_NE(g_differs.find("parameters"), std::string::npos) << g_differs;
}

TEST(PluginCase, a_plugin_reading_the_text_passes_every_chunked_case) {
  auto plugin = plugin_from_table(&kTextPlugin, "text-reader");
  ASSERT_TRUE(plugin.ok()) << plugin.status().message();
  g_keep_suffix = true;
  size_t passed = 0;
  for (const char* name : {"htp.chunked", "htp.chunk_table", "htp.crouton", "htp.nchw_prose", "htp.weights"}) {
    const LayoutSpec* spec = find_spec(name);
    ASSERT_NE(spec, nullptr) << name;
    for (const Case& c : cases_of(*spec)) {
      CheckReport r = check(c, reference_impl(), **plugin);
      EXPECT_TRUE(r.verdict == Verdict::kPass || r.verdict == Verdict::kBothInvalid || r.verdict == Verdict::kSkipped)
          << r.message;
      passed += r.verdict == Verdict::kPass;
    }
  }
  EXPECT_GT(passed, 0u);
}

TEST(PluginCase, a_plugin_dropping_the_interface_fails_the_check) {
  auto plugin = plugin_from_table(&kTextPlugin, "notation-only");
  ASSERT_TRUE(plugin.ok()) << plugin.status().message();
  g_keep_suffix = false;
  CheckReport quantized = check(must_case("ChunkedMemoryLayout<2, 0,0, 1,0, 1,4>(interface=scale_offset,offset=58)",
                                          "uint8", "2,6"),
                                reference_impl(), **plugin);
  CheckReport typed = check(must_case("ChunkedMemoryLayout<2, 0,0, 1,0, 1,4>(interface=scale_offset)", "fp16", "2,6"),
                            reference_impl(), **plugin);
  CheckReport plain = check(must_case("ChunkedMemoryLayout<2, 0,0, 1,0, 1,4>", "uint8", "2,6"), reference_impl(), **plugin);
  g_keep_suffix = true;
  EXPECT_EQ(quantized.verdict, Verdict::kFail) << quantized.message;
  EXPECT_EQ(typed.verdict, Verdict::kFail) << typed.message;
  EXPECT_EQ(plain.verdict, Verdict::kPass) << plain.message;
}

}  // namespace
}  // namespace layoutcheck
