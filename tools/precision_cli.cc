#include "tools/precision_cli.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "layoutcheck/impl.h"
#include "layoutcheck/precision.h"
#include "tools/cli_io.h"
#include "tools/extension_cli.h"
#include "tools/precision_lib_cmd.h"

namespace layoutcheck::cli {

namespace {

// The most convert reads; a longer input (or an endless one) is an error.
constexpr uint64_t kConvertMaxBytes = uint64_t{256} << 20;

struct BadInput {
  std::string message;
};

// The options as the command reads them: the last value of each.
std::map<std::string, std::string> options_of(const Args& a) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : a.options) out[k] = v;
  return out;
}

std::string need(const std::map<std::string, std::string>& o, const std::string& key) {
  auto it = o.find(key);
  if (it == o.end()) throw BadInput{"missing --" + key};
  return it->second;
}

template <typename T>
T must(Result<T> r) {
  if (!r.ok()) throw BadInput{r.status().message()};
  return std::move(r).value();
}

std::vector<uint8_t> read_input(const std::string& path) {
  cli::BoundedInput in = must(read_bounded(path, kConvertMaxBytes));
  if (in.more) {
    throw BadInput{"input " + (path.empty() || path == "-" ? std::string() : input_name(path) + " ") + "is more than " +
                   std::to_string(kConvertMaxBytes) + " bytes; convert reads at most 256 MiB"};
  }
  return std::move(in.bytes);
}

void write_output(const std::string& path, const std::vector<uint8_t>& data) {
  if (Status s = cli::write_output(path, data.data(), data.size()); !s.ok()) throw BadInput{s.message()};
}

int32_t parse_offset(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 0);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < kNvdlaOffsetMin || v > kNvdlaOffsetMax) {
    throw BadInput{"offset " + quote_input(text) + " is not an integer in " + std::to_string(kNvdlaOffsetMin) +
                   ".." + std::to_string(kNvdlaOffsetMax)};
  }
  return static_cast<int32_t>(v);
}

float parse_scale(const std::string& text) {
  char* end = nullptr;
  const float v = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v)) {
    throw BadInput{"scaling factor " + quote_input(text) + " is not a finite number (held as fp32)"};
  }
  return v;
}

// --mode, --conv, --data: the SDP layer check (check_sdp_layer).
int run_sdp_layer(const Args& a, const std::map<std::string, std::string>& o) {
  SdpLayer l;
  const std::string mode = o.count("mode") ? o.at("mode") : "offline";
  if (mode != "offline" && mode != "on-flying") throw BadInput{"--mode " + quote_input(mode) + ": offline or on-flying"};
  l.on_flying = mode == "on-flying";
  l.input = must(parse_precision_input(need(o, "input")));
  l.output = must(parse_dtype(need(o, "output")));
  if (o.count("conv")) {
    const std::string& w = o.at("conv");
    const size_t x = w.find('/'), y = x == std::string::npos ? x : w.find('/', x + 1);
    if (y == std::string::npos) throw BadInput{"--conv " + quote_input(w) + ": expected MODE/INPUT/OUTPUT (dc/int16/int16)"};
    l.conv_mode = must(parse_conv_mode(w.substr(0, x)));
    l.conv_input = must(parse_precision_input(w.substr(x + 1, y - x - 1)));
    l.conv_output = must(parse_dtype(w.substr(y + 1)));
  } else if (l.on_flying) {
    throw BadInput{"--mode on-flying needs --conv MODE/INPUT/OUTPUT, the convolution in front of the SDP"};
  }
  for (const std::string& w : a.all("data")) {
    const size_t x = w.find('@'), y = x == std::string::npos ? x : w.find('@', x + 1);
    if (y == std::string::npos) throw BadInput{"--data " + quote_input(w) + ": expected LAYOUT@DTYPE@SHAPE"};
    const Case data = must(parse_case(w.substr(0, x), w.substr(x + 1, y - x - 1), w.substr(y + 1)));
    // The surface itself must be one the document allows (its layout's rules).
    if (auto size = reference_impl().size_bytes(data); !size.ok()) {
      const std::string rule = size.status().rule().empty() ? "" : " (rule " + size.status().rule() + ")";
      throw BadInput{"--data " + quote_input(w) + ": " + size.status().message() + rule};
    }
    l.data.push_back(data);
  }
  const Status st = check_sdp_layer(l);
  if (!st.ok()) {
    std::cout << "invalid\nrule: " << st.rule() << "\n" << st.message() << "\n";
    return 1;
  }
  std::cout << "ok\nprocessing precision";
  for (DType t : sdp_processing_precisions(l)) std::cout << " " << dtype_name(t);
  std::cout << "\nlayer: " << to_string(l) << "\n";
  return 0;
}

