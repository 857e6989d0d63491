# Plants violations in a scratch tree and checks that clock_lint fails naming file:line, while
# comments, strings, identifiers that merely contain the words, and allow-listed files pass.
# Usage: cmake -DLINT=<clock_lint> -DWORK=<scratch dir> -P planted_violation.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/src/part ${WORK}/src/time)
file(WRITE ${WORK}/src/part/clean.cpp
"// steady_clock in a comment is fine, so is std::rand() here
/* and system_clock in a block comment */
const char* s = \"std::random_device in a string\";
int runtime(int x) { return x; }  // 'runtime(' and 'operand(' are not time( or rand(
int operand(int x) { return x; }
long t = 1'000'000;
")
file(WRITE ${WORK}/src/part/bad.cpp
"#include <chrono>
int ok = 0;
auto t0 = std::chrono::steady_clock::now();
int r = std::rand();
std::mt19937 gen;
long now = time(nullptr);
")
file(WRITE ${WORK}/src/time/system_clock.cpp "auto t = std::chrono::steady_clock::now();\n")
file(WRITE ${WORK}/allow.txt "src/time/system_clock.cpp  # the one reader\n")

execute_process(COMMAND ${LINT} --root ${WORK} --allowlist ${WORK}/allow.txt src
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "clock_lint should have failed (exit 1) on the planted file, got ${rc}")
endif()
foreach(expected "src/part/bad.cpp:3:" "src/part/bad.cpp:4:" "src/part/bad.cpp:5:"
                 "src/part/bad.cpp:6:" "4 violation")
  string(FIND "${out}" "${expected}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "clock_lint output lacks '${expected}'")
  endif()
endforeach()
foreach(unexpected "clean.cpp" "system_clock.cpp" "bad.cpp:1:" "bad.cpp:2:")
  string(FIND "${out}" "${unexpected}" pos)
  if(NOT pos EQUAL -1)
    message(FATAL_ERROR "clock_lint flagged '${unexpected}', which is allowed")
  endif()
endforeach()

file(REMOVE ${WORK}/src/part/bad.cpp)
execute_process(COMMAND ${LINT} --root ${WORK} --allowlist ${WORK}/allow.txt src
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "clock_lint should pass once the violation is gone:\n${out}")
endif()
