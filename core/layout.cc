#include "layoutcheck/layout.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <unordered_map>

#include "core/families.h"
#include "layoutcheck/checked.h"

namespace layoutcheck {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string quoted(std::string_view s) { return quote_input(s); }

// A shape or coordinate as a message echoes it (the user may give thousands of values).
std::string shape_text(const Shape& shape) { return clip_input(shape_to_string(shape)); }

std::vector<LayoutSpec> build_registry() {
  std::vector<LayoutSpec> specs;
  for (auto add : family_spec_adders()) add(&specs);
  return specs;
}

Result<int64_t> parse_int(std::string_view text) {
  std::string s(trim(text));
  if (s.empty()) return Status::invalid("empty integer");
  int base = 10;
  size_t start = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (s.size() > start + 2 && s[start] == '0' && (s[start + 1] == 'x' || s[start + 1] == 'X')) {
    base = 16;
  }
  for (size_t i = start + (base == 16 ? 2 : 0); i < s.size(); ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(s[i])) ||
        (base == 10 && !std::isdigit(static_cast<unsigned char>(s[i])))) {
      return Status::invalid("not an integer: " + quoted(s));
    }
  }
  if (s.size() == start + (base == 16 ? 2 : 0)) return Status::invalid("not an integer: " + quoted(s));
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, base);
  if (errno == ERANGE) return Status::invalid("integer out of range: " + quoted(s));
  return static_cast<int64_t>(v);
}

Result<std::string> normalize_value(const LayoutSpec& spec, const ParamSpec& p,
                                    std::string_view raw) {
  std::string_view v = trim(raw);
  switch (p.kind) {
    case ParamKind::kInt: {
      auto n = parse_int(v);
      if (!n.ok()) {
        return Status::invalid(spec.name + ": parameter " + p.key + "=" + clip_input(v) +
                               ": " + n.status().message());
      }
      if (*n < p.min || *n > p.max) {
        return Status::invalid(spec.name + ": parameter " + p.key + "=" + std::to_string(*n) +
                               " is outside [" + std::to_string(p.min) + ", " +
                               std::to_string(p.max) + "]");
      }
      return std::to_string(*n);
    }
    case ParamKind::kEnum: {
      for (const auto& choice : p.choices) {
        if (v == choice) return choice;
      }
      std::string all;
      for (const auto& choice : p.choices) all += (all.empty() ? "" : ", ") + choice;
      return Status::invalid(spec.name + ": parameter " + p.key + "=" + quoted(v) +
                             " is not one of: " + all);
    }
    case ParamKind::kText:
      if (v.empty()) return Status::invalid(spec.name + ": parameter " + p.key + " is empty");
      return std::string(v);
  }
  return Status::internal("unknown parameter kind");
}

}  // namespace

const std::vector<LayoutSpec>& layout_specs() {
  static const std::vector<LayoutSpec> specs = build_registry();
  return specs;
}

