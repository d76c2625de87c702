target_sources(tessera_driver_common PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/driver_main.cpp
  ${CMAKE_CURRENT_LIST_DIR}/huge_pages.cpp
  ${CMAKE_CURRENT_LIST_DIR}/matrix_source.cpp
  ${CMAKE_CURRENT_LIST_DIR}/overflow_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist_source.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist_report.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trace_report.cpp)
