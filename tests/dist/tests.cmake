# Distributed layer on the host MPI backend: 1-4 ranks, oversubscribed, each with a TIMEOUT so
# a rank stuck in a collective fails the test instead of hanging CI.
tessera_add_mpi_test(test_dist_partition SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_partition.cpp LIBS tessera_dist)
tessera_add_mpi_test(test_dist_read_matrix_market SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_read_matrix_market.cpp
                     LIBS tessera_dist ZLIB::ZLIB)
tessera_add_mpi_test(test_dist_spmv SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_spmv.cpp LIBS tessera_dist)
tessera_add_mpi_test(test_dist_spgemm SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_spgemm.cpp LIBS tessera_dist)
tessera_add_mpi_test(test_dist_summed_rows SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_summed_rows.cpp LIBS tessera_dist)
# One test of both device transports, against HostTransport: NCCL needs a GPU per rank, the
# host-staged transport runs where ranks share one (and tests the choice between them).
tessera_add_mpi_test(test_dist_nccl_transport GPU OWN_GPU RANKS 1 2 3 4
                     SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_device_transport.cpp LIBS tessera_dist)
tessera_add_mpi_test(test_dist_staged_transport GPU RANKS 1 2 3 4 SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_device_transport.cpp
                     LIBS tessera_dist DEFINES TESSERA_TEST_STAGED_TRANSPORT=1)
tessera_add_mpi_test(test_dist_unaligned_partition SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_unaligned_partition.cpp LIBS tessera_dist)
tessera_add_mpi_test(test_dist_device_spgemm GPU RANKS 1 2 3 4 SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_device_spgemm.cpp LIBS tessera_dist)
tessera_add_mpi_test(test_dist_device_spmv GPU RANKS 1 2 3 4 SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_device_spmv.cpp LIBS tessera_dist)
tessera_add_mpi_test(test_dist_device_whole_matrix GPU RANKS 1 2 3 4 SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_device_whole_matrix.cpp LIBS tessera_dist)
tessera_add_mpi_test(test_dist_device_numeric GPU RANKS 1 2 3 4 SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_device_dist_numeric.cpp LIBS tessera_dist)
tessera_add_mpi_test(test_dist_matrix_assembly SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_dist_matrix_assembly.cpp LIBS tessera_dist)
tessera_add_mpi_test(test_dist_peer_halo GPU OWN_GPU RANKS 1 2 3 4 SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_peer_halo_exchange.cpp LIBS tessera_dist)