const LayoutSpec* find_spec(std::string_view name) {
  // Every conversion asks: a hash index, built once, instead of a walk of the registry.
  static const std::unordered_map<std::string_view, const LayoutSpec*> index = [] {
    std::unordered_map<std::string_view, const LayoutSpec*> m;
    for (const auto& s : layout_specs()) m.emplace(s.name, &s);
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

int64_t Layout::get_int(const std::string& key) const {
  return std::strtoll(get(key).c_str(), nullptr, 10);
}

const std::string& Layout::get(const std::string& key) const {
  static const std::string kEmpty;
  auto it = params.find(key);
  return it == params.end() ? kEmpty : it->second;
}

Result<Layout> make_layout(std::string_view name, const ParamMap& given) {
  const LayoutSpec* spec = find_spec(name);
  if (spec == nullptr) {
    std::string known;
    for (const auto& s : layout_specs()) known += (known.empty() ? "" : ", ") + s.name;
    return Status::invalid("unknown layout " + quoted(name) + " (known: " + known + ")");
  }
  for (const auto& [key, value] : given) {
    bool declared = false;
    for (const auto& p : spec->params) declared |= (p.key == key);
    if (!declared) {
      std::string keys;
      for (const auto& p : spec->params) keys += (keys.empty() ? "" : ", ") + p.key;
      return Status::invalid(spec->name + ": unknown parameter " + quoted(key) +
                             (keys.empty() ? " (it takes none)" : " (parameters: " + keys + ")"));
    }
  }
  Layout layout;
  layout.name = spec->name;
  for (const auto& p : spec->params) {
    auto it = given.find(p.key);
    std::string raw = it != given.end() ? it->second
                      : p.default_value ? p.default_value(layout.params)
                                        : std::string();
    if (raw.empty() && it == given.end()) {
      return Status::invalid(spec->name + ": parameter " + p.key + " is required");
    }
    LC_ASSIGN_OR_RETURN(std::string value, normalize_value(*spec, p, raw));
    layout.params[p.key] = value;
  }
  return layout;
}

Result<Layout> parse_layout(std::string_view text) {
  std::string_view t = trim(text);
  if (t.empty()) return Status::invalid("empty layout text");
  for (const auto& spec : layout_specs()) {
    if (!spec.parse_notation) continue;
    if (auto parsed = spec.parse_notation(t)) return *parsed;
  }
  size_t open = t.find('(');
  std::string_view name = trim(t.substr(0, open));
  ParamMap given;
  if (open != std::string_view::npos) {
    if (t.back() != ')') return Status::invalid("layout " + quoted(t) + ": missing ')' at the end");
    std::string_view body = t.substr(open + 1, t.size() - open - 2);
    if (body.find_first_of("()") != std::string_view::npos) {
      return Status::invalid("layout " + quoted(t) + ": unexpected parenthesis in parameters");
    }
    while (!trim(body).empty()) {
      size_t comma = body.find(',');
      std::string_view item = trim(body.substr(0, comma));
      size_t eq = item.find('=');
      if (eq == std::string_view::npos) {
        return Status::invalid("layout " + quoted(t) + ": parameter " + quoted(item) +
                               " is not key=value");
      }
      std::string key(trim(item.substr(0, eq)));
      if (given.count(key)) {
        return Status::invalid("layout " + quoted(t) + ": parameter " + quoted(key) + " given twice");
      }
      given[key] = std::string(trim(item.substr(eq + 1)));
      if (comma == std::string_view::npos) break;
      body.remove_prefix(comma + 1);
      if (trim(body).empty()) return Status::invalid("layout " + quoted(t) + ": trailing ','");
    }
  }
  return make_layout(name, given);
}

std::string to_string(const Layout& layout) {
  const LayoutSpec* spec = find_spec(layout.name);
  if (spec == nullptr) return layout.name;
  if (spec->format) return spec->format(layout);
  std::string out = layout.name;
  std::string args;
  ParamMap resolved;
  for (const auto& p : spec->params) {
    const std::string& value = layout.get(p.key);
    std::string def = p.default_value ? p.default_value(resolved) : std::string();
    // Defaults come through the same normalization as given values.
    if (!def.empty()) {
      auto norm = normalize_value(*spec, p, def);
      if (norm.ok()) def = *norm;
    }
    if (value != def) args += (args.empty() ? "" : ",") + p.key + "=" + value;
    resolved[p.key] = value;
  }
  if (!args.empty()) out += "(" + args + ")";
  return out;
}

Result<Shape> parse_shape(std::string_view text, std::string_view what) {
  Shape shape;
  std::string_view t = trim(text);
  if (t.empty()) return Status::invalid("empty " + std::string(what));
  while (true) {
    size_t comma = t.find(',');
    auto v = parse_int(t.substr(0, comma));
    if (!v.ok()) return Status::invalid(std::string(what) + " " + quoted(text) + ": " + v.status().message());
    shape.push_back(*v);
    if (comma == std::string_view::npos) break;
    t.remove_prefix(comma + 1);
  }
  return shape;
}

std::string shape_to_string(const Shape& shape) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out;
}

Status check_shape(const LayoutSpec& spec, const Shape& shape) {
  const bool rank_ok = spec.any_rank ? !shape.empty() && shape.size() <= spec.dims.size()
                                     : shape.size() == spec.dims.size();
  if (!rank_ok) {
    std::string dims;
    for (const auto& d : spec.dims) dims += (dims.empty() ? "" : ",") + d;
    return Status::invalid(spec.name + ": shape " + shape_text(shape) + " has rank " +
                           std::to_string(shape.size()) + ", the layout's logical shape is " +
                           (spec.any_rank ? "of rank 1 to " + std::to_string(spec.dims.size()) + " (" : "(") +
                           dims + ")").with_rule("layout/rank");
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] <= 0) {
      return Status::invalid(spec.name + ": dimension " + spec.dims[i] + " = " +
                             std::to_string(shape[i]) + " must be positive").with_rule("layout/positive-extent");
    }
  }
  return element_count(shape).status();
}

