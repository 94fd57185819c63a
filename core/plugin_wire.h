// The plugin worker's wire format (core/plugin.cc), shared with the ABI 1.1
// members (core/plugin_ext.cc). Internal to the core library.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <vector>

#include "layoutcheck/c_api.h"
#include "layoutcheck/dtype.h"
#include "layoutcheck/isolate.h"
#include "layoutcheck/layout.h"
#include "layoutcheck/plugin.h"

namespace layoutcheck {

// Longest string field of a request or an answer.
constexpr uint64_t kMaxMessage = uint64_t{1} << 20;

namespace plugin_wire {
void put_case(std::string* out, const Case& c);
bool get_case(Reader& r, Case* c);
void put_fill(std::string* out, const void* data, size_t size);
std::string get_fill(Reader& r, uint64_t size);
void put_status(std::string* out, const Status& s);
Status get_status(Reader& r);
// A worker's answer: its status, a value and bytes (a malformed answer is an internal error).
struct Answer {
  Status status;
  uint64_t value = 0;
  std::string bytes;
};
Answer answer_of(const Result<std::string>& reply);
}  // namespace plugin_wire

// An lc_case and the storage its pointers refer to.
struct CCase {
  explicit CCase(const Case& c) : text(to_string(c.layout)), dtype(dtype_name(c.dtype)) {
    for (const auto& [k, v] : c.layout.params) keys.push_back(k), values.push_back(v);
    for (const auto& k : keys) key_ptrs.push_back(k.c_str());
    for (const auto& v : values) value_ptrs.push_back(v.c_str());
    view.layout = text.c_str();
    view.layout_name = c.layout.name.c_str();
    view.param_count = static_cast<uint32_t>(keys.size());
    view.param_keys = key_ptrs.data();
    view.param_values = value_ptrs.data();
    view.dtype = dtype.c_str();
    view.dtype_bits = dtype_bits(c.dtype);
    view.rank = static_cast<uint32_t>(c.shape.size());
    view.shape = c.shape.data();
  }
  std::string text, dtype;
  std::vector<std::string> keys, values;
  std::vector<const char*> key_ptrs, value_ptrs;
  lc_case view{};
};

// Bit mask of the ABI 1.1 members a table has (PluginImpl::kConvertMember, ...).
uint64_t extension_members_of(const lc_plugin* t);

// In the worker: answers an ABI 1.1 request (op >= kFirstExtensionOp) with the
// plugin loaded here; false for an op it does not know.
bool serve_extension(const PluginImpl& impl, uint64_t op, Reader& r, Status* st, uint64_t* value, std::string* bytes);

}  // namespace layoutcheck

namespace layoutcheck {

// A plugin's returned status (an int, maybe no lc_status) as a Status naming `what`.
Status plugin_status(int s, const std::string& what);

// Runs fn twice, each into its own guard-paged copy of `out`, with `in` in
// guard pages too; the two results must agree (core/plugin.cc).
Status run_guarded(const std::string& who, const char* in_label, const char* out_label, const void* in,
                   size_t in_size, void* out, size_t out_size,
                   const std::function<int(const void*, size_t, void*, size_t)>& fn);

}  // namespace layoutcheck
