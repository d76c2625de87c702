# CUDA backend. Headers here include only cuda_runtime_api.h, so host (.cpp) code such as
# tests and drivers can hold device matrices; kernels live in the .cu files.
target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/check.hpp
  ${CMAKE_CURRENT_LIST_DIR}/device_buffer.hpp
  ${CMAKE_CURRENT_LIST_DIR}/device_matrix.hpp)
target_sources(tessera_local PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/device_buffer.cu)
