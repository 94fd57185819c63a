// The description an implementation derives from a case (its parsed layout,
// its plan), kept for the last case each thread asked about. The checker asks
// one case many questions (supports, size, an offset per element, pack,
// unpack, byte rules); without the cache each of them parses the layout's
// parameters and looks up its spec again.
//
//   Result<std::shared_ptr<const Plan>> cached_plan(const Case& c) {
//     thread_local CaseCache<Plan> cache;
//     return cache.get(c, make_plan);
//   }
//
// The value is shared, so a caller holding it is not disturbed when a nested
// call caches another case. Comparing the case allocates nothing.
#pragma once

#include <memory>
#include <utility>

#include "layoutcheck/layout.h"
#include "layoutcheck/status.h"

namespace layoutcheck {

template <typename T>
class CaseCache {
 public:
  template <typename Make>
  Result<std::shared_ptr<const T>> get(const Case& c, Make&& make) {
    if (!valid_ || !(key_ == c)) {
      Result<T> r = make(c);
      if (r.ok()) {
        value_ = std::make_shared<const T>(std::move(r).value());
        status_ = Status();
      } else {
        value_.reset();
        status_ = r.status();
      }
      key_ = c;
      valid_ = true;
    }
    if (!value_) return status_;
    return value_;
  }

 private:
  Case key_;
  bool valid_ = false;
  Status status_;
  std::shared_ptr<const T> value_;
};

}  // namespace layoutcheck
