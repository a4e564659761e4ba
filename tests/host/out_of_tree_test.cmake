# Installs the build tree into a temporary prefix, builds examples/out-of-tree-probe against
# it, and loads the result with the installed memtopo. Run by ctest (cmake -P).
# Inputs: BUILD_DIR, EXAMPLE_DIR, WORK_DIR, GENERATOR.
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/out_of_tree_steps.cmake)
set(prefix ${WORK_DIR}/prefix)
install_and_build_example(${prefix})

# The installed executable finds its own plugins (lib/memtopo/plugins) and the example's.
step(env -u MEMTOPO_PLUGIN_PATH ${prefix}/bin/memtopo list -v --plugin-path ${WORK_DIR}/build/plugins)
if(NOT step_output MATCHES "example-vendor/hello +1.0.0  [^\n]*\n    summary: [^\n]*\n    provides: example.answer\n    requires: device.sm_count\n")
  message(FATAL_ERROR "memtopo list does not show the example probe:\n${step_output}")
endif()
if(step_output MATCHES "loading errors")
  message(FATAL_ERROR "loading errors:\n${step_output}")
endif()
if(NOT step_output MATCHES "    file: ${prefix}/lib[^\n]*/memtopo/plugins/device-info.so")
  message(FATAL_ERROR "the installed memtopo did not find its own plugins:\n${step_output}")
endif()

step(env -u MEMTOPO_PLUGIN_PATH ${prefix}/bin/memtopo run -q --device sim --plugin-path ${WORK_DIR}/build/plugins
     --only example-vendor -o ${WORK_DIR}/hello.toml)
file(READ ${WORK_DIR}/hello.toml topo)
if(NOT topo MATCHES "\\[example\\]\nanswer = [0-9]+")
  message(FATAL_ERROR "the example's result is missing:\n${topo}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "out-of-tree probe: built, listed and run against ${prefix}")
