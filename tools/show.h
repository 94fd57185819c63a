// `layoutcheck show` and the pictures of a failure (check --save, replay
// --picture, repro --picture). See tools/show.cc.
#pragma once

#include <cstdint>
#include <string>

#include "layoutcheck/impl.h"
#include "layoutcheck/layout.h"
#include "layoutcheck/status.h"

namespace layoutcheck::cli {

struct ShowRequest {
  std::string format = "text";  // text | svg | html
  std::string out = "-";        // "-" = standard output
  uint64_t max_rows = 64;       // physical rows drawn per column (the window)
};

// Checks the format name; an error names the accepted ones.
Status check_show_format(const std::string& format);

// Draws the case as `impl` places it and writes it where the request says.
Status show(const Case& c, const Impl& impl, const ShowRequest& request);

// The picture of a failure of `actual` against the reference: writes
// `svg_path` and the HTML page beside it (same name, .html); returns the SVG's
// path. `message` is the checker's report (its diagnosis is the caption).
Result<std::string> write_failure_picture(const Case& c, const Impl& actual, const std::string& message,
                                          const std::string& svg_path);

// Where the picture of a regression file goes: DIR/NAME.svg for DIR/NAME.txt.
std::string picture_path_beside(const std::string& regression_path);

}  // namespace layoutcheck::cli
