// Helpers for tests that run memtopo as a separate process: in the background (to interrupt
// it or race it), with stdout kept apart, or under a shell prefix (ulimit).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "memtopo/engine.hpp"
#include "topology/document/device_identity.hpp"

namespace test {

inline std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// Starts memtopo with `args` (no shell), stdout and stderr into `log`; returns its pid.
inline pid_t spawn_memtopo(const std::vector<std::string>& args, const fs::path& log) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) ::_exit(127);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::unsetenv("MEMTOPO_PLUGIN_PATH");
    std::vector<char*> argv;
    std::string exe = MEMTOPO_EXE;
    argv.push_back(exe.data());
    std::vector<std::string> storage(args);
    for (auto& s : storage) argv.push_back(s.data());
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

// The exit status of `pid` (-1 when it ended by a signal).
inline int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Waits up to `limit_s` for `file` to appear.
inline bool wait_for_file(const fs::path& file, double limit_s = 30) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (std::chrono::steady_clock::now() < end) {
    if (fs::exists(file)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Runs `command` in bash, without MEMTOPO_PLUGIN_PATH; returns its stdout only ($EXE is memtopo).
inline CommandResult run_shell_stdout(const std::string& command) {
  const std::string cmd = "env -u MEMTOPO_PLUGIN_PATH EXE='" + std::string(MEMTOPO_EXE) + "' bash -c '" + command + "'";
  CommandResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The first line of a journal recorded on the simulated device `sim_file` (empty: built-in).
inline std::string journal_header_line(const fs::path& sim_file = {}) {
  const auto dev = memtopo::engine::open_sim(sim_file.string());
  const std::string text = sim_file.empty() ? memtopo::engine::sim_builtin_description() : read_file(sim_file);
  const nlohmann::json header = {{"memtopo_journal", 2},
                                 {"device_spec", sim_file.empty() ? "sim" : "sim:" + sim_file.string()},
                                 {"device", memtopo::host::device_identity(dev->info(), text)}};
  return header.dump() + "\n";
}

// A journal record of an ok probe with one integer result.
inline std::string journal_record(const std::string& probe, const std::string& version, const std::string& key,
                                  const std::string& value_json, int type = MT_VALUE_INT) {
  return "{\"probe\":\"" + probe + "\",\"version\":\"" + version +
         "\",\"status\":\"ok\",\"reason\":\"\",\"duration_s\":0.1,\"results\":[{\"key\":\"" + key +
         "\",\"type\":" + std::to_string(type) + ",\"value\":" + value_json +
         ",\"confidence\":1.0,\"bound\":\"exact\",\"note\":\"\"}]}\n";
}

}  // namespace test
