#include "run/running/signal_relay.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace memtopo::host {

namespace {

constexpr int kRelayedSignals[] = {SIGINT, SIGTERM, SIGHUP};

std::atomic<int> g_relay_count{0};
std::atomic<int> g_relay_last{0};
int g_relay_depth = 0;            // nested instances
int g_relay_pipe[2] = {-1, -1};   // the self-pipe: the handler writes, poll() watches the read end

extern "C" void on_relayed_signal(int sig) {
  const int saved = errno;
  g_relay_last.store(sig);
  g_relay_count.fetch_add(1);
  const char byte = 1;
  (void)!::write(g_relay_pipe[1], &byte, 1);  // non-blocking: a full pipe already wakes the reader
  errno = saved;
}

}  // namespace

SignalRelay::SignalRelay() {
  if (g_relay_depth++ > 0) return;
  outer_ = true;
  if (::pipe2(g_relay_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    g_relay_depth = 0;
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  g_relay_count.store(0);
  g_relay_last.store(0);
  struct sigaction action {};
  action.sa_handler = on_relayed_signal;
  sigemptyset(&action.sa_mask);  // no SA_RESTART: a signal also ends a blocking wait with EINTR
  for (size_t i = 0; i < 3; ++i) sigaction(kRelayedSignals[i], &action, &previous_[i]);
}

SignalRelay::~SignalRelay() {
  --g_relay_depth;
  if (!outer_) return;
  for (size_t i = 0; i < 3; ++i) sigaction(kRelayedSignals[i], &previous_[i], nullptr);
  ::close(g_relay_pipe[0]);
  ::close(g_relay_pipe[1]);
  g_relay_pipe[0] = g_relay_pipe[1] = -1;
}

int SignalRelay::count() { return g_relay_count.load(); }
int SignalRelay::last() { return g_relay_last.load(); }
int SignalRelay::wake_fd() { return g_relay_pipe[0]; }

void SignalRelay::drain() {
  char buf[64];
  while (::read(g_relay_pipe[0], buf, sizeof buf) > 0) {
  }
}

}  // namespace memtopo::host
