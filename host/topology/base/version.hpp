#pragma once

namespace memtopo::host {
// The git commit the host was built from (12 hex digits, or "unknown"), read at build time.
const char* git_commit();
}  // namespace memtopo::host
