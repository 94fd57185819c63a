/* Hostile plugins: the TPU example plugin (correct) with one misbehaviour
 * switched on by HOSTILE_<KIND>. The host must report each one and survive:
 * tests/hostile/hostile_test.sh runs every command that calls a plugin on
 * every kind.
 *
 * The misbehaviour happens in every call but supports(), so that each command
 * reaches it (describe through size_bytes, offset through offset_bits, ...);
 * the buffer ones (HOSTILE_WRITE_BEFORE, HOSTILE_NONDETERMINISTIC) in pack and
 * unpack only. */
#define layoutcheck_plugin_v1 hostile_inner_plugin_v1
#include "../../examples/plugins/tpu_plugin.c"
#undef layoutcheck_plugin_v1

#include <signal.h>
#include <unistd.h>

static void misbehave(void) {
#if defined(HOSTILE_SEGFAULT)
  *(volatile int*)(uintptr_t)8 = 1;
#elif defined(HOSTILE_ABORT)
  abort();
#elif defined(HOSTILE_ENDLESS_LOOP)
  for (volatile int forever = 1; forever;) {
  }
#elif defined(HOSTILE_LEAK)
  /* A GiB per call, never freed; only a page of it is touched. */
  static char* volatile last;
  char* p = (char*)malloc((size_t)1 << 30);
  p[0] = 1; /* unchecked, as in the bug this models */
  last = p;
#elif defined(HOSTILE_FORK)
  if (fork() == 0) {
    sleep(600);
    _exit(0);
  }
#elif defined(HOSTILE_FLOOD)
  /* 64 MiB of chatter on stdout and stderr, once per process. */
  static char line[4096];
  static int done;
  int i;
  if (done++) return;
  memset(line, 'x', sizeof line - 1);
  line[sizeof line - 1] = '\n';
  for (i = 0; i < 8192; ++i) fwrite(line, 1, sizeof line, i % 2 ? stderr : stdout);
  fflush(stdout);
#endif
}

static void misbehave_in_buffer(uint8_t* out, size_t size) {
#if defined(HOSTILE_WRITE_BEFORE)
  memset(out - 4096, 0x77, 4096);
  (void)size;
#elif defined(HOSTILE_NONDETERMINISTIC)
  static unsigned calls;
  if (size) out[size / 2] ^= (uint8_t)(1u + calls++ % 255u);
#else
  (void)out, (void)size;
#endif
}

#if defined(HOSTILE_CONSTRUCTOR_CRASH)
__attribute__((constructor)) static void crash_on_load(void) { raise(SIGSEGV); }
#endif

static const lc_plugin* inner;

static lc_status h_supports(const lc_case* c, char* why, size_t n) {
#if defined(HOSTILE_LEAK)
  misbehave();
#endif
  return inner->supports(c, why, n);
}
static lc_status h_size(const lc_case* c, uint64_t* bytes) {
  misbehave();
  return inner->size_bytes(c, bytes);
}
static lc_status h_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  misbehave();
  return inner->offset_bits(c, at, bits);
}
static lc_status h_pack(const lc_case* c, const void* l, size_t ls, void* p, size_t ps) {
  lc_status s;
  misbehave();
  s = inner->pack(c, l, ls, p, ps);
  misbehave_in_buffer((uint8_t*)p, ps);
  return s;
}
static lc_status h_unpack(const lc_case* c, const void* p, size_t ps, void* l, size_t ls) {
  lc_status s;
  misbehave();
  s = inner->unpack(c, p, ps, l, ls);
  misbehave_in_buffer((uint8_t*)l, ls);
  return s;
}

static lc_capability caps[1] = {{"tpu.*", "*", 0}};
static lc_plugin table;

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) {
#if defined(HOSTILE_ENTRY_LOOP)
  for (volatile int forever = 1; forever;) {
  }
#endif
  inner = hostile_inner_plugin_v1();
  table = *inner;
#if defined(HOSTILE_NAME)
  table.name = HOSTILE_NAME;
#else
  table.name = "hostile";
#endif
  table.capabilities = caps;
  table.capability_count = 1;
  table.supports = h_supports;
  table.size_bytes = h_size;
  table.offset_bits = h_offset;
  table.pack = h_pack;
  table.unpack = h_unpack;
#if defined(HOSTILE_LYING_COUNT)
  table.capability_count = 1000000;
#elif defined(HOSTILE_NULL_GLOB)
  caps[0].layout_glob = NULL;
#endif
  return &table;
}
