# allocbench_add_plugin(<name> SOURCES <file>... [OUTPUT_DIRECTORY <dir>])
#
# Builds a scenario plugin: a MODULE library named <name>.so that allocbench-run loads with
# --plugin. Link your own libraries to it as to any target:
#   allocbench_add_plugin(my_scenarios SOURCES spans.cc)
#   target_link_libraries(my_scenarios PRIVATE my_tracer)
function(allocbench_add_plugin name)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "allocbench_add_plugin(${name}): give the scenario files with SOURCES")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE allocbench::scenario_api)
  # Hidden by default: a plugin exports only its two entry points, so plugins never bind to
  # each other's (or the harness's) symbols.
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
  set(flags "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} ${CMAKE_BUILD_TYPE} ${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${config}}")
  string(STRIP "${flags}" flags)
  target_compile_definitions(${name} PRIVATE ALLOCBENCH_PLUGIN_BUILD_FLAGS="${flags}")
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  endif()
endfunction()
