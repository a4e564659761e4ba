#include "topology/values/nesting.hpp"

#include <algorithm>
#include <stdexcept>

namespace memtopo::host {

nlohmann::json parse_json_bounded(const std::string& text, const std::string& origin) {
  struct TooDeep {};
  // The parser keeps its own stack; the callback stops it before anything recursive sees the value.
  const nlohmann::json::parser_callback_t bound = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth >= static_cast<int>(kMaxNesting)) throw TooDeep{};  // depth 0: the document's own value
    return true;
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, bound, false);
  } catch (const TooDeep&) {
    throw std::runtime_error(origin + ": nested deeper than " + std::to_string(kMaxNesting) +
                             " levels; no file memtopo reads nests so deep: name a file memtopo wrote");
  }
  if (doc.is_discarded()) {
    // Parsed again for the parser's reason and where it stopped.
    std::string why = "not valid JSON";
    size_t line = 1;
    try {
      (void)nlohmann::json::parse(text, bound);
    } catch (const nlohmann::json::parse_error& e) {
      const std::string what = e.what();
      const size_t reason = what.find("syntax error");
      why += " (" + (reason == std::string::npos ? what : what.substr(reason)) + ")";
      const size_t stop = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
      line += size_t(std::count(text.begin(), text.begin() + std::ptrdiff_t(stop), '\n'));
    } catch (const nlohmann::json::exception& e) {  // a number past what a double holds (out_of_range)
      why += " (" + std::string(e.what()) + ")";
    } catch (const TooDeep&) {
    }
    throw std::runtime_error(origin + ":" + std::to_string(line) + ": " + why + "; name a topology `memtopo run` wrote");
  }
  return doc;
}

bool looks_like_json(const std::string& text) {
  const size_t start = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  const size_t first = text.find_first_not_of(" \t\r\n", start);
  return first != std::string::npos && text[first] == '{';
}

}  // namespace memtopo::host
