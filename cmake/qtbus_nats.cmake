# SPDX-License-Identifier: MIT
# libqtbus-nats.so: the NATS bridge (nats/, include/qtbus_nats.h), a C library on top of
# libqtbus.  Built when nats.c is found (Debian: libnats-dev); otherwise skipped with a
# message, and libqtbus builds as before: libqtbus itself never depends on NATS.
#
#   -DQTBUS_NATS=AUTO (default)  build it when nats.c is found
#   -DQTBUS_NATS=ON              nats.c is required
#   -DQTBUS_NATS=OFF             never
set(QTBUS_NATS AUTO CACHE STRING "Build libqtbus-nats (AUTO: when nats.c is found)")
set_property(CACHE QTBUS_NATS PROPERTY STRINGS AUTO ON OFF)

set(QTBUS_NATS_BUILT OFF)
if(NOT QTBUS_NATS STREQUAL "OFF")
  # Through pkg-config (libnats.pc): Debian's CMake package of nats.c (cnats) names a
  # static archive the package does not ship, and find_package fails hard on it.
  pkg_check_modules(QTBUS_LIBNATS QUIET IMPORTED_TARGET libnats)
  if(QTBUS_LIBNATS_FOUND)
    set(_qtbus_nats_link PkgConfig::QTBUS_LIBNATS)
  endif()
  if(_qtbus_nats_link)
    set(QTBUS_NATS_BUILT ON)
  elseif(QTBUS_NATS STREQUAL "ON")
    message(FATAL_ERROR "qtbus: QTBUS_NATS=ON but nats.c was not found (Debian: apt-get install libnats-dev)")
  else()
    message(STATUS "qtbus: nats.c not found (Debian: libnats-dev): libqtbus-nats is not built")
  endif()
endif()

if(QTBUS_NATS_BUILT)
  message(STATUS "qtbus: building libqtbus-nats (nats.c: ${_qtbus_nats_link})")
  set(THREADS_PREFER_PTHREAD_FLAG ON)
  find_package(Threads REQUIRED)
  set(_nats ${PROJECT_SOURCE_DIR}/nats)
  add_library(qtbus_nats SHARED
    ${_nats}/bridge.c
    ${_nats}/subjects.c
    ${_nats}/publish.c
    ${_nats}/export.c
    ${_nats}/import.c
    ${_nats}/handoff.c
    ${_nats}/requests.c
    ${_nats}/sticky.c
    ${_nats}/lifetime.c
    ${_nats}/report.c)
  add_library(qtbus::nats ALIAS qtbus_nats)
  target_link_libraries(qtbus_nats PUBLIC qtbus PRIVATE ${_qtbus_nats_link} Threads::Threads)
  set_target_properties(qtbus_nats PROPERTIES
    OUTPUT_NAME qtbus-nats
    EXPORT_NAME nats
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}
    C_STANDARD 11
    C_STANDARD_REQUIRED ON
    C_EXTENSIONS ON
    C_VISIBILITY_PRESET hidden
    LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/qtbus_nats.map
    # Finds libqtbus beside itself wherever the prefix is.
    INSTALL_RPATH "$ORIGIN"
    BUILD_WITH_INSTALL_RPATH ON)
  target_compile_options(qtbus_nats PRIVATE $<$<C_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Werror=implicit-function-declaration>)
  # Plain C of our own: the usual hardening (Debian's defaults for packages).
  target_compile_definitions(qtbus_nats PRIVATE $<$<NOT:$<CONFIG:Debug>>:_FORTIFY_SOURCE=2>)
  target_link_options(qtbus_nats PRIVATE
    "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/qtbus_nats.map"
    "LINKER:-z,relro" "LINKER:-z,now")
  if(NOT QTBUS_SANITIZE)
    target_link_options(qtbus_nats PRIVATE "LINKER:-z,defs")
  endif()
endif()
