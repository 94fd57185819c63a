// Fuzzer of the plugin host: a fake plugin whose every answer comes from the
// input, run in this process through plugin_from_table() (the validation
// load_plugin uses) and PluginImpl, then check() against the reference.
//
// The input decides the table (ABI version, struct size, name, capability
// entries, NULL function pointers, a capability_count far beyond the array)
// and then, call by call, what the plugin answers: statuses (also values that
// are no lc_status), sizes, offsets, reasons that fill the whole reason buffer
// without a NUL, and bytes written anywhere inside the buffers it is given.
// The host must turn every lie into a Status or a failed check: no crash, no
// read or write outside what the plugin handed over (AddressSanitizer), no
// undefined behaviour (UBSan).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "layoutcheck/c_api.h"
#include "layoutcheck/plugin.h"

using namespace layoutcheck;

namespace {

fuzz::Bytes* g_in = nullptr;

uint64_t take(size_t n) { return g_in ? g_in->take(n) : 0; }

lc_status status() {
  const uint64_t v = take(1);
  if (v < 200) return LC_OK;
  if (v < 215) return LC_INVALID;
  if (v < 230) return LC_UNSUPPORTED;
  if (v < 245) return LC_ERROR;
  return static_cast<lc_status>(v - 240);  // 5..15: not an lc_status
}

// Reads everything the host passes in an lc_case, so a bad pointer or a
// wrong count there is an AddressSanitizer finding.
uint64_t touch(const lc_case* c) {
  uint64_t h = std::strlen(c->layout) + std::strlen(c->layout_name) + std::strlen(c->dtype) + c->dtype_bits;
  for (uint32_t i = 0; i < c->param_count; ++i) h += std::strlen(c->param_keys[i]) + std::strlen(c->param_values[i]);
  for (uint32_t i = 0; i < c->rank; ++i) h += static_cast<uint64_t>(c->shape[i]);
  return h;
}

void scribble(void* buffer, size_t size) {
  // A few bytes at input-chosen places inside the buffer.
  auto* p = static_cast<uint8_t*>(buffer);
  for (uint64_t k = take(1) % 8; k > 0 && size > 0; --k) p[take(4) % size] = static_cast<uint8_t>(take(1));
}

lc_status f_supports(const lc_case* c, char* reason, size_t n) {
  (void)touch(c);
  const uint64_t mode = take(1) % 4;
  if (mode == 1) std::memset(reason, 'r', n);  // no NUL anywhere
  if (mode == 2 && n > 0) std::snprintf(reason, n, "reason %u", static_cast<unsigned>(take(2)));
  return status();
}

lc_status f_size(const lc_case* c, uint64_t* bytes) {
  (void)touch(c);
  *bytes = take(1) % 4 == 0 ? take(8) : take(2);
  return status();
}

lc_status f_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  uint64_t h = touch(c);
  for (uint32_t i = 0; i < c->rank; ++i) h += static_cast<uint64_t>(at[i]);
  *bits = take(1) % 2 ? take(8) : h % 4096;
  return status();
}

// out[i] = in[i % in_size] for every i (zeros when in_size is 0): every byte
// of both buffers touched, a run at a time.
void fill_cycling(uint8_t* out, size_t out_size, const uint8_t* in, size_t in_size) {
  if (in_size == 0) {
    std::memset(out, 0, out_size);
    return;
  }
  for (size_t i = 0; i < out_size; i += in_size) std::memcpy(out + i, in, std::min(in_size, out_size - i));
}

lc_status f_pack(const lc_case* c, const void* logical, size_t ls, void* physical, size_t ps) {
  (void)touch(c);
  const auto* in = static_cast<const uint8_t*>(logical);
  auto* out = static_cast<uint8_t*>(physical);
  fill_cycling(out, ps, in, ls);  // reads all of logical, writes all of physical
  scribble(physical, ps);
  return status();
}

lc_status f_unpack(const lc_case* c, const void* physical, size_t ps, void* logical, size_t ls) {
  (void)touch(c);
  const auto* in = static_cast<const uint8_t*>(physical);
  auto* out = static_cast<uint8_t*>(logical);
  fill_cycling(out, ls, in, ps);
  scribble(logical, ls);
  return status();
}

