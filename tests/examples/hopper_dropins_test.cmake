# Installs the build tree into a temporary prefix, builds plugins/hopper-tma and
# plugins/hopper-dsmem out of tree against it (their CMakeLists.txt unchanged: the installed
# SDK only), lists them with the installed memtopo and runs them on the simulated GPU: the
# distributed shared memory probes run their own kernels there, the TMA probes are skipped for
# their declared need of a CUDA GPU, and the run exits 0.
# Inputs: BUILD_DIR, SOURCE_DIR, WORK_DIR, GENERATOR.
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/out_of_tree_steps.cmake)
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
# Only what a vendor has: the installed tree. The plugins' own folders are copied out of
# memtopo's source tree so that no relative path into it can resolve.
set(plugin_path)
foreach(plugin hopper-tma hopper-dsmem)
  file(COPY ${SOURCE_DIR}/plugins/${plugin} DESTINATION ${WORK_DIR}/src)
  step(${CMAKE_COMMAND} -S ${WORK_DIR}/src/${plugin} -B ${WORK_DIR}/build-${plugin} -G ${GENERATOR}
       -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
  step(${CMAKE_COMMAND} --build ${WORK_DIR}/build-${plugin})
  if(NOT EXISTS ${WORK_DIR}/build-${plugin}/plugins/${plugin}.so)
    message(FATAL_ERROR "${plugin}: the out-of-tree build made no plugins/${plugin}.so")
  endif()
  string(APPEND plugin_path "${WORK_DIR}/build-${plugin}/plugins:")
endforeach()

# Only the out-of-tree builds: the installed copies of the same plugins are moved away.
file(GLOB installed ${prefix}/lib*/memtopo/plugins/hopper-*.so)
if(installed)
  file(REMOVE ${installed})
endif()
step(env MEMTOPO_PLUGIN_PATH=${plugin_path} ${prefix}/bin/memtopo list)
foreach(probe hopper-tma/latency hopper-tma/throughput hopper-dsmem/clusters hopper-dsmem/latency
              hopper-dsmem/bandwidth)
  if(NOT step_output MATCHES "${probe}")
    message(FATAL_ERROR "memtopo list does not show ${probe}:\n${step_output}")
  endif()
endforeach()
if(step_output MATCHES "loading errors")
  message(FATAL_ERROR "loading errors:\n${step_output}")
endif()

step(env MEMTOPO_PLUGIN_PATH=${plugin_path} ${prefix}/bin/memtopo run --device sim --only hopper-tma,hopper-dsmem
     -o ${WORK_DIR}/hopper.toml)
file(READ ${WORK_DIR}/hopper.toml topo)
string(REGEX MATCHALL "status = \"skipped\"" skipped "${topo}")
list(LENGTH skipped n_skipped)
string(REGEX MATCHALL "status = \"ok\"" ok "${topo}")
list(LENGTH ok n_ok)
if(NOT n_skipped EQUAL 2 OR NOT topo MATCHES "needs a CUDA GPU")
  message(FATAL_ERROR "the two TMA probes were not skipped for their need of a CUDA GPU:\n${topo}")
endif()
if(NOT n_ok EQUAL 3 OR NOT topo MATCHES "remote_latency_cycles = [0-9]"
   OR NOT topo MATCHES "sm_to_sm_gbps = \\[")
  message(FATAL_ERROR "the distributed shared memory probes did not run on the simulated GPU:\n${topo}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "hopper drop-ins: built out of tree, listed and run on the simulated GPU against ${prefix}")
