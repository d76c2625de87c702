# The PETSc plugin proved on PETSc's own KSP tutorials, built unmodified from the sources Debian
# ships in libpetsc3.18-dev-examples, with libtessera_petsc.so loaded by -dll_append:
#   tutorial x {-pc_type tessera, -mat_type tessera -pc_type gamg} x {1, 2, 3, 4 (1, 2, 8 for ex56)} ranks.
# check_petsc_run.py checks the converged reason and the true residual of every solve.
if(TESSERA_HAVE_PETSC)
enable_language(C)
find_package(MPI REQUIRED COMPONENTS C)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(plugin $<TARGET_FILE:tessera_petsc>)
add_test(NAME petsc.register_symbol
         COMMAND sh -c "nm -D --defined-only '${plugin}' | grep -Ew 'T (PetscDLLibraryRegister_tessera_petsc|TesseraPetscRegisterAll)' | wc -l | grep -qx 2")
set_tests_properties(petsc.register_symbol PROPERTIES LABELS "host;petsc")

set(TESSERA_PETSC_TUTORIALS_DIR
    /usr/share/petsc/3.18/share/petsc/examples/src/ksp/ksp/tutorials
    CACHE PATH "PETSc's KSP tutorial sources (Debian: libpetsc3.18-dev-examples)")
set(check ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_petsc_run.py)
set(common -dll_append ${plugin} -ksp_converged_reason -ksp_monitor_true_residual -ksp_rtol 1e-8 -ksp_view)
# What proves the plugin ran: the PC's view, and the Tessera type plus its PtAP (-info line).
set(pc_set -pc_type tessera -pc_tessera_coarse_size 200)  # several levels on these sizes
set(pc_require --require "Tessera smoothed-aggregation AMG")
set(gamg_set -mat_type tessera -dm_mat_type tessera -pc_type gamg -info :mat)
set(gamg_require --require "type: (seq|mpi)aijtessera" --require "Tessera MatProduct PtAP symbolic")

# tutorial  problem options (odd sizes: PETSc's ranges are never multiples of 8)
set(ex2_args -m 41 -n 37)                                          # 2D 5-point Poisson
set(ex45_args -da_grid_x 17 -da_grid_y 15 -da_grid_z 13 -ksp_type cg)  # 3D 7-point Laplacian, DMDA
set(ex55_args -ne 39 -ksp_type cg)                                  # 2D plane strain, soft inclusion
set(ex56_args -ne 9 -use_mat_nearnullspace -two_solves -ksp_type cg)   # 3D elasticity, rigid-body modes
# ex56 needs a perfect-cube rank count beyond 2 (it refuses 4: "npe^{1/3} must be integer").
set(ex2_ranks 1 2 3 4)
set(ex45_ranks 1 2 3 4)
set(ex55_ranks 1 2 3 4)
set(ex56_ranks 1 2 8)

# One tutorial run, ctest name petsc.EX.SET.npNP: the plugin's options ${SET}_set, what
# check_petsc_run.py requires ${SET}_require, the tutorial's own arguments after NP. With
# ${SET}_gpu true the test is labelled gpu and skipped (exit 77) without the CUDA backend or a
# visible GPU.
function(tessera_petsc_tutorial_test ex set np)
  set(name petsc.${ex}.${set}.np${np})
  set(source ${TESSERA_PETSC_TUTORIALS_DIR}/${ex}.c)
  set(labels "host;mpi;petsc")
  set(needs_gpu "")
  if(${set}_gpu)
    set(labels "gpu;mpi;petsc")
    set(needs_gpu --needs-gpu)
  endif()
  if(${set}_gpu AND NOT TESSERA_HAVE_CUDA)
    add_test(NAME ${name}
             COMMAND sh -c "echo 'SKIPPED: ${name} needs the CUDA backend (built without nvcc)'; exit ${TESSERA_SKIP_CODE}")
  elseif(TARGET petsc_tutorial_${ex})
    add_test(NAME ${name}
             COMMAND ${check} ${needs_gpu} --np ${np} --mpiexec ${MPIEXEC_EXECUTABLE} ${${set}_require}
                     -- $<TARGET_FILE:petsc_tutorial_${ex}> ${common} ${${set}_set} ${ARGN})
  else()
    add_test(NAME ${name} COMMAND sh -c "echo 'SKIPPED: ${source} not installed (apt-get install libpetsc3.18-dev-examples)'; exit ${TESSERA_SKIP_CODE}")
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" PROCESSORS ${np} TIMEOUT 600
                       SKIP_RETURN_CODE ${TESSERA_SKIP_CODE} ENVIRONMENT "${TESSERA_TEST_ENV}")
