# SPDX-License-Identifier: MIT
# Sets QTBUS_SWIFT_RUNTIME_DIR: the directory holding libswiftCore.so and libdispatch.so
# of the toolchain that CMAKE_Swift_COMPILER belongs to (e.g. /opt/swift/usr/lib/swift/linux).
# The compiler reports it itself (-print-target-info), so nothing is hard-coded and a
# toolchain elsewhere (swiftly, /usr) works the same.
if(DEFINED QTBUS_SWIFT_RUNTIME_DIR)
  return()
endif()

execute_process(
  COMMAND "${CMAKE_Swift_COMPILER}" -print-target-info
  OUTPUT_VARIABLE _qtbus_target_info
  RESULT_VARIABLE _qtbus_rc
  ERROR_QUIET)
if(_qtbus_rc EQUAL 0)
  string(JSON _qtbus_dir ERROR_VARIABLE _qtbus_err
         GET "${_qtbus_target_info}" paths runtimeLibraryPaths 0)
endif()
if(NOT _qtbus_dir OR NOT EXISTS "${_qtbus_dir}/libswiftCore.so")
  # Fallback: the layout every Linux toolchain uses, <prefix>/usr/bin/swiftc ->
  # <prefix>/usr/lib/swift/linux.
  get_filename_component(_qtbus_bin "${CMAKE_Swift_COMPILER}" REALPATH)
  get_filename_component(_qtbus_bin "${_qtbus_bin}" DIRECTORY)
  get_filename_component(_qtbus_dir "${_qtbus_bin}/../lib/swift/linux" ABSOLUTE)
endif()
if(NOT EXISTS "${_qtbus_dir}/libswiftCore.so")
  message(FATAL_ERROR "Cannot find the Swift runtime (libswiftCore.so) of ${CMAKE_Swift_COMPILER}")
endif()
set(QTBUS_SWIFT_RUNTIME_DIR "${_qtbus_dir}" CACHE PATH "Swift runtime directory (RUNPATH of libqtbus)")
message(STATUS "Swift runtime: ${QTBUS_SWIFT_RUNTIME_DIR}")
