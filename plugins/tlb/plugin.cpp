// tlb: the translation lookaside buffers as loads through the L2 path see them. docs/tlb.md.
#include "probes.hpp"

MEMTOPO_PLUGIN("tlb", "1.0.0", tlb::levels_probe(), tlb::sets_probe(), tlb::virtual_tag_probe())
