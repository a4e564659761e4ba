#include "run/running/stop_signals.hpp"

#include <unistd.h>

namespace memtopo::host::cli {

namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

std::atomic<bool> g_cancel{false};
std::atomic<int> g_count{0};
std::atomic<bool> g_isolated{false};

void say(const char* text, size_t size) { (void)!::write(STDERR_FILENO, text, size); }

void restore_default_actions() {
  for (int s : kStopSignals) std::signal(s, SIG_DFL);
}

extern "C" void on_stop_signal(int) {
  const int n = g_count.fetch_add(1) + 1;
  g_cancel.store(true);
  if (!g_isolated.load()) {
    static const char msg[] =
        "\nmemtopo: interrupted; stopping after the current probe (a second signal ends the process at once)\n";
    say(msg, sizeof msg - 1);
    restore_default_actions();
    return;
  }
  if (n == 1) {
    static const char msg[] =
        "\nmemtopo: interrupted; stopping after the current probe (a second signal stops it at once)\n";
    say(msg, sizeof msg - 1);
  } else {
    static const char msg[] =
        "\nmemtopo: stopping at once; writing what was measured (a third signal ends the process)\n";
    say(msg, sizeof msg - 1);
    restore_default_actions();
  }
}

}  // namespace

StopSignals::StopSignals(bool isolated) {
  g_cancel.store(false);
  g_count.store(0);
  g_isolated.store(isolated);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);  // no SA_RESTART: a signal wakes the executor's poll
  for (size_t i = 0; i < 3; ++i) sigaction(kStopSignals[i], &action, &previous_[i]);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &previous_[3]);
}

StopSignals::~StopSignals() {
  for (size_t i = 0; i < 3; ++i) sigaction(kStopSignals[i], &previous_[i], nullptr);
  sigaction(SIGPIPE, &previous_[3], nullptr);
}

const std::atomic<bool>& StopSignals::cancel() { return g_cancel; }
const std::atomic<int>& StopSignals::count() { return g_count; }

}  // namespace memtopo::host::cli
