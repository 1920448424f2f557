# SPDX-License-Identifier: MIT
# Debian packages with CPack (cpack -G DEB in a build configured with
# -DCMAKE_INSTALL_PREFIX=/usr): one per install component, named as Debian names
# libraries, after the SONAME:
#   libqtbus0      component Runtime: libqtbus.so.0 and libqtbus.so.0.3.0 in the
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
# Each carries /usr/share/doc/<package>/copyright (DEP-5: qtbus, and what the build links
# into libqtbus.so) and a changelog.Debian.gz.  The runtime packages are Multi-Arch: same
# (their library is in the multiarch libdir, their other files are the same on every
# architecture).  cpack runs cmake/debian/control-fields.cmake after it, for the
# Installed-Size and Multi-Arch fields.
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
# The Maintainer and Homepage fields: the project's contact and home page (the latter
# from project() in CMakeLists.txt), unless whoever builds packages for a distribution
# gives their own.
set(QTBUS_CONTACT "qtbus maintainers <qtbus@lists.qtbus.dev>")
set(QTBUS_PACKAGE_MAINTAINER "" CACHE STRING
  "Maintainer field of the Debian packages (empty: ${QTBUS_CONTACT})")
if(QTBUS_PACKAGE_MAINTAINER STREQUAL "The qtbus authors <qtbus@example.org>")
  # 0.2.0's default, a placeholder, still in the caches of build trees made then.
  set_property(CACHE QTBUS_PACKAGE_MAINTAINER PROPERTY VALUE "")
endif()
set(QTBUS_PACKAGE_HOMEPAGE "" CACHE STRING
  "Homepage field of the Debian packages (empty: ${PROJECT_HOMEPAGE_URL})")
if(QTBUS_PACKAGE_MAINTAINER)
  set(CPACK_PACKAGE_CONTACT "${QTBUS_PACKAGE_MAINTAINER}")
else()
  set(CPACK_PACKAGE_CONTACT "${QTBUS_CONTACT}")
endif()
if(QTBUS_PACKAGE_HOMEPAGE)
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${QTBUS_PACKAGE_HOMEPAGE}")
else()
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${PROJECT_HOMEPAGE_URL}")
endif()
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Each component's description starts with its own synopsis.  CPackDeb (3.25) puts
# CPACK_PACKAGE_DESCRIPTION_SUMMARY before it unless the summary is CPack's default
# text, and CPack fills the summary in from PROJECT_DESCRIPTION: so the default text.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
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
# CPack (3.25) counts a symlink as the file it points to in Installed-Size (the
# library twice: libqtbus.so.0 -> libqtbus.so.0.3.0) and cannot write Multi-Arch: this
# script, run by cpack once the packages are made, rewrites both fields.
set(CPACK_POST_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/debian/control-fields.cmake)

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
# DEBIAN/shlibs ("libqtbus 0 libqtbus0 (>= 0.3.0-1)": CPack puts in the whole version)
# and the ldconfig trigger, so programs built against it depend on it through
# dpkg-shlibdeps.
#
# DEBIAN/symbols, from the version script (qtbus_debian_symbols below): each function
# with the version of the release whose node lists it, so a program's Depends asks for
# the oldest library that has what it uses rather than this one.
#
# lintian's other informational tags on the library are left as they are, not
# overridden, since each is true (scripts/package-test.sh tolerates exactly these):
#   hardening-no-fortify-functions  the unfortified calls (memcpy, snprintf...) are
#                                   those of libdispatch linked in from the toolchain's
#                                   archive (the C glue's one read() has a constant
#                                   size);
#   hardening-no-bindnow            lazily bound, as Debian's default build flags
#                                   (dpkg-buildflags) leave a library: bindnow is not
#                                   among them.
# Writes `out`, the Debian symbols file of `library` (its SONAME) in `package`, from the
# version script `map`: node QTBUS_X.Y (or QTBUS_NATS_X.Y) gives its functions, and the
# node itself, the minimum version X.Y.0 (this version for the node of the version being
# built).  The map lists every function by name (scripts/check-exports.sh), so this is
# every symbol the library exports.
function(qtbus_debian_symbols map library package dev_package out)
  file(STRINGS ${map} _lines)
  set(_text "${library} ${package} #MINVER#\n* Build-Depends-Package: ${dev_package}\n")
  set(_node "")
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "^([A-Z_]+_([0-9]+)\\.([0-9]+)) *\\{")
      set(_node ${CMAKE_MATCH_1})
      set(_min "${CMAKE_MATCH_2}.${CMAKE_MATCH_3}.0")
      if("${CMAKE_MATCH_2}.${CMAKE_MATCH_3}" STREQUAL "${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}")
        set(_min ${PROJECT_VERSION})
      endif()
      string(APPEND _text " ${_node}@${_node} ${_min}\n")
    elseif(_line MATCHES "^ *local:" OR _line MATCHES "^ *\\}")
      set(_node "")
    elseif(_node AND _line MATCHES "^ +([a-z_0-9]+);")
      string(APPEND _text " ${CMAKE_MATCH_1}@${_node} ${_min}\n")
    endif()
  endforeach()
  file(WRITE ${out} "${_text}")
