# SPDX-License-Identifier: MIT
# Writes and installs qtbus.pc at install time (included by install(CODE) in
# cmake/qtbus_install.cmake), where CMAKE_INSTALL_PREFIX is the prefix really installed
# to and file(INSTALL) adds DESTDIR.
#
#   /usr, /usr/local  absolute paths and no rpath: the compiler and the loader already
#                     search there (pkg-config drops -I/usr/include), as GLib's and
#                     libuv's files do;
#   any other prefix  prefix=${pcfiledir}/.. relative to the file itself, so DESTDIR
#                     staging and moving the prefix afterwards keep it right, and
#                     -Wl,-rpath,${libdir} so programs find libqtbus without
#                     LD_LIBRARY_PATH.
# An absolute CMAKE_INSTALL_LIBDIR or INCLUDEDIR is taken as given (not relocatable).
cmake_path(SET _prefix NORMALIZE "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "(.)/$" "\\1" _prefix "${_prefix}")

# A directory as the .pc file spells it: under ${prefix}, unless given absolute.
function(qtbus_pc_dir out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
qtbus_pc_dir(QTBUS_PC_LIBDIR_VALUE "${QTBUS_PC_LIBDIR}")
qtbus_pc_dir(QTBUS_PC_INCLUDEDIR_VALUE "${QTBUS_PC_INCLUDEDIR}")
qtbus_pc_dir(QTBUS_PC_DATADIR_VALUE "${QTBUS_PC_DATADIR}")

if(_prefix STREQUAL "/usr" OR _prefix STREQUAL "/usr/local")
  set(QTBUS_PC_PREFIX "${_prefix}")
  set(QTBUS_PC_RPATH "")
else()
  if(IS_ABSOLUTE "${QTBUS_PC_LIBDIR}")
    set(QTBUS_PC_PREFIX "${_prefix}")
  else()
    # <prefix>/<libdir>/pkgconfig -> <prefix>: one ".." per component.
    file(RELATIVE_PATH _up "/p/${QTBUS_PC_LIBDIR}/pkgconfig" "/p")
    string(REGEX REPLACE "/$" "" _up "${_up}")
    set(QTBUS_PC_PREFIX "\${pcfiledir}/${_up}")
  endif()
  set(QTBUS_PC_RPATH " -Wl,-rpath,\${libdir}")
endif()

configure_file("${QTBUS_PC_TEMPLATE}" "${QTBUS_PC_STAGE}" @ONLY)
cmake_path(ABSOLUTE_PATH QTBUS_PC_LIBDIR BASE_DIRECTORY "${CMAKE_INSTALL_PREFIX}" OUTPUT_VARIABLE _libdir)
file(INSTALL DESTINATION "${_libdir}/pkgconfig" TYPE FILE FILES "${QTBUS_PC_STAGE}")
