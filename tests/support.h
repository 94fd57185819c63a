// Shared helpers for the test programs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "core/guarded.h"
#include "layoutcheck/byte_rules.h"
#include "layoutcheck/checker.h"
#include "layoutcheck/impl.h"
#include "optimized/isa.h"
#include "optimized/threads.h"

namespace layoutcheck::testing {

inline Case must_case(const std::string& layout, const std::string& dtype, const std::string& shape) {
  auto c = parse_case(layout, dtype, shape);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : Case{};
}

inline uint64_t must_offset(const Impl& impl, const Case& c, const Coord& at) {
  auto r = impl.offset_bits(c, at);
  EXPECT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.ok() ? *r % 8 : 0, 0u);
  return r.ok() ? *r / 8 : ~uint64_t{0};
}

// The reference's describe() facts of a case, by name.
inline std::map<std::string, std::string> facts_of(const Case& c) {
  auto f = reference_impl().describe(c);
  EXPECT_TRUE(f.ok()) << f.status().message();
  std::map<std::string, std::string> out;
  if (f.ok()) out.insert(f->begin(), f->end());
  return out;
}

// The optimized implementation passes the checker on one case.
inline void expect_pass(const std::string& layout, const std::string& dtype, const std::string& shape) {
  CheckReport r = check(must_case(layout, dtype, shape), reference_impl(), optimized_impl());
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
}

// An Impl that forwards to another; tests override one method to plant a bug
// and check that the checker reports it.
class ForwardingImpl : public Impl {
 public:
  explicit ForwardingImpl(const Impl& inner, std::string name = "mutant") : inner_(inner), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  Status supports(const Case& c) const override { return inner_.supports(c); }
  Result<uint64_t> size_bytes(const Case& c) const override { return inner_.size_bytes(c); }
  Result<uint64_t> offset_bits(const Case& c, const Coord& at) const override { return inner_.offset_bits(c, at); }
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    return inner_.pack(c, l, ls, p, ps);
  }
  Status unpack(const Case& c, const void* p, size_t ps, void* l, size_t ls) const override {
    return inner_.unpack(c, p, ps, l, ls);
  }
  Result<uint64_t> offset_bits_nested(const Case& c, const IntTuple& at) const override {
    return inner_.offset_bits_nested(c, at);
  }

 protected:
  const Impl& inner_;
  std::string name_;
};

// An Impl that answers pack, unpack and byte_rules as another does, and gives
// the bytes it gave before when asked the same again (same case, same input):
// the reference's work for a large case is done once however many times the
// checker runs the case.
class RecordedImpl : public ForwardingImpl {
 public:
  explicit RecordedImpl(const Impl& inner) : ForwardingImpl(inner, inner.name()) {}
  Result<std::vector<Fact>> describe(const Case& c) const override { return inner_.describe(c); }
  Result<ByteRules> byte_rules(const Case& c) const override {
    const std::string key = to_string(c);
    if (!rules_ || rules_->first != key) rules_.emplace(key, inner_.byte_rules(c));
    return rules_->second;
  }
  Status pack(const Case& c, const void* l, size_t ls, void* p, size_t ps) const override {
    return replay(&packed_, c, l, ls, p, ps, [&] { return inner_.pack(c, l, ls, p, ps); });
  }
  Status unpack(const Case& c, const void* p, size_t ps, void* l, size_t ls) const override {
    return replay(&unpacked_, c, p, ps, l, ls, [&] { return inner_.unpack(c, p, ps, l, ls); });
  }

 private:
  struct Call {
    std::string key;
    std::vector<uint8_t> in, out;
    Status status;
  };
  template <typename Run>
  static Status replay(Call* last, const Case& c, const void* in, size_t in_size, void* out, size_t out_size,
                       Run run) {
    const auto* bytes = static_cast<const uint8_t*>(in);
    const std::string key = to_string(c) + " " + std::to_string(out_size);
    if (last->key == key && last->in.size() == in_size && std::equal(bytes, bytes + in_size, last->in.begin())) {
      std::copy(last->out.begin(), last->out.end(), static_cast<uint8_t*>(out));
      return last->status;
    }
    last->in.assign(bytes, bytes + in_size);
    last->status = run();
    const auto* written = static_cast<const uint8_t*>(out);
    last->out.assign(written, written + out_size);
    last->key = key;
    return last->status;
  }
  mutable std::optional<std::pair<std::string, Result<ByteRules>>> rules_;
  mutable Call packed_, unpacked_;
};

