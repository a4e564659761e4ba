# Installs the build tree into a temporary prefix, builds examples/kernel-probe (a .cu probe)
# against it, lists it with the installed memtopo and runs it on the simulated GPU, where the
# host must skip it for its declared need (a CUDA GPU) and still exit 0.
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
if(NOT topo MATCHES "status = \"skipped\"" OR NOT topo MATCHES "CUDA")
  message(FATAL_ERROR "the kernel probe was not skipped for its CUDA need on the simulated GPU:\n${topo}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "kernel probe: built, listed and skipped on the simulated GPU against ${prefix}")