endfunction()

foreach(ex IN ITEMS ex2 ex45 ex55 ex56)
  if(EXISTS ${TESSERA_PETSC_TUTORIALS_DIR}/${ex}.c)
    add_executable(petsc_tutorial_${ex} ${TESSERA_PETSC_TUTORIALS_DIR}/${ex}.c)
    target_link_libraries(petsc_tutorial_${ex} PRIVATE PkgConfig::PETSC MPI::MPI_C m)
    set_target_properties(petsc_tutorial_${ex} PROPERTIES LINKER_LANGUAGE C)
    add_dependencies(petsc_tutorial_${ex} tessera_petsc)
  endif()
  foreach(set IN ITEMS pc gamg)
    foreach(np IN LISTS ${ex}_ranks)
      tessera_petsc_tutorial_test(${ex} ${set} ${np} ${${ex}_args})
    endforeach()
  endforeach()
endforeach()
# ex56 without -use_mat_nearnullspace hands GAMG's PCSetCoordinates the nodes instead: PCTESSERA
# builds the same 6 rigid-body modes from them (17 iterations on 2 ranks, as with the attached
# near-null space; 20 when it ignored the coordinates and kept 3 constants). ex55 hands them
# with -use_coordinates, 2 a node: the 3 rigid-body modes of the plane.
set(pc_coordinates_set ${pc_set})
set(ex56_coordinates_args ${ex56_args})
list(REMOVE_ITEM ex56_coordinates_args -use_mat_nearnullspace)
set(ex55_coordinates_args ${ex55_args} -use_coordinates)
foreach(ex_modes IN ITEMS "ex56;6" "ex55;3")
  list(GET ex_modes 0 ex)
  list(GET ex_modes 1 modes)
  set(pc_coordinates_require ${pc_require} --require "near-null space: ${modes} rigid-body modes from PCSetCoordinates")
  foreach(np IN LISTS ${ex}_ranks)
    tessera_petsc_tutorial_test(${ex} pc_coordinates ${np} ${${ex}_coordinates_args})
  endforeach()
endforeach()
endif()

