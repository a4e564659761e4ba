// The GPU at a glance (`memtopo draw`, docs/host.md): the hierarchy of a topology drawn as text.
#pragma once

#include <string>

#include <toml++/toml.h>

namespace memtopo::host {

// A tree of the chip and its memory levels with size, line, latency and bandwidth, as UTF-8
// lines; levels and values the topology lacks are left out.
std::string draw_topology_text(const toml::table& doc);

}  // namespace memtopo::host
