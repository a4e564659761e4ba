// `memtopo run` of several GPUs at once (--device all, a list), or of one rank of srun or
// mpirun: one child run per device, each a `memtopo run` of its own that sees only its GPU and
// writes its own topology into -o DIR/, named after host and device (docs/fleet.md). A GPU that
// fails fails alone; the others' files are written. At most --jobs runs go at once; a stop
// signal is passed on to them and waited for, and they die with this process (docs/host.md,
// "Guarantees"). Under MPI the ranks start together and rank 0 writes the fleet summary.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <system_error>
#include <thread>

#include <spdlog/spdlog.h>

#include "topology/base/usage_error.hpp"
#include "run/launch/device_list.hpp"
#include "run/launch/device_runs.hpp"
#include "run/launch/mpi_session.hpp"
#include "memtopo/engine.hpp"
#include "topology/base/child_process.hpp"
#include "topology/document/summary.hpp"
#include "topology/base/terminal_text.hpp"
#include "topology/base/output_file.hpp"
#include "run/output/raw_dir.hpp"
#include "run/planning/device_spec.hpp"
#include "run/running/signal_relay.hpp"
#include "topology/base/tied_child.hpp"

extern char** environ;

namespace memtopo::host::cli {

namespace fs = std::filesystem;

namespace {

// One device's run: its child process and what it wrote.
struct Member {
  FleetDevice device;
  fs::path output;
  pid_t pid = -1;        // -1: not started (a stop signal came first)
  int fd = -1;           // the child's stderr
  std::string pending;   // a line not yet complete
  int exit_code = -1;    // -1 until it ended; 128 + signal for a signal
};

std::vector<std::string> child_args(const RunRequest& a, const Member& m, const fs::path& raw) {
  std::vector<std::string> v{"run", "--device", m.device.spec, "--device-label", m.device.label, "-o",
                             m.output.string()};
  if (!a.config.empty()) v.insert(v.end(), {"--config", a.config});
  for (const auto& o : a.only) v.insert(v.end(), {"--only", o});
  for (const auto& s : a.skip) v.insert(v.end(), {"--skip", s});
  for (const auto& p : a.plugin_paths) v.insert(v.end(), {"--plugin-path", p});
  if (!raw.empty()) v.insert(v.end(), {"--raw-dir", (raw / m.device.stem).string()});
  if (!a.format.empty()) v.insert(v.end(), {"--format", a.format});
  if (a.resume) v.push_back("--resume");
  if (a.quiet) v.push_back("-q");
  if (a.verbose) v.push_back("-v");
  if (a.no_isolation) v.push_back("--no-isolation");
  if (a.verify) v.push_back("--verify");
  if (a.jobs) v.insert(v.end(), {"--jobs", std::to_string(a.jobs)});
  return v;
}

// Runs at once: --jobs, else the CPUs this process may use (a 64-GPU list on a 16-core node
// measures 16 at a time).
size_t runs_at_once(const RunRequest& a) {
  if (a.jobs) return a.jobs;
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<size_t>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// This process's environment for a child: its GPU only, and marked as a member, so that it
// runs one device and never starts a fleet (or MPI) of its own.
std::vector<std::string> child_environment(const FleetDevice& d) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    if (entry.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0 && !d.visible.empty()) continue;
    env.push_back(entry);
  }
  if (!d.visible.empty()) env.push_back("CUDA_VISIBLE_DEVICES=" + d.visible);
  env.push_back(std::string(kFleetMemberVariable) + "=1");
  return env;
}

// A member's run, tied to this process: it dies with it (SIGKILL included), in a process group
// of its own so that a terminal's Ctrl-C reaches it once, through pass_on().
void spawn(Member& m, const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  TiedChildSpec spec;
  spec.argv = {fs::read_symlink("/proc/self/exe").string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = child_environment(m.device);
  spec.stdout_to_null = true;  // its summary: ours is one table
  spec.stderr_fd = fds[1];
  try {
    m.pid = spawn_tied_child(spec);
  } catch (const std::system_error& e) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("cannot start the run of " + m.device.label + ": " + e.code().message());
  }
  ::close(fds[1]);
  m.fd = fds[0];
}

void reap(Member& m) {
  int status = 0;
  while (::waitpid(m.pid, &status, 0) < 0 && errno == EINTR) {
  }
  m.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// Reads what `m` wrote to stderr and prints each whole line under its label; at its end, waits
// for it. Returns whether it ended.
bool relay_output(Member& m) {
  char buf[4096];
  const ssize_t n = ::read(m.fd, buf, sizeof buf);
  if (n > 0) m.pending.append(buf, static_cast<size_t>(n));
  for (size_t nl; (nl = m.pending.find('\n')) != std::string::npos; m.pending.erase(0, nl + 1))
    std::fprintf(stderr, "[%s] %s\n", m.device.label.c_str(), m.pending.substr(0, nl).c_str());
  if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN))) return false;
  if (!m.pending.empty()) std::fprintf(stderr, "[%s] %s\n", m.device.label.c_str(), m.pending.c_str());
  ::close(m.fd);
  m.fd = -1;
  reap(m);
  return true;
}

