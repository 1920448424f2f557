# SPDX-License-Identifier: MIT
# Debian packages with CPack (cpack -G DEB in a build configured with
# -DCMAKE_INSTALL_PREFIX=/usr): one per install component, named as Debian names
# libraries, after the SONAME:
#   libqtbus0      component Runtime: libqtbus.so.0 and libqtbus.so.0.2.0 in the
#                  multiarch libdir, with a shlibs file; Depends from dpkg-shlibdeps
#                  (libffi8 too with QTBUS_STATIC_LIBFFI=OFF; by default it is linked in)
#   libqtbus-dev   component Development: the namelink, qtbus.h, qtbus.pc and the CMake
#                  package; Depends: libqtbus0 (= this version)
# and, when libqtbus-nats is built (cmake/qtbus_nats.cmake):
#   libqtbus-nats0     component NatsRuntime: libqtbus-nats.so.0*, shlibs; Depends from
#                      dpkg-shlibdeps (libnats, libc) and libqtbus0 (= this version)
#   libqtbus-nats-dev  component NatsDevelopment: the namelink, qtbus_nats.h,
#                      qtbus-nats.pc, the CMake targets of qtbus::nats; Depends:
#                      libqtbus-nats0 (= this version), libqtbus-dev (= this version),
#                      libnats-dev (qtbus-nats.pc's Requires.private)
# Each carries /usr/share/doc/<package>/copyright (DEP-5, MIT) and a changelog.Debian.gz.
# scripts/package-test.sh builds, lints, installs and uses them.

# The package says it needs no Swift toolchain, and its Depends come from
# dpkg-shlibdeps, which no Debian package can satisfy for the toolchain's
# libswiftCore.so: so only a self-contained library (embedded, or static) is packaged.
if(QTBUS_SWIFT_RUNTIME STREQUAL "shared")
  message(STATUS "qtbus: no Debian packages (cpack) with QTBUS_SWIFT_RUNTIME=shared")
  return()
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME qtbus)
set(CPACK_PACKAGE_VENDOR "The qtbus authors")
# Whoever builds packages for a distribution puts their own name here.
set(QTBUS_PACKAGE_MAINTAINER "The qtbus authors <qtbus@example.org>" CACHE STRING
  "Maintainer field of the Debian packages")
set(CPACK_PACKAGE_CONTACT "${QTBUS_PACKAGE_MAINTAINER}")
# The project has no public address yet: no Homepage field until one is given.
set(QTBUS_PACKAGE_HOMEPAGE "" CACHE STRING "Homepage field of the Debian packages (none when empty)")
if(QTBUS_PACKAGE_HOMEPAGE)
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${QTBUS_PACKAGE_HOMEPAGE}")
endif()
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Each component's description starts with its own synopsis.  CPackDeb (3.25) puts
# CPACK_PACKAGE_DESCRIPTION_SUMMARY before it unless the summary is CPack's default
# text, and CPack fills the summary in from PROJECT_DESCRIPTION: so the default text.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
# The copyright files below are made from LICENSE when configuring.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL Runtime Development)
if(QTBUS_NATS_BUILT)
  list(APPEND CPACK_COMPONENTS_ALL NatsRuntime NatsDevelopment)
endif()

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")

