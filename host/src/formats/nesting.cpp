#include "memtopo_host/nesting.hpp"

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
  if (doc.is_discarded()) throw std::runtime_error(origin + ": not valid JSON; name a topology `memtopo run` wrote");
  return doc;
}

}  // namespace memtopo::host
