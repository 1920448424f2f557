# SPDX-License-Identifier: MIT
# libqtbus.so: the Swift engine plus the C glue, one shared library.
include(SwiftRuntime)

set(QTBUS_SANITIZE "" CACHE STRING "Sanitizer build: empty, address (+UBSan for C) or thread")
set_property(CACHE QTBUS_SANITIZE PROPERTY STRINGS "" address thread)

# What of Swift's runtime libqtbus.so carries.
#   embedded (the default): the engine compiled in Embedded Swift mode, which needs no
#            runtime at all (what little of the standard library it uses is compiled
#            into it); libdispatch and BlocksRuntime, which the queues use, linked in
#            from the toolchain's static archives.  The library then needs libc only.
#   static:  the full Swift runtime, libdispatch and BlocksRuntime linked in (0.2.0's
#            library): for a platform whose toolchain has no Embedded Swift.
#   shared:  the full runtime, found at run time through RUNPATH at the toolchain.
# The source is the same in all three (Sources/QTBusEngine); SwiftPM builds it with
# the full runtime for Swift programs.
set(QTBUS_SWIFT_RUNTIME embedded CACHE STRING "Swift runtime of libqtbus.so: embedded (none), static or shared")
set_property(CACHE QTBUS_SWIFT_RUNTIME PROPERTY STRINGS embedded static shared)
if(DEFINED QTBUS_STATIC_SWIFT_RUNTIME)
  # 0.2.0's switch between the last two, carried over once into QTBUS_SWIFT_RUNTIME and
  # then forgotten, so that a later -DQTBUS_SWIFT_RUNTIME=... is not overridden by it.
  if(QTBUS_STATIC_SWIFT_RUNTIME)
    set(_runtime static)
  else()
    set(_runtime shared)
  endif()
  message(DEPRECATION "QTBUS_STATIC_SWIFT_RUNTIME is replaced by QTBUS_SWIFT_RUNTIME (embedded, static "
                      "or shared): taken as QTBUS_SWIFT_RUNTIME=${_runtime}")
  set_property(CACHE QTBUS_SWIFT_RUNTIME PROPERTY VALUE ${_runtime})
  unset(QTBUS_STATIC_SWIFT_RUNTIME CACHE)
  unset(QTBUS_STATIC_SWIFT_RUNTIME)
endif()
if(NOT QTBUS_SWIFT_RUNTIME MATCHES "^(embedded|static|shared)$")
  message(FATAL_ERROR "QTBUS_SWIFT_RUNTIME must be embedded, static or shared (got '${QTBUS_SWIFT_RUNTIME}')")
endif()
if(QTBUS_SANITIZE AND QTBUS_SWIFT_RUNTIME STREQUAL "static")
  # The sanitizer runtimes must see the Swift runtime's allocations and threads: the
  # toolchain's shared runtime is the one swiftc's -sanitize= is built against.  An
  # embedded build has no runtime to see, and stays embedded.
  message(STATUS "qtbus: QTBUS_SANITIZE=${QTBUS_SANITIZE} builds on the shared Swift runtime")
  set(QTBUS_SWIFT_RUNTIME shared)
endif()
message(STATUS "qtbus: Swift runtime of libqtbus.so: ${QTBUS_SWIFT_RUNTIME}")

cmake_host_system_information(RESULT _cores QUERY NUMBER_OF_LOGICAL_CORES)
set(QTBUS_SWIFT_THREADS ${_cores} CACHE STRING "LLVM threads of the whole-module Swift compile (>= 1)")

set(_engine ${PROJECT_SOURCE_DIR}/Sources/QTBusEngine)
set(_shims  ${PROJECT_SOURCE_DIR}/Sources/CQtbusShims)

