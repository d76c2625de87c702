target_sources(tessera_amg PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/options.hpp
  ${CMAKE_CURRENT_LIST_DIR}/level_ops.hpp
  ${CMAKE_CURRENT_LIST_DIR}/input_check.hpp
  ${CMAKE_CURRENT_LIST_DIR}/strength.hpp
  ${CMAKE_CURRENT_LIST_DIR}/strength_rule.hpp
  ${CMAKE_CURRENT_LIST_DIR}/node_hashes.hpp
  ${CMAKE_CURRENT_LIST_DIR}/aggregation.hpp
  ${CMAKE_CURRENT_LIST_DIR}/near_null_space.hpp
  ${CMAKE_CURRENT_LIST_DIR}/separate_kinds.hpp
  ${CMAKE_CURRENT_LIST_DIR}/tentative_prolongator.hpp
  ${CMAKE_CURRENT_LIST_DIR}/lanczos.hpp
  ${CMAKE_CURRENT_LIST_DIR}/eigen_estimate.hpp
  ${CMAKE_CURRENT_LIST_DIR}/filtered_operator.hpp
  ${CMAKE_CURRENT_LIST_DIR}/prolongator_smoothing.hpp
  ${CMAKE_CURRENT_LIST_DIR}/smoother.hpp
  ${CMAKE_CURRENT_LIST_DIR}/coarse_solver.hpp
  ${CMAKE_CURRENT_LIST_DIR}/hierarchy.hpp
  ${CMAKE_CURRENT_LIST_DIR}/hierarchy_stats.hpp
  ${CMAKE_CURRENT_LIST_DIR}/cycle.hpp
  ${CMAKE_CURRENT_LIST_DIR}/krylov.hpp
  ${CMAKE_CURRENT_LIST_DIR}/fgmres_iteration.hpp)
target_sources(tessera_amg PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/options.cpp
  ${CMAKE_CURRENT_LIST_DIR}/level_ops.cpp
  ${CMAKE_CURRENT_LIST_DIR}/input_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/strength.cpp
  ${CMAKE_CURRENT_LIST_DIR}/aggregation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mis2_rules.hpp  # internal: the per-node aggregation rules, shared with amg/dist and amg/cuda
  ${CMAKE_CURRENT_LIST_DIR}/near_null_space.cpp
  ${CMAKE_CURRENT_LIST_DIR}/separate_kinds.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tentative_prolongator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/eigen_estimate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/filtered_operator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/prolongator_smoothing.cpp
  ${CMAKE_CURRENT_LIST_DIR}/smoother.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coarse_solver.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hierarchy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hierarchy_stats.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cycle.cpp
  ${CMAKE_CURRENT_LIST_DIR}/krylov_common.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pcg.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fgmres.cpp)
# The distributed AMG (amg/dist/): the same phases on dist::DistMatrix over MPI ranks.
target_sources(tessera_amg PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_exchange.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_level_ops.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_strength.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_aggregation.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/device_operator_slot.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_graph_phases.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_tentative.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_tentative_steps.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_smoothing.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_filtered_operator.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_eigen_estimate.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_setup_backend.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_hierarchy.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_cycle.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_amg.hpp)
target_sources(tessera_amg PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_level_ops.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_strength.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_aggregation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_graph_phases.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_tentative.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_tentative_steps.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_smoothing.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_filtered_operator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_eigen_estimate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_hierarchy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_cycle.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist/dist_amg.cpp)
# GPU backend (amg/cuda/): setup products on the tile SpGEMM; the cycle and PCG on the device,
# written once over DeviceOperator for one GPU and for many ranks (dist/cuda's device SpMV).
if(TESSERA_HAVE_CUDA)
  target_link_libraries(tessera_amg PUBLIC CUDA::cudart)
  set_target_properties(tessera_amg PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
  target_sources(tessera_amg PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_level_ops.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_operator.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_vcycle.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_cycle.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_pcg.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_fgmres.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_krylov_common.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_pcg_steps.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_operator.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_eigen_estimate.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_operator_slot.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_held_extended_a.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_smoothing_replay.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_transfer.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_setup_backend.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_amg.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/replicated_levels.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/timed_operator.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_setup_phases.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_graph_phases.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_tentative.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_node_offsets.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/listed_row_offsets.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_smoothing.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_operator_check.hpp)
  target_sources(tessera_amg PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_level_ops.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_operator.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_vcycle.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_cycle.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_pcg.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_fgmres.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_krylov_common.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_pcg_steps.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_operator.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_eigen_estimate.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_operator_check.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_operator_slot.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_held_extended_a.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_smoothing_replay.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_transfer.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_setup_backend.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_amg.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/replicated_levels.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/timed_operator.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_strength.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_aggregation.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_tentative.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_graph_phases.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_tentative.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/listed_row_offsets.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_node_offsets.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dist_device_smoothing.cu)
  # Device setup (device_hierarchy.hpp): the whole hierarchy built and kept on the GPU.
  target_sources(tessera_amg PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_row_kernels.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_eigen_estimate.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_filtered_operator.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_prolongator.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dense_inverse.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_coarse_solver.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_hierarchy.hpp)
  target_sources(tessera_amg PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_row_kernels.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_eigen_estimate.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_filtered_operator.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_prolongator.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/dense_inverse.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_coarse_solver.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_hierarchy.cpp)
  # The coarsest level's dense Cholesky / LU (device_coarse_solver.hpp).
  target_link_libraries(tessera_amg PRIVATE CUDA::cusolver)
endif()
# The device twins (amg/cuda/device_strength.cu, device_tentative.cu) reproduce these host phases
# bit for bit: they spell every product and sum as __dmul_rn/__dadd_rn so nvcc cannot fuse them.
# The host must not fuse either: a compiler that contracts a*b+c into an FMA (g++'s default
# -ffp-contract=fast, on targets with FMA) changes the strength values and QR factors in the last
# bit, and the device-vs-host level-by-level comparison would no longer be exact. The distributed
# strength (dist/dist_strength.cpp) is one graph with its owned block from the device kernels and
# its cross-rank edges from the host, so it follows the same rule.
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/strength.cpp ${CMAKE_CURRENT_LIST_DIR}/tentative_prolongator.cpp
                              ${CMAKE_CURRENT_LIST_DIR}/dist/dist_strength.cpp
                              PROPERTIES COMPILE_OPTIONS -ffp-contract=off)
endif()