// A stop signal passed on to every run under way, each the same signal once: they stop after
// their current probe and write what they measured (OUT.partial.toml), a second stops the probe
// at once, a third ends them. Runs not started yet are not started.
void pass_on(std::vector<Member>& members, int sig, bool first) {
  size_t running = 0, waiting = 0;
  for (auto& m : members) {
    if (m.pid > 0 && m.exit_code < 0) running += ::kill(m.pid, sig) == 0;
    waiting += m.pid < 0;
  }
  if (first)
    std::fprintf(stderr, "memtopo: interrupted (%s); passed on to the %zu run(s) under way, which write what they "
                 "measured; %zu not started\n", signal_name(sig).c_str(), running, waiting);
}

// Starts the members' runs, at most `jobs` at once, relays their stderr until all have ended,
// and passes every stop signal on (this process waits for its runs rather than leaving them).
void run_members(std::vector<Member>& members, size_t jobs, const std::function<void(Member&)>& start) {
  SignalRelay signals;
  size_t next = 0, running = 0;
  int passed = 0;
  for (;;) {
    for (; SignalRelay::count() == 0 && next < members.size() && running < jobs; ++next, ++running)
      start(members[next]);
    if (passed < SignalRelay::count()) {  // each one passed on, two that came together too
      SignalRelay::drain();
      for (const int now = SignalRelay::count(); passed < now; ++passed)
        pass_on(members, SignalRelay::last(), passed == 0);
    }
    if (running == 0 && (next == members.size() || SignalRelay::count() > 0)) break;
    std::vector<pollfd> fds{{SignalRelay::wake_fd(), POLLIN, 0}};
    std::vector<Member*> owners{nullptr};
    for (auto& m : members)
      if (m.fd >= 0) fds.push_back({m.fd, POLLIN, 0}), owners.push_back(&m);
    if (::poll(fds.data(), fds.size(), 1000) < 0) continue;  // EINTR: a signal, seen above
    for (size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) running -= relay_output(*owners[i]);
  }
}

fs::path prepare_folder(const std::string& output) {
  const fs::path dir = fs::path(output).lexically_normal();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    throw UsageError("-o " + output + ": cannot make the folder each GPU's topology goes into" +
                     (ec ? ": " + ec.message() : std::string()) + "; choose a folder you can write");
  return dir;
}

// A device's column of the summary: its topology's values and the statuses of its probes.
SummaryColumn column_of(const Member& m, const DeviceRunReaders& readers) {
  SummaryColumn c{m.device.label, {}, ""};
  if (m.pid < 0) {
    c.tally = "not started (interrupted)";
    return c;
  }
  std::error_code ec;
  if (const fs::path partial = partial_path_for(m.output);
      !fs::is_regular_file(m.output, ec) && fs::is_regular_file(partial, ec)) {
    c = readers.column_of(partial.string(), m.device.label);  // an interrupted run's
    c.tally = "interrupted: " + c.tally + " in " + partial.filename().string();
    return c;
  }
  if (!fs::is_regular_file(m.output, ec)) {
    c.tally = "failed (exit " + std::to_string(m.exit_code) + ", no file)";
    return c;
  }
  return readers.column_of(m.output.string(), m.device.label);
}

