target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/dot.hpp
  ${CMAKE_CURRENT_LIST_DIR}/entrywise.hpp
  ${CMAKE_CURRENT_LIST_DIR}/spgemm.hpp
  ${CMAKE_CURRENT_LIST_DIR}/transpose.hpp)
target_sources(tessera_local PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/dot.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spgemm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transpose.cpp)
