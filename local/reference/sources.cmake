target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/kernels.hpp)
# implementation files (spgemm_csr.cpp, spgemm_tiles.cpp, ...) are listed below by their owner
