// The fault suite (issue 18, cases 10-13): probes that crash, abort, exit, hang, throw, store
// NaN or fail to allocate fail alone, with the reason, in the real `memtopo run` on the
// simulated GPU; stop signals leave the output and a journal whose every line parses.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>

#include <chrono>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "helpers.hpp"
#include "run/running/probe_executor.hpp"

namespace fs = std::filesystem;
using test::run_memtopo;
using test::TempDir;

namespace {

using Clock = std::chrono::steady_clock;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMTOPO_TEST_ASAN 1
#endif
#endif
#ifdef MEMTOPO_TEST_ASAN
constexpr bool kSanitized = true;  // scripts/test-hardened's exit code for a report is 86
#else
constexpr bool kSanitized = false;
#endif

// In a sanitized build (scripts/test-hardened) AddressSanitizer would catch the probes'
// deliberate SIGSEGV and their impossible allocation and end the worker with an exit status
// instead: let the signal kill it and the allocation throw, as in a normal build. The memtopo
// processes these tests start inherit the setting.
const bool kFaultsAsInANormalBuild = [] {
  std::string options = std::getenv("ASAN_OPTIONS") ? std::getenv("ASAN_OPTIONS") : "";
  options += std::string(options.empty() ? "" : ":") + "handle_segv=0:handle_abort=0:allocator_may_return_null=1";
  return ::setenv("ASAN_OPTIONS", options.c_str(), 1) == 0;
}();

const std::string kFaults = "--plugin-path '" + test::plugin_set("faults").string() + "'";

// memtopo running in the background, its stdout and stderr read through one pipe, so a test
// can wait for a line and send signals.
class Spawned {
 public:
  Spawned(const std::vector<std::string>& args, const fs::path& cwd) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::dup2(fds[1], STDERR_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      if (::chdir(cwd.c_str()) != 0) ::_exit(126);
      ::unsetenv("MEMTOPO_PLUGIN_PATH");
      std::vector<char*> argv{const_cast<char*>(MEMTOPO_EXE)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(MEMTOPO_EXE, argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    fd_ = fds[0];
  }
  ~Spawned() {
    if (!exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }

  // Reads output until it contains `text`; false after `timeout_s`.
  bool wait_for(const std::string& text, double timeout_s) {
    const auto end = Clock::now() + std::chrono::milliseconds(static_cast<int>(timeout_s * 1000));
    while (output.find(text) == std::string::npos) {
      if (Clock::now() >= end || !read_some(end)) return false;
    }
    return true;
  }
  void signal(int sig) { ::kill(pid_, sig); }
  // The exit code (-1 when it did not exit by itself within `timeout_s`: then it is killed).
  int wait_exit(double timeout_s) {
    const auto end = Clock::now() + std::chrono::milliseconds(static_cast<int>(timeout_s * 1000));
    while (read_some(end)) {
    }
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() >= end) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        exited_ = true;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string output;

 private:
  bool read_some(Clock::time_point end) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
    if (ms <= 0 || fd_ < 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(ms)) <= 0) return Clock::now() < end;
    char buf[4096];
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n <= 0) {
      ::close(fd_);
      fd_ = -1;
      return false;
    }
    output.append(buf, static_cast<size_t>(n));
    return true;
  }
  pid_t pid_ = -1;
  int fd_ = -1;
  bool exited_ = false;
};

// The output of an interrupted run: OUT, or OUT's partial form where the host writes one.
toml::table interrupted_output(const TempDir& dir) {
  for (const char* name : {"out.partial.toml", "out.toml"})
    if (fs::exists(dir / name)) return toml::parse_file((dir / name).string());
  FAIL("no output in " << dir.path);
  return {};
}

std::string probe_field(const toml::table& out, const std::string& probe, const std::string& field) {
  return out["probes"][probe][field].value_or(std::string("(missing)"));
}

// Every line of the run's journal, each parsed (a line that does not parse fails the test).
std::vector<nlohmann::json> journal_lines(const TempDir& dir) {
  std::vector<nlohmann::json> lines;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    if (e.path().extension() != ".journal") continue;
    std::istringstream in(test::read_file(e.path()));
    std::string line;
    while (std::getline(in, line)) {
      INFO("journal line: " << line);
      REQUIRE_NOTHROW(lines.push_back(nlohmann::json::parse(line)));
    }
  }
  return lines;
}

