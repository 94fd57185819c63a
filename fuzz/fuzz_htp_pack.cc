// HTP differential fuzzer: bytes build an arbitrary ChunkedMemoryLayout (rank,
// chunk order, sized pairs), a shape near its chunk extents, a dtype, a pad
// value and now and then a chunk stride; optimized pack/unpack/offsets must equal the reference's. A text case
// ("case: LAYOUT | DTYPE | SHAPE") is replayed as written.
#include <string>

#include "core/htp_notation.h"
#include "fuzz_util.h"
#include "input_scope.h"

using namespace layoutcheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputScope scope;
  Case c;
  if (!fuzz::parse_text_case(std::string(reinterpret_cast<const char*>(data), size), &c)) {
    fuzz::Bytes in(data, size);
    HtpNotation n;
    n.rank = static_cast<int64_t>(in.take(1) % 5) + 1;
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < n.rank; ++d) dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(in.take(1) % (dims.size() + 1)), d);
    for (int64_t d : dims) n.pairs.push_back({d, 0});
    static const uint64_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 32};
    const uint64_t sized = in.take(1) % 6;
    std::vector<int64_t> chunk(static_cast<size_t>(n.rank), 1);
    for (uint64_t i = 0; i < sized; ++i) {
      const uint64_t b = in.take(1);
      HtpPair p{static_cast<int64_t>(b % static_cast<uint64_t>(n.rank)), kSizes[(b >> 4) % 8]};
      n.pairs.push_back(p);
      chunk[static_cast<size_t>(p.dim)] *= static_cast<int64_t>(p.size);
    }
    static const DType kTypes[] = {DType::kUInt8, DType::kFp16, DType::kFp32, DType::kInt8};
    c.dtype = kTypes[in.take(1) % 4];
    // The pad: a byte, a typed value, or a scale/offset tensor's quantized 0.
    static const char* kPads[] = {"31.0", "-1", "-0.0", "0.1", "inf", "2049", "70000", "-128"};
    const uint64_t pad = in.take(1);
    ParamMap params = {{"rank", std::to_string(n.rank)}, {"pairs", htp_pairs_param(n)}};
    if (pad % 4 == 0) params["pad"] = kPads[(pad >> 2) % 8];
    else if (pad % 4 == 1) params["interface"] = "scale_offset", params["offset"] = std::to_string(pad >> 2);
    else params["pad"] = std::to_string(pad);
    // Chunks placed apart now and then: a chunk stride of a chunk plus a gap (htp.chunk_table).
    uint64_t chunk_bytes = dtype_bits(c.dtype) / 8;
    for (int64_t e : chunk) chunk_bytes *= static_cast<uint64_t>(e);
    const uint64_t place = in.take(1);
    if (place % 3 == 1) params["chunk_stride"] = std::to_string(chunk_bytes + (place >> 2) % 17);
    auto layout = make_layout(params.count("chunk_stride") ? "htp.chunk_table" : "htp.chunked", params);
    if (!layout.ok()) return 0;
    c.layout = *layout;
    for (int64_t e : chunk) {
      const uint64_t b = in.take(1);
      const int64_t delta = static_cast<int64_t>(b % 5) - 2;  // -2 .. +2 around a multiple of the chunk
      c.shape.push_back(std::max<int64_t>(1, e * static_cast<int64_t>((b >> 3) % 3 + 1) + delta));
    }
  }
  fuzz::require_agreement(c, reference_impl(), optimized_impl(), size);
  return 0;
}
