/* Checks that the example plugins together claim every registered layout:
 *
 *   coverage_check LAYOUTCHECK PLUGIN.so...
 *
 * runs `LAYOUTCHECK list`, loads every plugin, and prints each layout no
 * plugin's capabilities match (the same * and ? globs layoutcheck uses). Exit
 * 0 when every layout is claimed, 1 when one is not, 2 on a usage or load
 * error. A layout registered without an example plugin fails this test. */
#define _POSIX_C_SOURCE 200809L /* popen, pclose */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"

#define MAX_PLUGINS 64

static int glob_match(const char* glob, const char* text) {
  if (*glob == 0) return *text == 0;
  if (*glob == '*') return glob_match(glob + 1, text) || (*text && glob_match(glob, text + 1));
  if (*text && (*glob == '?' || *glob == *text)) return glob_match(glob + 1, text + 1);
  return 0;
}

int main(int argc, char** argv) {
  const lc_plugin* plugins[MAX_PLUGINS];
  int count = 0, i, missing = 0, layouts = 0;
  char command[4096], line[1024];
  FILE* list;
  if (argc < 3 || argc - 2 > MAX_PLUGINS) {
    fprintf(stderr, "usage: coverage_check LAYOUTCHECK PLUGIN.so... (at most %d plugins)\n", MAX_PLUGINS);
    return 2;
  }
  for (i = 2; i < argc; ++i) {
    void* handle = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    lc_plugin_entry_fn entry;
    if (!handle) return fprintf(stderr, "coverage_check: %s\n", dlerror()), 2;
    *(void**)(&entry) = dlsym(handle, LC_PLUGIN_ENTRY);
    if (!entry || !entry()) return fprintf(stderr, "coverage_check: %s has no %s\n", argv[i], LC_PLUGIN_ENTRY), 2;
    plugins[count++] = entry();
  }
  if (snprintf(command, sizeof command, "'%s' list", argv[1]) >= (int)sizeof command || strchr(argv[1], '\'')) {
    return fprintf(stderr, "coverage_check: unusable path %s\n", argv[1]), 2;
  }
  list = popen(command, "r");
  if (!list) return fprintf(stderr, "coverage_check: cannot run %s\n", command), 2;
  /* `layoutcheck list`: a layout name at the start of a line, details indented. */
  while (fgets(line, sizeof line, list)) {
    char name[256];
    int claimed = 0, p;
    uint32_t k;
    if (line[0] == ' ' || line[0] == '\n' || sscanf(line, "%255s", name) != 1) continue;
    ++layouts;
    for (p = 0; p < count && !claimed; ++p) {
      for (k = 0; k < plugins[p]->capability_count; ++k) {
        if (glob_match(plugins[p]->capabilities[k].layout_glob, name)) claimed = 1;
      }
    }
    if (!claimed) printf("no example plugin claims %s\n", name), ++missing;
  }
  if (pclose(list) != 0 || layouts == 0) return fprintf(stderr, "coverage_check: %s failed\n", command), 2;
  printf("%d layouts, %d claimed by the %d example plugins, %d not\n", layouts, layouts - missing, count, missing);
  return missing ? 1 : 0;
}
