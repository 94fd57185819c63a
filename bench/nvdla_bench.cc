// NVDLA: feature data pack/unpack (int8, fp16), direct-convolution, image-input,
// Winograd and deconvolution weight translation, pixel formats, SDP data and
// sparse weight compression, beside memcpy of the same bytes.
#include <cstring>
#include <memory>

#include "bench_util.h"
#include "layoutcheck/checker.h"
#include "layoutcheck/nvdla.h"

namespace layoutcheck {
namespace {

// Sparse weights: about half the elements zero.
struct SparseInput {
  Case c;
  bench::Buffer packed;
};

SparseInput sparse_input(const Case& c) {
  SparseInput s{c, {}};
  bench::Buffer logical = bench::position_unique(c, 7);
  const uint64_t eb = dtype_bits(c.dtype) / 8;
  for (uint64_t i = 0; i < logical.size() / eb; ++i) {
    if ((i * 2654435761u >> 7) & 1) std::memset(logical.data() + i * eb, 0, eb);
  }
  s.packed.resize(*optimized_impl().size_bytes(c));
  (void)optimized_impl().pack(c, logical.data(), logical.size(), s.packed.data(), s.packed.size());
  return s;
}

void register_sparse(const std::string& group, const Case& c) {
  auto input = std::make_shared<SparseInput>(sparse_input(c));
  const uint64_t bytes = input->packed.size();
  bench::register_row(group, "memcpy", bytes, [input](benchmark::State& state) {
    bench::Buffer out(input->packed.size());
    for (auto _ : state) {
      std::memcpy(out.data(), input->packed.data(), out.size());
      benchmark::DoNotOptimize(out.data());
    }
  });
  bench::register_row(group, "compress/optimized", bytes, [input](benchmark::State& state) {
    bench::Buffer out(input->packed.size());
    bench::run_paired(state, out.data(), input->packed.data(), out.size(), [&] {
      auto z = nvdla::compress(input->c, input->packed.data(), input->packed.size());
      benchmark::DoNotOptimize(z.ok());
    });
  });
  bench::register_row(group, "compress/reference", bytes, [input](benchmark::State& state) {
    for (auto _ : state) {
      auto z = nvdla::compress_reference(input->c, input->packed.data(), input->packed.size());
      benchmark::DoNotOptimize(z.ok());
    }
  });
  auto z = std::make_shared<nvdla::CompressedWeights>(*nvdla::compress(c, input->packed.data(), input->packed.size()));
  bench::register_row(group, "decompress/optimized", bytes, [input, z](benchmark::State& state) {
    bench::Buffer out(input->packed.size());
    bench::run_paired(state, out.data(), input->packed.data(), out.size(), [&] {
      Status s = nvdla::decompress(input->c, *z, out.data(), out.size());
      benchmark::DoNotOptimize(s.ok());
    });
  });
}

const bool registered = [] {
  bench::register_rows({
      bench::Row{"nvdla.feature/int8/16MiB", "nvdla.feature", "int8", "256,256,256", true},
      bench::Row{"nvdla.feature/fp16/16MiB", "nvdla.feature", "fp16", "128,256,256", true},
      bench::Row{"nvdla.feature/int8/unpacked", "nvdla.feature(line_stride=8224)", "int8", "256,256,256", false},
      bench::Row{"nvdla.feature/int8/1x1xC", "nvdla.feature", "int8", "1048576,1,1", false},
      bench::Row{"nvdla.weight.dc/int8/3x3", "nvdla.weight.dc", "int8", "256,256,3,3", true},
      bench::Row{"nvdla.weight.dc/fp16/3x3", "nvdla.weight.dc", "fp16", "256,256,3,3", false},
      bench::Row{"nvdla.weight.dc/int8/1x1", "nvdla.weight.dc", "int8", "1024,1024,1,1", false},
      bench::Row{"nvdla.weight.dc/int8/5x5", "nvdla.weight.dc", "int8", "256,256,5,5", false},
      bench::Row{"nvdla.weight.image/int8/7x7x3", "nvdla.weight.image", "int8", "4096,3,7,7", false},
      bench::Row{"nvdla.weight.image/int8/3x3x3", "nvdla.weight.image", "int8", "4096,3,3,3", false},
      bench::Row{"nvdla.weight.image/fp16/7x7x3", "nvdla.weight.image", "fp16", "4096,3,7,7", false},
      bench::Row{"nvdla.weight.winograd/fp16", "nvdla.weight.winograd", "fp16", "256,256,4,4", false},
      bench::Row{"nvdla.weight.deconv/int8/4x4-stride2", "nvdla.weight.deconv(stride_x=2,stride_y=2)", "int8",
                 "256,256,4,4", false},
      bench::Row{"nvdla.pixel/T_A8B8G8R8/1080p", "nvdla.pixel(format=T_A8B8G8R8,x_offset=3)", "uint8", "1080,1920,4", false},
      bench::Row{"nvdla.pixel/T_Y8___U8V8_N444/1080p", "nvdla.pixel(format=T_Y8___U8V8_N444)", "uint8", "1080,1920,3", false},
      bench::Row{"nvdla.pixel/T_A2B10G10R10/1080p", "nvdla.pixel(format=T_A2B10G10R10)", "uint16", "1080,1920,4", false},
      bench::Row{"nvdla.sdp.element/ew2-int16/4MiB", "nvdla.sdp.element(use=ew2)", "int16", "64,128,128,2", false},
  });
  for (auto [group, dtype] : {std::pair{"nvdla.sparse/int8/4MiB", "int8"}, std::pair{"nvdla.sparse/fp16/4MiB", "fp16"}}) {
    auto c = parse_case("nvdla.weight.dc", dtype, std::string(dtype) == "int8" ? "512,1024,3,3" : "256,1024,3,3");
    if (c.ok()) register_sparse(group, *c);
  }
  return true;
}();

}  // namespace
}  // namespace layoutcheck
