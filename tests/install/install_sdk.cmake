# CTest fixture: `cmake --install BUILD_DIR --prefix PREFIX` into a fresh PREFIX.
#   cmake -DBUILD_DIR=... -DPREFIX=... -P install_sdk.cmake
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${PREFIX} failed (${rc}) (build "
                      "every installed target first: fieldproof, fieldproof-ugv-nav, "
                      "fieldproof_ugv_nav_plugin):\n${out}")
endif()
foreach(f bin/fieldproof bin/fieldproof-core lib/cmake/fieldproof/fieldproof-config.cmake
          share/fieldproof/examples/stacks/cpp_goal_follower/CMakeLists.txt)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "cmake --install did not install ${f}")
  endif()
endforeach()
