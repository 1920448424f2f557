# Installs lib/libqtbus.so{,.0,.0.1.0}, include/qtbus.h, lib/pkgconfig/qtbus.pc and
# lib/cmake/qtbus/ (find_package(qtbus) -> qtbus::qtbus).
set(QTBUS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/qtbus)

install(TARGETS qtbus EXPORT qtbusTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    NAMELINK_COMPONENT Development)
install(FILES ${PROJECT_SOURCE_DIR}/include/qtbus.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT Development)

configure_file(${PROJECT_SOURCE_DIR}/pkgconfig/qtbus.pc.in
  ${PROJECT_BINARY_DIR}/qtbus.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/qtbus.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT Development)

install(EXPORT qtbusTargets
  NAMESPACE qtbus::
  FILE qtbusTargets.cmake
  DESTINATION ${QTBUS_CMAKE_DIR}
  COMPONENT Development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/qtbusConfig.cmake.in
  ${PROJECT_BINARY_DIR}/qtbusConfig.cmake
  INSTALL_DESTINATION ${QTBUS_CMAKE_DIR})
# 0.x: a new minor version may change the API, so only 0.1.* satisfies find_package(qtbus 0.1).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/qtbusConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
    ${PROJECT_BINARY_DIR}/qtbusConfig.cmake
    ${PROJECT_BINARY_DIR}/qtbusConfigVersion.cmake
  DESTINATION ${QTBUS_CMAKE_DIR}
  COMPONENT Development)
