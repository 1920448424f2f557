# SPDX-License-Identifier: MIT
# Build-tree checks (ctest in the build directory).  The behaviour tests are CTests/, a
# separate project that uses the *installed* library through pkg-config, as users do
# (scripts/test.sh runs them).
add_test(NAME library-abi
  COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-library.sh
          $<TARGET_FILE:qtbus> ${PROJECT_SOURCE_DIR}/include/qtbus.h
          ${QTBUS_SWIFT_RUNTIME}
          $<IF:$<BOOL:${QTBUS_STATIC_LIBFFI}>,static-libffi,shared-libffi>)

add_executable(qtbus_demo ${PROJECT_SOURCE_DIR}/examples/demo.c)
set_target_properties(qtbus_demo PROPERTIES OUTPUT_NAME qtbus-demo C_STANDARD 11)
target_link_libraries(qtbus_demo PRIVATE qtbus)
add_test(NAME demo COMMAND qtbus_demo)
set_tests_properties(demo PROPERTIES TIMEOUT 60)

if(QTBUS_NATS_BUILT)
  # libqtbus-nats exports exactly qtbus_nats.h's functions.
  add_test(NAME nats-exports
    COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-exports.sh
            $<TARGET_FILE:qtbus_nats> ${PROJECT_SOURCE_DIR}/include/qtbus_nats.h)
  # qtbus_nats.hpp (the bridge's C++ API) compiles alone as C++17 and C++20 with the
  # warnings users build with, as errors, as check-library.sh checks qtbus.hpp.
  find_program(QTBUS_CHECK_CXX NAMES c++ g++ clang++)
  if(QTBUS_CHECK_CXX)
    foreach(std IN ITEMS c++17 c++20)
      add_test(NAME nats-hpp-${std}
        COMMAND ${QTBUS_CHECK_CXX} -std=${std} -Wall -Wextra -pedantic -Werror -fsyntax-only
                -I${PROJECT_SOURCE_DIR}/include -x c++ ${PROJECT_SOURCE_DIR}/include/qtbus_nats.hpp)
    endforeach()
  endif()
endif()
