#include "layoutcheck/status.h"

namespace layoutcheck {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalid: return "invalid";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kInternal: return "internal";
  }
  return "unknown";
}

std::string Status::to_string() const {
  return ok() ? "ok" : std::string(status_code_name(code_)) + ": " + message_;
}

}  // namespace layoutcheck
