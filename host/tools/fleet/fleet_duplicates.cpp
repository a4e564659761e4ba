#include "tools/fleet/fleet_duplicates.hpp"

#include <filesystem>
#include <map>

namespace memtopo::host {

namespace fs = std::filesystem;

std::vector<std::string> distinct_files(const std::vector<std::string>& files, std::vector<std::string>* notes) {
  std::map<std::string, std::string> first_name;  // canonical path -> the name it was first given
  std::vector<std::string> out;
  for (const auto& f : files) {
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(f, ec);
    const std::string key = ec ? f : canonical.string();
    const auto [it, is_new] = first_name.emplace(key, f);
    if (is_new) {
      out.push_back(f);
    } else if (notes) {
      notes->push_back(f + (f == it->second ? ": named twice" : ": the same file as " + it->second) + "; counted once");
    }
  }
  return out;
}

std::vector<FleetMember> one_member_per_gpu(std::vector<FleetMember> members, std::vector<std::string>* notes) {
  // One GPU measured one way (build and probes: FleetMember::like): a default and an
  // acceptance run of one GPU are two measurements, compared apart, not duplicates.
  auto id = [&](size_t i) { return members[i].uuid.empty() ? std::string() : members[i].uuid + "\n" + members[i].like; };
  std::map<std::string, size_t> kept;  // GPU and way -> index of the member counted
  std::map<std::string, std::vector<std::string>> files;  // GPU and way -> every file of it, in order
  for (size_t i = 0; i < members.size(); ++i) {
    const std::string uuid = id(i);
    if (uuid.empty()) continue;
    files[uuid].push_back(members[i].file);
    const auto [it, is_new] = kept.emplace(uuid, i);
    // RFC 3339 UTC times ("2026-01-31T12:00:00Z") order as text.
    if (!is_new && members[i].created_utc > members[it->second].created_utc) it->second = i;
  }
  std::vector<FleetMember> out;
  for (size_t i = 0; i < members.size(); ++i) {
    const std::string uuid = id(i);
    if (!uuid.empty() && kept[uuid] != i) continue;
    if (!uuid.empty() && notes && files[uuid].size() > 1) {
      std::string all;
      for (const auto& f : files[uuid]) all += (all.empty() ? "" : ", ") + f;
      notes->push_back(members[i].uuid + ": " + std::to_string(files[uuid].size()) + " files of one GPU (" + all +
                       "); counted once, from " + members[i].file + " (the newest [meta] created_utc, else the "
                       "first named)");
    }
    out.push_back(std::move(members[i]));
  }
  return out;
}

}  // namespace memtopo::host