const nlohmann::json* journal_record(const std::vector<nlohmann::json>& lines, const std::string& probe) {
  for (const auto& j : lines)
    if (j.value("probe", "") == probe) return &j;
  return nullptr;
}

std::vector<std::string> run_args(const TempDir& dir, const std::string& only) {
  return {"run",    "--plugin-path", test::plugin_set("faults").string(), "--config", (dir / "cfg.toml").string(),
          "--only", only,            "-o",                                 (dir / "out.toml").string()};
}

}  // namespace

TEST_CASE("faults: a probe that crashes, aborts, exits, throws or fails to allocate fails alone",
          "[host][faults]") {
  struct Fault {
    const char* probe;
    const char* reason;  // part of the recorded reason
  };
  const Fault fault = GENERATE(Fault{"t-faults/crash", "crashed with SIGSEGV (signal 11)"},
                               Fault{"t-faults/abort", "crashed with SIGABRT (signal 6)"},
                               Fault{"t-faults/exit", "called exit(0)"},
                               Fault{"t-faults/throw", "exception escaped the probe: thrown across the C boundary"},
                               Fault{"t-faults/alloc", ""});
  INFO(fault.probe);
  TempDir dir("faults-one");
  test::write_file(dir / "cfg.toml", "[run]\ndevice = \"sim\"\ntime_limit_s = 20\n");
  const auto r = run_memtopo("run " + kFaults + " --config cfg.toml --only " + fault.probe +
                                 ",t-faults/good -q -o out.toml",
                             dir.path);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  REQUIRE(fs::exists(dir / "out.toml"));
  const auto out = toml::parse_file((dir / "out.toml").string());
  CHECK(out["t"]["good_bytes"].value_or(int64_t{0}) == 7);
  CHECK(probe_field(out, "t-faults/good", "status") == "ok");
  CHECK(probe_field(out, fault.probe, "status") == "failed");
  const std::string reason = probe_field(out, fault.probe, "reason");
  if (std::string(fault.reason).empty())  // std::bad_alloc; under ASan its report ends the worker
    CHECK((reason.find("bad_alloc") != std::string::npos || reason.find("crashed with") != std::string::npos ||
           (kSanitized && reason.find("called exit(86)") != std::string::npos)));
  else
    CHECK(reason.find(fault.reason) != std::string::npos);
  // Named in the log even with -q.
  CHECK(r.output.find(std::string(fault.probe) + ": failed: ") != std::string::npos);
}

TEST_CASE("faults: the reason of a crash carries the last output of the probe", "[host][faults]") {
  TempDir dir("faults-tail");
  test::write_file(dir / "cfg.toml", "[run]\ndevice = \"sim\"\n");
  const auto r = run_memtopo("run " + kFaults + " --config cfg.toml --only t-faults/crash -o out.toml", dir.path);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  const auto out = toml::parse_file((dir / "out.toml").string());
  CHECK(probe_field(out, "t-faults/crash", "reason") ==
        "crashed with SIGSEGV (signal 11); last output: warning: t-faults/crash: about to dereference a bad pointer");
  CHECK(r.output.find("last output of its worker:\n    warning: t-faults/crash: about to dereference") !=
        std::string::npos);
}

TEST_CASE("faults: a probe storing NaN does not end the run", "[host][faults]") {
  TempDir dir("faults-nan");
  test::write_file(dir / "cfg.toml", "[run]\ndevice = \"sim\"\n");
  const auto r = run_memtopo("run " + kFaults + " --config cfg.toml --only t-faults/nan,t-faults/good -o out.toml",
                             dir.path);
  INFO(r.output);
  CHECK((r.exit_code == 0 || r.exit_code == 1));
  REQUIRE(fs::exists(dir / "out.toml"));
  const auto out = toml::parse_file((dir / "out.toml").string());
  CHECK(out["t"]["good_bytes"].value_or(int64_t{0}) == 7);
  CHECK(probe_field(out, "t-faults/nan", "status") != "(missing)");
}

