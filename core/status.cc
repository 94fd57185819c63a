#include "layoutcheck/status.h"

#include <cctype>

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

Status::Rep* Status::make(StatusCode code, std::string msg) { return new Rep{code, std::move(msg), {}}; }
Status::Rep* Status::clone(const Rep& r) { return new Rep(r); }
void Status::release(Rep* r) noexcept { delete r; }

std::string Status::to_string() const {
  return ok() ? "ok" : std::string(status_code_name(code())) + ": " + message();
}

std::string clip_input(std::string_view text) {
  std::string out;
  for (char ch : text.substr(0, kQuotedInputMax)) out += std::isprint(static_cast<unsigned char>(ch)) ? ch : '?';
  if (text.size() > kQuotedInputMax) {
    out += "... (" + std::to_string(text.size() - kQuotedInputMax) + " more characters)";
  }
  return out;
}

std::string quote_input(std::string_view text) { return "'" + clip_input(text) + "'"; }

}  // namespace layoutcheck
