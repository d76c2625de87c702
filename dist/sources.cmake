target_sources(tessera_dist PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/mpi_env.hpp)
target_sources(tessera_dist PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/mpi_env.cpp)