TEST_CASE("faults: a probe past its time limit is killed and fails, the others go on", "[host][faults]") {
  TempDir dir("faults-limit");
  // hang: the config's limit for it, seconds on the clock; spin and over-budget: their declared
  // budget of 0.25 s, on the simulated GPU CPU time: spin uses it up, over-budget sleeps into
  // the clock's backstop of ten times the budget.
  test::write_file(dir / "cfg.toml",
                   "[run]\ndevice = \"sim\"\n\n[probes.\"t-faults/hang\"]\ntime_limit_s = 1\n");
  const auto r = run_memtopo("run " + kFaults +
                                 " --config cfg.toml --only t-faults/hang,t-faults/over-budget,t-faults/spin,t-faults/good "
                                 "-o out.toml",
                             dir.path);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  const auto out = toml::parse_file((dir / "out.toml").string());
  CHECK(out["t"]["good_bytes"].value_or(int64_t{0}) == 7);
  CHECK(probe_field(out, "t-faults/hang", "status") == "failed");
  CHECK_THAT(probe_field(out, "t-faults/hang", "reason"),
             Catch::StartsWith("exceeded its time limit of 1 s (from [probes.\"t-faults/hang\"] time_limit_s; set "
                               "time_limit_s in [probes.\"t-faults/hang\"] to change it)"));
  // A sanitized build multiplies budgets by 8: its text says so after the budget.
  const std::string budget = memtopo::host::build_budget_scale() > 1 ? "2" : "0.25";
  const std::string backstop = memtopo::host::build_budget_scale() > 1 ? "20" : "2.5";
  CHECK_THAT(probe_field(out, "t-faults/spin", "reason"),
             Catch::StartsWith("exceeded its time limit of " + budget + " s of CPU time (from the probe's declared budget"));
  CHECK_THAT(probe_field(out, "t-faults/over-budget", "reason"),
             Catch::StartsWith("exceeded its time limit of " + backstop + " s on the clock, 10 times its limit of " +
                               budget + " s of CPU time, which it did not use up: it waited (from the probe's declared "
                                        "budget"));
}

TEST_CASE("faults: no new worker can open the device after a crash: the rest fail with the reason, the "
          "output is written",
          "[host][faults]") {
  TempDir dir("faults-device");
  fs::copy_file(fs::path(MEMTOPO_HOST_TEST_DIR) / "../../examples/devices/pascal-like.toml", dir / "dev.toml");
  test::write_file(dir / "cfg.toml", "[run]\ndevice = \"sim:" + (dir / "dev.toml").string() +
                                         "\"\n\n[probes.\"t-faults/break-device\"]\nfile = \"" +
                                         (dir / "dev.toml").string() + "\"\n");
  const auto r = run_memtopo(
      "run " + kFaults + " --config cfg.toml --jobs 1 --only t-faults/break-device,t-faults/good -o out.toml", dir.path);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  REQUIRE(fs::exists(dir / "out.toml"));
  const auto out = toml::parse_file((dir / "out.toml").string());
  CHECK(probe_field(out, "t-faults/break-device", "status") == "failed");
  CHECK(probe_field(out, "t-faults/good", "status") == "failed");
  CHECK_THAT(probe_field(out, "t-faults/good", "reason"),
             Catch::StartsWith("not run: no new worker could open the device after t-faults/break-device crashed "
                               "with SIGSEGV (signal 11) (cannot open device: "));
}

TEST_CASE("faults: SIGTERM, SIGHUP and SIGINT stop after the current probe, output and journal are written",
          "[host][faults][signals]") {
  const int sig = GENERATE(SIGTERM, SIGHUP, SIGINT);
  INFO("signal " << sig);
  TempDir dir("faults-signal");
  test::write_file(dir / "cfg.toml", "[run]\ndevice = \"sim\"\ntime_limit_s = 30\n");
  Spawned run(run_args(dir, "t-faults/crash,t-faults/good,t-faults/slow"), dir.path);
  REQUIRE(run.wait_for("t-faults/slow: started", 20));
  run.signal(sig);
  CHECK(run.wait_exit(20) == 1);
  INFO(run.output);
  const auto out = interrupted_output(dir);
  CHECK(out["t"]["good_bytes"].value_or(int64_t{0}) == 7);
  CHECK(probe_field(out, "t-faults/slow", "status") == "skipped");
  CHECK(probe_field(out, "t-faults/slow", "reason") == "cancelled");
  const auto lines = journal_lines(dir);
  const auto* crash = journal_record(lines, "t-faults/crash");
  REQUIRE(crash);
  CHECK(crash->value("status", "") == "failed");
  CHECK_THAT(crash->value("reason", ""), Catch::StartsWith("crashed with SIGSEGV (signal 11)"));
  REQUIRE(journal_record(lines, "t-faults/good"));
  CHECK(journal_record(lines, "t-faults/good")->value("status", "") == "ok");
}

