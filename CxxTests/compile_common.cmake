# SPDX-License-Identifier: MIT
# compile_common.cmake -- included by compile_check.cmake and static_assert_check.cmake:
# what both do before their own checks.  Compiles SOURCE with CXX as a user of
# qtbus.hpp does (-std=STD -Wall -Wextra -pedantic -Werror, FLAGS: pkg-config's
# --cflags), with -D<DEFINE_PREFIX><CASE> when CASE is set.  Without CASE (the control)
# it must compile (the including script then stops: a return() here ends only this
# file).  With CASE it must fail, and
# this sets for the checks that follow:
#   rc, out, shown   the compiler's exit status, its output, the command line;
#   line             the number of the first line of SOURCE marked `// <MARK>: <CASE>`;
#   lines            the output, one diagnostic line per list element.
foreach(v CXX STD SOURCE DEFINE_PREFIX MARK)
    if(NOT DEFINED ${v})
        message(FATAL_ERROR "${CMAKE_CURRENT_LIST_FILE}: ${v} is not set")
    endif()
endforeach()

separate_arguments(flags UNIX_COMMAND "${FLAGS}")
set(cmd "${CXX}" "-std=${STD}" -Wall -Wextra -pedantic -Werror -fsyntax-only -fdiagnostics-color=never ${flags})
if(CASE)
    list(APPEND cmd "-D${DEFINE_PREFIX}${CASE}")
endif()
list(APPEND cmd "${SOURCE}")
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(JOIN " " shown ${cmd})

if(NOT CASE)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "the control does not compile (exit ${rc}):\n${shown}\n${out}")
    endif()
    message(STATUS "control compiles: ${shown}")
    return()
endif()
if(rc EQUAL 0)
    message(FATAL_ERROR "${CASE} compiled: ${COMPILED_MEANS}\n${shown}\n${out}")
endif()

# The marked line.
file(READ "${SOURCE}" text)
string(FIND "${text}" "// ${MARK}: ${CASE}\n" at)
if(at EQUAL -1)
    message(FATAL_ERROR "no line marked `// ${MARK}: ${CASE}` in ${SOURCE}")
endif()
string(SUBSTRING "${text}" 0 ${at} before)
string(REGEX MATCHALL "\n" newlines "${before}")
list(LENGTH newlines line)
math(EXPR line "${line} + 1")

# One diagnostic line per list element: ';' would split a line, and '[' ... ']' would
# join lines (CMake does not split a list inside brackets), so neither is kept.
string(REPLACE ";" "," safe "${out}")
string(REPLACE "[" "(" safe "${safe}")
string(REPLACE "]" ")" safe "${safe}")
string(REPLACE "\n" ";" lines "${safe}")
