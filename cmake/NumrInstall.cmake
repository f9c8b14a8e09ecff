# cmake --install puts headers, the library and a package config in the prefix, so that
# find_package(numr) + target_link_libraries(app numr::numr) works.
include(CMakePackageConfigHelpers)
install(TARGETS numr EXPORT numrTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/numr DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT numrTargets NAMESPACE numr:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/numr)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/numrConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/numrConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/numr)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/numrConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/numrConfig.cmake ${PROJECT_BINARY_DIR}/numrConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/numr)
