// Signals, children and temporary folders (issue 50, item 6; docs/host.md, "Guarantees",
// "Signals, children and the Python package"): a stopped fleet run stops measuring on every
// GPU, its runs write what they measured as partial output and none goes on to write a
// complete file; a killed one takes its runs with it; --jobs bounds the runs at once and goes
// to each; a stopped or killed report, draw or fleet --report leaves no Python running and no
// temporary folder behind.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>
#include <vector>

#include "helpers.hpp"
#include "run_helpers.hpp"

namespace fs = std::filesystem;

namespace hostile_signals {

using SteadyClock = std::chrono::steady_clock;

bool eventually(const std::function<bool()>& ok, double limit_s) {
  const auto end = SteadyClock::now() + std::chrono::duration<double>(limit_s);
  while (SteadyClock::now() < end) {
    if (ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ok();
}

// A process that runs (a zombie has ended: its parent has not read its status yet).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

// The pids whose parent is `parent`, from /proc/PID/stat (field 4, after the name in brackets).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 2));
    char state = 0;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && state != 'Z') out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// Field 5 of /proc/PID/stat: the process group.
long process_group(pid_t pid) {
  const std::string text = test::read_file("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(text.substr(close + 2));
  char state = 0;
  long ppid = 0, group = -1;
  rest >> state >> ppid >> group;
  return group;
}

std::string command_line(pid_t pid) {
  std::string text = test::read_file("/proc/" + std::to_string(pid) + "/cmdline");
  for (char& c : text)
    if (c == '\0') c = ' ';
  return text;
}

// The files in `dir` that `wanted` takes: partial outputs, complete topologies (.toml, not
// .partial.toml), journals of runs under way.
size_t count_files(const fs::path& dir, const std::function<bool(const std::string&)>& wanted) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    n += wanted(it->path().filename().string());
  return n;
}
bool ends_with(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}
size_t partial_files(const fs::path& dir) {
  return count_files(dir, [](const std::string& n) { return ends_with(n, ".partial.toml"); });
}
size_t complete_files(const fs::path& dir) {
  return count_files(dir, [](const std::string& n) { return ends_with(n, ".toml") && !ends_with(n, ".partial.toml"); });
}
// Runs under way: journals that hold t-slow/quick (each run's StopSignals are installed by then).
size_t measuring(const fs::path& dir) {
  return count_files(dir, [&](const std::string& n) {
    return ends_with(n, ".journal") && test::read_file(dir / n).find("t-slow/quick") != std::string::npos;
  });
}

size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The exit status of `pid` within `limit_s`, or nullopt (then it is killed).
std::optional<int> wait_status(pid_t pid, double limit_s) {
  int status = 0;
  if (eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, limit_s)) return status;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return std::nullopt;
}

// `memtopo run` of `devices` over t-slow, whose second probe waits 120 s unless cancelled.
pid_t start_fleet(const test::TempDir& dir, const std::string& devices, const std::vector<std::string>& extra = {}) {
  test::write_file(dir / "slow.toml", "[probes.\"t-slow/wait\"]\nseconds = 120.0\n");
  std::vector<std::string> args{"run", "--device", devices, "--only", "t-slow", "--plugin-path",
                                test::plugin_set("slow").string(), "--config", (dir / "slow.toml").string(), "-o",
                                (dir / "out/").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return test::spawn_memtopo(args, dir / "log");
}

TEST_CASE("a stop signal to a fleet run is passed on, and its runs write partial output and end", "[signals]") {
  const int sig = GENERATE(SIGTERM, SIGINT, SIGHUP);
  test::TempDir dir("signals-fleet-" + std::to_string(sig));
  const pid_t parent = start_fleet(dir, "sim,sim");
  REQUIRE(eventually([&] { return measuring(dir / "out") == 2; }, 60));
  const std::vector<pid_t> runs = children_of(parent);
  REQUIRE(runs.size() == 2);
  for (pid_t run : runs) CHECK(process_group(run) == run);  // a terminal's Ctrl-C reaches it only through the parent
  REQUIRE(::kill(parent, sig) == 0);
  const auto status = wait_status(parent, 20);
  REQUIRE(status);
  CHECK(WIFEXITED(*status));
  CHECK(WEXITSTATUS(*status) == 1);  // interrupted
  for (pid_t run : runs) CHECK_FALSE(alive(run));
  CHECK(partial_files(dir / "out") == 2);  // each saved what it measured
  std::this_thread::sleep_for(std::chrono::seconds(2));
  CHECK(complete_files(dir / "out") == 0);  // and none went on measuring
  const std::string log = test::read_file(dir / "log");
  CHECK(test::has(log, "passed on to the 2 run(s) under way"));
  CHECK(occurrences(log, "interrupted: 2 ok in ") == 2);  // the summary reads each partial file
}

TEST_CASE("a second stop signal to a fleet run is passed on too", "[signals]") {
  test::TempDir dir("signals-fleet-twice");
  test::write_file(dir / "cfg.toml", "[run]\ntime_limit_s = 60\n");
  // t-faults/hang ignores the stop signal: one signal ends it after 5 s, a second at once.
  const pid_t parent = test::spawn_memtopo(
      {"run", "--device", "sim,sim", "--only", "t-faults/good,t-faults/hang", "--plugin-path",
       test::plugin_set("faults").string(), "--config", (dir / "cfg.toml").string(), "-o", (dir / "out/").string()},
      dir / "log");
  REQUIRE(eventually([&] { return occurrences(test::read_file(dir / "log"), "t-faults/hang: hanging") == 2; }, 60));
  const auto t0 = SteadyClock::now();
  REQUIRE(::kill(parent, SIGTERM) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(::kill(parent, SIGTERM) == 0);
  const auto status = wait_status(parent, 20);
  REQUIRE(status);
  CHECK(WEXITSTATUS(*status) == 1);
  CHECK(std::chrono::duration<double>(SteadyClock::now() - t0).count() < 4.5);  // not the 5 s grace
  REQUIRE(partial_files(dir / "out") == 2);
  for (const auto& f : fs::directory_iterator(dir / "out"))
    if (ends_with(f.path().string(), ".partial.toml"))
      CHECK(test::has(test::read_file(f.path()), "interrupted: a second stop signal ended it at once"));
}

TEST_CASE("a fleet run killed with SIGKILL takes its runs with it", "[signals]") {
  test::TempDir dir("signals-fleet-kill");
  const pid_t parent = start_fleet(dir, "sim,sim");
  REQUIRE(eventually([&] { return measuring(dir / "out") == 2; }, 60));
  const std::vector<pid_t> runs = children_of(parent);
  REQUIRE(runs.size() == 2);
  REQUIRE(::kill(parent, SIGKILL) == 0);
  ::waitpid(parent, nullptr, 0);
  for (pid_t run : runs) CHECK(eventually([&] { return !alive(run); }, 5));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  CHECK(complete_files(dir / "out") == 0);
}

TEST_CASE("a fleet run starts at most --jobs runs at once and passes --jobs to each", "[signals]") {
  test::TempDir dir("signals-fleet-jobs");
  const pid_t parent = start_fleet(dir, "sim,sim,sim", {"--jobs", "1"});
  REQUIRE(eventually([&] { return measuring(dir / "out") == 1; }, 60));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::vector<pid_t> runs = children_of(parent);
  REQUIRE(runs.size() == 1);  // the second waits for the first
  CHECK(test::has(command_line(runs[0]), " --jobs 1"));
  REQUIRE(::kill(parent, SIGTERM) == 0);
  const auto status = wait_status(parent, 20);
  REQUIRE(status);
  CHECK(WEXITSTATUS(*status) == 1);
  CHECK(partial_files(dir / "out") == 1);  // the others were never started
  CHECK(complete_files(dir / "out") == 0);
  const std::string log = test::read_file(dir / "log");
  CHECK(test::has(log, "2 not started"));
  CHECK(test::has(log, "not started (interrupted)"));
}

// A "Python" that passes the import check and, as the script, writes its pid and sleeps.
fs::path sleeping_python(const test::TempDir& dir) {
  const fs::path path = dir / "python-that-sleeps";
  test::write_file(path, "#!/bin/sh\ncase \"$1\" in -c) exit 0;; esac\necho $$ > '" + (dir / "script.pid").string() +
                             "'\nexec sleep 120\n");
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

// The arguments of each command that runs Python, reading `topology` (in folder `fleet`).
std::vector<std::string> python_command(const std::string& which, const test::TempDir& dir) {
  fs::create_directories(dir / "fleet");
  fs::copy_file(fs::path(MEMTOPO_HOST_TEST_DIR) / ".." / "report" / "inputs" / "h100" / "topology.toml",
                dir / "fleet" / "t.toml", fs::copy_options::overwrite_existing);
  const std::string topology = (dir / "fleet" / "t.toml").string();
  if (which == "report") return {"report", topology, "-o", (dir / "page.html").string()};
  if (which == "draw") return {"draw", topology, "-o", (dir / "gpu.svg").string()};
  return {"fleet", "--report", "-o", (dir / "page.html").string(), (dir / "fleet").string()};
}

TEST_CASE("a stopped report, draw or fleet --report ends its Python and removes its temporary folders",
          "[signals]") {
  const std::string which = GENERATE(as<std::string>{}, "report", "draw", "fleet --report");
  const int sig = GENERATE(SIGTERM, SIGKILL);
  test::TempDir dir("signals-python-" + std::to_string(which.size()) + "-" + std::to_string(sig));
  fs::create_directories(dir / "tmp");
  test::ScopedEnv python("MEMTOPO_PYTHON", sleeping_python(dir).string());
  test::ScopedEnv tmpdir("TMPDIR", (dir / "tmp").string());
  const pid_t memtopo = test::spawn_memtopo(python_command(which, dir), dir / "log");
  REQUIRE(eventually([&] { return fs::exists(dir / "script.pid") && fs::file_size(dir / "script.pid") > 0; }, 30));
  const pid_t script = std::stoi(test::read_file(dir / "script.pid"));
  REQUIRE(alive(script));
  REQUIRE(::kill(memtopo, sig) == 0);
  const auto status = wait_status(memtopo, 10);
  REQUIRE(status);
  CHECK(WIFSIGNALED(*status));  // it ends by the signal, as a process that does not catch it
  CHECK(WTERMSIG(*status) == sig);
  CHECK(eventually([&] { return !alive(script); }, 5));
  CHECK_FALSE(fs::exists(dir / "page.html"));
  CHECK_FALSE(fs::exists(dir / "gpu.svg"));
  if (sig == SIGKILL) {
    CHECK(count_files(dir / "tmp", [](const std::string&) { return true; }) == 1);  // no chance to clean
    // The next memtopo that makes a temporary folder removes the folder of the dead one.
    test::write_file(dir / "python-that-fails", "#!/bin/sh\ncase \"$1\" in -c) exit 0;; esac\nexit 1\n");
    fs::permissions(dir / "python-that-fails", fs::perms::owner_all);
    test::ScopedEnv failing("MEMTOPO_PYTHON", (dir / "python-that-fails").string());
    CHECK(wait_status(test::spawn_memtopo(python_command("draw", dir), dir / "log2"), 60));
  }
  CHECK(count_files(dir / "tmp", [](const std::string&) { return true; }) == 0);
}

}  // namespace hostile_signals
