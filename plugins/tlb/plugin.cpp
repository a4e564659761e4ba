// tlb: the translation lookaside buffers as loads through the L2 path see them. docs/tlb.md.
#include "probes.hpp"

#ifdef MEMTOPO_TLB_MAPPED
MEMTOPO_PLUGIN("tlb", "1.3.0", tlb::levels_probe(), tlb::sets_probe(), tlb::virtual_tag_probe(), tlb::mapped_levels_probe())
#else
MEMTOPO_PLUGIN("tlb", "1.3.0", tlb::levels_probe(), tlb::sets_probe(), tlb::virtual_tag_probe())
#endif
