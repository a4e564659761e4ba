// Shared helpers of the host tests.
#pragma once

#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include "topology/plugins/registry.hpp"

namespace test {

namespace fs = std::filesystem;

// The build's paths, or where a bundle for another machine put them
// (scripts/bundle-for-device.sh: MEMTOPO_TEST_EXE, MEMTOPO_TEST_PLUGIN_ROOT).
inline std::string built_or_env(const char* variable, const char* built) {
  const char* v = std::getenv(variable);
  return v && *v ? v : built;
}

inline fs::path plugin_set(const std::string& name) {
  return fs::path(built_or_env("MEMTOPO_TEST_PLUGIN_ROOT", MEMTOPO_TEST_PLUGIN_ROOT)) / name;
}

// A path single-quoted for the shell commands the tests run.
inline std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

// The --plugin-path argument of the test plugins that all succeed.
inline const std::string kGood = " --plugin-path " + q(plugin_set("good"));

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The well-behaved test plugins, loaded once per test binary.
inline const memtopo::host::Registry& good_registry() {
  static memtopo::host::Registry r = [] {
    memtopo::host::Registry x;
    x.load_directory(plugin_set("good"));
    return x;
  }();
  return r;
}

// A fresh empty folder under the build tree, removed at scope exit.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag) {
    path = fs::path(MEMTOPO_BINARY_DIR) / "tests" / "host-tmp" / (tag + "-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path operator/(const std::string& name) const { return path / name; }
};

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

// Sets an environment variable for the scope of one test (memtopo inherits it), then restores it.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> before;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) before = v;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (before)
      ::setenv(name.c_str(), before->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

// This machine's name as memtopo names files after it: the whole name, each byte other than a
// letter, digit, '-', '_' or '.' as '_', a leading '.' or '-' as '_', at most 64 bytes
// (host_file_name() in host/run/launch/device_list.hpp, which test_hostile_files.cpp checks).
inline std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  std::string h = std::string(buf[0] ? buf : "host").substr(0, 64);
  for (char& c : h)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  if (h[0] == '.' || h[0] == '-') h[0] = '_';
  return h;
}

// A "Python" for `memtopo report` that has matplotlib (it says so) and writes a fixed page to
// -o: what a command does with the page is then tested without plotting anything.
inline fs::path fake_report_python(const TempDir& dir) {
  const auto path = dir / "fake-python";
  write_file(path,
             "#!/bin/sh\n[ \"$1\" = -c ] && exit 0\nshift\n"
             "while [ $# -gt 0 ]; do case \"$1\" in -o) out=$2; shift;; --summary-file) sum=$2; shift;; esac; "
             "shift; done\nprintf '<html>page</html>\\n' > \"$out\"\n[ -n \"$sum\" ] && echo 'wrote page' > "
             "\"$sum\"\nexit 0\n");
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs the built memtopo with `args` (shell syntax), without MEMTOPO_PLUGIN_PATH, in `cwd`
// (default: the test's own working folder); with `timeout_s`, killed after that many seconds
// (exit 124); `env` adds variables ("A=1 B=2").
inline CommandResult run_memtopo(const std::string& args, const fs::path& cwd = {}, int timeout_s = 0,
                                 const std::string& env = "") {
  const std::string cd = cwd.empty() ? "" : "cd '" + cwd.string() + "' && ";
  const std::string limit = timeout_s > 0 ? "timeout " + std::to_string(timeout_s) + " " : "";
  const std::string cmd = cd + "env -u MEMTOPO_PLUGIN_PATH " + env + (env.empty() ? "" : " ") + limit + "'" +
                          built_or_env("MEMTOPO_TEST_EXE", MEMTOPO_EXE) + "' " + args + " 2>&1";
  CommandResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `actual` against the golden file `dir`/`name`; where they differ, the actual output is kept
// in the build tree (tests/NAME.actual) and the test fails naming both.
inline void compare_with_golden(const std::string& actual, const fs::path& dir, const std::string& name) {
  const auto golden_path = dir / name;
  if (actual == read_file(golden_path)) return;
  const auto kept = fs::path(MEMTOPO_BINARY_DIR) / "tests" / (name + ".actual");
  write_file(kept, actual);
  FAIL("output differs from " << golden_path << "; actual output written to " << kept);
}

}  // namespace test
