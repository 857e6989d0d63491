# Plants functions of known lengths in a scratch tree and checks that function_length_lint
# measures them: a long member function inside a namespace and a class fails naming file:line,
# braces inside comments, strings and raw strings do not count, an allow-listed function and an
# initializer table do not fail.
# Usage: cmake -DLINT=<function_length_lint> -DWORK=<scratch dir> -P planted_long_function.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/src/part)
set(body "")
foreach(i RANGE 1 30)
  string(APPEND body "  x += ${i};  // }}} a brace in a comment\n")
endforeach()
file(WRITE ${WORK}/src/part/long.cpp
"namespace a { namespace {
class Widget : public ns::Base {
 public:
  int long_member(int x) const {
    const char* s = \"}}}\";
    const char* r = R\"x(}}} { )\" )x\";
${body}    return x;
  }
};
}  // namespace
const int kTable[] = {
${body}};
int short_one() { return 1; }
int allowed_long(int x) {
${body}  return x;
}
}  // namespace a
")
file(WRITE ${WORK}/allow.txt "src/part/long.cpp allowed_long  # planted\n")
execute_process(COMMAND ${LINT} --root ${WORK} --max 20 --allowlist ${WORK}/allow.txt src
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "function_length_lint should have failed (exit 1), got ${rc}")
endif()
foreach(expected "src/part/long.cpp:4: long_member is 35 lines" "src/part/long.cpp:74: allowed_long is 33 lines"
                 "1 over 20 lines outside the allow-list")
  string(FIND "${out}" "${expected}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "function_length_lint output lacks '${expected}'")
  endif()
endforeach()
foreach(unexpected "kTable" "short_one")
  string(FIND "${out}" "${unexpected}" pos)
  if(NOT pos EQUAL -1)
    message(FATAL_ERROR "function_length_lint flagged '${unexpected}'")
  endif()
endforeach()
execute_process(COMMAND ${LINT} --root ${WORK} --max 40 --allowlist ${WORK}/allow.txt src
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "function_length_lint should pass with a limit above every function:\n${out}")
endif()
