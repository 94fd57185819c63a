// The plugin worker's wire format (core/plugin.cc), shared with the ABI 1.1
// members (core/plugin_ext.cc). Internal to the core library.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "layoutcheck/isolate.h"
#include "layoutcheck/plugin.h"

struct lc_plugin;

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
}  // namespace plugin_wire

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
