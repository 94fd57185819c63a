#include "layoutcheck/int_tuple.h"

#include <algorithm>
#include <cctype>

#include "layoutcheck/checked.h"

namespace layoutcheck {
namespace {

std::string excerpt(std::string_view s) { return quote_input(s); }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<IntTuple> parse_all() {
    LC_ASSIGN_OR_RETURN(IntTuple t, parse(0));
    skip_space();
    if (pos_ != text_.size()) return error("unexpected '" + std::string(1, text_[pos_]) + "' after the tuple");
    return t;
  }

 private:
  Status error(const std::string& why) const {
    return Status::invalid("IntTuple " + excerpt(text_) + " at column " + std::to_string(pos_ + 1) + ": " + why);
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  Result<IntTuple> parse(int depth) {
    skip_space();
    if (pos_ >= text_.size()) return error("unexpected end (unbalanced parentheses or missing integer)");
    char ch = text_[pos_];
    if (ch == '(') {
      if (depth >= IntTuple::kMaxDepth) {
        return error("nesting deeper than " + std::to_string(IntTuple::kMaxDepth) + " levels");
      }
      ++pos_;
      std::vector<IntTuple> items;
      while (true) {
        LC_ASSIGN_OR_RETURN(IntTuple item, parse(depth + 1));
        items.push_back(std::move(item));
        skip_space();
        if (pos_ >= text_.size()) return error("unbalanced parentheses: missing ')'");
        if (text_[pos_] == ',') { ++pos_; continue; }
        if (text_[pos_] == ')') { ++pos_; break; }
        return error("expected ',' or ')', got '" + std::string(1, text_[pos_]) + "'");
      }
      return IntTuple(std::move(items));
    }
    if (ch == ')') return error("unbalanced parentheses: unexpected ')' (empty tuple or missing integer)");
    bool is_static = false;
    if (ch == '_') {
      is_static = true;
      ++pos_;
    }
    if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      return error(pos_ < text_.size() ? "expected an integer, got '" + std::string(1, text_[pos_]) + "'"
                                       : "expected an integer at the end");
    }
    uint64_t v = 0;
    size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      v = v * 10 + static_cast<uint64_t>(text_[pos_] - '0');
      ++pos_;
      if (v > static_cast<uint64_t>(IntTuple::kMaxValue)) {
        pos_ = start;
        return error("integer overflows (maximum 2^48 = " + std::to_string(IntTuple::kMaxValue) + ")");
      }
    }
    if (++leaves_ > IntTuple::kMaxLeaves) {
      return error("more than " + std::to_string(IntTuple::kMaxLeaves) + " integers");
    }
    return IntTuple(static_cast<int64_t>(v), is_static);
  }

  std::string_view text_;
  size_t pos_ = 0;
  size_t leaves_ = 0;
};

// The product of the integers, depth first, without collecting them (called
// once per coordinate by the TLA offset arithmetic).
void multiply_leaves(const IntTuple& t, Checked* p) {
  if (t.is_integer()) {
    *p *= static_cast<uint64_t>(t.value());
    return;
  }
  for (const auto& item : t.items()) multiply_leaves(item, p);
}

void collect(const IntTuple& t, std::vector<int64_t>* out) {
  if (t.is_integer()) {
    out->push_back(t.value());
    return;
  }
  for (const auto& item : t.items()) collect(item, out);
}

Status congruent(const IntTuple& a, const IntTuple& b, const std::string& path) {
  const std::string where = path.empty() ? "the top level" : "mode " + path;
  if (a.is_integer() != b.is_integer()) {
    return Status::invalid("shape and stride differ in nesting at " + where + ": shape has " + to_string(a) +
                           ", stride has " + to_string(b));
  }
  if (a.is_integer()) return Status();
  if (a.rank() != b.rank()) {
    return Status::invalid("shape and stride differ in rank at " + where + ": shape " + to_string(a) + " has rank " +
                           std::to_string(a.rank()) + ", stride " + to_string(b) + " has rank " +
                           std::to_string(b.rank()));
  }
  for (size_t i = 0; i < a.rank(); ++i) {
    LC_RETURN_IF_ERROR(congruent(a.items()[i], b.items()[i], path + (path.empty() ? "" : ",") + std::to_string(i)));
  }
  return Status();
}