TEST_CASE("faults: a probe that ignores the stop signal is killed 5 s later, a second signal stops at once",
          "[host][faults][signals]") {
  const bool twice = GENERATE(false, true);
  INFO((twice ? "two signals" : "one signal"));
  TempDir dir("faults-hang");
  test::write_file(dir / "cfg.toml", "[run]\ndevice = \"sim\"\ntime_limit_s = 60\n");
  Spawned run(run_args(dir, "t-faults/good,t-faults/hang"), dir.path);
  REQUIRE(run.wait_for("t-faults/hang: hanging", 20));
  const auto t0 = Clock::now();
  run.signal(SIGINT);
  if (twice) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    run.signal(SIGINT);
  }
  CHECK(run.wait_exit(20) == 1);
  const double took_s = std::chrono::duration<double>(Clock::now() - t0).count();
  INFO(run.output);
  // The reason below says which of the two ended it; one signal waits out the grace period.
  if (!twice) CHECK(took_s >= 4.5);
  const auto out = interrupted_output(dir);
  CHECK(out["t"]["good_bytes"].value_or(int64_t{0}) == 7);
  CHECK(probe_field(out, "t-faults/hang", "status") == "skipped");
  CHECK(probe_field(out, "t-faults/hang", "reason") ==
        (twice ? "interrupted: a second stop signal ended it at once"
               : "interrupted: it did not return within 5 s of the stop signal"));
  const auto lines = journal_lines(dir);
  REQUIRE(journal_record(lines, "t-faults/hang"));
  CHECK(journal_record(lines, "t-faults/hang")->value("status", "") == "skipped");
}

TEST_CASE("faults: a library whose static constructor aborts is named, list and run go on", "[host][faults]") {
  const std::string paths = "--plugin-path '" + test::plugin_set("ctor-abort").string() + "' " + kFaults;
  const auto list = run_memtopo("list " + paths);
  INFO(list.output);
  CHECK(list.exit_code == 0);
  CHECK(list.output.find("t-ctor-abort.so: crashed while loading (SIGABRT, signal 6); remove or fix it") !=
        std::string::npos);
  CHECK(list.output.find("t-faults/good") != std::string::npos);
  TempDir dir("faults-ctor");
  const auto run = run_memtopo("run " + paths + " --device sim --only t-faults/good -o out.toml", dir.path);
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("t-ctor-abort.so: crashed while loading (SIGABRT") != std::string::npos);
  CHECK(fs::exists(dir / "out.toml"));
}

TEST_CASE("faults: --no-isolation and [run] isolation = false run the probes in memtopo itself", "[host][faults]") {
  TempDir dir("faults-inproc");
  test::write_file(dir / "cfg.toml", "[run]\ndevice = \"sim\"\nisolation = false\n");
  const auto by_flag =
      run_memtopo("run " + kFaults + " --device sim --no-isolation --only t-faults/good -v -o a.toml", dir.path);
  INFO(by_flag.output);
  CHECK(by_flag.exit_code == 0);
  CHECK(by_flag.output.find("probes run in this process") != std::string::npos);
  const auto by_config = run_memtopo("run " + kFaults + " --config cfg.toml --only t-faults/good -v -o b.toml", dir.path);
  INFO(by_config.output);
  CHECK(by_config.exit_code == 0);
  CHECK(by_config.output.find("probes run in this process") != std::string::npos);
  const auto isolated = run_memtopo("run " + kFaults + " --device sim --only t-faults/good -v -o c.toml", dir.path);
  CHECK(isolated.output.find("probes run in a worker process") != std::string::npos);
}
