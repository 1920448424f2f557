# SPDX-License-Identifier: MIT
# static_assert_check.cmake -- run by ctest (cmake -P): compiles SOURCE with CXX as a
# user of qtbus.hpp does (-std=STD -Wall -Wextra -pedantic -Werror, FLAGS: pkg-config's
# --cflags) and checks that what must not compile does not, for the reason it is there.
#
#   cmake -DCXX=g++ -DSTD=c++17 -DSOURCE=signal_check.cpp -DFLAGS="-I..." \
#         [-DCASE=SLOT_WRONG_TYPE -DMESSAGE=text] -P static_assert_check.cmake
#
#   no CASE   the control: it must compile.
#   CASE      compiled with -DQTBUS_FAIL_<CASE>: it must fail; the first error must be a
#             static assertion whose text contains MESSAGE, and the diagnostics must
#             point at the first line of SOURCE marked `// fail: <CASE>` (gcc's
#             "required from here", clang's "requested here"), so that the case fails
#             at its own line for the reason it is there for and no other.
cmake_minimum_required(VERSION 3.25)
foreach(v CXX STD SOURCE)
    if(NOT DEFINED ${v})
        message(FATAL_ERROR "static_assert_check: ${v} is not set")
    endif()
endforeach()

separate_arguments(flags UNIX_COMMAND "${FLAGS}")
set(cmd "${CXX}" "-std=${STD}" -Wall -Wextra -pedantic -Werror -fsyntax-only -fdiagnostics-color=never ${flags})
if(CASE)
    list(APPEND cmd "-DQTBUS_FAIL_${CASE}")
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
if(NOT DEFINED MESSAGE OR MESSAGE STREQUAL "")
    message(FATAL_ERROR "static_assert_check: CASE ${CASE} without MESSAGE")
endif()

if(rc EQUAL 0)
    message(FATAL_ERROR "${CASE} compiled: the static_assert is missing\n${shown}\n${out}")
endif()

# The marked line.
file(READ "${SOURCE}" text)
string(FIND "${text}" "// fail: ${CASE}\n" at)
if(at EQUAL -1)
    message(FATAL_ERROR "no line marked `// fail: ${CASE}` in ${SOURCE}")
endif()
string(SUBSTRING "${text}" 0 ${at} before)
string(REGEX MATCHALL "\n" newlines "${before}")
list(LENGTH newlines line)
math(EXPR line "${line} + 1")

# One diagnostic line per list element (';', '[' and ']' would split or join them).
string(REPLACE ";" "," safe "${out}")
string(REPLACE "[" "(" safe "${safe}")
string(REPLACE "]" ")" safe "${safe}")
string(REPLACE "\n" ";" lines "${safe}")
set(first "")
foreach(l IN LISTS lines)
    if(l MATCHES ": error: ")
        set(first "${l}")
        break()
    endif()
endforeach()
if(first STREQUAL "")
    message(FATAL_ERROR "the compiler failed (exit ${rc}) with no error diagnostic:\n${shown}\n${out}")
endif()
if(NOT first MATCHES "static assertion failed|static_assert failed")
    message(FATAL_ERROR "${CASE} fails for another reason first:\n  ${first}\n${shown}\n${out}")
endif()
string(FIND "${first}" "${MESSAGE}" quoted)
if(quoted EQUAL -1)
    message(FATAL_ERROR "${CASE}: the static assertion does not say \"${MESSAGE}\":\n  ${first}\n${shown}\n${out}")
endif()
string(FIND "${out}" "${SOURCE}:${line}:" here)
if(here EQUAL -1)
    message(FATAL_ERROR "${CASE}: no diagnostic points at ${SOURCE}:${line} (the `// fail: ${CASE}` line):\n${shown}\n${out}")
endif()
message(STATUS "${CASE}: refused at line ${line}: ${first}")
