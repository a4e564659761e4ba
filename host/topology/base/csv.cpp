#include "topology/base/csv.hpp"

#include "topology/base/terminal_text.hpp"

namespace memtopo::host {

std::string csv_field(const std::string& text) {
  std::string s = terminal_text(text);
  if (!s.empty() && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@')) s.insert(s.begin(), '\'');
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace memtopo::host