// Members whose topology this run wrote (an older file of the same name does not count).
size_t written_since(const std::vector<Member>& members, fs::file_time_type from) {
  std::error_code ec;
  return size_t(std::count_if(members.begin(), members.end(), [&](const Member& m) {
    const auto t = fs::last_write_time(m.output, ec);
    return !ec && t >= from;
  }));
}

int combined_exit(const std::vector<Member>& members) {
  bool all_usage = !members.empty(), any = false;
  for (const auto& m : members) {
    all_usage = all_usage && m.exit_code == kExitUsage;
    any = any || m.exit_code != kExitOk;  // a run not started (-1) included
  }
  return all_usage ? kExitUsage : any ? kExitIncomplete : kExitOk;
}

}  // namespace

bool is_folder_output(const std::string& output) {
  std::error_code ec;
  return !output.empty() && (output.back() == '/' || fs::is_directory(output, ec));
}

bool wants_device_runs(const RunRequest& a, const DeviceChoice& device) {
  if (std::getenv(kFleetMemberVariable)) return false;  // a member runs its one device
  return is_folder_output(a.output) || device.several() || launch_rank() || mpi_world_size() > 1;
}

int run_devices(const RunRequest& a, const RunChoice& run, const DeviceRunReaders& readers) {
  const auto start = std::chrono::steady_clock::now();
  // A second early: file times come from a coarser clock than this one.
  const auto files_from = fs::file_time_type::clock::now() - std::chrono::seconds(1);
  if (!is_folder_output(a.output))
    throw UsageError("-o " + a.output + ": a run of several GPUs (or one rank of srun or mpirun) writes one topology "
                     "per GPU into a folder; name it with a trailing slash, e.g. -o topologies/");
  const std::string host = host_file_name();
  const std::optional<LaunchRank> rank = launch_rank();
  DeviceChoice device = run.device;
  const bool is_auto = !device.several() && device.specs.at(0).kind == DeviceSpec::Kind::Auto;
  if (is_auto && engine::cuda_device_count() > 0) device = DeviceChoice{"all", {}, true};
  std::vector<FleetDevice> devices = is_auto && !device.all
                                         ? std::vector<FleetDevice>{{"sim", "sim", "", host + "-sim"}}
                                         : expand_devices(device, host);
  if (rank) devices = {device_of_rank(devices, *rank)};
  const fs::path dir = prepare_folder(a.output);
  const fs::path& raw = run.raw_dir;
  const std::string ext = a.format == "json" ? ".json" : ".toml";
  std::unique_ptr<MpiSession> mpi = MpiSession::start();
  std::vector<Member> members;
  for (const auto& d : devices) members.push_back({d, dir / (d.stem + ext)});
  if (mpi) mpi->barrier();  // the ranks start measuring together
  run_members(members, runs_at_once(a), [&](Member& m) {
    if (!a.quiet) spdlog::info("{}: measuring into {}", m.device.label, m.output.string());
    spawn(m, child_args(a, m, raw));
  });
  std::vector<SummaryColumn> columns;
  for (const auto& m : members) columns.push_back(column_of(m, readers));
  std::fputs(render_summary_columns(columns).c_str(), stdout);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const size_t written = written_since(members, files_from);
  const std::string what = written == members.size() ? "wrote " + dir.string()
                           : written == 0               ? "wrote no topology into " + dir.string()
                                          : "wrote " + std::to_string(written) + " of " +
                                                std::to_string(members.size()) + " topologies into " + dir.string();
  std::fprintf(stderr, "%zu GPU(s) in %.1f s; %s\n", members.size(), seconds, terminal_text(what).c_str());
  int code = combined_exit(members);
  if (mpi) {
    std::string mine;
    for (const auto& m : members) mine += m.output.string() + "\n";
    const std::vector<std::string> all = mpi->gather(mine);
    if (mpi->rank() == 0) {
      std::vector<std::string> files;
      for (const auto& text : all)
        for (size_t s = 0, e; (e = text.find('\n', s)) != std::string::npos; s = e + 1) files.push_back(text.substr(s, e - s));
      code = std::max(code, readers.write_summary(dir, files));
    }
  }
  return code;
}

}  // namespace memtopo::host::cli
