# memtopo_add_probe(<plugin-name> SOURCES <files...> [LIBRARIES <targets...>] [NO_INSTALL])
#
# Builds one probe plugin: a loadable module whose file stem is <plugin-name> (no "lib"
# prefix), which the host requires. Symbols are hidden except the entry point, so that
# inline statics of one plugin never merge with another's.
function(memtopo_add_probe name)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES" ${ARGN})
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
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  elseif(DEFINED MEMTOPO_PLUGIN_OUTPUT_DIR)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${MEMTOPO_PLUGIN_OUTPUT_DIR})
  endif()
  if(NOT ARG_NO_INSTALL)
    if(DEFINED MEMTOPO_PLUGIN_SUBDIR)
      install(TARGETS ${name} LIBRARY DESTINATION ${MEMTOPO_PLUGIN_SUBDIR})
    else()
      install(TARGETS ${name} LIBRARY DESTINATION lib/memtopo/plugins)
    endif()
  endif()
endfunction()
