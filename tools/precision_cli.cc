#include "tools/precision_cli.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "layoutcheck/precision.h"
#include "tools/cli_io.h"
#include "tools/extension_cli.h"

namespace layoutcheck::cli {

namespace {

const char* const kUsage =
    "usage: layoutcheck precision nvdla --layer conv|sdp|lrn|pdp --input FORMAT --output PRECISION\n"
    "         FORMAT: image-uint8|image-int16|image-uint16|image-fp16|int8|int16|fp16; PRECISION: int8|int16|fp16\n"
    "         exit 0: valid (prints the pipeline and weight precision), 1: invalid case, 2: bad input\n"
    "       layoutcheck convert --rule ieee|nvdla|nvdla-int --from D --to D [--in F] [--out F] [--impl reference|PATH.so]\n"
    "         nvdla:     [--unit conv|conv-winograd|sdp|cdp|pdp|pdp-minmax] [--flush-nan]\n"
    "         nvdla-int: [--offset X] [--scale Y] [--truncate nearest-away|nearest-even|toward-zero]\n"
    "         raw little-endian values in and out (at most 256 MiB in); NaN counts on standard error;\n"
    "         --out as for pack: atomic over a regular file, in place on a device or FIFO, symlinks followed\n";

// The most convert reads; a longer input (or an endless one) is an error.
constexpr uint64_t kConvertMaxBytes = uint64_t{256} << 20;

bool wants_help(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

struct BadInput {
  std::string message;
};

// --key value, --key=value, and the flags given; anything else is bad input.
std::map<std::string, std::string> parse_options(int argc, char** argv, int first,
                                                 std::initializer_list<const char*> keys,
                                                 std::initializer_list<const char*> flags) {
  std::map<std::string, std::string> out;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      if (arg.size() > 1 && arg[0] == '-') {
        throw BadInput{"unknown option " + clip_input(arg) + " for '" + argv[1] + "'"};
      }
      throw BadInput{"unexpected argument " + quote_input(arg) + " ('" + argv[1] + "' takes options only)"};
    }
    std::string key = arg.substr(2), value;
    bool has_value = false;
    if (size_t eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key.resize(eq);
      has_value = true;
    }
    bool is_flag = false, is_key = false;
    for (const char* f : flags) is_flag |= key == f;
    for (const char* k : keys) is_key |= key == k;
    if (is_flag) {
      if (has_value) throw BadInput{"option --" + key + " takes no value, got " + quote_input(value)};
      out[key] = "1";
    } else if (is_key) {
      if (!has_value) {
        if (i + 1 >= argc) throw BadInput{"option --" + key + " needs a value"};
        value = argv[++i];
      }
      out[key] = value;
    } else {
      throw BadInput{"unknown option " + clip_input("--" + key) + " for '" + argv[1] + "'"};
    }
  }
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
    throw BadInput{"rule nvdla-int: offset " + quote_input(text) + " is not an integer in " + std::to_string(kNvdlaOffsetMin) +
                   ".." + std::to_string(kNvdlaOffsetMax)};
  }
  return static_cast<int32_t>(v);
}

float parse_scale(const std::string& text) {
  char* end = nullptr;
  const float v = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v)) {
    throw BadInput{"rule nvdla-int: scaling factor " + quote_input(text) + " is not a finite number (held as fp32)"};
  }
  return v;
}

int run_precision(int argc, char** argv) {
  if (argc < 3 || std::string(argv[2]) != "nvdla") {
    throw BadInput{"usage: layoutcheck precision nvdla --layer conv|sdp|lrn|pdp --input FORMAT --output PRECISION"};
  }
  const auto o = parse_options(argc, argv, 3, {"layer", "input", "output"}, {});
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

int run_convert(int argc, char** argv) {
  const auto o = parse_options(argc, argv, 2,
                               {"rule", "from", "to", "unit", "offset", "scale", "truncate", "impl", "in", "out"},
                               {"flush-nan"});
  ConvertSpec s;
  s.rule = must(parse_convert_rule(need(o, "rule")));
  s.from = must(parse_dtype(need(o, "from")));
  s.to = must(parse_dtype(need(o, "to")));
  const bool nvdla = s.rule == ConvertRule::kNvdla, integer = s.rule == ConvertRule::kNvdlaInt;
  for (const char* k : {"unit", "flush-nan"}) {
    if (o.count(k) && !nvdla) throw BadInput{std::string("--") + k + " applies to rule nvdla only"};
  }
  for (const char* k : {"offset", "scale", "truncate"}) {
    if (o.count(k) && !integer) throw BadInput{std::string("--") + k + " applies to rule nvdla-int only"};
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

int precision_main(int argc, char** argv) {
  if (wants_help(argc, argv)) {
    std::cout << kUsage;
    return 0;
  }
  try {
    return run_precision(argc, argv);
  } catch (const BadInput& e) {
    std::cerr << "layoutcheck precision: " << e.message << "\n";
    return 2;
  }
}

int convert_main(int argc, char** argv) {
  if (wants_help(argc, argv)) {
    std::cout << kUsage;
    return 0;
  }
  try {
    return run_convert(argc, argv);
  } catch (const BadInput& e) {
    std::cerr << "layoutcheck convert: " << e.message << "\n";
    return 2;
  }
}

}  // namespace layoutcheck::cli
