# SPDX-License-Identifier: MIT
# Installs <libdir>/libqtbus.so.0.3.0 and its SONAME link (component Runtime), and the
# namelink, include/qtbus.h, qtbus.hpp and qtbus_signal.hpp (the C++ API), <libdir>/pkgconfig/qtbus.pc and
# <libdir>/cmake/qtbus/
# (component Development: find_package(qtbus) -> qtbus::qtbus), and
# <datadir>/qtbus/valgrind/qtbus.supp (Development).  Every installed file
# works from wherever the prefix ends up: `cmake --install --prefix P`, DESTDIR staging
# and a prefix moved afterwards (see cmake/qtbus_pc.cmake for the pkg-config file).
set(QTBUS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/qtbus)

# `cmake --install --strip` (and cpack, which strips what it packages) runs plain
# `strip`, which keeps the compilers' .comment section (their version strings; lintian:
# binary-has-unneeded-section): objcopy removes it after, as Debian's dh_strip does.
function(qtbus_install_strip_comment target component)
  if(CMAKE_OBJCOPY)
    install(CODE "
      if(CMAKE_INSTALL_DO_STRIP)
        set(_libdir [[${CMAKE_INSTALL_LIBDIR}]])
        cmake_path(ABSOLUTE_PATH _libdir BASE_DIRECTORY \"\${CMAKE_INSTALL_PREFIX}\")
        execute_process(COMMAND [[${CMAKE_OBJCOPY}]] --remove-section=.comment
          \"\$ENV{DESTDIR}\${_libdir}/$<TARGET_FILE_NAME:${target}>\" COMMAND_ERROR_IS_FATAL ANY)
      endif()" COMPONENT ${component})
  endif()
endfunction()

install(TARGETS qtbus EXPORT qtbusTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    COMPONENT Runtime
    NAMELINK_COMPONENT Development)
qtbus_install_strip_comment(qtbus Runtime)
install(FILES ${PROJECT_SOURCE_DIR}/include/qtbus.h ${PROJECT_SOURCE_DIR}/include/qtbus.hpp
              ${PROJECT_SOURCE_DIR}/include/qtbus_signal.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT Development)
# Memcheck suppressions for users' programs (what the Swift runtime and libdispatch
# linked into the library keep until exit by design), as GLib ships glib.supp; qtbus.pc
# names the file (valgrind_suppressions).
install(FILES ${PROJECT_SOURCE_DIR}/scripts/valgrind.supp
  DESTINATION ${CMAKE_INSTALL_DATADIR}/qtbus/valgrind
  RENAME qtbus.supp
  COMPONENT Development)

# A libqtbus.so linked to the shared libffi (QTBUS_STATIC_LIBFFI=OFF) names it for
# static linking; the default one carries its own copy.
if(QTBUS_STATIC_LIBFFI)
  set(_qtbus_pc_requires_private "")
else()
  set(_qtbus_pc_requires_private "Requires.private: libffi")
endif()
# qtbus.pc is written at install time, when the real prefix is known (the one given to
# `cmake --install --prefix`, or CPack's), not at configure time.
install(CODE "
  set(QTBUS_PC_TEMPLATE [[${PROJECT_SOURCE_DIR}/pkgconfig/qtbus.pc.in]])
  set(QTBUS_PC_STAGE [[${PROJECT_BINARY_DIR}/pkgconfig-install/qtbus.pc]])
  set(QTBUS_PC_LIBDIR [[${CMAKE_INSTALL_LIBDIR}]])
  set(QTBUS_PC_INCLUDEDIR [[${CMAKE_INSTALL_INCLUDEDIR}]])
  set(QTBUS_PC_DATADIR [[${CMAKE_INSTALL_DATADIR}]])
  set(QTBUS_PC_VERSION [[${PROJECT_VERSION}]])
  set(QTBUS_PC_DESCRIPTION [[${PROJECT_DESCRIPTION}]])
  set(QTBUS_PC_REQUIRES_PRIVATE [[${_qtbus_pc_requires_private}]])
  include([[${PROJECT_SOURCE_DIR}/cmake/qtbus_pc.cmake]])
" COMPONENT Development)

# The CMake package finds its prefix from its own location (PACKAGE_PREFIX_DIR and
# _IMPORT_PREFIX), so it is relocatable as generated.
include(CMakePackageConfigHelpers)
install(EXPORT qtbusTargets
  NAMESPACE qtbus::
  FILE qtbusTargets.cmake
  DESTINATION ${QTBUS_CMAKE_DIR}
  COMPONENT Development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/qtbusConfig.cmake.in
  ${PROJECT_BINARY_DIR}/qtbusConfig.cmake
  INSTALL_DESTINATION ${QTBUS_CMAKE_DIR})
# 0.x: a new minor version may change the API, so only 0.3.* satisfies find_package(qtbus 0.3).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/qtbusConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
    ${PROJECT_BINARY_DIR}/qtbusConfig.cmake
    ${PROJECT_BINARY_DIR}/qtbusConfigVersion.cmake
  DESTINATION ${QTBUS_CMAKE_DIR}
  COMPONENT Development)

# libqtbus-nats (cmake/qtbus_nats.cmake), when built: components NatsRuntime (the
# library and its SONAME link) and NatsDevelopment (the namelink, qtbus_nats.h and
# qtbus_nats.hpp (its C++ API, header-only), qtbus-nats.pc,
# find_package(qtbus COMPONENTS nats) -> qtbus::nats).
if(QTBUS_NATS_BUILT)
  install(TARGETS qtbus_nats EXPORT qtbusNatsTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
      COMPONENT NatsRuntime
      NAMELINK_COMPONENT NatsDevelopment)
  qtbus_install_strip_comment(qtbus_nats NatsRuntime)
  install(FILES ${PROJECT_SOURCE_DIR}/include/qtbus_nats.h ${PROJECT_SOURCE_DIR}/include/qtbus_nats.hpp
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT NatsDevelopment)
  install(CODE "
    set(QTBUS_PC_TEMPLATE [[${PROJECT_SOURCE_DIR}/pkgconfig/qtbus-nats.pc.in]])
    set(QTBUS_PC_STAGE [[${PROJECT_BINARY_DIR}/pkgconfig-install/qtbus-nats.pc]])
    set(QTBUS_PC_LIBDIR [[${CMAKE_INSTALL_LIBDIR}]])
    set(QTBUS_PC_INCLUDEDIR [[${CMAKE_INSTALL_INCLUDEDIR}]])
    set(QTBUS_PC_DATADIR [[${CMAKE_INSTALL_DATADIR}]])
    set(QTBUS_PC_VERSION [[${PROJECT_VERSION}]])
    set(QTBUS_PC_DESCRIPTION [[qtbus buses joined across processes and machines through NATS]])
    set(QTBUS_PC_REQUIRES_PRIVATE [[Requires.private: libnats]])
    include([[${PROJECT_SOURCE_DIR}/cmake/qtbus_pc.cmake]])
  " COMPONENT NatsDevelopment)
  install(EXPORT qtbusNatsTargets
    NAMESPACE qtbus::
    FILE qtbusNatsTargets.cmake
    DESTINATION ${QTBUS_CMAKE_DIR}
    COMPONENT NatsDevelopment)
endif()
