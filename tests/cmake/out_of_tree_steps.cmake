# Steps shared by the out-of-tree example tests (cmake -P scripts): run a command and stop
# with its output when it fails; install the build tree into a prefix and build an example
# against it. Inputs of the including script: BUILD_DIR, EXAMPLE_DIR, WORK_DIR, GENERATOR.

# Runs a command; on success its output is in `step_output`.
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(step_output "${out}${err}" PARENT_SCOPE)
endfunction()

# Installs the build tree into `prefix` (a fresh WORK_DIR) and builds EXAMPLE_DIR against it
# into WORK_DIR/build.
function(install_and_build_example prefix)
  file(REMOVE_RECURSE ${WORK_DIR})
  step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
  step(${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix}
       -DCMAKE_BUILD_TYPE=Release)
  step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
endfunction()
