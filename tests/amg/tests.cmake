tessera_add_test(test_amg_aggregation SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_aggregation.cpp LIBS tessera_amg)
tessera_add_test(test_amg_prolongator SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_prolongator.cpp LIBS tessera_amg)
tessera_add_test(test_amg_filtered_smoothing SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_filtered_smoothing.cpp
                 LIBS tessera_amg)
tessera_add_test(test_amg_solve SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_solve.cpp LIBS tessera_amg)
tessera_add_test(test_amg_arnoldi SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_arnoldi.cpp LIBS tessera_amg)
tessera_add_test(test_amg_input SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_input.cpp LIBS tessera_amg)
# The --compare baselines (hypre BoomerAMG, PETSc GAMG) called directly, and the driver's
# side-by-side JSON checked by check_compare.cmake; registered only where both libraries exist.
if(TARGET tessera_baselines AND TESSERA_HAVE_HYPRE AND TESSERA_HAVE_PETSC)
  tessera_add_mpi_test(test_amg_baselines SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_baselines.cpp
                       LIBS tessera_baselines)
  foreach(n 1 2 3 4)
    add_test(NAME amg_driver_compare.np${n}
             COMMAND ${CMAKE_COMMAND} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DRANKS=${n} -DDRIVER=$<TARGET_FILE:tessera-amg>
                     -DJSON=${CMAKE_CURRENT_BINARY_DIR}/amg_driver_compare.np${n}.json
                     -P ${CMAKE_CURRENT_LIST_DIR}/check_compare.cmake)
    set_tests_properties(amg_driver_compare.np${n} PROPERTIES LABELS "host;mpi" PROCESSORS ${n} TIMEOUT 300
                         ENVIRONMENT "${TESSERA_TEST_ENV}")
  endforeach()
endif()
# Distributed AMG on the host MPI backend, 1-4 ranks (oversubscribed).
tessera_add_mpi_test(test_dist_amg_hierarchy SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_hierarchy.cpp LIBS tessera_amg)
tessera_add_mpi_test(test_dist_amg_resetup SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_resetup.cpp LIBS tessera_amg)
tessera_add_mpi_test(test_dist_amg_filtered_smoothing
                     SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_filtered_smoothing.cpp LIBS tessera_amg)
# The setup's host loops on several threads a rank give the one-thread hierarchy bit for bit.
if(OpenMP_CXX_FOUND)
  tessera_add_mpi_test(test_dist_amg_host_threads SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_host_threads.cpp
                       LIBS tessera_amg)
endif()
tessera_add_mpi_test(test_dist_amg_device GPU RANKS 1 2 3 4 SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_device_amg.cpp LIBS tessera_amg)
# The lambda_max estimate on the ranks' GPUs against the host's, and a setup that uses it.
tessera_add_mpi_test(test_dist_device_eigen_estimate GPU RANKS 1 2 3 4
                     SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_device_eigen_estimate.cpp LIBS tessera_amg)
tessera_add_mpi_test_variant(test_dist_device_eigen_estimate nccl GPU OWN_GPU ENV TESSERA_HALO_ROUTE=nccl RANKS 2 4)
# The check of each level's operator on the ranks' GPUs against the host check.
tessera_add_mpi_test(test_dist_device_operator_check GPU RANKS 1 2 3 4
                     SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_device_operator_check.cpp LIBS tessera_amg)
# Distributed AMG solve phase on GPUs against the host distributed solve.
tessera_add_mpi_test(test_dist_device_solve SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_device_solve.cpp
                     LIBS tessera_amg GPU RANKS 1 2 3 4)
# The same solves through the NCCL halo route (within one node the default is the peer route).
tessera_add_mpi_test_variant(test_dist_device_solve nccl GPU OWN_GPU ENV TESSERA_HALO_ROUTE=nccl RANKS 2 4)
# And through the host-staged transport where each rank has a GPU of its own (where ranks share
# one, every multi-rank gpu test runs on it already).
tessera_add_mpi_test_variant(test_dist_device_solve staged GPU OWN_GPU ENV TESSERA_DEVICE_TRANSPORT=staged RANKS 2)
# A re-setup's level transfer on the GPUs (P, R and A_c recomputed there) against the host's.
tessera_add_mpi_test(test_dist_device_resetup SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_device_resetup.cpp
                     LIBS tessera_amg GPU RANKS 1 2 3 4)
tessera_add_mpi_test_variant(test_dist_device_resetup nccl GPU OWN_GPU ENV TESSERA_HALO_ROUTE=nccl RANKS 2 4)
# Filtered prolongator smoothing on the GPU backend (graph downloaded, A_F's estimate and product
# on the GPU) against the host backend, setup and re-setups.
tessera_add_mpi_test(test_dist_device_filtered_smoothing
                     SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_device_filtered_smoothing.cpp
                     LIBS tessera_amg GPU RANKS 1 2 3 4)
# cross_rank_strength (the boundary edges the device graph phases take from the host) against
# dist_strength_graph and the serial strength_graph, 1-4 ranks.
tessera_add_mpi_test(test_dist_cross_rank_strength SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_cross_rank_strength.cpp
                     LIBS tessera_amg)
# The distributed graph phases on each rank's GPU (strength graph, MIS-2 aggregation, whole
# hierarchies) against the host ones, exactly.
tessera_add_mpi_test(test_dist_device_graph_phases SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_device_graph_phases.cpp
                     LIBS tessera_amg GPU RANKS 1 2 3 4)
# The tentative prolongator's QR on each rank's GPU against the host's, exactly.
tessera_add_mpi_test(test_dist_device_tentative SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_device_tentative.cpp
                     LIBS tessera_amg GPU RANKS 1 2 3 4)
# The first merge of the smoothed prolongator on each rank's GPU against the host's, exactly.
tessera_add_mpi_test(test_dist_device_smoothing SOURCES ${CMAKE_CURRENT_LIST_DIR}/dist/test_dist_device_smoothing.cpp
                     LIBS tessera_amg GPU RANKS 1 2 3 4)
