# CTest fixture: the Debian package, built with CPack from this build tree into OUT.
#   cmake -DBUILD_DIR=... -DOUT=... -P build_package.cmake
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND cpack -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${OUT}
  WORKING_DIRECTORY ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cpack -G DEB failed (${rc}) (build every installed target first):\n${out}")
endif()
