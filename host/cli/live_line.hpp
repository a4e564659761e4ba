// The status line `memtopo run` keeps at the bottom of a terminal (stderr), and every other
// line written above it: a log line never lands inside the status line. Not installed.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <spdlog/sinks/sink.h>

namespace memtopo::host::cli {

class LiveLine {
 public:
  static LiveLine& on_stderr();
  // Whether stderr is a terminal: elsewhere no status line is drawn.
  bool terminal() const { return terminal_; }
  void show(const std::string& text);       // the status line is now `text`
  void erase();                             // no status line any more
  void print_above(std::string_view lines);  // whole lines ('\n'-ended), above the status line

 private:
  LiveLine();
  std::mutex mutex_;
  std::string text_;
  bool terminal_ = false;
};

// A spdlog sink that prints each message through LiveLine::on_stderr().print_above.
std::shared_ptr<spdlog::sinks::sink> live_line_sink();

}  // namespace memtopo::host::cli