// expect_pass() at the best instruction-set level the CPU has, then with the
// kernels capped at each level below it: there the optimized bytes must be
// those the checker passed, exactly. Each level packs into a poisoned buffer
// (nothing written around the image) and unpacks the checker's image, whose
// free bytes hold its non-zero fill, into another. The reference's side is
// computed once, and the checker's per-case work (offsets, byte rules, the
// reference's buffers) is done once, not once a level.
inline void expect_pass_at_every_isa(const std::string& layout, const std::string& dtype, const std::string& shape) {
  const Case c = must_case(layout, dtype, shape);
  RecordedImpl reference(reference_impl());
  const CheckOptions options;
  const CheckReport r = check(c, reference, optimized_impl(), options);
  ASSERT_EQ(r.verdict, Verdict::kPass) << isa_name(optimized_isa()) << ": " << r.message;
  std::vector<uint8_t> logical;
  fill_position_unique(c, options.seed, &logical);
  const size_t lb = logical.size(), pb = *reference.size_bytes(c), guard = options.guard_bytes;
  // The passed bytes and the checker's unpack input.
  std::vector<uint8_t> passed(pb), image(pb);
  ASSERT_TRUE(optimized_impl().pack(c, logical.data(), lb, passed.data(), pb).ok());
  ASSERT_TRUE(reference.pack(c, logical.data(), lb, image.data(), pb).ok());
  auto rules = reference.byte_rules(c);
  if (rules.ok()) fill_free_bytes(*rules, options.seed, image.data());
  constexpr uint8_t kPoison = 0x5A;
  Guarded physical(pb, guard, kPoison), back(lb, guard, kPoison);
  int64_t where = 0;
  for (Isa isa : available_isas()) {
    if (isa >= optimized_isa()) break;
    IsaCapScope cap(isa);
    std::fill(physical.bytes.begin(), physical.bytes.end(), kPoison);
    ASSERT_TRUE(optimized_impl().pack(c, logical.data(), lb, physical.data(), pb).ok()) << isa_name(isa);
    EXPECT_EQ(0, std::memcmp(physical.data(), passed.data(), pb)) << isa_name(isa) << " pack";
    EXPECT_TRUE(physical.guards_intact(&where)) << isa_name(isa) << " pack wrote outside the image, at byte " << where;
    std::fill(back.bytes.begin(), back.bytes.end(), kPoison);
    ASSERT_TRUE(optimized_impl().unpack(c, image.data(), pb, back.data(), lb).ok()) << isa_name(isa);
    EXPECT_TRUE(back.guards_intact(&where)) << isa_name(isa) << " unpack wrote outside the tensor, at byte " << where;
    clear_spare_bits(*element_count(c.shape), dtype_bits(c.dtype), back.data(), lb);
    EXPECT_EQ(0, std::memcmp(back.data(), logical.data(), lb)) << isa_name(isa) << " unpack";
  }
}

// Every thread count (optimized/threads.h) writes the reference's bytes,
// packing and unpacking, at every instruction-set level the CPU has.
inline void expect_same_bytes_at_every_thread_count(const std::string& layout, const std::string& dtype,
                                                    const std::string& shape,
                                                    const std::vector<unsigned>& counts = {1, 2, 3, 7}) {
  SCOPED_TRACE(layout + " " + dtype + " " + shape);
  const Case c = must_case(layout, dtype, shape);
  std::vector<uint8_t> logical;
  fill_position_unique(c, 7, &logical);
  const uint64_t size = *reference_impl().size_bytes(c);
  // Bytes neither writes (the gaps between placed chunks) keep the same fill on both sides.
  std::vector<uint8_t> expected(size, 0x5A);
  ASSERT_TRUE(reference_impl().pack(c, logical.data(), logical.size(), expected.data(), size).ok());
  std::vector<uint8_t> physical(size), back(logical.size());
  for (Isa isa : available_isas()) {
    IsaCapScope cap(isa);
    for (unsigned threads : counts) {
      std::fill(physical.begin(), physical.end(), 0x5A);
      std::fill(back.begin(), back.end(), 0xA5);
      ASSERT_TRUE(optimized_pack(c, logical.data(), logical.size(), physical.data(), size, threads).ok());
      EXPECT_TRUE(physical == expected) << isa_name(isa) << " pack, threads " << threads;
      ASSERT_TRUE(optimized_unpack(c, physical.data(), size, back.data(), back.size(), threads).ok());
      EXPECT_TRUE(back == logical) << isa_name(isa) << " unpack, threads " << threads;
    }
  }
}

}  // namespace layoutcheck::testing
