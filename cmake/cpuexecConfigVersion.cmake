# Version check of libcpuexec's CMake package (generated from
# cmake/cpuexecConfigVersion.cmake.in). Compatible when the version is at
# least the one asked for with the same major version; before 1.0, the same
# minor version too (0.x releases may break the interface).
set(PACKAGE_VERSION "@PACKAGE_VERSION@")
set(PACKAGE_VERSION_COMPATIBLE FALSE)
set(PACKAGE_VERSION_EXACT FALSE)
if(NOT PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION)
  string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _cpuexec_mm "${PACKAGE_VERSION}")
  set(_cpuexec_major "${CMAKE_MATCH_1}")
  set(_cpuexec_minor "${CMAKE_MATCH_2}")
  if(PACKAGE_FIND_VERSION_MAJOR STREQUAL _cpuexec_major)
    if(NOT _cpuexec_major STREQUAL "0" OR PACKAGE_FIND_VERSION_MINOR STREQUAL _cpuexec_minor)
      set(PACKAGE_VERSION_COMPATIBLE TRUE)
    endif()
  endif()
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
# A 32-bit library does not suit a 64-bit project, and the reverse.
if(NOT CMAKE_SIZEOF_VOID_P STREQUAL "" AND NOT CMAKE_SIZEOF_VOID_P STREQUAL "@CPUEXEC_SIZEOF_VOID_P@")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif()
