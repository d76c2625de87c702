target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/error.hpp
  ${CMAKE_CURRENT_LIST_DIR}/half.hpp
  ${CMAKE_CURRENT_LIST_DIR}/host_array.hpp
  ${CMAKE_CURRENT_LIST_DIR}/precision.hpp
  ${CMAKE_CURRENT_LIST_DIR}/host_device.hpp
  ${CMAKE_CURRENT_LIST_DIR}/host_ranges.hpp
  ${CMAKE_CURRENT_LIST_DIR}/host_offsets.hpp
  ${CMAKE_CURRENT_LIST_DIR}/host_sort_unique.hpp
  ${CMAKE_CURRENT_LIST_DIR}/page_faults.hpp
  ${CMAKE_CURRENT_LIST_DIR}/backend.hpp
  ${CMAKE_CURRENT_LIST_DIR}/step_trace.hpp
  ${CMAKE_CURRENT_LIST_DIR}/stopwatch.hpp)
target_sources(tessera_local PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/precision.cpp
  ${CMAKE_CURRENT_LIST_DIR}/backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_ranges.cpp
  ${CMAKE_CURRENT_LIST_DIR}/page_faults.cpp
  ${CMAKE_CURRENT_LIST_DIR}/step_trace.cpp)