std::string text(size_t max) {
  std::string s;
  for (uint64_t n = take(1) % max; n > 0; --n) s.push_back(static_cast<char>('*' + take(1) % 80));
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Bytes in(data, size);
  g_in = &in;

  // The table, and the storage its strings point into.
  std::vector<std::string> strings;
  strings.reserve(512);
  auto str = [&](size_t max) -> const char* {
    const uint64_t mode = take(1) % 16;
    if (mode == 0) return nullptr;
    if (mode == 1) return strings.emplace_back(kMaxPluginString + take(1), 'n').c_str();  // too long
    return strings.emplace_back(text(max)).c_str();
  };
  lc_plugin t{};
  t.abi_major = take(1) < 250 ? LC_ABI_MAJOR : static_cast<uint32_t>(take(4));
  t.abi_minor = static_cast<uint32_t>(take(1));
  t.struct_size = take(1) < 250 ? static_cast<uint32_t>(sizeof(lc_plugin)) : static_cast<uint32_t>(take(1));
  t.name = str(24);
  const size_t entries = static_cast<size_t>(take(1) % 6);
  std::vector<lc_capability> caps(entries);
  for (auto& cap : caps) {
    cap.layout_glob = take(1) < 16 ? nullptr : (take(1) % 2 ? "*" : str(12));
    cap.dtypes = take(1) % 2 ? nullptr : str(16);
    cap.max_extent = take(1) < 32 ? -static_cast<int64_t>(take(2)) : static_cast<int64_t>(take(1));
  }
  t.capabilities = entries ? caps.data() : (take(1) % 4 == 0 ? nullptr : caps.data());
  // A count that matches the array, or one far beyond it (the host must refuse it unread).
  t.capability_count = take(1) < 240 ? static_cast<uint32_t>(entries)
                                     : kMaxPluginCapabilities + 1 + static_cast<uint32_t>(take(3));
  const uint64_t missing = take(1);
  t.supports = missing == 1 ? nullptr : f_supports;
  t.size_bytes = missing == 2 ? nullptr : f_size;
  t.offset_bits = missing % 8 == 3 ? nullptr : f_offset;
  t.pack = missing == 4 ? nullptr : f_pack;
  t.unpack = missing == 5 ? nullptr : f_unpack;

  auto plugin = plugin_from_table(&t, "fuzz.so");
  if (!plugin.ok()) {
    if (plugin.status().message().empty()) std::abort();  // an error must say what is wrong
    g_in = nullptr;
    return 0;
  }
  const PluginImpl& impl = **plugin;

  // A case of any registered layout, within the bounds of the differential
  // fuzzers (fuzz_util.h): the host's work, not the reference's, is fuzzed.
  const auto& specs = layout_specs();
  const LayoutSpec& spec = specs[take(1) % specs.size()];
  if (spec.random_case) {
    std::mt19937_64 rng(take(8));
    Case c = spec.random_case(rng, 0);
    auto n = element_count(c.shape);
    if (n.ok() && *n <= fuzz::kMaxElements && fuzz::tla_coordinates(c) <= fuzz::kMaxTlaCoordinates) {
      (void)impl.claims(c);
      CheckReport r = check(c, reference_impl(), impl, fuzz::check_options(take(2)));
      if (r.message.empty()) std::abort();
      Coord at(c.shape.size(), 0);
      for (size_t i = 0; i < at.size(); ++i) at[i] = static_cast<int64_t>(take(1)) % std::max<int64_t>(1, c.shape[i]);
      (void)impl.offset_bits(c, at);
      std::vector<uint8_t> logical(static_cast<size_t>(take(2) % 4096)), physical(static_cast<size_t>(take(2) % 4096));
      (void)impl.pack(c, logical.data(), logical.size(), physical.data(), physical.size());
      (void)impl.unpack(c, physical.data(), physical.size(), logical.data(), logical.size());
    }
  }
  g_in = nullptr;
  return 0;
}
