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

if(IS_ABSOLUTE "${QTBUS_PC_LIBDIR}")
  set(_libdir "${QTBUS_PC_LIBDIR}")
else()
  set(_libdir "\${prefix}/${QTBUS_PC_LIBDIR}")
endif()
if(IS_ABSOLUTE "${QTBUS_PC_INCLUDEDIR}")
  set(_includedir "${QTBUS_PC_INCLUDEDIR}")
else()
  set(_includedir "\${prefix}/${QTBUS_PC_INCLUDEDIR}")
endif()

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
set(QTBUS_PC_LIBDIR_VALUE "${_libdir}")
set(QTBUS_PC_INCLUDEDIR_VALUE "${_includedir}")

configure_file("${QTBUS_PC_TEMPLATE}" "${QTBUS_PC_STAGE}" @ONLY)
if(IS_ABSOLUTE "${QTBUS_PC_LIBDIR}")
  set(_dest "${QTBUS_PC_LIBDIR}/pkgconfig")
else()
  set(_dest "${CMAKE_INSTALL_PREFIX}/${QTBUS_PC_LIBDIR}/pkgconfig")
endif()
file(INSTALL DESTINATION "${_dest}" TYPE FILE FILES "${QTBUS_PC_STAGE}")
