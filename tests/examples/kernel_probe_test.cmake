# Installs the build tree into a temporary prefix, builds examples/kernel-probe (a .cu probe)
# against it, lists it with the installed memtopo and runs it on the simulated GPU, where its
# own kernel runs and must give the built-in device's read-only hit latency.
# Inputs: BUILD_DIR, EXAMPLE_DIR, WORK_DIR, GENERATOR.
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/out_of_tree_steps.cmake)
set(prefix ${WORK_DIR}/prefix)
install_and_build_example(${prefix})

step(env -u MEMTOPO_PLUGIN_PATH ${prefix}/bin/memtopo list --plugin-path ${WORK_DIR}/build/plugins)
if(NOT step_output MATCHES "example-kernel/nc-latency")
  message(FATAL_ERROR "memtopo list does not show the kernel probe:\n${step_output}")
endif()
if(step_output MATCHES "loading errors")
  message(FATAL_ERROR "loading errors:\n${step_output}")
endif()

step(env -u MEMTOPO_PLUGIN_PATH ${prefix}/bin/memtopo run --device sim --plugin-path ${WORK_DIR}/build/plugins
     --only example-kernel -o ${WORK_DIR}/nc.toml)
file(READ ${WORK_DIR}/nc.toml topo)
# The built-in device (examples/devices/hopper-like.toml): [readonly] latency_cycles = 35.
if(NOT topo MATCHES "status = \"ok\"" OR NOT topo MATCHES "nc_latency_cycles = 35.0")
  message(FATAL_ERROR "the kernel probe did not measure the read-only latency on the simulated GPU:\n${topo}")
endif()
# The installed SDK's key flags reach the file: the probe declares its latency a headline value.
if(NOT topo MATCHES "nc_latency_cycles = { probe = \"example-kernel/nc-latency\"[^}]*headline = true")
  message(FATAL_ERROR "the kernel probe's headline declaration is not in the topology's provenance:\n${topo}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "kernel probe: built, listed and run on the simulated GPU against ${prefix}")
