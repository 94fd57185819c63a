// The sandbox a plugin runs in: guard pages named, limits, timeouts, stray
// processes; and the validation of a plugin's table.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "layoutcheck/c_api.h"
#include "layoutcheck/isolate.h"
#include "layoutcheck/plugin.h"

namespace layoutcheck {
namespace {

std::string failure_of(const std::function<void()>& body, double timeout = 10) {
  SandboxLimits limits;
  limits.timeout_seconds = timeout;
  Sandbox box(limits);
  Status s = box.start([&](int fd) {
    body();
    Sandbox::child_send(fd, "done");
  });
  if (!s.ok()) return "start: " + s.message();
  auto r = box.receive(1 << 20, "the test");
  return r.ok() ? "" : r.status().message();
}

TEST(Sandbox, names_a_write_into_the_guard_page_before_a_buffer) {
  std::string m = failure_of([] {
    GuardedPages b(24, "physical buffer");
    volatile uint8_t* p = b.data();
    p[-5000] = 1;
  });
  EXPECT_NE(m.find("wrote 5000 bytes before the physical buffer"), std::string::npos) << m;
  EXPECT_NE(m.find("SIGSEGV"), std::string::npos) << m;
}

TEST(Sandbox, names_a_write_past_the_end) {
  std::string m = failure_of([] {
    GuardedPages b(24, "logical buffer");
    volatile uint8_t* p = b.data();
    p[24] = 1;
  });
  EXPECT_NE(m.find("wrote past the end of the logical buffer (byte 24 of 24)"), std::string::npos) << m;
}

TEST(Sandbox, a_write_into_the_slack_is_found_after_the_call) {
  GuardedPages b(24, "physical buffer");
  EXPECT_TRUE(b.check_slack("pack").ok());
  b.data()[-3] = 0;
  Status s = b.check_slack("pack");
  EXPECT_NE(s.message().find("wrote 3 bytes before the physical buffer"), std::string::npos) << s.message();
}

// A buffer of a size the thread had before takes the latest such mapping
// again, whatever else the pool holds (here: full of that size): it reads as a
// new one, zeros with the slack poisoned, and its guard pages still guard.
TEST(Sandbox, a_mapping_taken_again_reads_as_new) {
  {
    std::vector<std::unique_ptr<GuardedPages>> older;
    for (int i = 0; i < 10; ++i) older.push_back(std::make_unique<GuardedPages>(100, "physical buffer"));
  }
  const uint8_t* first = nullptr;
  {
    GuardedPages b(100, "physical buffer");
    first = b.data();
    std::memset(b.data() - 50, 0xAB, 150);  // the data and part of the slack
  }
  GuardedPages b(100, "physical buffer");
  EXPECT_EQ(b.data(), first) << "the mapping was not taken again";
  for (size_t i = 0; i < 100; ++i) ASSERT_EQ(b.data()[i], 0) << "byte " << i;
  EXPECT_TRUE(b.check_slack("pack").ok());
  b.data()[-50] = 0;
  EXPECT_NE(b.check_slack("pack").message().find("wrote 50 bytes before"), std::string::npos);
  std::string m = failure_of([] {
    { GuardedPages warm(24, "logical buffer"); }
    GuardedPages again(24, "logical buffer");
    volatile uint8_t* p = again.data();
    p[24] = 1;
  });
  EXPECT_NE(m.find("wrote past the end of the logical buffer (byte 24 of 24)"), std::string::npos) << m;
}

// The slack is read a word at a time: every distance is found, the farthest
// named, whatever the slack's length modulo 8.
TEST(Sandbox, the_farthest_write_into_the_slack_is_named) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t size : {size_t{1}, size_t{21}, size_t{24}, page - 7, page - 1}) {
    const size_t slack = page - size;
    for (size_t far : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, slack / 2, slack}) {
      if (far == 0 || far > slack) continue;
      GuardedPages b(size, "physical buffer");
      b.data()[-static_cast<ptrdiff_t>(far)] = 0;
      if (far > 1) b.data()[-1] = 0;
      Status s = b.check_slack("pack");
      EXPECT_NE(s.message().find("wrote " + std::to_string(far) + " bytes before"), std::string::npos)
          << "size " << size << ", " << far << " bytes before: " << s.message();
    }
  }
}

