# `cmake --install` of the native preset: the headers, the libraries, the
# tracegraph tool, and the CMake package that apps find with
#   find_package(tracegraph CONFIG REQUIRED COMPONENTS native xnnpack)
# and link as tracegraph::sdk, tracegraph::native, tracegraph::xnnpack.
# tracegraphConfig.cmake finds LibTorch (the torch package of a Python, as
# cmake/torch.cmake does here) and links XNNPACK's static libraries, which are
# installed beside ours.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_components sdk)
set(_targets tracegraph_sdk)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/sdk/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TRACEGRAPH_NATIVE)
  list(APPEND _components native)
  list(APPEND _targets tracegraph_native)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/native/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(TARGETS tracegraph RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${CMAKE_SOURCE_DIR}/cmake/torch.cmake RENAME tracegraphTorch.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tracegraph)
  # The installed tool finds the torch package's libraries where they are.
  set_target_properties(tracegraph PROPERTIES INSTALL_RPATH "${TRACEGRAPH_TORCH_DIR}/lib")
endif()
set(TRACEGRAPH_INSTALLED_XNNPACK_LIBS "")
if(TRACEGRAPH_XNNPACK)
  list(APPEND _components xnnpack)
  list(APPEND _targets tracegraph_xnnpack)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/xnnpack/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  get_target_property(_deps tracegraph_xnnpack_deps INTERFACE_LINK_LIBRARIES)
  foreach(lib IN LISTS _deps)
    if(lib MATCHES "\\.a$")
      install(FILES ${lib} DESTINATION ${CMAKE_INSTALL_LIBDIR}/tracegraph)
      get_filename_component(_name ${lib} NAME)
      list(APPEND TRACEGRAPH_INSTALLED_XNNPACK_LIBS ${_name})
    endif()
  endforeach()
endif()

install(TARGETS ${_targets} EXPORT tracegraphTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT tracegraphTargets NAMESPACE tracegraph:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tracegraph)

set(TRACEGRAPH_INSTALLED_COMPONENTS ${_components})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/tracegraphConfig.cmake.in
  ${CMAKE_BINARY_DIR}/tracegraphConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tracegraph)
# 0.x: a minor version may break the API.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tracegraphConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tracegraphConfig.cmake ${CMAKE_BINARY_DIR}/tracegraphConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tracegraph)
