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
set(DEFINE_PREFIX QTBUS_DROP_)
set(MARK drop)
set(COMPILED_MEANS "dropping the handle compiled: [[nodiscard]] is missing")
include(${CMAKE_CURRENT_LIST_DIR}/compile_common.cmake)
if(NOT CASE)
    return()  # the control compiled (a return() in the included file ends only that file)
endif()

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
