# SPDX-License-Identifier: MIT
# CPACK_POST_BUILD_SCRIPTS of cmake/qtbus_package.cmake: cpack runs it once it has made
# the packages (CPACK_PACKAGE_FILES), and it rebuilds each .deb with dpkg-deb for the
# two control fields CPack (3.25) cannot write right:
#   Installed-Size  CPack adds up the packaged files' sizes following symlinks, so a
#                   library's libfoo.so.0 -> libfoo.so.0.x.y counts it twice.  Here it
#                   is computed as dpkg-gencontrol does: each file and symlink its size
#                   rounded up to KiB, each directory 1 KiB.
#   Multi-Arch      CPack has no variable for it: "same" for the packages listed in
#                   CPACK_QTBUS_MULTIARCH_SAME.
# The files and the other control fields are left as CPack made them (dpkg-deb writes
# the data with root as owner, as CPack does).
find_program(QTBUS_DPKG_DEB dpkg-deb)
if(NOT QTBUS_DPKG_DEB)
  message(FATAL_ERROR "qtbus: dpkg-deb not found (Debian: dpkg); the packages' Installed-Size and "
                      "Multi-Arch fields are written with it")
endif()

foreach(_deb IN LISTS CPACK_PACKAGE_FILES)
  if(NOT _deb MATCHES "\\.deb$")
    continue()
  endif()
  set(_tree "${_deb}.tree")
  file(REMOVE_RECURSE "${_tree}")
  execute_process(COMMAND "${QTBUS_DPKG_DEB}" --raw-extract "${_deb}" "${_tree}" COMMAND_ERROR_IS_FATAL ANY)

  file(GLOB_RECURSE _entries LIST_DIRECTORIES true "${_tree}/*")
  set(_kib 0)
  foreach(_entry IN LISTS _entries)
    file(RELATIVE_PATH _path "${_tree}" "${_entry}")
    if(_path MATCHES "^DEBIAN(/|$)")
      continue()
    endif()
    if(IS_SYMLINK "${_entry}")
      file(READ_SYMLINK "${_entry}" _target)
      string(LENGTH "${_target}" _bytes)
    elseif(IS_DIRECTORY "${_entry}")
      set(_bytes 1024)
    else()
      file(SIZE "${_entry}" _bytes)
    endif()
    math(EXPR _kib "${_kib} + (${_bytes} + 1023) / 1024")
  endforeach()

  file(READ "${_tree}/DEBIAN/control" _control)
  string(REGEX MATCH "(^|\n)Package: ([^\n]+)" _ "${_control}")
  set(_package "${CMAKE_MATCH_2}")
  if(NOT _control MATCHES "(^|\n)Installed-Size: [0-9]+\n")
    message(FATAL_ERROR "qtbus: ${_deb} has no Installed-Size field to correct")
  endif()
  string(REGEX REPLACE "(^|\n)Installed-Size: [0-9]+\n" "\\1Installed-Size: ${_kib}\n" _control "${_control}")
  if(_package IN_LIST CPACK_QTBUS_MULTIARCH_SAME AND NOT _control MATCHES "(^|\n)Multi-Arch:")
    string(REGEX REPLACE "(^|\n)(Architecture: [^\n]+\n)" "\\1\\2Multi-Arch: same\n" _control "${_control}")
  endif()
  file(WRITE "${_tree}/DEBIAN/control" "${_control}")

  execute_process(COMMAND "${QTBUS_DPKG_DEB}" --root-owner-group --build "${_tree}" "${_deb}"
    OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
  file(REMOVE_RECURSE "${_tree}")
  message(STATUS "qtbus: ${_package}: Installed-Size ${_kib} KiB")
endforeach()
