#include "tools/cli_json.h"

#include <cstdint>

#include "layoutcheck/c_api.h"

namespace layoutcheck::cli {

Json report_header(const std::string& command) {
  Json j;
  j["schema"] = kJsonSchema;
  j["command"] = command;
  j["layoutcheck_version"] = LAYOUTCHECK_VERSION;
  j["abi_version"] = std::to_string(LC_ABI_MAJOR) + "." + std::to_string(LC_ABI_MINOR);
  return j;
}

Json number_or_string(const std::string& value) {
  if (value.empty() || value.size() > 19 || (value.size() > 1 && value[0] == '0')) return value;
  uint64_t v = 0;
  for (char ch : value) {
    if (ch < '0' || ch > '9') return value;
    v = v * 10 + static_cast<uint64_t>(ch - '0');
  }
  return v;
}

std::string dump_json(const Json& j) {
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace layoutcheck::cli
