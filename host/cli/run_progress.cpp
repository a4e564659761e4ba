#include "cli/run_progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/live_line.hpp"

namespace memtopo::host::cli {

namespace {

std::string clock_text(double seconds) {
  const long s = std::lround(std::max(seconds, 0.0));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

}  // namespace

StderrProgress::StderrProgress(bool quiet, size_t total) : quiet_(quiet), total_(total) {}

StderrProgress::~StderrProgress() { LiveLine::on_stderr().erase(); }

std::string StderrProgress::status_line() const {
  constexpr size_t kWidth = 24;
  const double done = total_ ? (double(ended_) + fraction_) / double(total_) : 0;
  const size_t filled = std::min(kWidth, size_t(done * kWidth));
  std::string line = "[" + std::string(filled, '#') + std::string(kWidth - filled, '-') + "] " +
                     std::to_string(ended_) + "/" + std::to_string(total_);
  if (!current_.empty()) {
    line += "  " + current_ + " " + std::to_string(int(fraction_ * 100 + 0.5)) + "%";
    if (!stage_.empty()) line += " " + stage_;
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  line += "  " + clock_text(elapsed);
  if (ended_ > 0 && ended_ < total_) line += ", about " + clock_text(elapsed / double(ended_) * double(total_ - ended_)) + " left";
  return line;
}

void StderrProgress::redraw() {
  if (!quiet_) LiveLine::on_stderr().show(status_line());
}

void StderrProgress::probe_started(size_t, size_t total, const std::string& probe) {
  const std::lock_guard<std::mutex> lock(mutex_);
  total_ = std::max(total_, total);
  running_[probe] = true;
  current_ = probe;
  stage_.clear();
  fraction_ = 0;
  redraw();
}

void StderrProgress::progress(const std::string& probe, double fraction, const std::string& stage) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!running_.count(probe)) return;
  current_ = probe;
  fraction_ = std::clamp(fraction, 0.0, 1.0);
  stage_ = stage;
  redraw();
}

void StderrProgress::probe_finished(const ProbeOutcome& o) {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++ended_;
  running_.erase(o.probe);
  if (o.probe == current_) current_.clear(), stage_.clear(), fraction_ = 0;
  if (quiet_) return;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f s", o.duration_s);
  LiveLine::on_stderr().print_above("[" + std::to_string(ended_) + "/" + std::to_string(total_) + "] " + o.probe + ": " +
                                    status_name(o.status) + " (" + seconds + ")\n");
  if (ended_ < total_) redraw();
  else LiveLine::on_stderr().erase();
}

}  // namespace memtopo::host::cli
