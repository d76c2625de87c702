target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/matrix_market.hpp
  ${CMAKE_CURRENT_LIST_DIR}/matrix_market_ranges.hpp)
# implementation files are listed below by the folder's owner
target_sources(tessera_local PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/gz_line_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/matrix_market_stream.cpp
  ${CMAKE_CURRENT_LIST_DIR}/matrix_market_ranges.cpp
  ${CMAKE_CURRENT_LIST_DIR}/matrix_market_read.cpp
  ${CMAKE_CURRENT_LIST_DIR}/matrix_market_write.cpp)