TEST(Sandbox, a_hang_is_a_timeout_and_output_is_capped) {
  std::string m = failure_of(
      [] {
        std::string line(1000, 'x');
        for (int i = 0; i < 1000; ++i) (void)!write(1, line.data(), line.size());
        for (volatile bool forever = true; forever;) {
        }
      },
      1);
  EXPECT_NE(m.find("did not finish within 1 s during the test"), std::string::npos) << m.substr(0, 200);
  EXPECT_LT(m.size(), 2000u);
}

// Running, not a zombie waiting for a reaper.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

TEST(Sandbox, a_process_left_running_is_named_and_killed) {
  Sandbox box;
  ASSERT_TRUE(box.start([](int fd) {
                   pid_t p = fork();
                   if (p == 0) {
                     pause();
                     _exit(0);
                   }
                   Sandbox::child_send(fd, std::to_string(p) + " " + Sandbox::child_stray_processes());
                 }).ok());
  auto r = box.receive(1 << 20, "the test");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->find("left it running"), std::string::npos) << *r;
  const pid_t stray = static_cast<pid_t>(std::stol(*r));
  EXPECT_TRUE(alive(stray));
  box.stop();
  // It was in the child's process group: it is gone.
  for (int i = 0; i < 500 && alive(stray); ++i) usleep(10000);
  EXPECT_FALSE(alive(stray)) << "process " << stray << " outlived the sandbox";
}

TEST(Sandbox, a_memory_hog_runs_out_of_memory) {
  if (!sandbox_limits_memory()) GTEST_SKIP() << "RLIMIT_AS is not applied under AddressSanitizer";
  std::string m = failure_of([] {
    for (int i = 0; i < 64; ++i) {
      volatile char* p = static_cast<char*>(std::malloc(size_t{1} << 30));
      p[0] = 1;
    }
  });
  EXPECT_NE(m.find("ran out of memory"), std::string::npos) << m;
}

lc_status ok_supports(const lc_case*, char*, size_t) { return LC_OK; }
lc_status ok_size(const lc_case*, uint64_t* b) { return *b = 0, LC_OK; }
lc_status ok_pack(const lc_case*, const void*, size_t, void*, size_t) { return LC_OK; }

lc_plugin table_with(const lc_capability* caps, uint32_t count) {
  return lc_plugin{LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), "t", caps, count,
                   ok_supports, ok_size, nullptr, ok_pack, ok_pack, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
}

TEST(PluginTable, a_capability_count_beyond_the_limit_is_refused) {
  static const lc_capability one[] = {{"tpu.*", "*", 0}};
  lc_plugin t = table_with(one, 1000000);
  auto p = plugin_from_table(&t, "x.so");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("capability_count is 1000000, more than the 4096"), std::string::npos)
      << p.status().message();
}

TEST(PluginTable, a_null_glob_names_its_entry) {
  static const lc_capability caps[] = {{"tpu.*", "*", 0}, {nullptr, "*", 0}};
  lc_plugin t = table_with(caps, 2);
  auto p = plugin_from_table(&t, "x.so");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("capabilities[1] has a NULL layout_glob"), std::string::npos)
      << p.status().message();
}

TEST(PluginTable, a_valid_table_is_accepted) {
  static const lc_capability caps[] = {{"tpu.*", "int8 fp32", 16}};
  lc_plugin t = table_with(caps, 1);
  auto p = plugin_from_table(&t, "x.so");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)->capabilities().size(), 1u);
  EXPECT_FALSE((*p)->has_offset_bits());
  EXPECT_EQ(plugin_from_table(nullptr, "x.so").status().code(), StatusCode::kInvalid);
}

TEST(PluginTable, a_plugin_that_cannot_be_loaded_is_an_error_not_a_crash) {
  auto p = load_plugin_isolated("/nonexistent/libnothing.so");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("cannot load plugin"), std::string::npos) << p.status().message();
}

}  // namespace
}  // namespace layoutcheck
