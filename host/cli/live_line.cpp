#include "cli/live_line.hpp"

#include <unistd.h>

#include <cstdio>

#include <mutex>
#include <spdlog/sinks/base_sink.h>

namespace memtopo::host::cli {

LiveLine::LiveLine() : terminal_(::isatty(STDERR_FILENO) != 0) {}

LiveLine& LiveLine::on_stderr() {
  static LiveLine line;
  return line;
}

void LiveLine::show(const std::string& text) {
  if (!terminal_) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  text_ = text;
  std::fprintf(stderr, "\r\033[K%s", text_.c_str());
  std::fflush(stderr);
}

void LiveLine::erase() {
  if (!terminal_) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!text_.empty()) std::fputs("\r\033[K", stderr);
  text_.clear();
  std::fflush(stderr);
}

void LiveLine::print_above(std::string_view lines) {
  const std::lock_guard<std::mutex> lock(mutex_);
  // Cleared even without a line of our own: a worker process's log line lands where the run's
  // status line stands.
  if (terminal_) std::fputs("\r\033[K", stderr);
  std::fwrite(lines.data(), 1, lines.size(), stderr);
  if (terminal_ && !text_.empty()) std::fputs(text_.c_str(), stderr);
  std::fflush(stderr);
}

namespace {

// Its lock guards the formatter; LiveLine guards the line.
class LiveLineSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    LiveLine::on_stderr().print_above(std::string_view(formatted.data(), formatted.size()));
  }
  void flush_() override {}
};

}  // namespace

std::shared_ptr<spdlog::sinks::sink> live_line_sink() { return std::make_shared<LiveLineSink>(); }

}  // namespace memtopo::host::cli
