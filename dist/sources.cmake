# dist/ sources: one concept per file.
target_sources(tessera_dist PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/mpi_env.hpp
  ${CMAKE_CURRENT_LIST_DIR}/host_threads.hpp
  ${CMAKE_CURRENT_LIST_DIR}/backend_choice.hpp
  ${CMAKE_CURRENT_LIST_DIR}/transport.hpp
  ${CMAKE_CURRENT_LIST_DIR}/communicator.hpp
  ${CMAKE_CURRENT_LIST_DIR}/collective_call.hpp
  ${CMAKE_CURRENT_LIST_DIR}/partition.hpp
  ${CMAKE_CURRENT_LIST_DIR}/read_matrix_market.hpp
  ${CMAKE_CURRENT_LIST_DIR}/halo_plan.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist_matrix.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dist_vector.hpp
  ${CMAKE_CURRENT_LIST_DIR}/stats.hpp
  ${CMAKE_CURRENT_LIST_DIR}/spmv.hpp
  ${CMAKE_CURRENT_LIST_DIR}/remote_rows.hpp
  ${CMAKE_CURRENT_LIST_DIR}/extended_operand.hpp
  ${CMAKE_CURRENT_LIST_DIR}/compact_spgemm.hpp
  ${CMAKE_CURRENT_LIST_DIR}/spgemm.hpp
  ${CMAKE_CURRENT_LIST_DIR}/transpose.hpp
  ${CMAKE_CURRENT_LIST_DIR}/transpose_values.hpp
  ${CMAKE_CURRENT_LIST_DIR}/summed_rows.hpp
  ${CMAKE_CURRENT_LIST_DIR}/ptap.hpp)
target_sources(tessera_dist PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/mpi_env.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_threads.cpp
  ${CMAKE_CURRENT_LIST_DIR}/backend_choice.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transport.cpp
  ${CMAKE_CURRENT_LIST_DIR}/communicator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collective_call.cpp
  ${CMAKE_CURRENT_LIST_DIR}/partition.cpp
  ${CMAKE_CURRENT_LIST_DIR}/read_matrix_market.cpp
  ${CMAKE_CURRENT_LIST_DIR}/halo_plan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dist_matrix.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stats.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spmv.cpp
  ${CMAKE_CURRENT_LIST_DIR}/remote_rows.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compact_spgemm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spgemm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transpose.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transpose_values.cpp
  ${CMAKE_CURRENT_LIST_DIR}/summed_rows.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ptap.cpp)
if(TESSERA_HAVE_CUDA)
  target_sources(tessera_dist PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
    # The rank's GPU and the device transports: NCCL (one GPU per rank; the link to
    # tessera_nccl is in dist/CMakeLists.txt) or host-staged MPI (ranks sharing a GPU).
    ${CMAKE_CURRENT_LIST_DIR}/rank_device.hpp
    ${CMAKE_CURRENT_LIST_DIR}/device_transport.hpp
    ${CMAKE_CURRENT_LIST_DIR}/nccl_transport.hpp
    ${CMAKE_CURRENT_LIST_DIR}/staged_transport.hpp
    # Device products (issue 5): every vector on the rank's GPU, NCCL halo exchange
    # overlapped with the local block.
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_context.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_dist_matrix.hpp
    # The intra-node halo route: CUDA IPC mappings and device flags instead of NCCL.
    ${CMAKE_CURRENT_LIST_DIR}/cuda/halo_route.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/peer_halo_exchange.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_spmv.hpp
    # Rank-local products of DistSpgemm / DistPtap on the rank's GPU (tile SpGEMM or cuSPARSE).
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_local_spgemm.hpp
    # dist::extended_block from a DeviceDistMatrix (the products' A read from a device copy).
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_extended_block.hpp
    # DistPtap's P^T made where P's blocks are (the GPU backend's merge).
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_transposed_block.hpp
    # P and P^T left on the device by that merge, and B_ext assembled from them there.
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_held_operand.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_compact_extended_rows.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_summed_blocks.hpp
    # A matrix gathered whole onto every GPU (the device cycle's replicated coarse levels).
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_whole_matrix.hpp
    # Device-resident numeric phases of DistSpgemm / DistPtap (issue 5): symbolic on the host
    # once, then value gathers, values-only NCCL exchanges and the tile SpGEMM on the device.
    ${CMAKE_CURRENT_LIST_DIR}/cuda/value_maps.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_compact_spgemm.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_dist_spgemm.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_dist_ptap.hpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_transpose_values.hpp)
  target_sources(tessera_dist PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/rank_device.cpp
    ${CMAKE_CURRENT_LIST_DIR}/device_transport.cpp
    ${CMAKE_CURRENT_LIST_DIR}/nccl_transport.cpp
    ${CMAKE_CURRENT_LIST_DIR}/staged_transport.cpp
    # The .cu files hold the pack and value-map kernels; cudart as tessera_local links it.
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_context.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_dist_matrix.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/halo_route.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/peer_halo_exchange.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_spmv.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_local_spgemm.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_extended_block.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_transposed_block.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_compact_extended_rows.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_summed_blocks.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_whole_matrix.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/value_maps.cu
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_compact_spgemm.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_dist_spgemm.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_dist_ptap.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cuda/device_transpose_values.cpp)
  target_link_libraries(tessera_dist PUBLIC CUDA::cudart)
  set_target_properties(tessera_dist PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
endif()