# Nodes that rotate (tests/petsc/frame.cpp: Tessera's frame3d and frame2d generators as a PETSc
# application, block size 6 and 3): PCSetCoordinates gives PCTESSERA, and GAMG on Tessera's
# matrix type, the rigid-body modes with the rotation dofs. On 1 and 2 ranks (CG to 1e-8 in the
# true residual's norm) PCTESSERA took 46 iterations (frame3d:6) and 52 (frame2d:20) with them,
# 65 and 70 with the constants alone (GAMG: 55-60 and 63-68 against 75-76 and 80-84); the bound
# of 58 fails a PCTESSERA that drops the rotations.
add_executable(petsc_tutorial_frame ${CMAKE_CURRENT_LIST_DIR}/frame.cpp)
target_link_libraries(petsc_tutorial_frame PRIVATE tessera_local PkgConfig::PETSC MPI::MPI_C)
target_include_directories(petsc_tutorial_frame PRIVATE ${PROJECT_SOURCE_DIR})
add_dependencies(petsc_tutorial_frame tessera_petsc)
set(frame_args -ksp_type cg -ksp_norm_type unpreconditioned -use_coordinates)
foreach(dim_n_modes IN ITEMS "3;6;6" "2;20;3")
  list(GET dim_n_modes 0 dim)
  list(GET dim_n_modes 1 n)
  list(GET dim_n_modes 2 modes)
  set(pc_frame${dim}d_set ${pc_set})  # the test's name: petsc.frame.pc_frameDd.npNP
  set(pc_frame${dim}d_require ${pc_require}
      --require "near-null space: ${modes} rigid-body modes from PCSetCoordinates \\(the nodes' rotations too\\)"
      --require "CONVERGED_RTOL iterations ([0-9]|[1-4][0-9]|5[0-8])$")
  set(gamg_frame${dim}d_set ${gamg_set})
  set(gamg_frame${dim}d_require ${gamg_require})
  foreach(np IN ITEMS 1 2 3 4)
    tessera_petsc_tutorial_test(frame pc_frame${dim}d ${np} ${frame_args} -spec frame${dim}d:${n})
    tessera_petsc_tutorial_test(frame gamg_frame${dim}d ${np} ${frame_args} -spec frame${dim}d:${n})
  endforeach()
  # Slender beams (L = 30, bending 900 times softer than stretching): PCTESSERA built from a Pmat
  # without the couplings between kinds of dof (block size 1, one constant) took 27 (frame2d:20:30)
  # and 29 (frame3d:6:30) iterations, where the rigid-body modes on A took 133 and 101; the bound of
  # 40 fails a PCTESSERA that builds from Amat, or one whose Pmat lost the kinds. -resolve_scaled
  # then scales A and the Pmat by a diagonal of powers of two: the numeric re-setup must take a
  # fresh setup's iterations (26 and 29 on one rank; one that kept the old values took 55 and 62).
  set(separate_require --require "CONVERGED_RTOL iterations ([0-9]|[1-3][0-9]|40)$"
      --require "setups: 1 full, 1 numeric"
      --require "scaled A: ([0-9]|[1-3][0-9]|40) iterations after the numeric re-setup")
  set(pc_separate_frame${dim}d_set ${pc_set})
  set(pc_separate_frame${dim}d_require ${pc_require} ${separate_require}
      --require "near-null space: 1 constant vector\\(s\\), one a component \\(block size 1\\)")
  # -pc_tessera_separate_kinds: PCTESSERA separates A's kinds itself (the application still hands
  # it the coordinates, which it then leaves unused), the same hierarchy as from that Pmat; on the
  # GPUs the one-GPU hierarchy on 1 rank, the distributed one on 2-4.
  set(pc_option_separate_frame${dim}d_set ${pc_set} -pc_tessera_separate_kinds)
  set(pc_option_separate_frame${dim}d_require ${pc_require} ${separate_require}
      --require "near-null space: the constant \\(block size 1\\) on the operator without the couplings between its ${modes} kinds of dof \\(-pc_tessera_separate_kinds\\). PCSetCoordinates' nodes not used"
      --require "separated kinds: level 0 keeps [0-9]+ of the operator's [0-9]+ entries. the hierarchy's entries over the operator's: [0-9.]+")
  set(pc_option_separate_gpu_frame${dim}d_set ${pc_option_separate_frame${dim}d_set} -pc_tessera_backend gpu)
  # -ksp_view after a solve: the one-GPU cycle (1 rank) replayed as a CUDA graph; the distributed
  # one replayed where NCCL carries its exchanges (a GPU a rank), launched step by step where ranks
  # share a GPU (the host-staged transport waits on the host), as on the one-GPU machines.
  set(pc_option_separate_gpu_frame${dim}d_require ${pc_option_separate_frame${dim}d_require}
      --require "backend gpu[,:]"
      --require "cycle as a CUDA graph: (replayed \\(captured [0-9]+ time\\(s\\) since the last setup\\)$|replayed \\(captured [0-9]+ time.*device transport: nccl|off \\(staged transport\\) .*device transport: staged)")
  set(pc_option_separate_gpu_frame${dim}d_gpu TRUE)
  # -pc_tessera_filtered_smoothing (coarse size 100, so that the hierarchy has levels to filter):
  # frame3d:6:30 separated, operator complexity 2.28 -> 1.43 at 29 iterations either way;
  # frame2d:20:30 2.03 -> 1.48 at 27 (the serial hierarchy, which the one-GPU one and the
  # distributed ones equal). On the GPUs: the one-GPU hierarchy on 1 rank, the distributed one
  # (A_F from the downloaded strength graph, its lambda_max and product on the GPU) on 2-4.
  set(pc_option_filtered_frame${dim}d_set ${pc_option_separate_frame${dim}d_set} -pc_tessera_filtered_smoothing
      -pc_tessera_coarse_size 100)
  set(filtered_require --require "spgemm [a-z]+, filtered prolongator smoothing"
      --require "the hierarchy's entries over the operator's: 0[.][0-9]+")
  set(pc_option_filtered_frame${dim}d_require ${pc_option_separate_frame${dim}d_require} ${filtered_require})
  set(pc_option_filtered_gpu_frame${dim}d_set ${pc_option_separate_gpu_frame${dim}d_set} -pc_tessera_filtered_smoothing
      -pc_tessera_coarse_size 100)
  set(pc_option_filtered_gpu_frame${dim}d_require ${pc_option_separate_gpu_frame${dim}d_require} ${filtered_require})
  set(pc_option_filtered_gpu_frame${dim}d_gpu TRUE)
  foreach(np IN ITEMS 1 2 3 4)
    tessera_petsc_tutorial_test(frame pc_separate_frame${dim}d ${np} -ksp_type cg -ksp_norm_type unpreconditioned
                                -pmat_separate_kinds -resolve_scaled -spec frame${dim}d:${n}:30)
    foreach(set IN ITEMS pc_option_separate_frame${dim}d pc_option_separate_gpu_frame${dim}d
                         pc_option_filtered_frame${dim}d pc_option_filtered_gpu_frame${dim}d)
      tessera_petsc_tutorial_test(frame ${set} ${np} ${frame_args} -resolve_scaled -spec frame${dim}d:${n}:30)
    endforeach()
  endforeach()
