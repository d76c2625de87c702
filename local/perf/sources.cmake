# Performance models (host code): bytes moved, arithmetic intensity, predicted time.
target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/spmv_model.hpp)
target_sources(tessera_local PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/spmv_model.cpp)
