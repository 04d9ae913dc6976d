# mmpi_add_layer(<layer> SOURCES ... DEPENDS ...)
# One library per layer. Its public headers live in src/<layer>/include/mmpi/<layer>/
# and are visible only to targets that link the layer, so a lower layer that
# includes a higher one fails to build.
function(mmpi_add_layer layer)
    cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
    set(target mmpi_${layer})
    add_library(${target} ${ARG_SOURCES})
    add_library(MMPI::${layer} ALIAS ${target})
    set_target_properties(${target} PROPERTIES
        OUTPUT_NAME mmpi-${layer}
        VERSION ${PROJECT_VERSION}
        SOVERSION ${PROJECT_VERSION_MAJOR}
        EXPORT_NAME ${layer})
    target_include_directories(${target} PUBLIC
        $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
        $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(${target} PUBLIC ${ARG_DEPENDS})
    target_compile_options(${target} PRIVATE -Wall -Wextra)
    install(TARGETS ${target} EXPORT MMPITargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    install(DIRECTORY include/mmpi DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()

# mmpi_vectorize_sources(<file> ...)
# Sources of loops over whole messages that are meant to vectorize (see
# mmpi/core/vectorclones.h): -O3, since -O2 (GCC 12) leaves loops that need
# a runtime alias check scalar.
function(mmpi_vectorize_sources)
    if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
        set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "-O3")
    endif()
endfunction()

# mmpi_add_transport_plugin(<name> [SHARED] CLASS_NAME <factory> SOURCES ... LIBS ...)
# A transport as a Qt plugin. The standard ones are static plugins linked into
# every app through MMPI::transports, so an installed app finds them wherever
# it lives; SHARED makes a module that TransportRegistry finds at run time in
# its search path (a transport of one's own, docs/guide/transports.md).
function(mmpi_add_transport_plugin name)
    cmake_parse_arguments(ARG "SHARED" "CLASS_NAME" "SOURCES;LIBS" ${ARGN})
    set(target mmpi_transport_${name})
    if(ARG_SHARED)
        qt_add_plugin(${target} SHARED CLASS_NAME ${ARG_CLASS_NAME})
    else()
        # Qt makes ${target}_init, whose Q_IMPORT_PLUGIN reaches every
        # executable that links the plugin.
        qt_add_plugin(${target} STATIC CLASS_NAME ${ARG_CLASS_NAME} OUTPUT_TARGETS init)
    endif()
    target_sources(${target} PRIVATE ${ARG_SOURCES})
    target_link_libraries(${target} PRIVATE MMPI::transport ${ARG_LIBS})
    target_compile_options(${target} PRIVATE -Wall -Wextra)
    set_target_properties(${target} PROPERTIES
        LIBRARY_OUTPUT_DIRECTORY ${MMPI_PLUGIN_BUILD_DIR}
        EXPORT_NAME transport_${name})
    if(NOT ARG_SHARED)
        install(TARGETS ${target} ${init} EXPORT MMPITargets
            ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
            OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/mmpi/objects)
    endif()
endfunction()

# mmpi_add_test(<name> SOURCES ... LIBS ... LABELS ... [TIMEOUT s])
function(mmpi_add_test name)
    cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE Qt6::Test ${ARG_LIBS})
    # Helpers every test may share (processrun.h).
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
    add_test(NAME ${name} COMMAND ${name})
    if(NOT ARG_TIMEOUT)
        set(ARG_TIMEOUT 120)
    endif()
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
        ENVIRONMENT "QT_QPA_PLATFORM=offscreen")
endfunction()