# Sources/QTBusEngine: one folder per layer, lowest first.  A file calls the files of its
# own layer and of the layers below it, but for the hooks scripts/layers.py names; that
# script reads this list, checks the calls, and draws the layers for the README.  The
# files are whatever the folders hold (SwiftPM takes them the same way).
set(QTBUS_ENGINE_LAYERS Primitives Events Store RegistryChanges Dispatch Features Boundary)
set(QTBUS_SWIFT_SOURCES)
foreach(_layer IN LISTS QTBUS_ENGINE_LAYERS)
  file(GLOB _files CONFIGURE_DEPENDS ${_engine}/${_layer}/*.swift)
  list(SORT _files)
  list(APPEND QTBUS_SWIFT_SOURCES ${_files})
endforeach()
file(GLOB_RECURSE _on_disk CONFIGURE_DEPENDS ${_engine}/*.swift)
foreach(_f IN LISTS _on_disk)
  if(NOT _f IN_LIST QTBUS_SWIFT_SOURCES)
    message(FATAL_ERROR "${_f} is in no layer folder of Sources/QTBusEngine (QTBUS_ENGINE_LAYERS)")
  endif()
endforeach()

# Sources/CQtbusShims: position-independent code with hidden visibility, so its helpers
# (qtshim_*: a prefix of their own, so that no pattern meant for the C ABI's qtbus_*
# matches them) never leak into the ABI.  A static archive rather than an OBJECT library:
# CMake 3.25 compiles and links a Swift target in one swiftc call that leaves out
# $<TARGET_OBJECTS>, but it does pass archives.
add_library(qtbus_shims STATIC
  ${_shims}/shims.c
  ${_shims}/status.c
  ${_shims}/misuse.c
  ${_shims}/engines.c
  ${_shims}/probes.c
  ${_shims}/trace.c
  ${_shims}/tls.c)
target_include_directories(qtbus_shims PRIVATE ${_shims}/include ${PROJECT_SOURCE_DIR}/include)
set_target_properties(qtbus_shims PROPERTIES
  C_STANDARD 11
  C_STANDARD_REQUIRED ON
  C_EXTENSIONS ON
  POSITION_INDEPENDENT_CODE ON
  C_VISIBILITY_PRESET hidden)
target_compile_options(qtbus_shims PRIVATE
  $<$<C_COMPILER_ID:GNU,Clang>:-Wall -Wextra>)

# No initial-exec thread-local anywhere in the library (QTSHIM_THREAD_LOCAL in
# qtbus_shims.h): a library with any needs its whole TLS block (libdispatch's included)
# in glibc's static-TLS surplus, which a dlopen after start-up may not find.  The C that
# swiftc compiles from qtbus_shims.h sees the same definition.  The hot accessors, in
# tls.c, reach their variables through TLS descriptors on x86-64 (aarch64's default).
set(QTBUS_TLS_FLAGS -DQTBUS_TLS_DLOPEN_SAFE)
target_compile_options(qtbus_shims PRIVATE ${QTBUS_TLS_FLAGS})
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set_source_files_properties(${_shims}/tls.c PROPERTIES COMPILE_OPTIONS -mtls-dialect=gnu2)
endif()

# libffi calls typed signal handlers (signals.c).  Found through pkg-config (Debian:
# libffi-dev).  Linked statically by default, from the position-independent archive
# Debian ships beside the shared library (libffi_pic.a; libffi.a is not PIC and cannot
# go into a shared library), with its symbols kept local: the library's NEEDED list
# stays libc, libm, libstdc++, libgcc_s and the loader (a C program needs no package
# beyond libqtbus's), and a process that loads another libffi sees no clash.  OFF links
# the shared libffi instead; qtbus.pc then lists it in Requires.private and the Debian
# package depends on it.
find_package(PkgConfig REQUIRED)
pkg_check_modules(QTBUS_FFI REQUIRED libffi)
option(QTBUS_STATIC_LIBFFI "Link libffi into libqtbus.so (libffi_pic.a); OFF: depend on the shared libffi" ON)
if(QTBUS_STATIC_LIBFFI)
  pkg_get_variable(_ffi_libdir libffi libdir)
  find_library(QTBUS_LIBFFI_PIC NAMES libffi_pic.a HINTS ${_ffi_libdir} ${QTBUS_FFI_LIBRARY_DIRS} NO_DEFAULT_PATH)
  find_library(QTBUS_LIBFFI_PIC NAMES libffi_pic.a)
  if(NOT QTBUS_LIBFFI_PIC)
    message(FATAL_ERROR "qtbus: libffi_pic.a not found (Debian's libffi-dev has it); "
                        "install it or configure with -DQTBUS_STATIC_LIBFFI=OFF")
  endif()
  set(QTBUS_FFI_LINK ${QTBUS_LIBFFI_PIC})
else()
  set(QTBUS_FFI_LINK ${QTBUS_FFI_LINK_LIBRARIES})
endif()

# signals.c defines C ABI functions (qtbus_signal_emit takes varargs, which Swift cannot
# define; qtbus_signal_check is its reader's query), so it is compiled into the library itself: the shims' archive would have its
# symbols made local by --exclude-libs ALL (the embedded and static variants).
add_library(qtbus SHARED ${QTBUS_SWIFT_SOURCES} ${_shims}/signals.c)
set_source_files_properties(${_shims}/signals.c PROPERTIES
  COMPILE_OPTIONS "$<$<C_COMPILER_ID:GNU,Clang>:-Wall;-Wextra>")
add_library(qtbus::qtbus ALIAS qtbus)
target_include_directories(qtbus
  PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE
    # `import CQtbusShims` (module.modulemap next to qtbus_shims.h).
    $<BUILD_INTERFACE:${_shims}/include>)
target_compile_options(qtbus PRIVATE
  "$<$<COMPILE_LANGUAGE:C>:${QTBUS_TLS_FLAGS}>")
foreach(_flag IN LISTS QTBUS_TLS_FLAGS)
  target_compile_options(qtbus PRIVATE "$<$<COMPILE_LANGUAGE:Swift>:SHELL:-Xcc ${_flag}>")
endforeach()
target_compile_options(qtbus PRIVATE
  # One frontend job sees every file: cross-file inlining and specialization, and the
  # optimizer knows every use of internal declarations.  -num-threads makes
  # that job write one object per source file (LLVM runs in parallel), which are the
  # outputs CMake 3.25 declares to Ninja; with a single object Ninja would consider the
  # library out of date on every build.
  $<$<COMPILE_LANGUAGE:Swift>:-wmo>
  # The engine's Swift entry points are `package`: the Swift API of this package sees
  # them (SwiftPM passes the package's name), nothing else does.
  "$<$<COMPILE_LANGUAGE:Swift>:SHELL:-package-name qtbus>"
  "$<$<COMPILE_LANGUAGE:Swift>:SHELL:-num-threads ${QTBUS_SWIFT_THREADS}>"
  # The engine needs neither _Concurrency nor _StringProcessing; importing them
  # implicitly would make every C program load libswift_Concurrency,
  # libswift_StringProcessing and libswift_RegexParser (bench-c's "start-up added"
  # row).  Code that needs them must import them explicitly.
  "$<$<COMPILE_LANGUAGE:Swift>:SHELL:-Xfrontend -disable-implicit-concurrency-module-import>"
  "$<$<COMPILE_LANGUAGE:Swift>:SHELL:-Xfrontend -disable-implicit-string-processing-module-import>"
  # Dynamic exclusivity checks guard Swift class properties and globals; the engine's
  # shared state is raw memory behind its own lock and epochs, so the checks protect
  # nothing there and cost a runtime call per access (bench-c's dispatch rows).
  "$<$<COMPILE_LANGUAGE:Swift>:-enforce-exclusivity=unchecked>")
target_link_options(qtbus PRIVATE
  "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/qtbus.map"
  # The driver's own -rpath to the toolchain is never wanted: the embedded and static
  # variants need none, the shared one sets its RUNPATH below.
  "$<$<LINK_LANGUAGE:Swift>:-no-toolchain-stdlib-rpath>"
  # GNU ld rather than the driver's gold: gold keeps the thread-local variables that
  # initial-exec TLS relocations name (the C glue's, libdispatch's) in .dynsym, as
  # LOCAL entries that nm -D still lists; ld leaves them out.
  "$<$<LINK_LANGUAGE:Swift>:-use-ld=bfd>")
# CMake adds the C compiler's own link libraries (-lgcc_s -lc, without --as-needed) to
# a Swift link that has C sources, which put libgcc_s in NEEDED though nothing comes
# from it; the Swift driver links libc and libgcc itself.
set(CMAKE_C_IMPLICIT_LINK_LIBRARIES "")
if(NOT QTBUS_SANITIZE)
  # Every symbol resolved at link time (sanitizer builds leave the runtime's to the
  # executable).
  target_link_options(qtbus PRIVATE "LINKER:-z,defs")
endif()
target_include_directories(qtbus PRIVATE ${QTBUS_FFI_INCLUDE_DIRS})
set_target_properties(qtbus PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS ON C_VISIBILITY_PRESET hidden)
target_link_libraries(qtbus PRIVATE qtbus_shims ${QTBUS_FFI_LINK})
if(QTBUS_STATIC_LIBFFI)
  target_link_options(qtbus PRIVATE "LINKER:--exclude-libs,libffi_pic.a")
endif()

set_target_properties(qtbus PROPERTIES
  OUTPUT_NAME qtbus
  Swift_MODULE_NAME QTBusEngine
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/qtbus.map
  # The same RUNPATH in the build tree and once installed, so install never rewrites
  # the library (set below for the shared-runtime variant only).
  BUILD_WITH_INSTALL_RPATH ON)

# The toolchain's static archives (libdispatch.a, libBlocksRuntime.a) sit in
# lib/swift_static/linux beside its shared runtime's lib/swift/linux.
get_filename_component(_swift_static_dir "${QTBUS_SWIFT_RUNTIME_DIR}/../../swift_static/linux" ABSOLUTE)

if(QTBUS_SWIFT_RUNTIME STREQUAL "embedded")
  # A toolchain without Embedded Swift for this target fails here, with the way out,
  # rather than in the middle of the engine's compile.
  if(NOT DEFINED CACHE{QTBUS_EMBEDDED_SWIFT_WORKS})
    file(WRITE ${PROJECT_BINARY_DIR}/embedded-check.swift "@_cdecl(\"qtbus_embedded_check\") public func check() -> Int32 { 0 }\n")
    execute_process(
      COMMAND ${CMAKE_Swift_COMPILER} -enable-experimental-feature Embedded -wmo -parse-as-library
              -typecheck ${PROJECT_BINARY_DIR}/embedded-check.swift
      RESULT_VARIABLE _embedded_rc OUTPUT_QUIET ERROR_VARIABLE _embedded_err)
    if(NOT _embedded_rc EQUAL 0)
      message(FATAL_ERROR "qtbus: ${CMAKE_Swift_COMPILER} cannot compile Embedded Swift for this target "
                          "(${_embedded_err}); configure with -DQTBUS_SWIFT_RUNTIME=static (the full Swift "
                          "runtime linked into libqtbus.so) or shared")
    endif()
    set(QTBUS_EMBEDDED_SWIFT_WORKS ON CACHE INTERNAL "the Swift compiler compiles Embedded Swift")
  endif()
  # Embedded Swift: the standard library's code the engine uses is compiled into it,
  # and no runtime is linked (the driver, told the mode at link time too, adds neither
  # the runtime's libraries nor its start-up object).  libdispatch and BlocksRuntime
  # (C) come from the toolchain's static archives, their symbols kept local by
  # --exclude-libs ALL and the version script.  NEEDED is then libc and the loader (and
  # libffi with QTBUS_STATIC_LIBFFI=OFF).
  target_compile_options(qtbus PRIVATE
    "$<$<COMPILE_LANGUAGE:Swift>:SHELL:-enable-experimental-feature Embedded>")
  target_link_options(qtbus PRIVATE
    "$<$<LINK_LANGUAGE:Swift>:SHELL:-enable-experimental-feature Embedded>")
  foreach(_archive dispatch BlocksRuntime)
    if(NOT EXISTS "${_swift_static_dir}/lib${_archive}.a")
      message(FATAL_ERROR "qtbus: ${_swift_static_dir}/lib${_archive}.a not found (the toolchain's static "
                          "libdispatch); configure with -DQTBUS_SWIFT_RUNTIME=static or shared")
    endif()
  endforeach()
  target_link_libraries(qtbus PRIVATE
    "${_swift_static_dir}/libdispatch.a" "${_swift_static_dir}/libBlocksRuntime.a")
  target_link_options(qtbus PRIVATE "LINKER:--exclude-libs,ALL")
elseif(QTBUS_SWIFT_RUNTIME STREQUAL "static")
  # The Swift runtime, libdispatch and BlocksRuntime are linked into libqtbus.so
  # (swiftc's static-stdlib-args.lnk: -lswiftCore -ldispatch -lBlocksRuntime from
  # lib/swift_static, hidden with --exclude-libs ALL), and the version script keeps
  # every one of their symbols local.  NEEDED is then libc, libm, libstdc++, libgcc_s
  # and the dynamic loader only: a C program runs where no Swift toolchain is installed.
  # The process may hold another Swift runtime (a Swift program, another library); the
  # two never see each other, since nothing of this one is exported.
  target_link_options(qtbus PRIVATE "$<$<LINK_LANGUAGE:Swift>:-static-stdlib>")
else()
  # The toolchain's shared runtime: libswiftCore.so, libswiftGlibc.so, libdispatch.so
  # (the C glue calls libdispatch's C entry points directly), found through RUNPATH at
  # the toolchain that built the library.  For systems that ship that runtime at that
  # path.
  target_link_libraries(qtbus PRIVATE dispatch)
  target_link_directories(qtbus PRIVATE ${QTBUS_SWIFT_RUNTIME_DIR})
  set_target_properties(qtbus PROPERTIES INSTALL_RPATH "${QTBUS_SWIFT_RUNTIME_DIR}")
endif()

if(QTBUS_SANITIZE STREQUAL "address")
  # Swift has no UBSan; the C glue gets it alongside ASan.
  target_compile_options(qtbus_shims PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
  target_compile_options(qtbus PRIVATE $<$<COMPILE_LANGUAGE:C>:-fsanitize=address,undefined -fno-omit-frame-pointer>)
  target_compile_options(qtbus PRIVATE $<$<COMPILE_LANGUAGE:Swift>:-sanitize=address>)
  target_link_options(qtbus PRIVATE
    $<$<LINK_LANGUAGE:Swift>:-sanitize=address> $<$<LINK_LANGUAGE:C>:-fsanitize=address>)
elseif(QTBUS_SANITIZE STREQUAL "thread")
  target_compile_options(qtbus_shims PRIVATE -fsanitize=thread)
  target_compile_options(qtbus PRIVATE $<$<COMPILE_LANGUAGE:C>:-fsanitize=thread>)
  # Swift reports inout arguments as writes; the engine is written so that those
  # reports cannot collide (UnsafeMutablePointer.field in
  # Sources/QTBusEngine/Primitives/Lock.swift explains how).
  target_compile_options(qtbus PRIVATE $<$<COMPILE_LANGUAGE:Swift>:-sanitize=thread>)
  target_link_options(qtbus PRIVATE
    $<$<LINK_LANGUAGE:Swift>:-sanitize=thread> $<$<LINK_LANGUAGE:C>:-fsanitize=thread>)
elseif(QTBUS_SANITIZE)
  message(FATAL_ERROR "QTBUS_SANITIZE must be empty, address or thread (got '${QTBUS_SANITIZE}')")
endif()
