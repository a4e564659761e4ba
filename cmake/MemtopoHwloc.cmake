# hwloc (Debian's libhwloc-dev), optional: the CUDA backend places the GPU among the host's NUMA
# nodes and binds host memory to one (docs/links.md), `export --hwloc` writes the host's
# topology, and a test reads it back. Found once here as the target memtopo::hwloc; without it
# the node and CPUs come from sysfs and `export --hwloc` says the build lacks it.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(MEMTOPO_HWLOC QUIET IMPORTED_TARGET GLOBAL hwloc)
endif()
if(MEMTOPO_HWLOC_FOUND AND NOT TARGET memtopo::hwloc)
  add_library(memtopo::hwloc ALIAS PkgConfig::MEMTOPO_HWLOC)
endif()