endfunction()
qtbus_debian_symbols(${PROJECT_SOURCE_DIR}/cmake/qtbus.map libqtbus.so.${PROJECT_VERSION_MAJOR} ${_soname}
                     libqtbus-dev ${PROJECT_BINARY_DIR}/debian-control/libqtbus/symbols)
qtbus_debian_symbols(${PROJECT_SOURCE_DIR}/cmake/qtbus_nats.map libqtbus-nats.so.${PROJECT_VERSION_MAJOR}
                     libqtbus-nats${PROJECT_VERSION_MAJOR} libqtbus-nats-dev
                     ${PROJECT_BINARY_DIR}/debian-control/libqtbus-nats/symbols)

set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# The ldconfig trigger is what refreshes the loader cache (CPack's postinst/postrm also
# call ldconfig, which it writes for every library under /usr/lib: see the overrides).
file(WRITE ${PROJECT_BINARY_DIR}/debian-control/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian-control/triggers
    ${PROJECT_BINARY_DIR}/debian-control/libqtbus/symbols)
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
set(CPACK_DEBIAN_NATSRUNTIME_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian-control/triggers
    ${PROJECT_BINARY_DIR}/debian-control/libqtbus-nats/symbols)
set(CPACK_DEBIAN_NATSRUNTIME_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_NATSRUNTIME_DESCRIPTION "qtbus buses joined across processes through NATS
${_long_description}

This package holds libqtbus-nats, which joins buses in several processes and
machines through a NATS server: exported types are published, imported ones
dispatched, requests answered across processes, sticky events kept by
JetStream.")
# Multi-Arch: same (cmake/debian/control-fields.cmake): libqtbus0:amd64 and
# libqtbus0:i386 install side by side, their libraries in the multiarch libdirs and
# their other files (/usr/share/doc, lintian overrides) the same on every architecture.
# The -dev packages are left without the field until a build for two architectures
# has shown that theirs are too.
set(CPACK_QTBUS_MULTIARCH_SAME ${_soname} ${_nats_soname})
set(CPACK_DEBIAN_NATSDEVELOPMENT_PACKAGE_NAME libqtbus-nats-dev)
set(CPACK_DEBIAN_NATSDEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_NATSDEVELOPMENT_PACKAGE_DEPENDS
  "${_nats_soname} (= ${_debver}), libqtbus-dev (= ${_debver}), libnats-dev")
set(CPACK_DEBIAN_NATSDEVELOPMENT_DESCRIPTION "qtbus buses joined across processes through NATS (development files)
${_long_description}

This package holds the C header of libqtbus-nats, its pkg-config file
(qtbus-nats) and its CMake targets (find_package(qtbus COMPONENTS nats) gives
qtbus::nats).")

# /usr/share/doc/<package>/copyright: one file for every package, as a Debian source
# package gives its binary packages (cmake/debian/copyright.in): qtbus's licence
# (LICENSE), then what cmake/qtbus_library.cmake links into libqtbus.so, each with its
# licence: libffi (unless QTBUS_STATIC_LIBFFI is OFF), libdispatch and BlocksRuntime
# (from the Swift toolchain), and the Swift standard library that Embedded Swift
# compiles in, or the whole Swift runtime of a QTBUS_SWIFT_RUNTIME=static build.
set(_debian ${PROJECT_SOURCE_DIR}/cmake/debian)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/LICENSE
  ${_debian}/copyright.in ${_debian}/libffi.copyright ${_debian}/swift-embedded.copyright
  ${_debian}/swift-static.copyright)
file(READ ${PROJECT_SOURCE_DIR}/LICENSE _license)
string(FIND "${_license}" "Permission is hereby granted" _at)
if(_at LESS 0 OR NOT _license MATCHES "Copyright \\(c\\) ([^\n]+)")
  message(FATAL_ERROR "LICENSE is not the MIT (Expat) text that debian copyright says it is")
endif()
set(QTBUS_COPYRIGHT_LINE "${CMAKE_MATCH_1}")
# The licence text without its title and copyright line (the Copyright field says
# that), each line indented, paragraphs separated by " ." lines.
string(SUBSTRING "${_license}" ${_at} -1 _license)
string(STRIP "${_license}" _license)
string(REGEX REPLACE "\n\n" "\n.\n" _license "${_license}")
string(REGEX REPLACE "\n([^\n])" "\n \\1" _license "${_license}")
set(QTBUS_LICENSE_TEXT " ${_license}")
set(QTBUS_HOMEPAGE "${PROJECT_HOMEPAGE_URL}")
set(QTBUS_LIBFFI_PARAGRAPH "")
if(QTBUS_STATIC_LIBFFI)
  file(READ ${_debian}/libffi.copyright _paragraph)
  set(QTBUS_LIBFFI_PARAGRAPH "\n${_paragraph}")
endif()
file(READ ${_debian}/swift-${QTBUS_SWIFT_RUNTIME}.copyright QTBUS_SWIFT_PARAGRAPH)
configure_file(${_debian}/copyright.in ${PROJECT_BINARY_DIR}/debian-doc/copyright @ONLY)

# changelog.Debian's date: SOURCE_DATE_EPOCH when set (reproducible builds), otherwise
# the date of the commit built, otherwise now.  Not the time of the build: with
# Multi-Arch: same, libqtbus0's files must be the same for every architecture of a
# version, and a build of the same commit on another day would differ in this one.
set(_epoch "$ENV{SOURCE_DATE_EPOCH}")
if(NOT _epoch)
  find_package(Git QUIET)
  if(GIT_FOUND)
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} log -1 --format=%ct
      OUTPUT_VARIABLE _epoch OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
endif()
if(_epoch MATCHES "^[0-9]+$")
  set(_saved_epoch "$ENV{SOURCE_DATE_EPOCH}")
  set(ENV{SOURCE_DATE_EPOCH} "${_epoch}")
  string(TIMESTAMP _date "%a, %d %b %Y %H:%M:%S +0000" UTC)
  set(ENV{SOURCE_DATE_EPOCH} "${_saved_epoch}")
else()
  string(TIMESTAMP _date "%a, %d %b %Y %H:%M:%S +0000" UTC)
endif()

# /usr/share/doc/<package>/changelog.Debian.gz and the lintian overrides, per package.
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
  install(FILES ${PROJECT_BINARY_DIR}/debian-doc/copyright ${_dir}/changelog.Debian.gz
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${_pkg}
    PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
    COMPONENT ${_component}
    # Only into the packages (CPack asks for each component by name), not into a plain
    # `cmake --install`, where the LICENSE of the source tree is what applies.
    EXCLUDE_FROM_ALL)
endforeach()
add_custom_target(qtbus_debian_doc ALL DEPENDS ${_doc_outputs})

include(CPack)
