target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/kernels.hpp)
# implementation files (spgemm_csr.cpp, spgemm_tiles.cpp, ...) are listed below by their owner
target_sources(tessera_local PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/gustavson_row.hpp  # internal: ref::spgemm's row step, shared with local/host
  ${CMAKE_CURRENT_LIST_DIR}/spgemm_csr.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spgemm_tiles.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spmv.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spmm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transpose.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ptap.cpp)
