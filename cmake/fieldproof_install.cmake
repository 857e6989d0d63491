# The installable SDK: what `cmake --install build --prefix P` puts under P, and the Debian
# package CPack builds from the same rules (`make package`).
#
#   P/bin/fieldproof, P/bin/fieldproof-core, P/bin/fieldproof-ugv-nav   the command (a front that
#                                                    execs the engine), the engine, the reference stack program
#   P/<libdir>/fieldproof/stacks/                        stack plugins (the reference one)
#   P/<libdir>/libfieldproof_{time,lockstep,lockstep_zmq,msgs}.a   what a stack process links
#   P/include/fieldproof/{time,lockstep,msgs}/ + stacks/plugin_api.hpp, util/{mutex,status}.hpp, the generated .pb.h
#   P/<libdir>/cmake/fieldproof/   find_package(fieldproof 0.2 CONFIG REQUIRED)
#   P/<libdir>/pkgconfig/fieldproof.pc
#   P/share/fieldproof/            worlds, scenarios, example stacks' sources, the .proto files
#   P/share/fieldproof/models/     robot models (model://fieldproof_ugv, model://fieldproof_tug)
#
# Only the parts a user's stack needs are installed as libraries and headers: a header without
# its library would be a trap. The libraries are static (PIC); their link interface carries the
# shared system libraries they need (libzmq, protobuf, ignition-msgs8, Threads).
include(CMakePackageConfigHelpers)

set(FIELDPROOF_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/fieldproof)
set(FIELDPROOF_STACKS_DIR ${CMAKE_INSTALL_LIBDIR}/fieldproof/stacks)
set(FIELDPROOF_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/fieldproof)

# fieldproof::participant: the lock-step participant library with its ZeroMQ transport, what a
# stack process links. fieldproof::plugin_api: the plain C header of a stack plugin.
add_library(fieldproof_participant INTERFACE)
add_library(fieldproof::participant ALIAS fieldproof_participant)
target_link_libraries(fieldproof_participant INTERFACE fieldproof_lockstep_zmq)
add_library(fieldproof_plugin_api INTERFACE)
add_library(fieldproof::plugin_api ALIAS fieldproof_plugin_api)
target_include_directories(fieldproof_plugin_api INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>)

set(sdk_targets fieldproof_time fieldproof_lockstep fieldproof_lockstep_zmq fieldproof_msgs
                fieldproof_participant fieldproof_plugin_api)
foreach(t IN LISTS sdk_targets)
  string(REPLACE "fieldproof_" "" export_name ${t})
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${export_name})
endforeach()

install(TARGETS ${sdk_targets}
  EXPORT fieldproof-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT fieldproof-targets
  NAMESPACE fieldproof::
  FILE fieldproof-targets.cmake
  DESTINATION ${FIELDPROOF_CMAKE_DIR})

# The programs and the reference plugin.
# fieldproof (the front) execs fieldproof-core from its own folder: both go to bin/.
install(TARGETS fieldproof fieldproof-core RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET fieldproof-ugv-nav)
  install(TARGETS fieldproof-ugv-nav RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(TARGETS fieldproof_ugv_nav_plugin LIBRARY DESTINATION ${FIELDPROOF_STACKS_DIR})

# Public headers of the installed parts, and the generated fieldproof.msgs classes.
foreach(part IN ITEMS time lockstep msgs)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/fieldproof/${part}
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fieldproof
    FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/include/fieldproof/stacks/plugin_api.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fieldproof/stacks)
# Header-only helpers the installed time and lockstep headers include: the annotated Mutex they
# hold and the Status/Result their parsers return.
install(FILES ${PROJECT_SOURCE_DIR}/include/fieldproof/util/mutex.hpp
              ${PROJECT_SOURCE_DIR}/include/fieldproof/util/status.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fieldproof/util)
install(DIRECTORY ${FIELDPROOF_MSGS_GEN_DIR}/fieldproof/msgs
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fieldproof
  FILES_MATCHING PATTERN "*.pb.h")

# The package config: find_dependency for what the exported link interface names.
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/fieldproof-config.cmake.in
  ${PROJECT_BINARY_DIR}/sdk/fieldproof-config.cmake
  INSTALL_DESTINATION ${FIELDPROOF_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR FIELDPROOF_STACKS_DIR)
# 0.x: a minor version may break the API, so 0.2 accepts 0.2.* only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sdk/fieldproof-config-version.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sdk/fieldproof-config.cmake
              ${PROJECT_BINARY_DIR}/sdk/fieldproof-config-version.cmake
  DESTINATION ${FIELDPROOF_CMAKE_DIR})

# pkg-config: relocatable (prefix from the .pc file's own folder), because `cmake --install
# --prefix P` chooses the prefix after configure.
file(RELATIVE_PATH FIELDPROOF_PC_TO_PREFIX
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" FIELDPROOF_PC_TO_PREFIX "${FIELDPROOF_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/fieldproof.pc.in ${PROJECT_BINARY_DIR}/sdk/fieldproof.pc
  @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sdk/fieldproof.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Examples: worlds, scenarios, the example stacks' sources, and the .proto files (for clients in
# other languages).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/worlds ${PROJECT_SOURCE_DIR}/examples/scenarios
  DESTINATION ${FIELDPROOF_SHARE_DIR}/examples)
if(EXISTS ${PROJECT_SOURCE_DIR}/examples/stacks)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/stacks
    DESTINATION ${FIELDPROOF_SHARE_DIR}/examples
    PATTERN "build" EXCLUDE
    PATTERN "__pycache__" EXCLUDE)
endif()
# Robot models (examples/models: the reference UGV and the tug), on an installed fieldproof's
# resource path (<prefix>/share/fieldproof/models, include/fieldproof/world/robot_model.hpp).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/models/
  DESTINATION ${FIELDPROOF_SHARE_DIR}/models)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/msgs/proto/fieldproof
  DESTINATION ${FIELDPROOF_SHARE_DIR}/proto
  FILES_MATCHING PATTERN "*.proto")

# ---- Debian package (CPack DEB): `make package` -> build/fieldproof_<version>_amd64.deb ----
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fieldproof)
set(CPACK_PACKAGE_VENDOR "fieldproof")
set(CPACK_PACKAGE_CONTACT "fieldproof maintainers <fieldproof@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "simulated time as a controlled variable: scenario runner and participant SDK")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # fieldproof_<version>_<arch>.deb
set(CPACK_STRIP_FILES ON)  # the debug info stays in the build tree
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "fieldproof runs a team's robot software against an embedded simulator in lock-step\n\
simulated time and judges the run. This package holds the fieldproof command, the reference\n\
navigation stack (program and plugin), the participant SDK (static libraries, headers, CMake\n\
and pkg-config files), the Python client and the examples.")
# The shared libraries the programs and the plugin need, found by dpkg-shlibdeps (libzmq5,
# libprotobuf32, libignition-msgs8, libsdformat12, libyaml-cpp0.7, libzstd1, liblz4-1,
# libsodium23, ...), plus the Python client's runtime.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3, python3-zmq, python3-protobuf")
# What building a stack against the SDK needs (find_package(fieldproof) finds these).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
  "cmake, g++, pkg-config, libzmq3-dev, libprotobuf-dev, protobuf-compiler, libignition-msgs-dev, nlohmann-json3-dev")
include(CPack)
