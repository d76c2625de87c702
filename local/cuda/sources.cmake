# CUDA backend. Headers here include only cuda_runtime_api.h, so host (.cpp) code such as
# tests and drivers can hold device matrices; kernels live in the .cu files.
target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/check.hpp
  ${CMAKE_CURRENT_LIST_DIR}/device_buffer.hpp
  ${CMAKE_CURRENT_LIST_DIR}/host_copy.hpp
  ${CMAKE_CURRENT_LIST_DIR}/pinned_host_buffer.hpp
  ${CMAKE_CURRENT_LIST_DIR}/device_matrix.hpp
  ${CMAKE_CURRENT_LIST_DIR}/csr_arrays_upload.hpp)
target_sources(tessera_local PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/device_buffer.cu
  ${CMAKE_CURRENT_LIST_DIR}/host_copy.cu
  ${CMAKE_CURRENT_LIST_DIR}/pinned_host_buffer.cu
  ${CMAKE_CURRENT_LIST_DIR}/csr_arrays_upload.cu)
# Tile SpGEMM (tensor cores), device CSR<->tile conversion, cuSPARSE SpGEMM baseline.
target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/tile_spgemm.hpp
  ${CMAKE_CURRENT_LIST_DIR}/tile_convert.hpp
  ${CMAKE_CURRENT_LIST_DIR}/cusparse_spgemm.hpp)
target_sources(tessera_local PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/tile_spgemm_symbolic.cu
  ${CMAKE_CURRENT_LIST_DIR}/tile_spgemm_plan.cu
  ${CMAKE_CURRENT_LIST_DIR}/tile_spgemm_numeric.cu
  ${CMAKE_CURRENT_LIST_DIR}/tile_compact.cu
  ${CMAKE_CURRENT_LIST_DIR}/tile_convert.cu
  ${CMAKE_CURRENT_LIST_DIR}/cusparse_spgemm.cu)
# SpMV / SpMM / fused smoother / cuSPARSE baseline / bandwidth (issue 4)
target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/spmv_plan.hpp
  ${CMAKE_CURRENT_LIST_DIR}/spmv.hpp
  ${CMAKE_CURRENT_LIST_DIR}/spmm.hpp
  ${CMAKE_CURRENT_LIST_DIR}/row_subset_product.hpp
  ${CMAKE_CURRENT_LIST_DIR}/tile_pattern.hpp
  ${CMAKE_CURRENT_LIST_DIR}/tile_spmm.hpp
  ${CMAKE_CURRENT_LIST_DIR}/dense_layout.hpp
  ${CMAKE_CURRENT_LIST_DIR}/fused_smoother.hpp
  ${CMAKE_CURRENT_LIST_DIR}/vector_ops.hpp
  ${CMAKE_CURRENT_LIST_DIR}/cusparse_spmv.hpp
  ${CMAKE_CURRENT_LIST_DIR}/bandwidth.hpp)
target_sources(tessera_local PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/spmv_plan.cu
  ${CMAKE_CURRENT_LIST_DIR}/spmv.cu
  ${CMAKE_CURRENT_LIST_DIR}/spmm.cu
  ${CMAKE_CURRENT_LIST_DIR}/row_subset_product.cu
  ${CMAKE_CURRENT_LIST_DIR}/tile_pattern.cu
  ${CMAKE_CURRENT_LIST_DIR}/tile_spmm.cu
  ${CMAKE_CURRENT_LIST_DIR}/dense_layout.cu
  ${CMAKE_CURRENT_LIST_DIR}/fused_smoother.cu
  ${CMAKE_CURRENT_LIST_DIR}/vector_ops.cu
  ${CMAKE_CURRENT_LIST_DIR}/cusparse_spmv.cu
  ${CMAKE_CURRENT_LIST_DIR}/bandwidth.cu)
# The device SpGEMM driver (DeviceProduct: tile or cuSPARSE, plans kept or one-shot) and its
# host wrapper (host Csr in, DeviceProduct, host Csr out: AMG setup and dist local products).
target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/device_product.hpp
  ${CMAKE_CURRENT_LIST_DIR}/hash_spgemm.hpp
  ${CMAKE_CURRENT_LIST_DIR}/spgemm_engine_choice.hpp
  ${CMAKE_CURRENT_LIST_DIR}/offload_spgemm.hpp)
target_sources(tessera_local PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/device_product.cu
  ${CMAKE_CURRENT_LIST_DIR}/hash_spgemm.cu
  ${CMAKE_CURRENT_LIST_DIR}/spgemm_engine_choice.cu
  ${CMAKE_CURRENT_LIST_DIR}/offload_spgemm.cpp)
# CUDA graphs of fixed stream work (the AMG cycles, one GPU and distributed) and the stream they run on.
target_sources(tessera_local PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES
  ${CMAKE_CURRENT_LIST_DIR}/stream_graph.hpp
  ${CMAKE_CURRENT_LIST_DIR}/owned_stream.hpp)
target_sources(tessera_local PRIVATE ${CMAKE_CURRENT_LIST_DIR}/stream_graph.cpp
  ${CMAKE_CURRENT_LIST_DIR}/owned_stream.cpp)
