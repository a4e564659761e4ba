# The hardened build (docs/testing.md): AddressSanitizer + UndefinedBehaviorSanitizer over
# everything (MEMTOPO_SANITIZE) and the libFuzzer targets of tests/fuzz (MEMTOPO_FUZZ). Both
# need clang: libFuzzer ships with clang only, and one compiler keeps the sanitizer runtimes
# of the executables and the dlopen()ed plugins the same.
option(MEMTOPO_SANITIZE "Build everything with -fsanitize=address,undefined (clang; use its own build folder)" OFF)
option(MEMTOPO_FUZZ "Build the libFuzzer targets in tests/fuzz (clang)" OFF)

if(NOT MEMTOPO_SANITIZE AND NOT MEMTOPO_FUZZ)
  return()
endif()

if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR
    "MEMTOPO_SANITIZE and MEMTOPO_FUZZ need clang, but this build folder uses "
    "${CMAKE_CXX_COMPILER_ID} (${CMAKE_CXX_COMPILER}). Configure a fresh build folder with "
    "-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ (Debian packages clang and "
    "libclang-rt-14-dev; scripts/setup.sh installs them), e.g. scripts/test-hardened.")
endif()
if(MEMTOPO_HAVE_CUDA)
  message(FATAL_ERROR "MEMTOPO_SANITIZE and MEMTOPO_FUZZ build the simulator only: add -DMEMTOPO_WITH_CUDA=OFF")
endif()

if(MEMTOPO_SANITIZE)
  # Every undefined behaviour stops the program: a report that only prints is easy to miss.
  # No frame-pointer omission, so ASan's fast unwinder gives whole stacks; line tables are
  # all the reports need and build faster than full debug information.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
                      -gline-tables-only -fsanitize-ignorelist=${PROJECT_SOURCE_DIR}/tests/fuzz/ubsan-ignorelist.txt)
  add_link_options(-fsanitize=address,undefined)
  # TOML++ parses untrusted text: its parser is compiled here, once, so that it is sanitized
  # and, in the fuzzers, coverage-guided too, instead of Debian's uninstrumented
  # libtomlplusplus.so (header-only, every source that includes it compiled it again). The
  # imported target keeps its name and now links this library.
  add_library(memtopo_toml SHARED ${PROJECT_SOURCE_DIR}/cmake/toml_implementation.cpp)
  target_compile_definitions(memtopo_toml PRIVATE TOML_HEADER_ONLY=0 TOML_SHARED_LIB=1)
  if(MEMTOPO_FUZZ)
    target_compile_options(memtopo_toml PRIVATE -fsanitize=fuzzer-no-link)
  endif()
  set(_memtopo_toml_dir ${CMAKE_BINARY_DIR}/${CMAKE_INSTALL_LIBDIR})
  set_target_properties(memtopo_toml PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${_memtopo_toml_dir})
  set_target_properties(tomlplusplus::tomlplusplus PROPERTIES
    IMPORTED_LOCATION ${_memtopo_toml_dir}/libmemtopo_toml.so INTERFACE_LINK_LIBRARIES memtopo_toml)
  install(TARGETS memtopo_toml LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  message(STATUS "memtopo: ASan + UBSan build")
endif()
