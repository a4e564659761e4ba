# memtopo_add_probe(<plugin-name> SOURCES <files...> [LIBRARIES <targets...>]
#                   [CUDA_ARCHITECTURES <archs...>] [OUTPUT_DIRECTORY <dir>] [NO_INSTALL])
#
# The plugin is built into OUTPUT_DIRECTORY; by default memtopo's plugin folder in memtopo's
# own build, and <build>/plugins out of tree.
# Builds one probe plugin: a loadable module whose file stem is <plugin-name> (no "lib"
# prefix), which the host requires. Symbols are hidden except the entry point, so that
# inline statics of one plugin never merge with another's.
#
# `.cu` sources (a probe's own kernels) are compiled by nvcc into a fat binary of memtopo's
# architectures (MEMTOPO_DEFAULT_CUDA_ARCHITECTURES) unless CUDA_ARCHITECTURES names others
# (e.g. 90 for sm_90-only instructions). Where CUDA is not enabled yet (an out-of-tree
# project), this enables it, so call it from the top-level CMakeLists.txt there; without a
# CUDA toolkit the plugin is left out with one configure message.
if(NOT DEFINED MEMTOPO_DEFAULT_CUDA_ARCHITECTURES)
  set(MEMTOPO_DEFAULT_CUDA_ARCHITECTURES "75-real;80-real;86-real;89-real;90")
endif()

# A macro, not a function: enable_language() must run in the caller's directory scope.
macro(memtopo_add_probe _memtopo_name)
  set(_memtopo_cu "${ARGN}")
  list(FILTER _memtopo_cu INCLUDE REGEX "\\.cu$")
  set(_memtopo_ok TRUE)
  if(_memtopo_cu)
    get_property(_memtopo_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "CUDA" IN_LIST _memtopo_langs)
      if(DEFINED MEMTOPO_HAVE_CUDA AND NOT MEMTOPO_HAVE_CUDA)
        set(_memtopo_ok FALSE)  # memtopo's own build without CUDA
      else()
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
        else()
          set(_memtopo_ok FALSE)
        endif()
      endif()
    endif()
  endif()
  if(_memtopo_ok)
    _memtopo_add_probe(${_memtopo_name} ${ARGN})
  else()
    message(STATUS "memtopo: plugin ${_memtopo_name} left out: its CUDA sources (${_memtopo_cu}) need a CUDA toolkit")
  endif()
endmacro()

function(_memtopo_add_probe name)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES;CUDA_ARCHITECTURES" ${ARGN})
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
    VISIBILITY_INLINES_HIDDEN ON
    INSTALL_RPATH "$ORIGIN/../..")
  set(cu ${ARG_SOURCES})
  list(FILTER cu INCLUDE REGEX "\\.cu$")
  if(cu)
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
