target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/generators.hpp)
# implementation files are listed below by the folder's owner
