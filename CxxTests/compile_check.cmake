# SPDX-License-Identifier: MIT
# compile_check.cmake -- run by ctest (cmake -P): compiles SOURCE with CXX as a user of
# qtbus.hpp does (-std=STD -Wall -Wextra -pedantic -Werror, FLAGS: pkg-config's
# --cflags) and checks the outcome.
#
#   cmake -DCXX=g++ -DSTD=c++17 -DSOURCE=nodiscard_check.cpp -DFLAGS="-I..." \
#         [-DCASE=SUBSCRIBE [-DMESSAGE=text]] -P compile_check.cmake
#
#   no CASE   the control: it must compile.
#   CASE      compiled with -DQTBUS_DROP_<CASE>: it must fail; every error must be a
#             [[nodiscard]] one ("nodiscard" or "ignoring return value" in it), and one
#             of them must point at the first line of SOURCE marked `// drop: <CASE>`,
#             so that the case fails for the reason it is there for and no other.
#   MESSAGE   the text of that [[nodiscard("...")]] (C++20) must be in the diagnostic.
cmake_minimum_required(VERSION 3.25)
foreach(v CXX STD SOURCE)
    if(NOT DEFINED ${v})
        message(FATAL_ERROR "compile_check: ${v} is not set")
    endif()
endforeach()

separate_arguments(flags UNIX_COMMAND "${FLAGS}")
set(cmd "${CXX}" "-std=${STD}" -Wall -Wextra -pedantic -Werror -fsyntax-only -fdiagnostics-color=never ${flags})
if(CASE)
    list(APPEND cmd "-DQTBUS_DROP_${CASE}")
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
    message(FATAL_ERROR "dropping the handle (${CASE}) compiled: [[nodiscard]] is missing\n${shown}\n${out}")
endif()

# The line of the dropping statement: the first marked one (the #ifdef branch).
file(READ "${SOURCE}" text)
string(FIND "${text}" "// drop: ${CASE}\n" at)
if(at EQUAL -1)
    message(FATAL_ERROR "no line marked `// drop: ${CASE}` in ${SOURCE}")
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
set(errors 0)
set(on_line FALSE)
foreach(l IN LISTS lines)
    if(NOT l MATCHES ": error: ")
        continue()
    endif()
    math(EXPR errors "${errors} + 1")
    if(NOT l MATCHES "nodiscard|ignoring return value")
        message(FATAL_ERROR "dropping the handle (${CASE}) fails for another reason:\n  ${l}\n${shown}\n${out}")
    endif()
    string(FIND "${l}" "${SOURCE}:${line}:" here)
    if(NOT here EQUAL -1)
        set(on_line TRUE)
    endif()
endforeach()
if(errors EQUAL 0)
    message(FATAL_ERROR "the compiler failed (exit ${rc}) with no error diagnostic:\n${shown}\n${out}")
endif()
if(NOT on_line)
    message(FATAL_ERROR "no [[nodiscard]] error at ${SOURCE}:${line} (the `// drop: ${CASE}` line):\n${shown}\n${out}")
endif()
if(DEFINED MESSAGE AND NOT MESSAGE STREQUAL "")
    string(FIND "${out}" "${MESSAGE}" quoted)
    if(quoted EQUAL -1)
        message(FATAL_ERROR "the diagnostic does not give the message \"${MESSAGE}\":\n${shown}\n${out}")
    endif()
endif()
message(STATUS "${CASE} dropped: refused by [[nodiscard]] at line ${line} (${errors} error(s))")
