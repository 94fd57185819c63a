#include "core/router.h"

#include <atomic>

#include "layoutcheck/byte_rules.h"

namespace layoutcheck {

uint64_t FamilyRouter::next_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

Result<const Impl*> FamilyRouter::route(const Case& c) const {
  // A caller converts one layout many times in a row: the last route of this thread first.
  // The checker asks two routers (reference and optimized) in turn, coordinate by
  // coordinate: each router keeps its own memo (a few slots by id), so they do
  // not evict each other.
  struct Memo {
    uint64_t router = 0;
    std::string layout;
    const Impl* impl = nullptr;
  };
  thread_local Memo memos[4];
  Memo& memo = memos[id_ % 4];
  if (memo.router == id_ && memo.layout == c.layout.name) return memo.impl;
  LC_ASSIGN_OR_RETURN(const Impl* impl, route_uncached(c));
  memo.router = id_;
  memo.layout = c.layout.name;
  memo.impl = impl;
  return impl;
}

Result<const Impl*> FamilyRouter::route_uncached(const Case& c) const {
  // A layout's own implementation, when one is listed, before its family's.
  if (auto own = families_.find(c.layout.name); own != families_.end()) return own->second;
  auto it = families_.find(c.layout.family());
  if (it == families_.end()) {
    return Status::unsupported(name_ + " has no implementation of the " + c.layout.family() + " family");
  }
  return it->second;
}

Status FamilyRouter::supports(const Case& c) const {
  LC_ASSIGN_OR_RETURN(const Impl* impl, route(c));
  return impl->supports(c);
}

Result<uint64_t> FamilyRouter::size_bytes(const Case& c) const {
  LC_ASSIGN_OR_RETURN(const Impl* impl, route(c));
  return impl->size_bytes(c);
}

Result<uint64_t> FamilyRouter::offset_bits(const Case& c, const Coord& at) const {
  LC_ASSIGN_OR_RETURN(const Impl* impl, route(c));
  return impl->offset_bits(c, at);
}

Status FamilyRouter::pack(const Case& c, const void* logical, size_t logical_size, void* physical,
                          size_t physical_size) const {
  LC_ASSIGN_OR_RETURN(const Impl* impl, route(c));
  return impl->pack(c, logical, logical_size, physical, physical_size);
}

Status FamilyRouter::unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                            size_t logical_size) const {
  LC_ASSIGN_OR_RETURN(const Impl* impl, route(c));
  return impl->unpack(c, physical, physical_size, logical, logical_size);
}

Result<std::vector<Fact>> FamilyRouter::describe(const Case& c) const {
  LC_ASSIGN_OR_RETURN(const Impl* impl, route(c));
  return impl->describe(c);
}

Result<ByteRules> FamilyRouter::byte_rules(const Case& c) const {
  LC_ASSIGN_OR_RETURN(const Impl* impl, route(c));
  return impl->byte_rules(c);
}

Status check_buffers(const Impl& impl, const Case& c, size_t logical_size, size_t physical_size) {
  LC_ASSIGN_OR_RETURN(uint64_t want_physical, impl.size_bytes(c));
  return check_buffers(c, want_physical, logical_size, physical_size);
}

Status check_buffers(const Case& c, uint64_t want_physical, size_t logical_size, size_t physical_size) {
  LC_ASSIGN_OR_RETURN(uint64_t want_logical, logical_bytes(c));
  return check_buffers(c, want_logical, want_physical, logical_size, physical_size);
}

Status check_buffers(const Case& c, uint64_t want_logical, uint64_t want_physical, size_t logical_size,
                     size_t physical_size) {
  if (logical_size != want_logical) {
    return Status::invalid("logical buffer is " + std::to_string(logical_size) + " bytes, " + to_string(c) +
                           " needs " + std::to_string(want_logical));
  }
  if (physical_size != want_physical) {
    return Status::invalid("physical buffer is " + std::to_string(physical_size) + " bytes, " + to_string(c) +
                           " needs " + std::to_string(want_physical));
  }
  return Status();
}

Result<uint64_t> FamilyRouter::offset_bits_nested(const Case& c, const IntTuple& at) const {
  LC_ASSIGN_OR_RETURN(const Impl* impl, route(c));
  return impl->offset_bits_nested(c, at);
}

}  // namespace layoutcheck