Status positive_extents(const IntTuple& t, const std::string& path) {
  if (t.is_integer()) {
    if (t.value() <= 0) {
      return Status::invalid("shape extent " + std::to_string(t.value()) + " at " +
                             (path.empty() ? std::string("the top level") : "mode " + path) +
                             " is zero; extents must be positive");
    }
    return Status();
  }
  for (size_t i = 0; i < t.rank(); ++i) {
    LC_RETURN_IF_ERROR(positive_extents(t.items()[i], path + (path.empty() ? "" : ",") + std::to_string(i)));
  }
  return Status();
}

}  // namespace

int IntTuple::depth() const {
  if (!tuple_) return 0;
  int d = 0;
  for (const auto& item : items_) d = std::max(d, item.depth());
  return d + 1;
}

const IntTuple* IntTuple::get(const std::vector<size_t>& path) const {
  const IntTuple* t = this;
  for (size_t i : path) {
    if (t->is_integer()) {
      if (i != 0) return nullptr;
      continue;
    }
    if (i >= t->items_.size()) return nullptr;
    t = &t->items_[i];
  }
  return t;
}

const IntTuple* IntTuple::get(std::initializer_list<size_t> path) const {
  return get(std::vector<size_t>(path));
}

std::vector<int64_t> IntTuple::leaves() const {
  std::vector<int64_t> out;
  collect(*this, &out);
  return out;
}

size_t IntTuple::leaf_count() const {
  if (!tuple_) return 1;
  size_t n = 0;
  for (const auto& item : items_) n += item.leaf_count();
  return n;
}

Result<uint64_t> IntTuple::product() const {
  Checked p = 1;
  multiply_leaves(*this, &p);
  if (!p.ok() || p.value() > (uint64_t{1} << 62)) {
    return Status::invalid("the product of " + to_string(*this) + " overflows 2^62");
  }
  return p.value();
}

bool IntTuple::operator==(const IntTuple& o) const {
  if (tuple_ != o.tuple_) return false;
  if (!tuple_) return value_ == o.value_ && static_ == o.static_;
  return items_ == o.items_;
}

Result<IntTuple> parse_int_tuple(std::string_view text) { return Parser(text).parse_all(); }

std::string to_string(const IntTuple& t) {
  if (t.is_integer()) return (t.is_static() ? "_" : "") + std::to_string(t.value());
  std::string out = "(";
  for (size_t i = 0; i < t.rank(); ++i) out += (i ? "," : "") + to_string(t.items()[i]);
  return out + ")";
}

Status check_congruent(const IntTuple& shape, const IntTuple& stride) { return congruent(shape, stride, ""); }

Result<TlaLayoutText> parse_tla_layout(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return Status::invalid("TLA layout " + excerpt(text) + " is not SHAPE:STRIDE (no ':')");
  }
  if (text.find(':', colon + 1) != std::string_view::npos) {
    return Status::invalid("TLA layout " + excerpt(text) + " has more than one ':'");
  }
  TlaLayoutText l;
  auto shape = parse_int_tuple(text.substr(0, colon));
  if (!shape.ok()) return Status::invalid("shape of TLA layout: " + shape.status().message());
  auto stride = parse_int_tuple(text.substr(colon + 1));
  if (!stride.ok()) return Status::invalid("stride of TLA layout: " + stride.status().message());
  l.shape = std::move(shape).value();
  l.stride = std::move(stride).value();
  LC_RETURN_IF_ERROR(check_congruent(l.shape, l.stride));
  LC_RETURN_IF_ERROR(positive_extents(l.shape, ""));
  LC_RETURN_IF_ERROR(l.shape.product().status());
  return l;
}

std::string to_string(const TlaLayoutText& l) { return to_string(l.shape) + ":" + to_string(l.stride); }

}  // namespace layoutcheck
