# Package config so an app can find_package(MMPI) and link MMPI::comm,
# MMPI::qml and the rest (README, "Using MMPI in an app").
include(CMakePackageConfigHelpers)
install(EXPORT MMPITargets NAMESPACE MMPI:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/MMPI)
configure_package_config_file(cmake/MMPIConfig.cmake.in
    ${PROJECT_BINARY_DIR}/MMPIConfig.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/MMPI
    PATH_VARS MMPI_PLUGIN_INSTALL_DIR MMPI_QML_INSTALL_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/MMPIConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/MMPIConfig.cmake ${PROJECT_BINARY_DIR}/MMPIConfigVersion.cmake
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/MMPI)
