// The host's tools find plugins' keys by their declared roles (docs/roles.md), never by name: a
// plugin that names its keys otherwise, and declares their roles, is drawn and exported as the
// shipped ones are.
#include <cctype>
#include <string>

#include <toml++/toml.h>

#include "helpers.hpp"
#include "tools/draw/draw.hpp"
#include "tools/export/topology_export.hpp"
#include "topology/document/summary.hpp"

namespace fs = std::filesystem;

namespace {

// A key's old and new name, both "element.part", and its role.
struct Renaming {
  std::string from, to, role;
  std::string element() const { return from.substr(0, from.find('.')); }
  std::string part(const std::string& key) const { return key.substr(key.find('.') + 1); }
};

// The committed H100 run with keys renamed as another plugin might name them, each with its
// role in the provenance (the file predates roles: its other keys read by the shipped roles).
const Renaming kRenamed[] = {
    {"l2.partitions", "l2.partition_count", "cache.partitions@l2_cache"},
    {"shared.banks", "shared.bank_count", "memory.banks@shared"},
    {"l1d.line_bytes", "l1d.line_size_bytes", "cache.line_bytes@l1_cache"},
    {"device.sm_count", "device.multiprocessors", "gpu.sm_count"},
};

toml::table h100() {
  return toml::parse_file((fs::path(MEMTOPO_SOURCE_DIR) / "tests/sim/measured/h100-sxm.toml").string());
}

toml::table renamed(toml::table doc) {
  for (const Renaming& r : kRenamed) {
    const std::string e = r.element(), from = r.part(r.from), to = r.part(r.to);
    toml::table& element = *doc[e].as_table();
    REQUIRE(element.contains(from));
    element.insert_or_assign(to, *element.get(from));
    element.erase(from);
    toml::table entry;
    if (const toml::table* old = doc["provenance"][e][from].as_table()) entry = *old;
    entry.insert_or_assign("role", r.role);
    if (!doc["provenance"][e].as_table()) doc["provenance"].as_table()->insert(e, toml::table{});
    toml::table& provenance = *doc["provenance"][e].as_table();
    provenance.erase(from);
    provenance.insert_or_assign(to, entry);
  }
  return doc;
}

// The text with each renamed key's old name replaced by its new one.
std::string with_new_names(std::string text) {
  for (const Renaming& r : kRenamed) {
    const std::string &from = r.from, &to = r.to;
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      const char next = at + from.size() < text.size() ? text[at + from.size()] : ' ';
      if (std::isalnum(static_cast<unsigned char>(next)) || next == '_') continue;
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

}  // namespace

TEST_CASE("roles: renamed keys with their roles are drawn as the shipped ones", "[host][roles][draw]") {
  const toml::table original = h100(), other = renamed(h100());
  const std::string drawn = memtopo::host::draw_topology_text(original);
  CHECK(memtopo::host::draw_topology_text(other) == drawn);
  // Without the roles, the renamed keys are unknown to the drawing: what it shows changes.
  toml::table bare = other;
  for (const Renaming& r : kRenamed) bare["provenance"][r.element()].as_table()->erase(r.part(r.to));
  CHECK(memtopo::host::draw_topology_text(bare) != drawn);
}

TEST_CASE("roles: renamed keys with their roles export as the shipped ones, under their names", "[host][roles][export]") {
  const toml::table original = h100(), other = renamed(h100());
  const std::string accel = memtopo::host::accel_sim_config_text(original, "h100.toml");
  REQUIRE(accel.find("-gpgpu_shmem_num_banks 32") != std::string::npos);
  REQUIRE(accel.find("-gpgpu_n_clusters 132") != std::string::npos);
  CHECK(memtopo::host::accel_sim_config_text(other, "h100.toml") == with_new_names(accel));
  const std::string mt4g = memtopo::host::mt4g_json_text(original, "h100.toml");
  CHECK(memtopo::host::mt4g_json_text(other, "h100.toml") == with_new_names(mt4g));
}

TEST_CASE("roles: the summary shows a key by its role's quantity, whatever its name", "[host][roles][summary]") {
  memtopo::host::ProbeOutcome o;
  o.probe = "vendor/cache";
  o.status = memtopo::host::Status::Ok;
  memtopo::host::ResultRecord size, ways;
  size.key = "vcache.capacity_bytes";
  size.value = memtopo::host::Value::of_int(65536);
  size.role = "cache.size_bytes@vendor_cache";
  ways.key = "vcache.associativity";
  ways.value = memtopo::host::Value::of_int(8);
  o.results = {size, ways};
  // A key without a role is listed by its name after the known ones.
  CHECK(memtopo::host::render_summary({o}) == "vcache     size 64 KiB  associativity 8\n");
  o.results[1].role = "cache.ways@vendor_cache";
  o.results.push_back(o.results[1]);
  o.results.back().key = "vcache.set_count";
  o.results.back().role = "cache.sets@vendor_cache";
  CHECK(memtopo::host::render_summary({o}) == "vcache     size 64 KiB  sets x ways 8 x 8\n");
}