endforeach()

# Bad use of PCTESSERA (issue 7): tests/petsc/bad_use.c runs one case per -case and must end in
# a PETSc error naming the problem (non-zero exit, PETSc's "[0]PETSC ERROR:" lines), never a
# crash, or, for the cases PETSc itself handles, in a solution checked against a known x*.
# PASS_REGULAR_EXPRESSION replaces ctest's exit-code test, so the command echoes its exit code
# and the regexes demand it. -error_output_stdout puts PETSc's error lines on stdout beside the
# test's own lines: Open MPI forwards a rank's stdout and stderr through two pipes and interleaves
# them as they arrive, which once split "[0]PETSC ERROR: " from its message in CI.
if(TESSERA_HAVE_PETSC)
add_executable(petsc_bad_use ${CMAKE_CURRENT_LIST_DIR}/bad_use.c)
target_link_libraries(petsc_bad_use PRIVATE tessera_petsc PkgConfig::PETSC MPI::MPI_C)
target_include_directories(petsc_bad_use PRIVATE ${PROJECT_SOURCE_DIR})
set_target_properties(petsc_bad_use PROPERTIES LINKER_LANGUAGE CXX)

# One test per rank count; expect_exit "0" or "nonzero". Optional: CASE (bad_use.c's case when
# it differs from the test's name), ENV (more environment, e.g. PETSC_OPTIONS) and GPU (labelled
# gpu: skipped, exit 77, in a build without CUDA or where nvidia-smi lists no GPU).
function(tessera_bad_use_test name expect_exit regex)
  cmake_parse_arguments(B "GPU" "CASE" "ENV" ${ARGN})
  set(case ${name})
  if(B_CASE)
    set(case ${B_CASE})
  endif()
  set(labels "host;mpi;petsc")
  set(gate "")
  if(B_GPU)
    set(labels "gpu;mpi;petsc")
    if(TESSERA_HAVE_CUDA)
      set(gate "nvidia-smi -L 2>/dev/null | grep -q '^GPU' || { echo 'SKIPPED: no GPU visible (nvidia-smi -L)'; exit ${TESSERA_SKIP_CODE}; }; ")
    else()
      set(gate "echo 'SKIPPED: needs the CUDA backend'; exit ${TESSERA_SKIP_CODE}; ")
    endif()
  endif()
  if(expect_exit STREQUAL "0")
    set(check "-eq 0")
    set(rc_regex "exit code 0")
  else()
    set(check "-ne 0")
    set(rc_regex "exit code [1-9]")
  endif()
  foreach(np IN LISTS B_UNPARSED_ARGUMENTS)
    set(test petsc.bad_use.${name}.np${np})
    add_test(NAME ${test}
             COMMAND sh -c "${gate}${PROJECT_SOURCE_DIR}/tests/support/mpiexec_per_rank.sh ${MPIEXEC_EXECUTABLE} ${np} $<TARGET_FILE:petsc_bad_use> -case ${case} -n 203 -pc_tessera_coarse_size 20 -ksp_view -error_output_stdout; test $? ${check}")
    set_tests_properties(${test} PROPERTIES LABELS "${labels}" PROCESSORS ${np} TIMEOUT 120
                         SKIP_RETURN_CODE ${TESSERA_SKIP_CODE} PASS_REGULAR_EXPRESSION "${regex}.*${rc_regex}"
                         ENVIRONMENT "${TESSERA_TEST_ENV};OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;${B_ENV}")
  endforeach()
