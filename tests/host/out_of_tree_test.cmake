# Installs the build tree into a temporary prefix, builds examples/out-of-tree-probe against
# it, and loads the result with the installed memtopo. Run by ctest (cmake -P).
# Inputs: BUILD_DIR, EXAMPLE_DIR, WORK_DIR, GENERATOR.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(step_output "${out}${err}" PARENT_SCOPE)
endfunction()

step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
step(${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix}
     -DCMAKE_BUILD_TYPE=Release)
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)

# The installed executable finds its own plugins (lib/memtopo/plugins) and the example's.
step(env -u MEMTOPO_PLUGIN_PATH ${prefix}/bin/memtopo list --plugin-path ${WORK_DIR}/build/plugins)
if(NOT step_output MATCHES "example-vendor/hello  1.0.0  provides: example.answer  requires: device.sm_count")
  message(FATAL_ERROR "memtopo list does not show the example probe:\n${step_output}")
endif()
if(step_output MATCHES "loading errors")
  message(FATAL_ERROR "loading errors:\n${step_output}")
endif()
if(NOT step_output MATCHES "device-info/properties .*${prefix}")
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
