// The documents' rejection rules (layoutcheck/rules.h). The references name
// these ids in the Status of every rejection; tests/unit/rules_test.cc checks
// that every rejection names a registered rule and that every rule fires.
#include <algorithm>

#include "layoutcheck/checker.h"
#include "layoutcheck/rules.h"

namespace layoutcheck {
namespace {

constexpr const char* kTpu = "sophgo-tpu-okkernel-local-memory.txt";
constexpr const char* kHtp = "qualcomm-htp-memory-layout.txt";
constexpr const char* kTla = "catlass-tla-layouts.txt";
constexpr const char* kNvdla = "nvdla-in-memory-data-formats.txt";
constexpr const char* kMge = "megengine-tensor-layout.txt";
constexpr const char* kAlign = "Alignment of Start Address and Stride";

std::vector<Rule> make_rules() {
  return {
      // Every layout: the logical tensor.
      {"layout/rank", "*", "", "Case", "the shape has the layout's rank"},
      {"layout/positive-extent", "*", "", "Case", "every extent of the shape is at least 1"},
      {"layout/element-count", "*", "", "Case", "the element count of the shape fits 64 bits"},
      {"layout/unknown", "", "", "Case", "the layout is registered"},

      // Sophgo TPU.
      {"tpu/dtype", "tpu.*", kTpu, "Data Types", "elements are 8-, 16- or 32-bit types"},
      {"tpu/mode-4n-dtype", "tpu.aligned,tpu.compact,tpu.strided,tpu.matrix", kTpu, "Storage Modes, 4N-mode", "4N-mode holds int8 or uint8 data"},
      {"tpu/mode-2n-dtype", "tpu.aligned,tpu.compact,tpu.strided,tpu.matrix", kTpu, "Storage Modes, 2N-mode", "2N-mode holds int16 or uint16 data"},
      {"tpu/mode-2ic-dtype", "tpu.aligned,tpu.compact,tpu.strided", kTpu, "Storage Modes, 2IC-mode", "2IC-mode holds fp32 convolution weights"},
      {"tpu/local-memory-size", "", kTpu, "Address of Tensor in Local Memory",
       "the local memory size X*S fits 64 bits"},
      {"tpu/address-in-local-memory", "tpu.aligned,tpu.compact,tpu.strided,tpu.matrix", kTpu, "Address of Tensor in Local Memory",
       "the address lies in [0, X*S-1]"},
      {"tpu.matrix/w-in-1-m", "tpu.matrix", kTpu, "Matrix Layout", "W, the columns per channel, lies in [1, M]"},
      {"tpu.aligned/address-align-128", "tpu.aligned,tpu.matrix", kTpu, "128-Byte Aligned Layout",
       "the address of the tensor is divisible by 128"},
      {"tpu.aligned/eu-whole-elements", "tpu.aligned,tpu.matrix", kTpu, "128-Byte Aligned Layout",
       "an EU holds a whole number of stored elements"},
      {"tpu.compact/address-align-4", "tpu.compact", kTpu, "Compact Layout",
       "the address of the tensor is divisible by 4"},
      {"tpu.strided/address-align-element", "tpu.strided", kTpu, "Strides in Local Memory",
       "the address is aligned to the stored element (oracles/ERRATA.md)"},
      {"tpu.strided/strides-disjoint", "tpu.strided", kTpu, "Strides in Local Memory",
       "every stride steps over everything the smaller strides span"},
      {"tpu/fits-local-memory", "tpu.aligned,tpu.compact,tpu.strided,tpu.matrix", kTpu, "Address of Tensor in Local Memory",
       "the tensor ends within the local memory S of its NPUs"},
      {"tpu.system/strides-disjoint", "tpu.system", kTpu, "Strides in System Memory",
       "every element has its own place: each stride steps over the elements of the smaller ones"},
      {"tpu.system/size-overflow", "tpu.system", kTpu, "Strides in System Memory", "the buffer up to the last element fits 2^62 bytes"},

      // Qualcomm HTP.
      {"htp/logical-dtype", "htp.*", kHtp, "Flat Layout", "elements are logical types, not packed storage types"},
      {"htp/notation", "htp.chunked,htp.chunk_table", kHtp, "Crouton Layout",
       "the ChunkedMemoryLayout parameters name every dimension once and size its chunk"},
      // Without chunks (flat, nchw) nothing pads: at most 2^56 elements of 4 bytes.
      {"htp/padded-size", "htp.chunked,htp.depth32,htp.crouton*,htp.weights,htp.channel_major_crouton,htp.spatial_*,htp.chunk_table", kHtp, "Crouton Layout",
       "the shape padded to whole chunks has at most 2^56 elements and 2^64 bytes"},
      // The padding value ("user padding need to be explicitly set to quantized 0 (or other specified value)").
      {"htp/pad-value", "htp.chunked,htp.chunk_table,htp.depth32,htp.crouton*,htp.weights,htp.channel_major_crouton,htp.spatial_*",
       kHtp, "Practical tips working with Crouton", "the pad value is a value of the element type (oracles/ERRATA.md)"},
      {"htp/scale-offset-dtype", "htp.chunked,htp.chunk_table,htp.depth32,htp.crouton*,htp.weights,htp.channel_major_crouton,htp.spatial_*",
       kHtp, "Details about Tensors", "ScaleOffsetInterface tensors hold quantized integer types"},
      {"htp/offset-range", "htp.chunked,htp.chunk_table,htp.depth32,htp.crouton*,htp.weights,htp.channel_major_crouton,htp.spatial_*",
       kHtp, "Details about Tensors", "the ScaleOffsetInterface offset (the quantized 0) is a value of the element type"},
      // Chunks placed apart ("chunks are not consecutive in memory").
      {"htp.chunk_table/stride-or-bases", "htp.chunk_table", kHtp, "Practical tips working with Crouton",
       "the chunks are placed by a chunk stride or by a table of bases, not both"},
      {"htp.chunk_table/stride-covers-chunk", "htp.chunk_table", kHtp, "Practical tips working with Crouton",
       "a chunk stride holds a whole chunk (chunks do not overlap)"},
      {"htp.chunk_table/bases-one-per-chunk", "htp.chunk_table", kHtp, "Practical tips working with Crouton",
       "the table lists one byte offset per chunk of the shape, in chunk order"},
      {"htp.chunk_table/base-align-element", "htp.chunk_table", kHtp, "Practical tips working with Crouton",
       "every chunk starts on an element boundary, where get_raw of its first element points (oracles/ERRATA.md)"},
      {"htp.chunk_table/bases-disjoint", "htp.chunk_table", kHtp, "Practical tips working with Crouton",
       "no two chunks of the table share a byte"},
      {"htp.chunk_table/size-overflow", "htp.chunk_table", kHtp, "Practical tips working with Crouton",
       "every chunk ends within 2^60 bytes"},

      // CATLASS TLA.
      {"tla/dtype", "tla.*", kTla, "Layout", "elements are whole bytes of sizeof(ElemType)"},
      {"tla/notation", "tla.layout,tla.tile", kTla, "Layout", "the shape, stride and tile parameters are IntTuples"},
      {"tla.layout/rank-2", "tla.tile", kTla, "Layout 坐标与索引", "the tiled layout has two modes (2-D coordinates)"},
      {"tla.layout/shape-matches", "tla.layout,tla.tile", kTla, "Layout 坐标与索引",
       "the shape is the size of each top-level mode (or, under a tile, the tile's origin shape)"},
      {"tla.tile/tile-rank", "tla.tile", kTla, "MakeLayoutTile", "the tile gives one extent per mode"},
      {"tla.tile/tile-positive", "tla.tile", kTla, "MakeLayoutTile", "every extent of the tile is at least 1"},
      // The named formats derive their strides from the shape: never overlapping,
      // and without padding (row- and column-major) at most 2^56 elements of 4 bytes.
      {"tla/injective", "tla.layout,tla.tile", kTla, "Layout", "every coordinate has its own offset (oracles/ERRATA.md)"},
      {"tla/size-overflow", "tla.layout,tla.tile,tla.zN,tla.nZ,tla.zZ,tla.nN", kTla, "Layout",
       "the cosize in bytes and every offset fit 2^60"},

      // NVDLA.
      {"nvdla/precision", "nvdla.feature*,nvdla.weight.*,nvdla.sdp.*", kNvdla, "Precision Type", "elements are int8, int16 or fp16"},
      {"nvdla.feature/start-address-align-32", "nvdla.feature*", kNvdla, kAlign,
       "the start address of feature data is 32-byte aligned"},
      {"nvdla.feature/line-stride-align-32", "nvdla.feature*", kNvdla, kAlign,
       "the line stride of feature data is 32-byte aligned"},
      {"nvdla.feature/line-stride-covers-line", "nvdla.feature*", kNvdla, "Feature Data Format",
       "the line stride holds one line of W 32-byte atoms"},
      {"nvdla.feature/surface-stride-align-32", "nvdla.feature*", kNvdla, kAlign,
       "the surface stride of feature data is 32-byte aligned"},
      {"nvdla.feature/surface-stride-covers-surface", "nvdla.feature*", kNvdla, "Feature Data Format",
       "the surface stride holds H lines"},
      {"nvdla.feature/size-overflow", "nvdla.feature*", kNvdla, "Feature Data Format",
       "the data cube fits 2^60 bytes"},
      {"nvdla.weight/start-address-align-256", "nvdla.weight.*", kNvdla, kAlign,
       "the start address of weight data is 256-byte aligned"},
      {"nvdla.weight.dc/no-post-extension", "nvdla.weight.dc", kNvdla, "Weight formats and options",
       "weight for direct convolution does not support the post-extension option"},
      {"nvdla.weight.image/post-extension-1-2-4", "nvdla.weight.image", kNvdla,
       "Channel Post-extension for image input", "channel post-extension takes 1, 2 or 4 lines"},
      {"nvdla.weight.image/post-extension-channels", "nvdla.weight.image", kNvdla,
       "Channel Post-extension for image input",
       "two-line extension needs W*C <= 32, four-line W*C <= 16 (oracles/ERRATA.md)"},
      // Direct-convolution and image weights pad to 128 bytes only: at most
      // 2^56 elements of 2 bytes; the Winograd kernels pad C to 32 bytes.
      {"nvdla.weight/size-overflow", "nvdla.weight.winograd,nvdla.weight.deconv", kNvdla, "Basic Weight for Direct Convolution",
       "the mapped weight fits 2^60 bytes"},
      {"nvdla.weight.winograd/kernel-4x4", "nvdla.weight.winograd", kNvdla, "Weight for Winograd Convolution",
       "the converted Winograd kernel is 4x4"},
      {"nvdla.pixel/format", "", kNvdla, "Pixel Format", "the pixel format is one of the table's"},
      {"nvdla.pixel/channels", "nvdla.pixel", kNvdla, "Pixel Format",
       "C is the valid channel size of the pixel format"},
      {"nvdla.pixel/precision", "nvdla.pixel", kNvdla, "Pixel Format",
       "the element type is the input precision of the pixel format"},
      {"nvdla.pixel/x-offset-range", "nvdla.pixel", kNvdla, "Pixel Format",
       "the X offset lies in the format's valid range"},
      {"nvdla.pixel/start-address-align-32", "nvdla.pixel", kNvdla, kAlign,
       "the start address of pitch linear pixel data is 32-byte aligned"},
      {"nvdla.pixel/line-stride-align-32", "nvdla.pixel", kNvdla, kAlign,
       "the line stride of pitch linear pixel data is 32-byte aligned"},
      {"nvdla.pixel/line-stride-covers-line", "nvdla.pixel", kNvdla, "Pixel Format",
       "the line stride holds x offset + W pixels"},
      {"nvdla.pixel/uv-line-stride-align-32", "nvdla.pixel", kNvdla, kAlign,
       "the UV line stride of semi-planar pixel data is 32-byte aligned"},
      {"nvdla.pixel/uv-line-stride-covers-line", "nvdla.pixel", kNvdla, "Pixel Format",
       "the UV line stride holds x offset + W pixels"},
      {"nvdla.pixel/uv-offset-align-32", "nvdla.pixel", kNvdla, kAlign,
       "the UV plane offset of semi-planar pixel data is 32-byte aligned"},
      {"nvdla.pixel/uv-offset-after-y", "nvdla.pixel", kNvdla, "Pixel Format",
       "the UV plane starts after the H lines of the Y plane"},
      {"nvdla.pixel/single-plane-no-uv", "nvdla.pixel", kNvdla, "Pixel Format",
       "uv_line_stride and uv_offset apply to semi-planar formats only"},
      {"nvdla.pixel/size-overflow", "nvdla.pixel", kNvdla, "Pixel Format", "the pixel planes fit 2^60 bytes"},
      {"nvdla.pixel/component-fits", "", kNvdla, "Pixel Format",
       "every component value fits its field of the packed pixel word"},
      {"nvdla.sdp/proc-precision", "nvdla.sdp.*", kNvdla, "SDP Data Format",
       "the element type is the PROC_PRECISION of the use"},
      {"nvdla.sdp/components-per-element", "nvdla.sdp.*", kNvdla, "SDP Data Format",
       "C is the ComponentsPerElement of the use"},
      {"nvdla.sdp/start-address-align-32", "nvdla.sdp.*", kNvdla, kAlign,
       "the start address of SDP data is 32-byte aligned"},
      {"nvdla.sdp/line-stride-align-32", "nvdla.sdp.element", kNvdla, kAlign,
       "the line stride of SDP data is 32-byte aligned"},
      {"nvdla.sdp/line-stride-covers-line", "nvdla.sdp.element", kNvdla, "SDP Data Format",
       "the line stride holds W atoms"},
      {"nvdla.sdp/surface-stride-align-32", "nvdla.sdp.element", kNvdla, kAlign,
       "the surface stride of SDP data is 32-byte aligned"},
      {"nvdla.sdp/surface-stride-covers-surface", "nvdla.sdp.element", kNvdla, "SDP Data Format",
       "the surface stride holds H lines"},
      // Per channel, at most 2^56 elements of 4 bytes or less in 32-byte atoms: below 2^60.
      {"nvdla.sdp/size-overflow", "nvdla.sdp.element", kNvdla, "SDP Data Format", "the SDP data fits 2^60 bytes"},
      // An SDP layer's precisions and its SDP data (check_sdp_layer, layoutcheck/precision.h):
      // rules of a layer, not of one layout's case.
      {"nvdla.precision/sdp-feature-input", "", kNvdla, "Precision Conversion",
       "the SDP reads int8, int16 or fp16 feature data, not an image"},
      {"nvdla.precision/sdp-offline-table", "", kNvdla, "Precision Conversion",
       "offline, (input, output) is a valid row of the SDP table"},
      {"nvdla.precision/conv-mode-input", "", kNvdla, "Precision Conversion",
       "image input mode takes an image, DC and Winograd modes feature data"},
      {"nvdla.precision/conv-table", "", kNvdla, "Precision Conversion",
       "on-flying, the convolution's (input, output) is a valid row of the convolution table"},
      {"nvdla.precision/convert-individually", "", kNvdla, "Precision Conversion",
       "the CDMA and SDP convert precision individually: on-flying, the SDP's input precision is the convolution's output"},
      {"nvdla.precision/on-flying-same-bit-depth", "", kNvdla, "Precision Conversion",
       "on-flying, the SDP's input and output precision have the same bit depth"},
      {"nvdla.precision/sdp-convert-dc-only", "", kNvdla, "Precision Conversion",
       "on-flying, the SDP converts precision behind a DC-mode convolution only"},
      {"nvdla.precision/sdp-data-layout", "", kNvdla, "Batch Normalization Data Format",
       "the SDP data of a layer are nvdla.sdp.channel or nvdla.sdp.element cases"},
      {"nvdla.precision/sdp-data-processing-precision", "", kNvdla, "Batch Normalization Data Format",
       "SDP data is processed at the layer's processing precision, INT8 when it converts between INT16 and INT8"},
      {"nvdla.feature/batch-stride-align-32", "nvdla.feature.batch", kNvdla, kAlign,
       "the batch (planar/cube) stride of feature data is a multiple of 32 bytes"},
      {"nvdla.feature/batch-stride-covers-cube", "nvdla.feature.batch", kNvdla, "Feature Data Format",
       "the batch stride holds one whole cube (surfaces * surface stride)"},
      {"nvdla.weight.winograd/no-post-extension", "nvdla.weight.winograd", kNvdla, "Weight formats and options",
       "weight for Winograd does not support the post-extension option"},
      {"nvdla.weight.deconv/no-post-extension", "nvdla.weight.deconv", kNvdla, "Weight formats and options",
       "weight for deconvolution does not support the post-extension option"},
      // The compressed surfaces are no layout: nvdla::check_surfaces and decompress name these.
      {"nvdla.sparse/wgs-start-address-align-256", "", kNvdla, kAlign, "the WGS surface starts 256-byte aligned"},
      {"nvdla.sparse/wmb-start-address-align-256", "", kNvdla, kAlign, "the WMB surface starts 256-byte aligned"},
      {"nvdla.sparse/wgs-size-align-128", "", kNvdla, kAlign, "the WGS data size is a multiple of 128 bytes"},
      {"nvdla.sparse/wmb-size-align-128", "", kNvdla, kAlign, "the WMB data size is a multiple of 128 bytes"},
      {"nvdla.sparse/data-size-align-128", "", kNvdla, kAlign,
       "the compressed weight data size is a multiple of 128 bytes"},
      // nvdla::check_placement: a placement by addresses and sizes (oracles/ERRATA.md, NVDLA 26).
      {"nvdla.sparse/address-overflow", "", kNvdla, kAlign,
       "a WGS, WMB or compressed weight surface ends within the 64-bit address space (start + size <= 2^64)"},
      {"nvdla.sparse/surfaces-overlap", "", kNvdla, "Sparse Compression option",
       "WGS, WMB and compressed weight are three separated memory surfaces: no byte lies in two of them"},

      // MegEngine.
      // Without padding (nchw, nhwc, matrix) at most 2^56 elements of 32 bits, 2^61 bits.
      {"mge/size-overflow", "mge.nchw4,mge.nchw32,mge.nchw64,mge.chwn4", kMge, "Generalize", "the physical tensor's size in bits fits 2^62"},
      {"mge.strided/strides-text", "mge.strided", kMge, "Tensor stride",
       "strides are 'row' or non-negative element strides separated by ':'"},
      {"mge.strided/strides-rank", "mge.strided", kMge, "Generalize", "one stride per dimension of the shape"},
      {"mge.strided/row-align-byte", "mge.strided", kMge, "Generalize",
       "with row_align=byte the offset and every outer stride are whole bytes"},
      {"mge.strided/in-bounds", "mge.strided", kMge, "How Tensor values are stored in memory",
       "every element of the view lies in its memory block"},
      {"mge.strided/overlap-broadcast-only", "mge.strided", kMge, "Use of stride concept",
       "two elements share memory only along a broadcast dimension (stride 0)"},
      {"mge.strided/size-overflow", "mge.strided", kMge, "Generalize", "the view's block in bits fits 2^62"},
  };
}

}  // namespace

const std::vector<Rule>& rules() {
  static const std::vector<Rule> all = make_rules();
  return all;
}

const Rule* find_rule(std::string_view id) {
  for (const Rule& r : rules()) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

std::vector<const Rule*> rules_of(const std::string& layout) {
  std::vector<const Rule*> out;
  for (const Rule& r : rules()) {
    // `layouts` is a comma-separated list of globs.
    size_t from = 0;
    while (from < r.layouts.size()) {
      size_t comma = std::min(r.layouts.find(',', from), r.layouts.size());
      if (glob_match(r.layouts.substr(from, comma - from), layout)) {
        out.push_back(&r);
        break;
      }
      from = comma + 1;
    }
  }
  return out;
}

bool is_limit_rule(std::string_view id) {
  constexpr std::string_view kSizeOverflow = "/size-overflow";
  // htp/padded-size: the padded element count past 2^56 is layoutcheck's limit, as above.
  return id == "layout/element-count" || id == "layout/positive-extent" || id == "htp/padded-size" ||
         (id.size() > kSizeOverflow.size() && id.substr(id.size() - kSizeOverflow.size()) == kSizeOverflow);
}

}  // namespace layoutcheck
