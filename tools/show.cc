// layoutcheck show — a layout as a picture (layoutcheck/picture.h).
//
//   layoutcheck show LAYOUT --dtype D --shape S [--impl NAME|PATH.so] [--format text|svg|html]
//                    [--out FILE] [--max-rows N]
//
// Options (read by cmd_show in tools/layoutcheck.cc through Args):
//   --dtype, --shape  the case, as for every command
//   --impl            reference (default), optimized, or a plugin .so (run isolated)
//   --format          text (default): grids of byte offsets over the logical view and the
//                     physical rows with the coordinate each cell holds; svg: the physical
//                     memory drawn the way the family's document draws it; html: the SVG in a
//                     self-contained page (hover, click to highlight, slider over outer indices)
//   --out             the file to write (atomically); standard output by default
//   --max-rows        physical rows drawn per column (default 64); larger cases are capped and
//                     the picture states the elided range
//
// The pictures of a failure: `check --save DIR` writes NAME.svg and NAME.html
// beside each regression file NAME.txt; `replay --picture DIR|FILE` and `repro
// --picture FILE` write them on failure and print the path.
#include "tools/show.h"

#include <filesystem>

#include "layoutcheck/picture.h"
#include "tools/cli_io.h"

namespace layoutcheck::cli {
namespace {

Status write_text(const std::string& path, const std::string& text) {
  return write_output(path, reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

std::string html_path_of(const std::string& svg_path) {
  std::filesystem::path p(svg_path);
  if (p.extension() == ".svg") return p.replace_extension(".html").string();
  return svg_path + ".html";
}

}  // namespace

Status check_show_format(const std::string& format) {
  if (format == "text" || format == "svg" || format == "html") return Status();
  return Status::invalid("--format " + format + " is not a picture format: text, svg or html");
}

Status show(const Case& c, const Impl& impl, const ShowRequest& request) {
  LC_RETURN_IF_ERROR(check_show_format(request.format));
  PictureOptions options;
  options.max_rows = request.max_rows;
  LC_ASSIGN_OR_RETURN(Picture p, make_picture(c, impl, options));
  const std::string out = request.format == "svg"    ? render_svg(p)
                          : request.format == "html" ? render_html(p)
                                                     : render_text(p);
  return write_text(request.out, out);
}

Result<std::string> write_failure_picture(const Case& c, const Impl& actual, const std::string& message,
                                          const std::string& svg_path) {
  auto expected = make_picture(c, reference_impl());
  if (!expected.ok()) return Status::invalid("no picture of the failure: reference: " + expected.status().message());
  auto got = make_picture(c, actual);
  if (!got.ok()) return Status::invalid("no picture of the failure: " + actual.name() + ": " + got.status().message());
  const std::string caption = failure_caption(message);
  LC_RETURN_IF_ERROR(write_text(svg_path, render_failure_svg(*expected, *got, caption)));
  LC_RETURN_IF_ERROR(write_text(html_path_of(svg_path), render_failure_html(*expected, *got, caption)));
  std::error_code ec;
  const auto abs = std::filesystem::absolute(svg_path, ec);
  return ec ? svg_path : abs.string();
}

std::string picture_path_beside(const std::string& regression_path) {
  std::filesystem::path p(regression_path);
  return p.replace_extension(".svg").string();
}

}  // namespace layoutcheck::cli
