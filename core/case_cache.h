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
//
// release_case_caches() empties every cache of the calling thread. A fuzz
// harness calls it after each input, so an input frees what it allocated and
// libFuzzer's leak check does not re-run inputs whose case merely stayed cached.
#pragma once

#include <memory>
#include <utility>

#include "layoutcheck/layout.h"
#include "layoutcheck/status.h"

namespace layoutcheck {

// The caches of one thread, linked so that they can be emptied together.
class CaseCacheLink {
 public:
  CaseCacheLink() : next_(head()) {
    if (next_) next_->prev_ = this;
    head() = this;
  }
  CaseCacheLink(const CaseCacheLink&) = delete;
  CaseCacheLink& operator=(const CaseCacheLink&) = delete;
  virtual void release() = 0;
  static void release_all() {
    for (CaseCacheLink* l = head(); l != nullptr; l = l->next_) l->release();
  }

 protected:
  ~CaseCacheLink() {
    if (prev_) prev_->next_ = next_;
    else head() = next_;
    if (next_) next_->prev_ = prev_;
  }

 private:
  static CaseCacheLink*& head() {
    thread_local CaseCacheLink* first = nullptr;
    return first;
  }
  CaseCacheLink* prev_ = nullptr;
  CaseCacheLink* next_;
};

// Empties every CaseCache of the calling thread.
inline void release_case_caches() { CaseCacheLink::release_all(); }

template <typename T>
class CaseCache final : public CaseCacheLink {
 public:
  ~CaseCache() = default;
  void release() override {
    key_ = Case();
    valid_ = false;
    status_ = Status();
    value_.reset();
  }

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
