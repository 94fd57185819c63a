// The shared parts of layoutcheck/tla_api.h: the node form, the Layout 使用
// queries over an implementation's tuple functions, and the *.tuple oracles.
// The tuple functions themselves are in reference/tla_api.cc and
// optimized/tla_api.cc.
#include "layoutcheck/tla_api.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "layoutcheck/oracle.h"

namespace layoutcheck {
namespace {

void append_nodes(const IntTuple& t, std::vector<lc_tuple_node>* out) {
  if (t.is_integer()) {
    out->push_back({0, t.is_static() ? 1u : 0u, t.value()});
    return;
  }
  out->push_back({static_cast<uint32_t>(t.rank()), 0, 0});
  for (const IntTuple& item : t.items()) append_nodes(item, out);
}

// The tuple starting at nodes[*at], at most `depth_left` levels deep.
Result<IntTuple> read_nodes(const lc_tuple_node* nodes, size_t count, size_t* at, int depth_left) {
  if (*at >= count) return Status::invalid("the tuple's nodes end inside an element");
  const lc_tuple_node& n = nodes[(*at)++];
  if (n.items == 0) {
    if (n.value < 0 || n.value > IntTuple::kMaxValue || n.is_static > 1) {
      return Status::invalid("node " + std::to_string(*at - 1) + " is not an integer of an IntTuple");
    }
    return IntTuple(n.value, n.is_static != 0);
  }
  if (depth_left == 0) return Status::invalid("the nodes nest deeper than " + std::to_string(IntTuple::kMaxDepth));
  if (n.items > count - *at) return Status::invalid("a tuple of " + std::to_string(n.items) + " elements past the nodes");
  std::vector<IntTuple> items;
  for (uint32_t i = 0; i < n.items; ++i) {
    LC_ASSIGN_OR_RETURN(IntTuple item, read_nodes(nodes, count, at, depth_left - 1));
    items.push_back(std::move(item));
  }
  return IntTuple(std::move(items));
}

std::string path_text(const std::vector<uint64_t>& path) {
  std::string out;
  for (uint64_t i : path) out += (out.empty() ? "" : ",") + std::to_string(i);
  return out;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::string where_of(const std::string& file, int line) { return file + ":" + std::to_string(line); }

Result<std::vector<uint64_t>> parse_path(const std::string& text) {
  std::vector<uint64_t> path;
  if (text.empty()) return path;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    part = trim(part);
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos) {
      return Status::invalid("'" + text + "' is not a path I0,I1,... of indices");
    }
    path.push_back(std::stoull(part));
  }
  return path;
}

// The value a line compares: a tuple or layout in canonical text, a number, or "error".
std::string canonical_value(const std::string& function, const std::string& value) {
  if (value == "error") return value;
  if (function == "get" && value.find(':') != std::string::npos) {
    auto l = parse_tla_layout(value);
    return l.ok() ? to_string(*l) : value;
  }
  if (function == "get" || function == "shape" || function == "stride") {
    auto t = parse_int_tuple(value);
    return t.ok() ? to_string(*t) : value;
  }
  return value;
}

}  // namespace

std::vector<lc_tuple_node> tuple_nodes(const IntTuple& t) {
  std::vector<lc_tuple_node> out;
  append_nodes(t, &out);
  return out;
}

Result<IntTuple> tuple_of_nodes(const lc_tuple_node* nodes, size_t count) {
  size_t at = 0;
  LC_ASSIGN_OR_RETURN(IntTuple t, read_nodes(nodes, count, &at, IntTuple::kMaxDepth));
  if (at != count) return Status::invalid("nodes past the end of the tuple (" + std::to_string(count - at) + ")");
  return t;
}

// "Layout 使用": get<I...>(x) of a layout is the pair of the shape's and the
// stride's get<I...>; rank<I...>, depth<I...>, shape<I...> and stride<I...>
// are rank, depth, shape and stride of that pair.
Result<std::vector<Fact>> layout_query(const TupleApi& api, const TlaLayoutText& layout,
                                       const std::vector<uint64_t>& path) {
  const std::string at = path.empty() ? "" : "<" + path_text(path) + ">";
  auto shape = api.get(layout.shape, path);
  auto stride = api.get(layout.stride, path);
  if (!shape.ok() || !stride.ok()) {
    return Status::invalid("get" + at + " leaves the layout " + to_string(layout) +
                           " (each index must be below the rank of the mode it selects, I < rank)");
  }
  LC_ASSIGN_OR_RETURN(uint64_t rank, api.rank(*stride));
  LC_ASSIGN_OR_RETURN(uint64_t depth, api.depth(*shape));
  LC_ASSIGN_OR_RETURN(uint64_t size, shape->product());
  return std::vector<Fact>{{"get" + at, to_string(*shape) + ":" + to_string(*stride)},
                           {"rank" + at, std::to_string(rank)},
                           {"depth" + at, std::to_string(depth)},
                           {"shape" + at, to_string(*shape)},
                           {"stride" + at, to_string(*stride)},
                           {"size" + at, std::to_string(size)}};
}

