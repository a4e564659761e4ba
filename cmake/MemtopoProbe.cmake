# memtopo_add_probe(<plugin-name> SOURCES <files...> [LIBRARIES <targets...>]
#                   [CUDA_ARCHITECTURES <archs...>] [OUTPUT_DIRECTORY <dir>] [CUDA_ONLY] [NO_INSTALL])
#
# The plugin is built into OUTPUT_DIRECTORY; by default memtopo's plugin folder in memtopo's
# own build, and <build>/plugins out of tree.
# Builds one probe plugin: a loadable module whose file stem is <plugin-name> (no "lib"
# prefix), which the host requires. Symbols are hidden except the entry point, so that
# inline statics of one plugin never merge with another's. memtopo::analysis is a static
# library: its code is compiled into the plugin, which needs no memtopo library at run time.
#
# `.cu` sources (a probe's own kernels) are compiled by nvcc into a fat binary of memtopo's
# architectures (MEMTOPO_DEFAULT_CUDA_ARCHITECTURES) unless CUDA_ARCHITECTURES names others
# (e.g. 90 for sm_90-only instructions). Where CUDA is not enabled yet (an out-of-tree
# project), this enables it, so call it from the top-level CMakeLists.txt there. Without a
# CUDA toolkit the `.cu` sources are compiled as C++: kernels written with the device toolkit
# (memtopo/device/kernel.hpp) then run on the simulated GPU alone. A plugin whose kernels are
# CUDA's alone (PTX the simulated GPU does not model) says CUDA_ONLY and is left out there,
# with one configure message.
if(NOT DEFINED MEMTOPO_DEFAULT_CUDA_ARCHITECTURES)
  set(MEMTOPO_DEFAULT_CUDA_ARCHITECTURES "75-real;80-real;86-real;89-real;90")
endif()

# A macro, not a function: enable_language() must run in the caller's directory scope.
macro(memtopo_add_probe _memtopo_name)
  set(_memtopo_cu "${ARGN}")
  list(FILTER _memtopo_cu INCLUDE REGEX "\\.cu$")
  set(_memtopo_ok TRUE)
  set(_memtopo_cuda_only "${ARGN}")
  list(FILTER _memtopo_cuda_only INCLUDE REGEX "^CUDA_ONLY$")
  if(_memtopo_cu)
    get_property(_memtopo_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
    # memtopo's own build decided already (MEMTOPO_HAVE_CUDA); an out-of-tree one looks here.
    if(NOT "CUDA" IN_LIST _memtopo_langs AND NOT (DEFINED MEMTOPO_HAVE_CUDA AND NOT MEMTOPO_HAVE_CUDA))
      include(CheckLanguage)
      if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
        set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
      endif()
      check_language(CUDA)
      if(CMAKE_CUDA_COMPILER)
        if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
          set(CMAKE_CUDA_ARCHITECTURES ${MEMTOPO_DEFAULT_CUDA_ARCHITECTURES})
        endif()
        enable_language(CUDA)
      endif()
    endif()
    get_property(_memtopo_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(_memtopo_cuda_only AND NOT "CUDA" IN_LIST _memtopo_langs)
      set(_memtopo_ok FALSE)
    endif()
  endif()
  if(_memtopo_ok)
    _memtopo_add_probe(${_memtopo_name} ${ARGN})
  else()
    message(STATUS "memtopo: plugin ${_memtopo_name} left out: its CUDA-only sources (${_memtopo_cu}) need a CUDA toolkit")
  endif()
endmacro()

function(_memtopo_add_probe name)
  cmake_parse_arguments(ARG "NO_INSTALL;CUDA_ONLY" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES;CUDA_ARCHITECTURES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "memtopo_add_probe(${name}): SOURCES is required")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE memtopo::sdk memtopo::analysis ${ARG_LIBRARIES})
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    CXX_STANDARD 20
    CXX_STANDARD_REQUIRED ON
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  set(cu ${ARG_SOURCES})
  list(FILTER cu INCLUDE REGEX "\\.cu$")
  get_property(langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(cu AND NOT "CUDA" IN_LIST langs)
    # No CUDA toolkit: the kernels' host code, which launch() runs on the simulated GPU.
    set_source_files_properties(${cu} PROPERTIES LANGUAGE CXX COMPILE_OPTIONS "-xc++")
  elseif(cu)
    find_package(CUDAToolkit REQUIRED)
    # One CUDA runtime in the process: the plugin shares the engine's (shared cudart).
    target_link_libraries(${name} PRIVATE CUDA::cudart)
    set_target_properties(${name} PROPERTIES
      CUDA_STANDARD 17
      CUDA_STANDARD_REQUIRED ON
      CUDA_VISIBILITY_PRESET hidden
      CUDA_RUNTIME_LIBRARY Shared
      CUDA_SEPARABLE_COMPILATION OFF)
    if(ARG_CUDA_ARCHITECTURES)
      set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES "${ARG_CUDA_ARCHITECTURES}")
    endif()
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  elseif(DEFINED MEMTOPO_PLUGIN_OUTPUT_DIR)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${MEMTOPO_PLUGIN_OUTPUT_DIR})
  else()
    # Out of tree: one folder of plugins, the one to give --plugin-path.
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/plugins)
  endif()
  if(NOT ARG_NO_INSTALL)
    if(DEFINED MEMTOPO_PLUGIN_SUBDIR)
      install(TARGETS ${name} LIBRARY DESTINATION ${MEMTOPO_PLUGIN_SUBDIR})
    else()
      install(TARGETS ${name} LIBRARY DESTINATION lib/memtopo/plugins)
    endif()
  endif()
endfunction()
