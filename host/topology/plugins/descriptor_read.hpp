// Reading one probe descriptor (mt_probe_desc and the arrays it points at) into the host's
// ProbeInfo, every field checked. Not installed.
#pragma once

#include <optional>
#include <string>

#include "memtopo/abi.h"
#include "topology/plugins/registry.hpp"

namespace memtopo::host {

// A C string a plugin gave, where null is the empty string.
inline std::string str_or_empty(const char* s) { return s ? std::string(s) : std::string(); }

// Fills `info` (plugin, version and file already set) from one descriptor of at least ABI
// 3.0's size; what is wrong with it otherwise.
std::optional<std::string> read_probe(const mt_probe_desc& pd, ProbeInfo& info);

// The extensions a descriptor of ABI 3.9 or later declares (extension_read.cpp): the ones the
// host knows by name and version read into `info`, the others passed over.
std::optional<std::string> read_extensions(const mt_probe_desc& pd, ProbeInfo& info);

}  // namespace memtopo::host
