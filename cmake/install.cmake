# Install rules and the exported package: an out-of-tree project does
#   find_package(allocbench REQUIRED)
#   allocbench_add_plugin(my_scenarios SOURCES a.cc b.cc)
include(CMakePackageConfigHelpers)

set(ALLOCBENCH_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/allocbench)

install(TARGETS allocbench_scenario_api EXPORT allocbenchTargets)
install(FILES harness/include/allocbench/scenario.h harness/include/allocbench/plugin_entry.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/allocbench)
install(EXPORT allocbenchTargets NAMESPACE allocbench:: DESTINATION ${ALLOCBENCH_CMAKE_DIR})
configure_package_config_file(cmake/allocbenchConfig.cmake.in
  ${PROJECT_BINARY_DIR}/allocbenchConfig.cmake
  INSTALL_DESTINATION ${ALLOCBENCH_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/allocbenchConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/allocbenchConfig.cmake
              ${PROJECT_BINARY_DIR}/allocbenchConfigVersion.cmake
              cmake/AllocbenchPlugin.cmake
        DESTINATION ${ALLOCBENCH_CMAKE_DIR})

if(ALLOCBENCH_SANITIZE STREQUAL "")
  install(TARGETS ${ALLOCBENCH_RUNNERS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # Next to bin/, where allocbench-run looks for it by default.
  install(TARGETS allocbench_builtin LIBRARY DESTINATION lib/allocbench)
endif()
