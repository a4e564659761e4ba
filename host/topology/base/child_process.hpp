// Child processes: how one ended, in words, and the load check of plugin discovery
// (docs/host.md, "Isolation").
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace memtopo::host {

// "SIGSEGV" (sigabbrev_np), or "signal 42" for one without a name.
std::string signal_name(int sig);

// How a child ended, from its waitpid status: "crashed with SIGSEGV (signal 11)",
// "called exit(3)".
std::string describe_wait_status(int wait_status);

// Waits up to `timeout_s` for `pid` to end, then kills it (SIGKILL) and waits; returns the
// wait status.
int reap_child(pid_t pid, double timeout_s);

// Loads `library` in a forked child (dlopen and the entry point) before the host loads it:
// a library whose static constructors or entry point crash, exit or hang is named instead of
// ending the host. Returns why it must be refused ("crashed while loading (SIGABRT, signal 6);
// remove or fix it"), or nothing when the child got through (dlopen errors included: the host
// reports those itself when it loads the file).
std::optional<std::string> check_library_loads(const std::filesystem::path& library, double timeout_s = 20);

}  // namespace memtopo::host
