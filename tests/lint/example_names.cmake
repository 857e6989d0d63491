# The engine never special-cases the reference stack, robot or world by name (DESIGN.md): no file
# under src/ or include/fieldproof/ but the reference stack's own (stacks/) and the one header of
# defaults (util/example_defaults.hpp) writes their names as string literals.
# Usage: cmake -DROOT=<source dir> -P example_names.cmake   (exit 1 naming file:line, else 0)
if(NOT ROOT)
  message(FATAL_ERROR "example_names.cmake: give -DROOT=<source dir>")
endif()
set(names ugv tug depot fieldproof_ugv fieldproof_tug fieldproof-ugv-nav fieldproof_ugv_nav_plugin
    depot.sdf)
file(GLOB_RECURSE files RELATIVE ${ROOT}
  ${ROOT}/src/*.cpp ${ROOT}/src/*.hpp ${ROOT}/src/*.h ${ROOT}/src/*.c
  ${ROOT}/include/fieldproof/*.hpp ${ROOT}/include/fieldproof/*.h)
set(found 0)
foreach(f IN LISTS files)
  if(f MATCHES "^src/stacks/" OR f MATCHES "^include/fieldproof/stacks/"
     OR f STREQUAL "include/fieldproof/util/example_defaults.hpp")
    continue()
  endif()
  file(READ ${ROOT}/${f} text)
  # Most files name none: one regex over the whole file first (line by line is slow in CMake).
  set(any OFF)
  foreach(name IN LISTS names)
    string(REPLACE "." "\\." re "${name}")
    if(text MATCHES "\"(model://)?${re}\"")
      set(any ON)
    endif()
  endforeach()
  if(NOT any)
    continue()
  endif()
  # One list element a line: ';' and brackets (which CMake's lists treat specially) masked first.
  string(REPLACE ";" "<sc>" text "${text}")
  string(REPLACE "[" "<lb>" text "${text}")
  string(REPLACE "]" "<rb>" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    string(REGEX REPLACE "//.*$" "" code "${line}")
    foreach(name IN LISTS names)
      string(REPLACE "." "\\." re "${name}")
      if(code MATCHES "\"(model://)?${re}\"")
        message(SEND_ERROR "${f}:${n}: the literal \"${name}\" names an example; use "
                           "include/fieldproof/util/example_defaults.hpp or no name at all")
        set(found 1)
      endif()
    endforeach()
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "example names written in the engine's code (see above)")
endif()
message(STATUS "no example names in ${ROOT}/src or ${ROOT}/include/fieldproof")
