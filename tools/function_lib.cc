#include "tools/function_lib.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "layoutcheck/plugin.h"

namespace layoutcheck::cli {

void* child_open_library(const std::string& path, int fd) {
  void* handle = open_library_file(path);  // the file the command checked, also when named without a slash
  if (!handle) {
    std::string hello;
    const char* err = dlerror();
    put_str(&hello, "cannot load " + path + ": " + (err ? err : "unknown error"));
    Sandbox::child_send(fd, hello);
  }
  return handle;
}

bool child_reported_stray(const std::string& path, int fd) {
  std::string stray = Sandbox::child_stray_processes();
  if (stray.empty()) return false;
  std::string hello;
  put_str(&hello, "while loading " + path + " it " + stray);
  Sandbox::child_send(fd, hello);
  return true;
}

void child_serve_library(const std::string& path, int fd, const std::vector<const char*>& symbols, ServeFn serve) {
  void* handle = child_open_library(path, fd);
  if (!handle || child_reported_stray(path, fd)) return;
  std::vector<void*> syms(symbols.size());
  uint64_t provided = 0;
  for (uint64_t f = 0; f < symbols.size(); ++f) {
    syms[f] = dlsym(handle, symbols[f]);
    if (syms[f]) provided |= uint64_t{1} << f;
  }
  std::string hello;
  put_str(&hello, "");
  put_u64(&hello, provided);
  if (!Sandbox::child_send(fd, hello)) return;
  for (std::string request; Sandbox::child_receive(fd, &request);) {
    Reader r{request};
    const uint64_t fn = r.u64();
    Sandbox::child_allow(request.size() * 2);
    if (!Sandbox::child_send(fd, serve(fn < syms.size() ? syms[fn] : nullptr, request))) return;
  }
}

SandboxLimits library_limits() {
  SandboxLimits limits;
  if (const char* t = std::getenv("LAYOUTCHECK_PLUGIN_TIMEOUT"); t && std::atof(t) > 0) limits.timeout_seconds = std::atof(t);
  return limits;
}

LibraryChild::LibraryChild(std::string command, std::string path)
    : command_(std::move(command)), path_(std::move(path)), box_(library_limits()) {}

int LibraryChild::bad_library(const std::string& why) const {
  std::cerr << "layoutcheck " << command_ << ": bad library " << path_ << ": " << why << "\n";
  return 2;
}

std::optional<Reader> LibraryChild::receive(uint64_t max_bytes, const std::string& during, const std::string& malformed) {
  auto reply = box_.receive(max_bytes, during);
  if (!reply.ok()) {
    bad_library(reply.status().message());
    return std::nullopt;
  }
  reply_ = std::move(*reply);
  Reader r{reply_};
  const std::string error = r.str(1 << 12);
  if (r.bad) {
    bad_library(malformed);
    return std::nullopt;
  }
  if (!error.empty()) {
    bad_library(error);
    return std::nullopt;
  }
  return r;
}

std::optional<uint64_t> LibraryChild::start_serving(const std::vector<const char*>& symbols, ServeFn serve) {
  const std::string path = path_;
  if (Status started = box_.start([path, symbols, serve](int fd) { child_serve_library(path, fd, symbols, serve); });
      !started.ok()) {
    std::cerr << "layoutcheck " << command_ << ": " << started.message() << "\n";
    return std::nullopt;
  }
  const std::string malformed = "sent a malformed answer while loading";
  std::optional<Reader> hr = receive(1 << 16, "loading (its constructors)", malformed);
  if (!hr) return std::nullopt;
  const uint64_t provided = hr->u64();
  if (hr->bad) {
    bad_library(malformed);
    return std::nullopt;
  }
  if ((provided & ((uint64_t{1} << symbols.size()) - 1)) == 0) {
    std::string names;
    for (const char* s : symbols) names += std::string(names.empty() ? "" : ", ") + s;
    bad_library("exports none of " + names);
    return std::nullopt;
  }
  return provided;
}

std::optional<Reader> LibraryChild::call(const std::string& request, const char* symbol, uint64_t inputs,
                                         uint64_t max_bytes) {
  if (Status s = box_.send(request); !s.ok()) {
    bad_library(s.message() + " before " + symbol);
    return std::nullopt;
  }
  return receive(max_bytes, std::string(symbol) + " (over " + std::to_string(inputs) + " inputs)",
                 std::string("sent a malformed answer during ") + symbol);
}

int report_functions(const Args& a, Json j, const std::string& title, const std::string& command,
                     const std::vector<const char*>& symbols, const std::vector<FnResult>& results, int width) {
  int passed = 0, failed = 0, skipped = 0;
  for (const FnResult& r : results) {
    passed += r.status == "passed";
    failed += r.status == "failed";
    skipped += r.status == "not provided";
  }
  if (a.has("json")) {
    j["status"] = failed ? "failed" : "passed";
    j["totals"] = {{"functions", symbols.size()}, {"passed", passed}, {"failed", failed}, {"not_provided", skipped}};
    Json fns = Json::array();
    for (size_t f = 0; f < symbols.size(); ++f) {
      const FnResult& r = results[f];
      Json o = {{"function", symbols[f]}, {"status", r.status}, {"inputs", r.inputs}, {"failed_inputs", r.failed}};
      if (r.failed) {
        o["first_failure"] = {{"input", r.input}, {"expected", r.expected}, {"actual", r.actual}, {"note", r.note}};
      } else {
        o["first_failure"] = nullptr;
      }
      fns.push_back(o);
    }
    j["functions"] = fns;
    std::cout << dump_json(j);
  } else {
    std::printf("%s\n", title.c_str());
    for (size_t f = 0; f < symbols.size(); ++f) {
      const FnResult& r = results[f];
      if (r.status == "not provided") {
        std::printf("  %-*s not provided (skipped)\n", width, symbols[f]);
      } else if (r.status == "passed") {
        std::printf("  %-*s passed (%llu inputs)\n", width, symbols[f], static_cast<unsigned long long>(r.inputs));
      } else {
        std::printf("  %-*s FAILED on %llu of %llu inputs\n", width, symbols[f], static_cast<unsigned long long>(r.failed),
                    static_cast<unsigned long long>(r.inputs));
        std::printf("    first at %s: expected %s, actual %s%s%s\n", r.input.c_str(), r.expected.c_str(),
                    r.actual.c_str(), r.note.empty() ? "" : "; ", r.note.c_str());
      }
    }
    std::printf("%s: %d passed, %d failed, %d not provided\n", command.c_str(), passed, failed, skipped);
  }
  return failed ? 1 : 0;
}

}  // namespace layoutcheck::cli