Status check_coord(const Case& c, const Coord& at) {
  if (at.size() != c.shape.size()) {
    return Status::invalid("coordinate (" + shape_text(at) + ") has rank " + std::to_string(at.size()) +
                           ", the shape " + shape_text(c.shape) + " has rank " + std::to_string(c.shape.size()));
  }
  for (size_t i = 0; i < at.size(); ++i) {
    if (at[i] < 0 || at[i] >= c.shape[i]) {
      return Status::invalid("coordinate (" + shape_text(at) + ") is outside the shape " + shape_text(c.shape));
    }
  }
  return Status();
}

uint32_t value_bits(const Case& c, const Coord& at) {
  const LayoutSpec* spec = find_spec(c.layout.name);
  if (spec == nullptr || !spec->value_bits) return dtype_bits(c.dtype);
  return std::min(spec->value_bits(c, at), dtype_bits(c.dtype));
}

Result<Case> parse_case(std::string_view layout, std::string_view dtype, std::string_view shape) {
  Case c;
  LC_ASSIGN_OR_RETURN(c.layout, parse_layout(layout));
  LC_ASSIGN_OR_RETURN(c.dtype, parse_dtype(trim(dtype)));
  LC_ASSIGN_OR_RETURN(c.shape, parse_shape(shape));
  return c;
}

std::string to_string(const Case& c) {
  return "'" + to_string(c.layout) + "' --dtype " + dtype_name(c.dtype) + " --shape " +
         shape_to_string(c.shape);
}

Result<uint64_t> element_count(const Shape& shape) {
  Checked n = 1;
  for (int64_t d : shape) {
    if (d <= 0) return Status::invalid("shape " + shape_text(shape) + " has a non-positive extent").with_rule("layout/positive-extent");
    n *= static_cast<uint64_t>(d);
  }
  if (!n.ok() || n.value() > (uint64_t{1} << 56)) {
    return Status::invalid("shape " + shape_text(shape) + ": element count overflows").with_rule("layout/element-count");
  }
  return n.value();
}

Result<uint64_t> logical_bytes(const Case& c) {
  LC_ASSIGN_OR_RETURN(uint64_t n, element_count(c.shape));
  Checked bits = Checked(n) * dtype_bits(c.dtype);
  if (!bits.ok()) return Status::invalid("logical size of " + to_string(c) + " overflows");
  return ceil_div(bits.value(), 8);
}

Coord coord_of_index(const Shape& shape, uint64_t index) {
  Coord coord(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    coord[i] = static_cast<int64_t>(index % static_cast<uint64_t>(shape[i]));
    index /= static_cast<uint64_t>(shape[i]);
  }
  return coord;
}

uint64_t index_of_coord(const Shape& shape, const Coord& coord) {
  uint64_t index = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    index = index * static_cast<uint64_t>(shape[i]) + static_cast<uint64_t>(coord[i]);
  }
  return index;
}

}  // namespace layoutcheck
