# CTest fixture: configure and build the installed copy of examples/stacks/cpp_goal_follower out
# of tree against the installed SDK alone (CMAKE_PREFIX_PATH=PREFIX, no package registry).
#   cmake -DPREFIX=... -DOUT=... -P build_follower.cmake
file(REMOVE_RECURSE ${OUT})
set(src ${PREFIX}/share/fieldproof/examples/stacks/cpp_goal_follower)
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${src} -B ${OUT} -G Ninja -DCMAKE_BUILD_TYPE=Release
          -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
          -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring ${src} against ${PREFIX} failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building ${src} against ${PREFIX} failed:\n${out}")
endif()
