# Install rules and the exported package: an out-of-tree project does
#   find_package(allocbench REQUIRED)
#   allocbench_add_plugin(my_scenarios SOURCES a.cc b.cc)
include(CMakePackageConfigHelpers)

set(ALLOCBENCH_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/allocbench)

install(TARGETS allocbench_scenario_api EXPORT allocbenchTargets)
install(FILES harness/include/allocbench/scenario.h harness/include/allocbench/plugin_entry.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/allocbench)
install(EXPORT allocbenchTargets NAMESPACE allocbench:: DESTINATION ${ALLOCBENCH_CMAKE_DIR})
# Generated apart from the build tree's own package (below): CMake searches a prefix's root too,
# and must not find this install-time copy there.
set(_allocbench_install_package ${PROJECT_BINARY_DIR}/install-package)
file(REMOVE ${PROJECT_BINARY_DIR}/allocbenchConfig.cmake   # where builds before 0.1 had it
            ${PROJECT_BINARY_DIR}/allocbenchConfigVersion.cmake)
# allocbench::gbench's archive, which the config looks for before it offers the target (the
# install is OPTIONAL: `./allocbench run` does not build it).
set(_allocbench_gbench_archive
    ${CMAKE_STATIC_LIBRARY_PREFIX}allocbench_gbench${CMAKE_STATIC_LIBRARY_SUFFIX})
set(ALLOCBENCH_GBENCH_ARCHIVE ${CMAKE_INSTALL_LIBDIR}/${_allocbench_gbench_archive})
# allocbench::testing's archive, likewise (testing/).
set(_allocbench_testing_archive
    ${CMAKE_STATIC_LIBRARY_PREFIX}allocbench_testing${CMAKE_STATIC_LIBRARY_SUFFIX})
set(ALLOCBENCH_TESTING_ARCHIVE ${CMAKE_INSTALL_LIBDIR}/${_allocbench_testing_archive})
configure_package_config_file(cmake/allocbenchConfig.cmake.in
  ${_allocbench_install_package}/allocbenchConfig.cmake
  INSTALL_DESTINATION ${ALLOCBENCH_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR ALLOCBENCH_GBENCH_ARCHIVE ALLOCBENCH_TESTING_ARCHIVE)
write_basic_package_version_file(${_allocbench_install_package}/allocbenchConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${_allocbench_install_package}/allocbenchConfig.cmake
              ${_allocbench_install_package}/allocbenchConfigVersion.cmake
              cmake/AllocbenchPlugin.cmake
        DESTINATION ${ALLOCBENCH_CMAKE_DIR})

if(ALLOCBENCH_SANITIZE STREQUAL "")
  # OPTIONAL: `./allocbench run` builds allocbench-run and the built-in plugin only, and an
  # install after it must work; the other backends' runners go in when they were built.
  install(TARGETS ${ALLOCBENCH_RUNNERS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} OPTIONAL)
  # Next to bin/, where allocbench-run looks for it by default.
  install(TARGETS allocbench_builtin LIBRARY DESTINATION lib/allocbench OPTIONAL)
  # allocbench::gbench (gbench/), in an export set of its own so that a package whose archive
  # was not built still loads: the config includes allocbenchGbenchTargets.cmake only when the
  # archive is there. Its link options name hooks.dynlist next to the config.
  install(TARGETS allocbench_gbench EXPORT allocbenchGbenchTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} OPTIONAL)
  install(EXPORT allocbenchGbenchTargets NAMESPACE allocbench::
          DESTINATION ${ALLOCBENCH_CMAKE_DIR})
  install(FILES allocators/hooks.dynlist DESTINATION ${ALLOCBENCH_CMAKE_DIR})
  # allocbench::testing (testing/), the same way: its own export set, its archive OPTIONAL.
  install(TARGETS allocbench_testing EXPORT allocbenchTestingTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} OPTIONAL)
  install(EXPORT allocbenchTestingTargets NAMESPACE allocbench::
          DESTINATION ${ALLOCBENCH_CMAKE_DIR})
  install(FILES testing/include/allocbench/testing.h testing/include/allocbench/testing_gtest.h
                testing/include/allocbench/testing_catch2.h
                allocators/include/allocbench/counting.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/allocbench)

  # The same package in the build tree, <build>/lib/cmake/allocbench, laid out as an install
  # prefix (bin/ holds the runners): plugin builds that sweep, bisect and ab start find the
  # harness they are run by with allocbench_DIR, without an install step.
  set(_allocbench_build_package ${PROJECT_BINARY_DIR}/lib/cmake/allocbench)
  export(EXPORT allocbenchTargets NAMESPACE allocbench::
         FILE ${_allocbench_build_package}/allocbenchTargets.cmake)
  export(EXPORT allocbenchGbenchTargets NAMESPACE allocbench::
         FILE ${_allocbench_build_package}/allocbenchGbenchTargets.cmake)
  export(EXPORT allocbenchTestingTargets NAMESPACE allocbench::
         FILE ${_allocbench_build_package}/allocbenchTestingTargets.cmake)
  set(_allocbench_install_bindir ${CMAKE_INSTALL_BINDIR})
  set(CMAKE_INSTALL_BINDIR bin)   # where the build tree has its runners
  # and its archive (gbench/CMakeLists.txt: ARCHIVE_OUTPUT_DIRECTORY)
  set(ALLOCBENCH_GBENCH_ARCHIVE lib/${_allocbench_gbench_archive})
  set(ALLOCBENCH_TESTING_ARCHIVE lib/${_allocbench_testing_archive})
  configure_package_config_file(cmake/allocbenchConfig.cmake.in
    ${_allocbench_build_package}/allocbenchConfig.cmake
    INSTALL_DESTINATION lib/cmake/allocbench
    INSTALL_PREFIX ${PROJECT_BINARY_DIR}
    PATH_VARS CMAKE_INSTALL_BINDIR ALLOCBENCH_GBENCH_ARCHIVE ALLOCBENCH_TESTING_ARCHIVE)
  set(CMAKE_INSTALL_BINDIR ${_allocbench_install_bindir})
  configure_file(${_allocbench_install_package}/allocbenchConfigVersion.cmake
                 ${_allocbench_build_package}/allocbenchConfigVersion.cmake COPYONLY)
  configure_file(cmake/AllocbenchPlugin.cmake ${_allocbench_build_package}/AllocbenchPlugin.cmake
                 COPYONLY)
endif()
