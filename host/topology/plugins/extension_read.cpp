// A probe's extensions (ABI 3.9, docs/abi.md, "Extensions"): named, versioned blocks. The host
// reads the ones it knows and passes over the rest, so that a plugin of a later minor that
// declares more still loads here for what this host reads.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>

#include "topology/plugins/descriptor_read.hpp"

namespace memtopo::host {

namespace {

bool word(const std::string& s) {
  return !s.empty() && std::islower(static_cast<unsigned char>(s[0])) &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::islower(c) || std::isdigit(c) || c == '_'; });
}

// "memtopo.key_roles" version 1: each a provided key of the probe, once, with a role of the form.
std::optional<std::string> read_key_roles(const mt_extension_desc& e, ProbeInfo& info, const std::string& where) {
  if (e.count == 0) return std::nullopt;
  if (!e.data) return where + "count is " + std::to_string(e.count) + " but data is null";
  const auto* first = static_cast<const mt_key_role*>(e.data);
  const size_t stride = first->struct_size;
  if (stride < sizeof(mt_key_role)) return where + "role descriptor too small (struct_size " + std::to_string(stride) + ")";
  for (size_t k = 0; k < e.count; ++k) {
    const auto* r = reinterpret_cast<const mt_key_role*>(static_cast<const char*>(e.data) + k * stride);
    const std::string key = str_or_empty(r->key), role = str_or_empty(r->role);
    const std::string which = where + "role #" + std::to_string(k) + " (" + key + "): ";
    if (std::find(info.provided.begin(), info.provided.end(), key) == info.provided.end())
      return which + "the probe does not provide " + key;
    if (const std::string bad = role_form_error(role); !bad.empty()) return which + bad;
    if (!info.roles.emplace(key, role).second) return which + "a second role for the key";
  }
  return std::nullopt;
}

}  // namespace

std::string role_form_error(const std::string& role) {
  const size_t dot = role.find('.'), at = role.find('@');
  const std::string head = role.substr(0, std::min(at, role.size()));
  if (dot == std::string::npos || dot > head.size())
    return "role '" + role + "' is not <class>.<quantity>[@<subject>] (cache.size_bytes@l1_cache)";
  const std::string cls = head.substr(0, dot), quantity = head.substr(dot + 1);
  const std::string subject = at == std::string::npos ? "x" : role.substr(at + 1);
  if (!word(cls) || !word(quantity) || !word(subject))
    return "role '" + role + "': each of class, quantity and subject is lowercase letters, digits and '_', "
           "starting with a letter (cache.size_bytes@l1_cache)";
  return "";
}

std::optional<std::string> read_extensions(const mt_probe_desc& pd, ProbeInfo& info) {
  if (pd.struct_size < offsetof(mt_probe_desc, extension_count) + sizeof(size_t) || pd.extension_count == 0)
    return std::nullopt;
  const std::string where = "probe " + info.name + ": ";
  if (!pd.extensions)
    return where + "extension_count is " + std::to_string(pd.extension_count) + " but the extension list is null";
  const size_t stride = pd.extensions[0].struct_size;
  if (stride < sizeof(mt_extension_desc)) return where + "extension descriptor too small";
  for (size_t k = 0; k < pd.extension_count; ++k) {
    const auto* e = reinterpret_cast<const mt_extension_desc*>(reinterpret_cast<const char*>(pd.extensions) + k * stride);
    const std::string name = str_or_empty(e->name);
    if (name.empty()) return where + "extension #" + std::to_string(k) + " has no name";
    if (name == MT_EXTENSION_KEY_ROLES && e->version == 1)
      if (auto bad = read_key_roles(*e, info, where + name + ": ")) return bad;
  }
  return std::nullopt;
}

}  // namespace memtopo::host
