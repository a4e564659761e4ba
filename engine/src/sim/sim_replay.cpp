#include "sim/sim_replay.hpp"

#include <utility>
#include <vector>

namespace memtopo::sim {
namespace {

// The table holding `path`'s last part and that part; null where a parent is missing or not a
// table (`create`: missing parents are made).
std::pair<toml::table*, std::string> parent_of(toml::table& root, const std::string& path, bool create) {
  toml::table* t = &root;
  size_t from = 0;
  for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', from)) {
    const std::string part = path.substr(from, dot - from);
    toml::node* n = t->get(part);
    if (!n && create) n = &t->insert_or_assign(part, toml::table{}).first->second;
    if (!n || !n->is_table()) return {nullptr, ""};
    t = n->as_table();
    from = dot + 1;
  }
  return {t, path.substr(from)};
}

}  // namespace

std::map<std::string, std::string> apply_replay(toml::table& root, const std::map<std::string, std::string>& replay) {
  std::map<std::string, std::string> moved;
  for (const auto& [measured, target] : replay) {
    if (measured == target) continue;
    auto [from, key] = parent_of(root, measured, false);
    if (!from || !from->contains(key)) continue;
    if (!target.empty()) {
      const auto place = parent_of(root, target, true);
      toml::table* to = place.first;
      const std::string& to_key = place.second;
      if (to && !to->contains(to_key)) {
        // Moved, not copied: the node keeps its place in the file for messages.
        from->get(key)->visit([&](auto&& n) { to->insert_or_assign(to_key, std::move(n)); });
        moved[target] = measured;
      }
    }
    from->erase(key);
  }
  return moved;
}

std::string name_replayed(const std::string& message, const std::map<std::string, std::string>& moved) {
  for (const auto& [target, measured] : moved)
    if (message.find(": " + target + ":") != std::string::npos) return message + " (measured as " + measured + ")";
  return message;
}

}  // namespace memtopo::sim
