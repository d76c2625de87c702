target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/generators.hpp)
# implementation files are listed below by the folder's owner
target_sources(tessera_local PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/spec.cpp
  ${CMAKE_CURRENT_LIST_DIR}/generators.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stencil.cpp
  ${CMAKE_CURRENT_LIST_DIR}/elasticity.cpp
  ${CMAKE_CURRENT_LIST_DIR}/frame.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rmat.cpp
  ${CMAKE_CURRENT_LIST_DIR}/random_graph.cpp)
