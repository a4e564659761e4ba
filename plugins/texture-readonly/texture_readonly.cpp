// texture-readonly: the texture cache (tex1Dfetch on a linear texture) and the read-only
// data cache (ld.global.nc). Both run the SDK's cache procedure; only the path differs.
#include <string>
#include <tuple>
#include <vector>

#include <memtopo/cache_procedure.hpp>
#include <memtopo/probe.hpp>

namespace {
using memtopo::Context;
using memtopo::Probe;

memtopo::cache::Target path_target(mt_space space, const char* element) {
  memtopo::cache::Target t;
  t.space = space;
  t.element = element;
  t.shared_carveout_percent = 0;  // on unified L1/texture designs the L1 share is largest
  t.search_limit_bytes = 4u << 20;
  return t;
}

std::vector<Probe> all_probes() {
  std::vector<Probe> probes;
  for (auto [space, element, title, subject] :
       {std::tuple{MT_SPACE_TEXTURE, "texture", "Texture cache", "texture_cache"},
        std::tuple{MT_SPACE_READONLY, "readonly", "Read-only data cache", "readonly_cache"}}) {
    memtopo::cache::ElementSpec spec;
    spec.plugin = "texture-readonly";
    spec.element = element;
    spec.title = title;
    spec.subject = subject;
    spec.target = [space = space, element = element](const Context&) { return path_target(space, element); };
    spec.carveout_option = true;  // where they share the L1 storage, the carveout sets their size
    // Where the strides cannot see the sets (a hashed index), the storage these paths share
    // (cache-sharing/storage) has the sets the L1's eviction sets found; the read-only path
    // may use the texture path's cache instead.
    spec.storage_key = std::string(element) + ".storage";
    spec.storage_elements = space == MT_SPACE_TEXTURE ? std::vector<std::string>{"l1d"}
                                                      : std::vector<std::string>{"l1d", "texture"};
    for (auto& p : memtopo::cache::element_probes(spec)) probes.push_back(std::move(p));
  }
  return probes;
}

}  // namespace

MEMTOPO_PLUGIN("texture-readonly", "1.0.0", all_probes())