Result<std::vector<TupleOracleCase>> parse_tuple_oracles(const std::string& text, const std::string& file) {
  std::vector<TupleOracleCase> cases;
  std::string file_source;
  int file_source_line = 0, lineno = 0;
  std::istringstream in(text);
  auto fail = [&](const std::string& why) { return Status::invalid(where_of(file, lineno) + ": " + why); };
  for (std::string raw; std::getline(in, raw);) {
    ++lineno;
    const OracleLine split = split_oracle_line(raw);
    const std::string& line = split.text;
    if (line.empty()) continue;
    const size_t colon = line.find(':');
    const std::string& head = split.head;
    const std::string& rest = split.rest;
    if (head == "source" && rest.find(" § ") == std::string::npos) return fail("a source is 'DOCUMENT § SECTION'");
    if (take_case_or_source(split, file, lineno, &file_source, &file_source_line, &cases)) continue;
    if (head == "note") {
      if (!cases.empty()) cases.back().notes.push_back(rest);
      continue;
    }
    if (cases.empty()) return fail("'" + line + "' before the first 'case:'");
    TupleOracleCase& oc = cases.back();
    const size_t eq = line.find('=');
    if ((head == "tuple" || head == "layout") && (eq == std::string::npos || colon < eq)) {
      if (!oc.tuple.empty() || !oc.layout.empty()) return fail("a case has one tuple: or layout:");
      if (head == "tuple") {
        auto t = parse_int_tuple(rest);
        if (!t.ok()) return fail(t.status().message());
        oc.tuple = rest;
      } else {
        auto l = parse_tla_layout(rest);
        if (!l.ok()) return fail(l.status().message());
        oc.layout = rest;
      }
      continue;
    }
    if (eq == std::string::npos) return fail("expected 'FUNCTION [I0,I1,...] = VALUE' (rank, depth, get, shape, stride, size)");
    TupleOracleLine l;
    l.line = lineno;
    const std::string lhs = trim(line.substr(0, eq));
    l.function = lhs.substr(0, lhs.find(' '));
    static const char* kFunctions[] = {"rank", "depth", "get", "shape", "stride", "size"};
    if (std::find(std::begin(kFunctions), std::end(kFunctions), l.function) == std::end(kFunctions)) {
      return fail("unknown function '" + l.function + "' (rank, depth, get, shape, stride, size)");
    }
    auto path = parse_path(trim(lhs.substr(l.function.size())));
    if (!path.ok()) return fail(path.status().message());
    l.path = *path;
    l.value = canonical_value(l.function, trim(line.substr(eq + 1)));
    if (l.value.empty()) return fail("no value after '='");
    oc.lines.push_back(l);
  }
  for (const auto& oc : cases) {
    const std::string where = where_of(file, oc.line) + ": case " + oc.id;
    if (oc.source.empty()) return Status::invalid(where + " has no source: (document and section)");
    if (oc.tuple.empty() == oc.layout.empty()) return Status::invalid(where + " needs one tuple: or layout:");
    if (oc.lines.empty()) return Status::invalid(where + " expects nothing");
    for (const auto& l : oc.lines) {
      if (!oc.tuple.empty() && l.function != "rank" && l.function != "depth" && l.function != "get") {
        return Status::invalid(where_of(file, l.line) + ": " + l.function + " is a function of a layout, not of a tuple");
      }
    }
  }
  return cases;
}

Result<std::vector<TupleOracleCase>> load_tuple_oracle_dir(const std::string& dir, const std::string& spec_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::invalid("oracle directory " + dir + " does not exist");
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".tuple") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<TupleOracleCase> all;
  std::vector<OracleCase> sources;  // for the source and id checks of layoutcheck/oracle.h
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) return Status::invalid("cannot read " + f);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LC_ASSIGN_OR_RETURN(auto cases, parse_tuple_oracles(text, f));
    for (const auto& oc : cases) {
      OracleCase o;
      o.id = oc.id, o.source = oc.source, o.file = oc.file, o.line = oc.line, o.source_line = oc.source_line;
      sources.push_back(o);
    }
    all.insert(all.end(), cases.begin(), cases.end());
  }
  LC_RETURN_IF_ERROR(check_oracle_sources(sources, spec_dir));
  LC_RETURN_IF_ERROR(check_unique_ids(sources));
  return all;
}

std::vector<std::string> run_tuple_oracle(const TupleOracleCase& oc, const TupleApi& api) {
  std::vector<std::string> failures;
  for (const TupleOracleLine& l : oc.lines) {
    std::string got;
    const std::string at = l.path.empty() ? "" : "<" + path_text(l.path) + ">";
    if (!oc.tuple.empty()) {
      const IntTuple t = *parse_int_tuple(oc.tuple);
      auto part = api.get(t, l.path);
      if (!part.ok()) {
        got = "error";
      } else if (l.function == "get") {
        got = to_string(*part);
      } else {
        auto v = l.function == "rank" ? api.rank(*part) : api.depth(*part);
        got = v.ok() ? std::to_string(*v) : "error (" + v.status().message() + ")";
      }
    } else {
      auto facts = layout_query(api, *parse_tla_layout(oc.layout), l.path);
      if (!facts.ok()) {
        got = "error";
      } else {
        for (const Fact& f : *facts) {
          if (f.first == l.function + at) got = f.second;
        }
      }
    }
    if (got != l.value) {
      failures.push_back(where_of(oc.file, l.line) + ": " + oc.id + ": " + l.function + at + " of " +
                         (oc.tuple.empty() ? oc.layout : oc.tuple) + ": expected " + l.value + ", " + api.name() +
                         " gives " + got);
    }
  }
  return failures;
}

}  // namespace layoutcheck
