# Helpers shared by every part: warnings, sanitizers, libraries, tests and benchmarks.

set(FIELDPROOF_WARNINGS -Wall -Wextra -Wpedantic)
if(FIELDPROOF_WERROR)
  list(APPEND FIELDPROOF_WARNINGS -Werror)
endif()

# The test executables' own files (not the libraries they test) are compiled at this level in
# RelWithDebInfo: a test's code is assertions and fixtures, and -O1 compiles it in about three
# quarters of -O2's time (tests/scenario/scenario_test.cpp: 9.9 s -> 7.3 s). Empty keeps -O2.
set(FIELDPROOF_TEST_OPTIMIZE -O1 CACHE STRING
  "Optimisation of the test executables' own sources in RelWithDebInfo (empty: as the libraries)")
set(FIELDPROOF_TEST_COMPILE_OPTIONS $<$<CONFIG:RelWithDebInfo>:${FIELDPROOF_TEST_OPTIMIZE}>)

if(FIELDPROOF_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# fieldproof_library(<part> SOURCES ... [PUBLIC_LIBS ...] [PRIVATE_LIBS ...])
# Defines target fieldproof_<part> (alias fieldproof::<part>) with the public include dir.
function(fieldproof_library part)
  cmake_parse_arguments(A "" "" "SOURCES;PUBLIC_LIBS;PRIVATE_LIBS" ${ARGN})
  add_library(fieldproof_${part} STATIC ${A_SOURCES})
  add_library(fieldproof::${part} ALIAS fieldproof_${part})
  # The build tree's include/ while building; the install prefix's include/ once exported
  # (cmake/fieldproof_install.cmake), so no source path reaches an installed target.
  target_include_directories(fieldproof_${part}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(fieldproof_${part} PRIVATE ${FIELDPROOF_WARNINGS})
  target_link_libraries(fieldproof_${part} PUBLIC ${A_PUBLIC_LIBS} PRIVATE ${A_PRIVATE_LIBS})
endfunction()

# fieldproof_test(<name> SOURCES ... [LIBS ...] [LABELS ...] [SERIAL] [TIMEOUT s]
#                 [FIXTURES_REQUIRED fixture...])
# A GoogleTest executable whose tests CTest discovers one by one. LABELS default to the part
# ("unit" is added unless "slow" is given); SERIAL keeps timing-sensitive tests alone on the CPU;
# FIXTURES_REQUIRED: CTest fixtures (FIXTURES_SETUP tests) every discovered test needs.
function(fieldproof_test name)
  cmake_parse_arguments(A "SERIAL" "TIMEOUT" "SOURCES;LIBS;LABELS;FIXTURES_REQUIRED" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_compile_options(${name} PRIVATE ${FIELDPROOF_WARNINGS} ${FIELDPROOF_TEST_COMPILE_OPTIONS})
  target_link_libraries(${name} PRIVATE ${A_LIBS} GTest::gtest GTest::gmock GTest::gtest_main Threads::Threads)
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 120)
  endif()
  set(props TIMEOUT ${A_TIMEOUT})
  if(A_SERIAL)
    list(APPEND props RUN_SERIAL TRUE)
  endif()
  gtest_discover_tests(${name}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    DISCOVERY_TIMEOUT 60
    PROPERTIES ${props})
  # Labels: gtest_discover_tests splits a multi-valued property into separate arguments, so a
  # second label was lost. The discovered names are in ${name}_TESTS once CTest includes the
  # discovery file; this file, included after it, labels them all.
  set(labels_file ${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake)
  file(WRITE ${labels_file}
    "if(DEFINED ${name}_TESTS)\n"
    "  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${A_LABELS}\")\n")
  if(A_FIXTURES_REQUIRED)
    file(APPEND ${labels_file}
      "  set_tests_properties(\${${name}_TESTS} PROPERTIES FIXTURES_REQUIRED \"${A_FIXTURES_REQUIRED}\")\n")
  endif()
  file(APPEND ${labels_file} "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels_file})
endfunction()

# fieldproof_bench(<name> SOURCES ... [LIBS ...]): a Release-minded benchmark binary. `make bench`
# runs every target whose name ends in _bench and collects the BENCH lines they print.
function(fieldproof_bench name)
  cmake_parse_arguments(A "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/bench)
  target_compile_options(${name} PRIVATE ${FIELDPROOF_WARNINGS})
  target_link_libraries(${name} PRIVATE ${A_LIBS} benchmark::benchmark Threads::Threads)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
endfunction()

# fieldproof_assertion_plugin_tables(<target>): after each link of an assertion plugin (a MODULE
# library), its types' tables are written by fieldproof-plugin-metadata (which loads it: the
# plugin's own build is the one place outside `fieldproof run` where its code runs) and added to
# the library as the section .fieldproof.assertions. `fieldproof validate` reads them from there
# and loads nothing (include/fieldproof/assertions/plugin.hpp).
function(fieldproof_assertion_plugin_tables target)
  if(NOT CMAKE_OBJCOPY)
    message(FATAL_ERROR "fieldproof_assertion_plugin_tables: no objcopy (Debian: binutils)")
  endif()
  set(tables ${CMAKE_CURRENT_BINARY_DIR}/${target}.tables.json)
  add_dependencies(${target} fieldproof-plugin-metadata)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND $<TARGET_FILE:fieldproof-plugin-metadata> $<TARGET_FILE:${target}> -o ${tables}
    COMMAND ${CMAKE_OBJCOPY} --remove-section .fieldproof.assertions
            --add-section .fieldproof.assertions=${tables} $<TARGET_FILE:${target}>
    COMMENT "Embedding the type tables of ${target}"
    VERBATIM)
endfunction()
