// layoutcheck/status.h — errors are values.
//
// Every fallible library call returns a Status (or a Result<T>, a value or a
// Status). A Status names the rule that was broken and the values that broke it:
//
//   Status s = Status::invalid("tpu.aligned: address 100 is not divisible by 128 "
//                              "(128-Byte Aligned Layout)");
//   if (!s.ok()) std::cerr << s.message() << "\n";
//
// Codes: kInvalid means the case violates a rule of the document (every
// conforming implementation must reject it); kUnsupported means one
// implementation declines a valid case (not a failure); kInternal is a bug.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace layoutcheck {

enum class StatusCode { kOk = 0, kInvalid, kUnsupported, kInternal };

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(const Status& o) : rep_(o.rep_ ? clone(*o.rep_) : nullptr) {}
  Status(Status&& o) noexcept : rep_(std::exchange(o.rep_, nullptr)) {}
  Status& operator=(const Status& o) {
    if (this != &o) *this = Status(o);
    return *this;
  }
  Status& operator=(Status&& o) noexcept {
    std::swap(rep_, o.rep_);
    return *this;
  }
  ~Status() {
    if (rep_) release(rep_);
  }

  static Status ok_status() { return Status(); }
  static Status invalid(std::string msg) { return Status(StatusCode::kInvalid, std::move(msg)); }
  static Status unsupported(std::string msg) {
    return Status(StatusCode::kUnsupported, std::move(msg));
  }
  static Status internal(std::string msg) { return Status(StatusCode::kInternal, std::move(msg)); }

  bool ok() const { return rep_ == nullptr || rep_->code == StatusCode::kOk; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  const std::string& message() const { return rep_ ? rep_->message : empty(); }
  // The id of the document rule a kInvalid status reports (layoutcheck/rules.h,
  // e.g. "nvdla.feature/line-stride-align-32"); empty when none is named.
  //   return Status::invalid("...").with_rule("tpu.aligned/address-align-128");
  const std::string& rule() const { return rep_ ? rep_->rule : empty(); }
  Status with_rule(std::string id) && {
    if (!rep_) rep_ = make(StatusCode::kOk, {});
    rep_->rule = std::move(id);
    return std::move(*this);
  }
  // "invalid: <message>" etc.; "ok" when ok.
  std::string to_string() const;

 private:
  // An ok status holds nothing: a call that succeeds (every call of a
  // conversion, many times a case in the checker) builds and drops one pointer.
  struct Rep {
    StatusCode code;
    std::string message;
    std::string rule;
  };
  Status(StatusCode code, std::string msg) : rep_(make(code, std::move(msg))) {}
  // Out of line (core/status.cc), so that the path of an ok status stays small.
  static Rep* make(StatusCode code, std::string msg);
  static Rep* clone(const Rep& r);
  static void release(Rep* r) noexcept;
  static const std::string& empty() {
    static const std::string kEmpty;
    return kEmpty;
  }
  Rep* rep_ = nullptr;
};

const char* status_code_name(StatusCode code);

// A user's text as a message quotes it: non-printable bytes shown as '?', and
// at most kQuotedInputMax characters followed by "... (N more characters)", so a
// message stays one short line whatever the input. clip_input gives the bare
// text, quote_input the text in single quotes. Every message that echoes input
// goes through these.
constexpr size_t kQuotedInputMax = 200;
std::string clip_input(std::string_view text);
std::string quote_input(std::string_view text);

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok());
  }
  bool ok() const { return std::holds_alternative<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace layoutcheck

// Propagate a failed Status / Result from the current function.
#define LC_RETURN_IF_ERROR(expr)                 \
  do {                                           \
    ::layoutcheck::Status lc_status_ = (expr);   \
    if (!lc_status_.ok()) return lc_status_;     \
  } while (0)

#define LC_CONCAT_INNER(a, b) a##b
#define LC_CONCAT(a, b) LC_CONCAT_INNER(a, b)
#define LC_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
// LC_ASSIGN_OR_RETURN(auto x, f());
#define LC_ASSIGN_OR_RETURN(lhs, expr) \
  LC_ASSIGN_OR_RETURN_IMPL(LC_CONCAT(lc_result_, __LINE__), lhs, expr)