set(_soname libqtbus${PROJECT_VERSION_MAJOR})
set(_debver "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
# Paragraphs of the extended descriptions; CPackDeb indents each line by one space and
# turns the empty lines into " .".
set(_long_description
"qtbus is an in-process event bus after iOS's QTEventBus: code subscribes to
named event types, optionally narrowed by a subtype, and receives the events
other code dispatches, on the dispatching thread, on a serial queue or on the
main queue. Subscriptions are disposed by token or by dispose bag, and every
userdata has a release hook that runs exactly once. Requests with replies,
commands and shared sources are built on the same bus.")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${_soname})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "in-process event bus with a C ABI
${_long_description}

This package holds the shared library. Its engine is written in Swift and
compiled in Embedded Swift mode: the library carries no language runtime and
needs only the C library.")
# DEBIAN/shlibs ("libqtbus 0 libqtbus0 (>= 0.2.0-1)": CPack puts in the whole version)
# and the ldconfig trigger, so programs built against it depend on it through
# dpkg-shlibdeps.  No symbols file: it would give each function the version it arrived
# in, which the tree does not record (its functions arrived in 0.1.0 and 0.2.0).
#
# lintian's other informational tags on the library are left as they are, not
# overridden, since each is true:
#   hardening-no-fortify-functions  the unfortified calls (memcpy, snprintf...) are
#                                   those of libdispatch linked in from the toolchain's
#                                   archive (the C glue's one read() has a constant
#                                   size);
#   hardening-no-bindnow            the library is linked as qtbus_library.cmake says,
#                                   lazily bound;
#   binary-has-unneeded-section     CPack strips with plain `strip`, which keeps .comment.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# The ldconfig trigger is what refreshes the loader cache (CPack's postinst/postrm also
# call ldconfig, which it writes for every library under /usr/lib: see the overrides).
file(WRITE ${PROJECT_BINARY_DIR}/debian-control/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian-control/triggers)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libqtbus-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "${_soname} (= ${_debver})")
if(NOT QTBUS_STATIC_LIBFFI)
  # qtbus.pc then says Requires.private: libffi, which pkg-config resolves (libffi8,
  # the runtime's Depends, comes from dpkg-shlibdeps).
  string(APPEND CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS ", libffi-dev")
endif()
set(CPACK_DEBIAN_DEVELOPMENT_DESCRIPTION "in-process event bus with a C ABI (development files)
${_long_description}

This package holds the C header, the pkg-config file and the CMake package
(find_package(qtbus) gives qtbus::qtbus).")

set(_nats_soname libqtbus-nats${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_NATSRUNTIME_PACKAGE_NAME ${_nats_soname})
set(CPACK_DEBIAN_NATSRUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_NATSRUNTIME_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps finds libqtbus.so.0 in the build tree, but no package of it to
# depend on: that dependency is written here (this version, as libqtbus-dev's).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR})
set(CPACK_DEBIAN_NATSRUNTIME_PACKAGE_DEPENDS "${_soname} (= ${_debver})")
set(CPACK_DEBIAN_NATSRUNTIME_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian-control/triggers)
set(CPACK_DEBIAN_NATSRUNTIME_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_NATSRUNTIME_DESCRIPTION "qtbus buses joined across processes through NATS
${_long_description}

This package holds libqtbus-nats, which joins buses in several processes and
machines through a NATS server: exported types are published, imported ones
dispatched, requests answered across processes, sticky events kept by
JetStream.")
set(CPACK_DEBIAN_NATSDEVELOPMENT_PACKAGE_NAME libqtbus-nats-dev)
set(CPACK_DEBIAN_NATSDEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_NATSDEVELOPMENT_PACKAGE_DEPENDS
  "${_nats_soname} (= ${_debver}), libqtbus-dev (= ${_debver}), libnats-dev")
set(CPACK_DEBIAN_NATSDEVELOPMENT_DESCRIPTION "qtbus buses joined across processes through NATS (development files)
${_long_description}

This package holds the C header of libqtbus-nats, its pkg-config file
(qtbus-nats) and its CMake targets (find_package(qtbus COMPONENTS nats) gives
qtbus::nats).")

# /usr/share/doc/<package>/{copyright,changelog.Debian.gz}, per package.
# The build date, or SOURCE_DATE_EPOCH when set (reproducible builds).
string(TIMESTAMP _date "%a, %d %b %Y %H:%M:%S +0000" UTC)
foreach(_component IN LISTS CPACK_COMPONENTS_ALL)
  if(_component STREQUAL Runtime)
    set(_pkg ${_soname})
  elseif(_component STREQUAL Development)
    set(_pkg libqtbus-dev)
  elseif(_component STREQUAL NatsRuntime)
    set(_pkg ${_nats_soname})
  else()
    set(_pkg libqtbus-nats-dev)
  endif()
  set(_dir ${PROJECT_BINARY_DIR}/debian-doc/${_pkg})
  # The licence text of LICENSE without its title and copyright line (the Copyright
  # field says that), paragraphs separated by " ." lines.
  file(READ ${PROJECT_SOURCE_DIR}/LICENSE _license)
  string(FIND "${_license}" "Permission is hereby granted" _at)
  if(_at LESS 0)
    message(FATAL_ERROR "LICENSE is not the MIT (Expat) text that debian copyright says it is")
  endif()
  string(SUBSTRING "${_license}" ${_at} -1 _license)
  string(STRIP "${_license}" _license)
  string(REGEX REPLACE "\n\n" "\n.\n" _license "${_license}")
  string(REGEX REPLACE "\n([^\n])" "\n \\1" _license "${_license}")
  file(WRITE ${_dir}/copyright
"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: qtbus

Files: *
Copyright: 2026 The qtbus authors
License: Expat
 ${_license}
")
  file(WRITE ${_dir}/changelog.Debian
"${_pkg} (${_debver}) unstable; urgency=medium

  * Package of qtbus ${PROJECT_VERSION} (see CHANGELOG.md of the source).

 -- ${CPACK_PACKAGE_CONTACT}  ${_date}
")
  add_custom_command(OUTPUT ${_dir}/changelog.Debian.gz
    COMMAND gzip -9nf -k ${_dir}/changelog.Debian
    DEPENDS ${_dir}/changelog.Debian)
  list(APPEND _doc_outputs ${_dir}/changelog.Debian.gz)
  # Tags that do not apply to a package built from the upstream tree by CPack.
  file(WRITE ${_dir}/lintian-overrides
"# Not uploaded to Debian: there is no ITP bug to close.
${_pkg}: initial-upload-closes-no-bugs
")
  if(_component STREQUAL NatsRuntime)
    file(APPEND ${_dir}/lintian-overrides
"# CPack writes ldconfig calls into postinst/postrm for every library under /usr/lib;
# the package also has the ldconfig trigger, which is what dpkg runs.
${_pkg}: maintscript-calls-ldconfig [postinst]
${_pkg}: maintscript-calls-ldconfig [postrm]
")
  endif()
  if(_component STREQUAL Runtime)
    file(APPEND ${_dir}/lintian-overrides
"# CPack writes ldconfig calls into postinst/postrm for every library under /usr/lib;
# the package also has the ldconfig trigger, which is what dpkg runs.
${_pkg}: maintscript-calls-ldconfig [postinst]
${_pkg}: maintscript-calls-ldconfig [postrm]
")
  endif()
  if(_component STREQUAL Runtime AND QTBUS_SWIFT_RUNTIME STREQUAL "static")
    file(APPEND ${_dir}/lintian-overrides
"# Word pieces of the Unicode scalar name table that the Swift runtime linked into the
# library carries (UnicodeScalarProps in libswiftCore.a): not qtbus's strings.
")
    foreach(_word ADDRES:ADDRESS AGAINS:AGAINST ALIGNE:ALIGN CHARACTE:CHARACTER
        CUSTOME:CUSTOM HANDSHAK:HANDSHAKE INCREAS:INCREASE STANDAR:STANDARD
        THEREFOR:THEREFORE THROUG:THROUGH TRADITIONA:TRADITIONAL UNKNOW:UNKNOWN
        WARNIN:WARNING)
      string(REPLACE ":" " " _word "${_word}")
      file(APPEND ${_dir}/lintian-overrides "${_pkg}: spelling-error-in-binary ${_word} *\n")
    endforeach()
  endif()
  install(FILES ${_dir}/lintian-overrides
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides
    RENAME ${_pkg}
    PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
    COMPONENT ${_component}
    EXCLUDE_FROM_ALL)
  install(FILES ${_dir}/copyright ${_dir}/changelog.Debian.gz
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${_pkg}
    PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
    COMPONENT ${_component}
    # Only into the packages (CPack asks for each component by name), not into a plain
    # `cmake --install`, where the LICENSE of the source tree is what applies.
    EXCLUDE_FROM_ALL)
endforeach()
add_custom_target(qtbus_debian_doc ALL DEPENDS ${_doc_outputs})

include(CPack)