endfunction()

set(_hidden "PETSC ERROR: PCTESSERA: the operator's nonzero pattern changed but PCSetUp was told SAME_NONZERO_PATTERN")
set(_not_aij "PETSC ERROR: PCTESSERA needs an AIJ operator \\(seqaij, mpiaij or a type derived from them\\); got")
tessera_bad_use_test(ok 0 "setups: 1 full, 0 numeric.*first solve: .*setups: 1 full, 1 numeric.*second solve: " 1 2 3 4)
tessera_bad_use_test(resetups 0 "setups: 1 full, 1 numeric.*second solve: .*setups: 1 full, 3 numeric.*fourth solve: "
                     1 2 3 4)
tessera_bad_use_test(nonsquare nonzero "PETSC ERROR: PCTESSERA needs a square operator; got 203 x 206" 1 2 3 4)
tessera_bad_use_test(dense nonzero "${_not_aij} seqdense" 1)
tessera_bad_use_test(baij nonzero "${_not_aij} seqbaij" 1)
tessera_bad_use_test(pattern 0 "setups: 1 full, 0 numeric.*first solve: .*setups: 2 full, 0 numeric.*second solve: "
                     1 2 3 4)
tessera_bad_use_test(zerorows 0 "first solve: .*setups: 2 full, 0 numeric.*second solve: " 1 2 3 4)
tessera_bad_use_test(hidden nonzero "${_hidden}" 1 2 3 4)
# With -pc_tessera_separate_kinds (block size 3) the pattern that counts is the separated one: a
# hidden coupling within a kind must be caught, one between kinds (dropped) takes a numeric
# re-setup and the second solution is checked.
set(_separate "PETSC_OPTIONS=-pc_tessera_separate_kinds")
tessera_bad_use_test(hidden_separate nonzero "${_hidden}" 1 2 3 4 ENV "${_separate}")
tessera_bad_use_test(hidden_cross_kind 0 "setups: 1 full, 1 numeric.*second solve: " 1 2 3 4 ENV "${_separate}")
tessera_bad_use_test(nonfinite nonzero "first solve: .*PETSC ERROR: .*non-finite" 1 2 3 4)
tessera_bad_use_test(near_null_nan nonzero "PETSC ERROR: .*near-null vector 0 has a non-finite value nan at row 101"
                     1 2 3 4)
# PCSetCoordinates (GAMG's interface, which PCTESSERA reads for the rigid-body modes) with a
# dimension that does not fit the block size (1 coordinate a node), or one rank's node count not
# its rows / 3: refused on every rank.
tessera_bad_use_test(coordinates_1d nonzero
                     "PETSC ERROR: Tessera: PCTESSERA: PCSetCoordinates makes the rigid-body modes of 2D or 3D elasticity \\(2 or 3 coordinates a node, the block size as many, or 3 in 2D and 6 in 3D with the rotations\\). got 1 coordinates a node with block size 3"
                     1 2 3 4)
tessera_bad_use_test(coordinates_count nonzero
                     "PETSC ERROR: Tessera: PCTESSERA: PCSetCoordinates gave [0-9]+ nodes on rank 0, the operator owns [0-9]+ rows there" 1 2 3 4)
# -pc_tessera_separate_kinds on a scalar operator (block size 1: no kinds to separate): refused on
# every rank at the first setup, naming MatSetBlockSize.
tessera_bad_use_test(separate_kinds_scalar nonzero
                     "PETSC ERROR: .*PCTESSERA: -pc_tessera_separate_kinds separates the kinds of dof of a node, the operator's block size of them. its block size is 1: set it with MatSetBlockSize"
                     1 2 3 4 CASE ok ENV "PETSC_OPTIONS=-pc_tessera_separate_kinds")
