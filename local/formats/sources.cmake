target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/csr.hpp
  ${CMAKE_CURRENT_LIST_DIR}/csr_arrays.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dense.hpp
  ${CMAKE_CURRENT_LIST_DIR}/nonempty_rows.hpp
  ${CMAKE_CURRENT_LIST_DIR}/row_block.hpp
  ${CMAKE_CURRENT_LIST_DIR}/stack_rows.hpp
  ${CMAKE_CURRENT_LIST_DIR}/tile_matrix.hpp
  ${CMAKE_CURRENT_LIST_DIR}/tile_bits.hpp
  ${CMAKE_CURRENT_LIST_DIR}/convert.hpp
  ${CMAKE_CURRENT_LIST_DIR}/footprint.hpp
  ${CMAKE_CURRENT_LIST_DIR}/instantiate.hpp)
target_sources(tessera_local PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/csr.cpp
  ${CMAKE_CURRENT_LIST_DIR}/csr_arrays.cpp
  ${CMAKE_CURRENT_LIST_DIR}/convert.cpp
  ${CMAKE_CURRENT_LIST_DIR}/footprint.cpp
  ${CMAKE_CURRENT_LIST_DIR}/row_block.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stack_rows.cpp)