int run_precision(const Args& a) {
  if (a.positional.size() != 1 || a.positional[0] != "nvdla") {
    throw BadInput{"usage: layoutcheck precision nvdla --layer conv|sdp|lrn|pdp --input FORMAT --output PRECISION "
                   "(or --lib PATH.so)"};
  }
  if (a.has("lib")) return precision_lib_main(a);
  const auto o = options_of(a);
  if (o.count("mode") || o.count("conv") || o.count("data")) {
    if (o.count("layer") && o.at("layer") != "sdp") throw BadInput{"--mode, --conv and --data describe an SDP layer (--layer sdp)"};
    return run_sdp_layer(a, o);
  }
  const PrecisionLayer layer = must(parse_precision_layer(need(o, "layer")));
  const PrecisionInput input = must(parse_precision_input(need(o, "input")));
  const DType output = must(parse_dtype(need(o, "output")));
  const PrecisionRow* row = must(nvdla_precision(layer, input, output));
  if (!row->valid) {
    std::cout << "invalid\n" << "row: " << describe_precision_row(*row) << "\n";
    return 1;
  }
  std::cout << "pipeline " << dtype_name(row->pipeline) << "\n";
  std::cout << "weight " << (row->has_weight ? dtype_name(row->weight) : "-") << "\n";
  std::cout << "row: " << describe_precision_row(*row) << "\n";
  return 0;
}

int run_convert(const Args& a) {
  const auto o = options_of(a);
  ConvertSpec s;
  s.rule = must(parse_convert_rule(need(o, "rule")));
  s.from = must(parse_dtype(need(o, "from")));
  s.to = must(parse_dtype(need(o, "to")));
  const bool float_path = s.rule == ConvertRule::kNvdlaFloat;
  const bool nvdla = s.rule == ConvertRule::kNvdla || float_path;
  const bool integer = s.rule == ConvertRule::kNvdlaInt;
  for (const char* k : {"unit", "flush-nan"}) {
    if (o.count(k) && !nvdla) throw BadInput{std::string("--") + k + " applies to rules nvdla and nvdla-float only"};
  }
  for (const char* k : {"offset", "scale", "truncate"}) {
    if (o.count(k) && !integer && !float_path) {
      throw BadInput{std::string("--") + k + " applies to rules nvdla-int and nvdla-float only"};
    }
  }
  if (o.count("unit")) s.unit = must(parse_nvdla_unit(o.at("unit")));
  s.flush_nan = o.count("flush-nan") > 0;
  if (o.count("offset")) s.offset = parse_offset(o.at("offset"));
  if (o.count("scale")) s.scale = parse_scale(o.at("scale"));
  if (o.count("truncate")) s.truncate = must(parse_truncate_mode(o.at("truncate")));
  const std::string impl = o.count("impl") ? o.at("impl") : "optimized";
  const bool plugin = impl.find('/') != std::string::npos || (impl.size() > 3 && impl.compare(impl.size() - 3, 3, ".so") == 0);
  if (impl != "optimized" && impl != "reference" && !plugin) {
    throw BadInput{"unknown --impl '" + impl + "' (reference|optimized|PATH.so)"};
  }
  // The rule and the dtype pair are checked before any input is read.
  if (Status st = validate_convert(s, 0, 0); !st.ok()) throw BadInput{st.message()};
  // A plugin's convert member, run isolated (tools/extension_cli.cc).
  const Converter& c = plugin ? *must(plugin_converter(impl, s))
                              : impl == "reference" ? precision_reference() : precision_optimized();
  const std::vector<uint8_t> in = read_input(o.count("in") ? o.at("in") : "");
  const size_t from_bytes = dtype_bits(s.from) / 8, to_bytes = dtype_bits(s.to) / 8;
  std::vector<uint8_t> out(in.size() / from_bytes * to_bytes);
  NanCounts nan;
  Status st = c.convert(s, in.data(), in.size(), out.data(), out.size(), &nan);
  if (!st.ok()) throw BadInput{st.message()};
  write_output(o.count("out") ? o.at("out") : "", out);
  if (!integer) {
    std::cerr << "nan: input " << nan.input << ", output " << nan.output << "\n";
  }
  return 0;
}

}  // namespace

int precision_main(const Args& a) {
  try {
    return run_precision(a);
  } catch (const BadInput& e) {
    std::cerr << "layoutcheck precision: " << e.message << "\n";
    return 2;
  }
}

int convert_main(const Args& a) {
  try {
    return run_convert(a);
  } catch (const BadInput& e) {
    std::cerr << "layoutcheck convert: " << e.message << "\n";
    return 2;
  }
}

}  // namespace layoutcheck::cli