# The re-setup transfer on the device asked for with the host backend: refused on every rank
# at the first setup (the host backend forced, so a GPU machine gives the same answer).
tessera_bad_use_test(transfer_without_gpu nonzero
                     "PETSC ERROR: Tessera: PCTESSERA: -pc_tessera_resetup_transfer device recomputes the levels on the GPUs. it needs -pc_tessera_backend gpu"
                     1 2 3 4 CASE ok ENV "PETSC_OPTIONS=-pc_tessera_backend host -pc_tessera_resetup_transfer device")
# The same PC on the GPUs: one rank builds the one-GPU hierarchy (pc_single_gpu.hpp), 2-4 ranks
# the distributed one (on one GPU through the host-staged transport); -pc_tessera_hierarchy
# distributed forces the latter on one rank too. Each must solve to the same checked x*, through
# its numeric re-setups.
set(_gpu_pc "-pc_tessera_backend gpu")
set(_one_gpu "AMG: one GPU .tessera::amg::gpu::DeviceHierarchy.. setups: 1 full")
tessera_bad_use_test(resetups_gpu 0 "${_one_gpu}, 1 numeric.*second solve: .*${_one_gpu}, 3 numeric.*fourth solve: " 1
                     GPU CASE resetups ENV "PETSC_OPTIONS=${_gpu_pc}")
tessera_bad_use_test(resetups_gpu_distributed 0
                     "distributed .tessera::amg::DistAmg.. setups: 1 full, 3 numeric.*fourth solve: " 1 2 3 4
                     GPU CASE resetups ENV "PETSC_OPTIONS=${_gpu_pc} -pc_tessera_hierarchy distributed")
tessera_bad_use_test(pattern_gpu 0 "${_one_gpu}, 0 numeric.*first solve: .*setups: 2 full, 0 numeric.*second solve: " 1
                     GPU CASE pattern ENV "PETSC_OPTIONS=${_gpu_pc}")
tessera_bad_use_test(nonfinite_gpu nonzero "first solve: .*PETSC ERROR: .*non-finite" 1 2 3 4 GPU CASE nonfinite
                     ENV "PETSC_OPTIONS=${_gpu_pc}")
tessera_bad_use_test(near_null_nan_gpu nonzero "PETSC ERROR: .*near-null vector 0 has a non-finite value nan at row 101"
                     1 2 3 4 GPU CASE near_null_nan ENV "PETSC_OPTIONS=${_gpu_pc}")
tessera_bad_use_test(hidden_gpu nonzero "${_hidden}" 1 2 3 4 GPU CASE hidden ENV "PETSC_OPTIONS=${_gpu_pc}")
tessera_bad_use_test(hidden_separate_gpu nonzero "${_hidden}" 1 2 3 4 GPU CASE hidden_separate
                     ENV "${_separate} ${_gpu_pc}")
tessera_bad_use_test(hidden_cross_kind_gpu 0 "setups: 1 full, 1 numeric.*second solve: " 1 2 3 4 GPU
                     CASE hidden_cross_kind ENV "${_separate} ${_gpu_pc}")
endif()

# PCTESSERA's readers of the operator (amg/petsc/petsc_operator.hpp: in place from seqaij/mpiaij
# arrays, row by row otherwise) against MatGetRow on random matrices, 1-4 ranks.
if(TESSERA_HAVE_PETSC)
add_executable(petsc_read_aij ${CMAKE_CURRENT_LIST_DIR}/read_aij.cpp)
target_link_libraries(petsc_read_aij PRIVATE tessera_petsc PkgConfig::PETSC MPI::MPI_C)
target_include_directories(petsc_read_aij PRIVATE ${PROJECT_SOURCE_DIR})
foreach(np IN ITEMS 1 2 3 4)
  add_test(NAME petsc.read_aij.np${np}
           COMMAND ${PROJECT_SOURCE_DIR}/tests/support/mpiexec_per_rank.sh ${MPIEXEC_EXECUTABLE} ${np}
                   $<TARGET_FILE:petsc_read_aij>)
  set_tests_properties(petsc.read_aij.np${np} PROPERTIES LABELS "host;mpi;petsc" PROCESSORS ${np} TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "read_aij: [0-9]+ checks, 0 failed here, 0 on all ${np} ranks.*exit code 0"
                       ENVIRONMENT "${TESSERA_TEST_ENV};OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endforeach()
endif()
