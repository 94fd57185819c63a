// An Impl that routes each case to the implementation of its layout's family
// (or of the layout itself, when its full name is listed).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "layoutcheck/impl.h"

namespace layoutcheck {

class FamilyRouter : public Impl {
 public:
  FamilyRouter(std::string name, std::map<std::string, const Impl*> families)
      : name_(std::move(name)), families_(std::move(families)), id_(next_id()) {}
  std::string name() const override { return name_; }
  Status supports(const Case& c) const override;
  Result<uint64_t> size_bytes(const Case& c) const override;
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override;
  Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
              size_t physical_size) const override;
  Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                size_t logical_size) const override;
  Result<std::vector<Fact>> describe(const Case& c) const override;
  Result<ByteRules> byte_rules(const Case& c) const override;
  Result<uint64_t> offset_bits_nested(const Case& c, const IntTuple& at) const override;

 private:
  Result<const Impl*> route(const Case& c) const;
  Result<const Impl*> route_uncached(const Case& c) const;
  std::string name_;
  std::map<std::string, const Impl*> families_;
  uint64_t id_;  // names this router in each thread's memo of its last route (never reused)
  static uint64_t next_id();
};

}  // namespace layoutcheck
