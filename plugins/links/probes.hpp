// The links plugin's probes (plugin.cpp registers them).
#pragma once

#include <memtopo/probe.hpp>

namespace links {

memtopo::Probe attachment_probe();
memtopo::Probe copies_probe();

}  // namespace links
