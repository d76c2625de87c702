# The baseline solvers `tessera-amg --compare` runs beside Tessera: each compiled only where its
# library was found; unavailable.cpp stands in for the missing ones (InputError when asked for).
add_library(tessera_baselines STATIC
  ${CMAKE_CURRENT_LIST_DIR}/baseline.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compare.cpp
  ${CMAKE_CURRENT_LIST_DIR}/unavailable.cpp)
target_link_libraries(tessera_baselines PUBLIC tessera_local MPI::MPI_CXX nlohmann_json::nlohmann_json)
target_include_directories(tessera_baselines PUBLIC ${PROJECT_SOURCE_DIR})
if(TESSERA_HAVE_HYPRE)
  target_sources(tessera_baselines PRIVATE ${CMAKE_CURRENT_LIST_DIR}/hypre_boomeramg.cpp)
  target_link_libraries(tessera_baselines PRIVATE tessera_hypre)
endif()
if(TESSERA_HAVE_PETSC)
  target_sources(tessera_baselines PRIVATE ${CMAKE_CURRENT_LIST_DIR}/petsc_gamg.cpp)
  target_link_libraries(tessera_baselines PRIVATE PkgConfig::PETSC)
endif()
target_compile_definitions(tessera_baselines PRIVATE
  TESSERA_HAVE_HYPRE=$<BOOL:${TESSERA_HAVE_HYPRE}> TESSERA_HAVE_PETSC=$<BOOL:${TESSERA_HAVE_PETSC}>)
