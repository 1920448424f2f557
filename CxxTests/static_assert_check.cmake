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
if(CASE AND (NOT DEFINED MESSAGE OR MESSAGE STREQUAL ""))
    message(FATAL_ERROR "static_assert_check: CASE ${CASE} without MESSAGE")
endif()
set(DEFINE_PREFIX QTBUS_FAIL_)
set(MARK fail)
set(COMPILED_MEANS "the static_assert is missing")
include(${CMAKE_CURRENT_LIST_DIR}/compile_common.cmake)
if(NOT CASE)
    return()  # the control compiled (a return() in the included file ends only that file)
endif()

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
