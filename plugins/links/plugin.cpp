// links: the GPU in its host. Built against the SDK alone (CMakeLists.txt).
#include "probes.hpp"

MEMTOPO_PLUGIN("links", "1.0.0", links::attachment_probe(), links::copies_probe())
