# The drivers as users run them: checked products on 1-4 ranks, and the exit-code contract on
# bad input (2, with the problem named), through mpiexec as in the README.
# Each rank's output is printed whole (tests/support/mpiexec_per_rank.sh), so that a regex never
# meets a line that another rank's output cut in two.
set(_mpi ${PROJECT_SOURCE_DIR}/tests/support/mpiexec_per_rank.sh ${MPIEXEC_EXECUTABLE})

# tessera_driver_test(NAME RANKS N... COMMAND ... [EXPECT_EXIT code] [EXPECT_OUTPUT regex] [GPU])
# One test NAME.npN for each rank count N. In EXPECT_OUTPUT, @RANK_COLUMNS@ stands for one number
# a rank (the "by rank" columns of a --trace table). GPU: labelled gpu, and skipped (exit 77) in a
# build without CUDA or where nvidia-smi lists no GPU.
function(tessera_driver_test name)
  cmake_parse_arguments(T "GPU" "EXPECT_EXIT;EXPECT_OUTPUT" "RANKS;COMMAND" ${ARGN})
  # A misspelt keyword before COMMAND would otherwise be dropped, and the test run without it.
  if(T_UNPARSED_ARGUMENTS OR NOT T_RANKS OR NOT T_COMMAND)
    message(FATAL_ERROR "tessera_driver_test(${name}): needs RANKS and COMMAND; not understood: ${T_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT T_EXPECT_EXIT)
    set(T_EXPECT_EXIT 0)
  endif()
  set(labels "host;mpi;driver")
  if(T_GPU)
    set(labels "gpu;mpi;driver")
  endif()
  foreach(n IN LISTS T_RANKS)
    set(test ${name}.np${n})
    if(T_GPU AND NOT TESSERA_HAVE_CUDA)
      add_test(NAME ${test} COMMAND sh -c "echo 'SKIPPED: ${test} needs the CUDA backend'; exit ${TESSERA_SKIP_CODE}")
      set_tests_properties(${test} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE ${TESSERA_SKIP_CODE})
      continue()
    endif()
    set(probe "")
    if(T_GPU)
      set(probe "nvidia-smi -L 2>/dev/null | grep -q GPU || { echo 'SKIPPED: ${test} needs a GPU'; ")
      string(APPEND probe "exit ${TESSERA_SKIP_CODE}; }; ")
    endif()
    string(JOIN " " cmd ${_mpi} ${n} ${T_COMMAND})
    add_test(NAME ${test} COMMAND sh -c "${probe}${cmd}; test $? -eq ${T_EXPECT_EXIT}")
    set_tests_properties(${test} PROPERTIES LABELS "${labels}" PROCESSORS ${n} TIMEOUT 300
                         SKIP_RETURN_CODE ${TESSERA_SKIP_CODE} ENVIRONMENT "${TESSERA_TEST_ENV}")
    if(T_EXPECT_OUTPUT)
      string(REPEAT " [0-9.]+" ${n} rank_columns)
      string(REPLACE "@RANK_COLUMNS@" "${rank_columns}" expected "${T_EXPECT_OUTPUT}")
      # PASS_REGULAR_EXPRESSION replaces the exit-code test, so the echoed code is matched too.
      if(NOT expected MATCHES "exit code")
        string(APPEND expected ".*exit code ${T_EXPECT_EXIT}")
      endif()
      set_tests_properties(${test} PROPERTIES PASS_REGULAR_EXPRESSION "${expected}")
    endif()
  endforeach()
endfunction()

set(_spgemm $<TARGET_FILE:tessera-spgemm>)
set(_mat ${PROJECT_SOURCE_DIR}/../shared/matrices)
# The README's main job (kept identical to README.md), and issue 2's acceptance command.
if(TESSERA_HAVE_HYPRE AND TESSERA_HAVE_PETSC)
  tessera_driver_test(driver.readme.main_job RANKS 2
                      COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:48 --compare hypre,gamg
                      EXPECT_OUTPUT "converged after [0-9]+ iterations.*PETSc GAMG-CG")
endif()
tessera_driver_test(driver.spgemm.poisson3d32 RANKS 1 2 3 4 COMMAND ${_spgemm} --gen poisson3d:32 --op AA --check
                    EXPECT_OUTPUT "check: .* PASS")
tessera_driver_test(driver.spgemm.AA RANKS 1 2 3 4
                    COMMAND ${_spgemm} --gen poisson3d27:12 --op AA --partition nnz --check --backend host
                    EXPECT_OUTPUT "check: .* PASS")
tessera_driver_test(driver.spgemm.PtAP RANKS 1 2 3 4
                    COMMAND ${_spgemm} --gen elasticity3d:6 --op PtAP --check --backend host
                    EXPECT_OUTPUT "check: .* PASS")
# --trace: rank 0 prints every rank's time of each step (a column a rank), under its caller.
tessera_driver_test(driver.spgemm.PtAP.trace RANKS 1 2 3 4
                    COMMAND ${_spgemm} --gen poisson3d:16 --op PtAP --backend host --distributed --whole-reps 2 --trace
                            --check
                    EXPECT_OUTPUT "step trace of whole product 2 of 2[^\n]*\n[^\n]*by rank\n.*\n  ptap\\.local_products +1 +[0-9.]+ +[0-9.]+  @RANK_COLUMNS@\n.*check: .* PASS")
tessera_driver_test(driver.spgemm.trace_needs_distributed RANKS 1 EXPECT_EXIT 2
                    COMMAND ${_spgemm} --gen poisson3d:8 --op AA --trace
                    EXPECT_OUTPUT "--whole-reps and --trace time the distributed product")
tessera_driver_test(driver.spgemm.AAT.file RANKS 1 2 3 4
                    COMMAND ${_spgemm} --A ${_mat}/bp_1200.mtx.gz --op AAT --check --backend host
                    EXPECT_OUTPUT "check: .* PASS")
tessera_driver_test(driver.spgemm.fp16.range RANKS 1 EXPECT_EXIT 2
                    COMMAND ${_spgemm} --A ${_mat}/bcsstk13.mtx.gz --precision fp16 --backend host
                    EXPECT_OUTPUT "exceeds the largest fp16 magnitude")
tessera_driver_test(driver.spgemm.complex RANKS 1 2 3 4 EXPECT_EXIT 2 COMMAND ${_spgemm} --A ${_mat}/young1c.mtx.gz
                    EXPECT_OUTPUT "Tessera is real-valued")
tessera_driver_test(driver.spgemm.missing RANKS 1 2 3 4 EXPECT_EXIT 2 COMMAND ${_spgemm} --A /nonexistent.mtx --op AA
                    EXPECT_OUTPUT "cannot open")
tessera_driver_test(driver.spgemm.mismatch RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_spgemm} --gen poisson2d:10 --op AB --B ${_mat}/bcsstk13.mtx.gz --backend host
                    EXPECT_OUTPUT "dimension mismatch")
tessera_driver_test(driver.spgemm.AA_not_square RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_spgemm} --A ${_mat}/lp_afiro.mtx.gz --op AA --backend host
                    EXPECT_OUTPUT "--op AA needs a square A, got 27x51")
tessera_driver_test(driver.spgemm.badspec RANKS 1 2 3 4 EXPECT_EXIT 2 COMMAND ${_spgemm} --gen poisson3d:x
                    EXPECT_OUTPUT "bad problem spec")

# tessera-spmv / tessera-spmm distributed mode (spmv_distributed.cpp): every rank count checked
# against the serial reference, one rank through --distributed. The regexes also demand the
# exit code, since PASS_REGULAR_EXPRESSION alone would ignore it.
set(_spmv $<TARGET_FILE:tessera-spmv>)
set(_spmm $<TARGET_FILE:tessera-spmm>)
set(_dist_pass "vs serial reference: [^\n]* PASS.*exit code 0")
tessera_driver_test(driver.spmv.poisson27 RANKS 1 2 3 4 EXPECT_OUTPUT "${_dist_pass}"
                    COMMAND ${_spmv} --gen poisson3d27:12 --partition nnz --distributed --check --backend host)
tessera_driver_test(driver.spmv.elasticity RANKS 1 2 3 4 EXPECT_OUTPUT "${_dist_pass}"
                    COMMAND ${_spmv} --gen elasticity3d:6 --distributed --check --backend host)
tessera_driver_test(driver.spmm.poisson27 RANKS 1 2 3 4 EXPECT_OUTPUT "${_dist_pass}"
                    COMMAND ${_spmm} --gen poisson3d27:12 --k 5 --distributed --check --backend host)
tessera_driver_test(driver.spmm.elasticity RANKS 1 2 3 4 EXPECT_OUTPUT "${_dist_pass}"
                    COMMAND ${_spmm} --gen elasticity3d:6 --k 5 --partition nnz --layout col --distributed --check
                            --backend host)
tessera_driver_test(driver.spmv.file RANKS 1 2 3 4 EXPECT_OUTPUT "${_dist_pass}"
                    COMMAND ${_spmv} --A ${_mat}/bp_1200.mtx.gz --partition nnz --distributed --check --backend host)
tessera_driver_test(driver.spmm.file RANKS 1 2 3 4 EXPECT_OUTPUT "${_dist_pass}"
                    COMMAND ${_spmm} --A ${_mat}/bp_1200.mtx.gz --k 5 --distributed --check --backend host)
# 9 rows on 4 ranks: tile-aligned boundaries leave ranks with no rows at all.
tessera_driver_test(driver.spmm.empty_ranks RANKS 3 4 EXPECT_OUTPUT "${_dist_pass}"
                    COMMAND ${_spmm} --gen poisson2d:3 --k 3 --check --backend host)
# A product of operands that fit the precision but whose result does not (rule 4): refused with
# the first overflowed row named, exit 2, on every path (one rank, distributed, the GPUs').
set(_data ${CMAKE_CURRENT_LIST_DIR}/data)
tessera_driver_test(driver.spgemm.overflow RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_spgemm} --A ${_data}/overflows_products.mtx --op AA --check --backend host
                    EXPECT_OUTPUT "C = A[*]A overflowed fp64: row 0 holds inf, past the largest fp64 result")
tessera_driver_test(driver.spgemm.overflow_fp32 RANKS 1 EXPECT_EXIT 2
                    COMMAND ${_spgemm} --A ${_data}/overflows_products_fp32.mtx --precision fp32 --backend host
                    EXPECT_OUTPUT "C = A[*]A overflowed fp32: row 0 holds 5e[+]60.*use a wider --precision")
tessera_driver_test(driver.spgemm.fits_fp64 RANKS 1 2
                    COMMAND ${_spgemm} --A ${_data}/overflows_products_fp32.mtx --op AA --check --backend host
                    EXPECT_OUTPUT "check: .* PASS")
tessera_driver_test(driver.spmv.overflow RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_spmv} --A ${_data}/overflows_vector_products.mtx --backend host
                    EXPECT_OUTPUT "y = A x overflowed fp64: row [0-9]+ holds -?inf")
tessera_driver_test(driver.spmm.overflow RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_spmm} --A ${_data}/overflows_vector_products.mtx --k 3 --layout col --backend host
                    EXPECT_OUTPUT "Y = A X overflowed fp64: row [0-9]+ holds -?inf")
tessera_driver_test(driver.spgemm.overflow_gpu RANKS 1 2 EXPECT_EXIT 2 GPU
                    COMMAND ${_spgemm} --A ${_data}/overflows_products.mtx --op AA --backend gpu
                    EXPECT_OUTPUT "C = A[*]A overflowed fp64: row 0 holds inf")
tessera_driver_test(driver.spgemm.overflow_fp32_gpu RANKS 1 EXPECT_EXIT 2 GPU
                    COMMAND ${_spgemm} --A ${_data}/overflows_products_fp32.mtx --precision fp32 --backend gpu
                    EXPECT_OUTPUT "C = A[*]A overflowed fp32: row 0 holds inf")
tessera_driver_test(driver.spmv.overflow_gpu RANKS 1 2 EXPECT_EXIT 2 GPU
                    COMMAND ${_spmv} --A ${_data}/overflows_vector_products.mtx --backend gpu
                    EXPECT_OUTPUT "y = A x overflowed fp64: row [0-9]+ holds -?inf")
tessera_driver_test(driver.spmm.overflow_gpu RANKS 1 2 EXPECT_EXIT 2 GPU
                    COMMAND ${_spmm} --A ${_data}/overflows_vector_products.mtx --k 3 --layout col --backend gpu
                    EXPECT_OUTPUT "Y = A X overflowed fp64: row [0-9]+ holds -?inf")
# --backend gpu where no rank sees a device (hidden with -x, OpenMPI's mpiexec): refused on every rank
# (on one rank by the one-GPU path, in CUDA's words).
tessera_driver_test(driver.spmv.gpu_without_device RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND -x CUDA_VISIBLE_DEVICES=-1 ${_spmv} --gen poisson3d:8 --backend gpu --check
                    EXPECT_OUTPUT "--backend gpu(: not every rank sees a CUDA device| requested but (this build has no CUDA backend|CUDA reports: )).*exit code 2")
tessera_driver_test(driver.spmm.fp32_refused RANKS 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_spmm} --gen poisson3d:8 --precision fp32 --backend host
                    EXPECT_OUTPUT "distributed path runs in fp64.*exit code 2")
# --halo picks how GPUs exchange halos: refused with the host backend, on every rank, and on one
# rank without --distributed (no halos there), whatever the backend.
tessera_driver_test(driver.spmv.halo_needs_gpu RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_spmv} --gen poisson3d:8 --backend host --halo peer
                    EXPECT_OUTPUT "--halo peer chooses how GPUs exchange halos.*exit code 2")
tessera_driver_test(driver.spmm.halo_one_rank RANKS 1 EXPECT_EXIT 2 COMMAND ${_spmm} --gen poisson3d:8 --halo nccl
                    EXPECT_OUTPUT "--halo nccl chooses how GPUs exchange halos in the distributed product \\(several ranks or --distributed\\)")
tessera_driver_test(driver.amg.halo_needs_gpu RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:8 --backend host --halo both
                    EXPECT_OUTPUT "--halo both chooses how GPUs exchange halos.*exit code 2")
# --setup device puts the distributed setup's graph phases on the GPUs: refused on the host.
tessera_driver_test(driver.amg.setup_device_needs_gpu RANKS 2 3 4 EXPECT_EXIT 2
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:8 --backend host --setup device
                    EXPECT_OUTPUT "--setup device runs the graph phases on the GPUs: it needs --backend gpu.*exit code 2")
# --resetup-transfer device runs from the levels' device copies of A: refused on the host.
tessera_driver_test(driver.amg.resetup_transfer_needs_gpu RANKS 2 3 4 EXPECT_EXIT 2
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:8 --backend host --resetups 1 --resetup-transfer device
                    EXPECT_OUTPUT "--resetup-transfer device runs from the levels' device copies of A: it needs --backend gpu.*exit code 2")
# --tentative device is a step of the distributed GPU setup: refused on the host.
tessera_driver_test(driver.amg.tentative_device_needs_gpu RANKS 2 3 4 EXPECT_EXIT 2
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:8 --backend host --tentative device
                    EXPECT_OUTPUT "--tentative device is a step of the GPU setup: it needs --backend gpu.*exit code 2")
tessera_driver_test(driver.amg.merge_device_needs_gpu RANKS 2 3 4 EXPECT_EXIT 2
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:8 --backend host --merge device
                    EXPECT_OUTPUT "--merge device is a step of the GPU setup: it needs --backend gpu.*exit code 2")
tessera_driver_test(driver.amg.transpose_p_device_needs_gpu RANKS 2 3 4 EXPECT_EXIT 2
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:8 --backend host --transpose-p device
                    EXPECT_OUTPUT "--transpose-p device transposes P where the device merge made it: it needs --backend gpu.*exit code 2")
tessera_driver_test(driver.amg.galerkin_operands_device_needs_gpu RANKS 2 3 4 EXPECT_EXIT 2
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:8 --backend host --galerkin-operands device
                    EXPECT_OUTPUT "--galerkin-operands device reads P and P.T where the device merge made them: it needs --backend gpu.*exit code 2")
tessera_driver_test(driver.amg.solve_operands_device_needs_gpu RANKS 2 3 4 EXPECT_EXIT 2
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:8 --backend host --solve-operands device
                    EXPECT_OUTPUT "--solve-operands device shares the P and R the setup kept on the GPUs: it needs --backend gpu.*exit code 2")
# --setups N: whole setups from scratch, the repeats build the same hierarchy (the driver
# asserts it) and are reported beside the first, with the host page faults of the first; the
# host heap's report says that ctest's TESSERA_POISON_HOST_ARRAYS is on (not a timing run).
tessera_driver_test(driver.amg.setups RANKS 1 2 3 4
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:12 --distributed --backend host --setups 3
                    EXPECT_OUTPUT "host page faults in the setup: [0-9]+ on the largest rank, [0-9]+ in all. host heap: [^\n]*pages \\([^\n]*\\). new host arrays poisoned \\(TESSERA_POISON_HOST_ARRAYS[^\n]*\nrepeated setups \\(2, [^\n]*same hierarchy\\): median [0-9.]+ s.*converged after")
tessera_driver_test(driver.amg.trace RANKS 1 2 3 4
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:16 --distributed --backend host --setups 2 --trace
                    EXPECT_OUTPUT "step trace of setup 2 of 2[^\n]*\n[^\n]*by rank\n.*\n  galerkin +[0-9]+ +[0-9.]+ +[0-9.]+  @RANK_COLUMNS@\n.*\n  tentative +[0-9]+ +[0-9.]+ +[0-9.]+  @RANK_COLUMNS@\n.*converged after")
# --resetups N: the first re-setup records where P's values come from, the later ones
# replay the record (test_dist_amg_resetup checks the replay bit for bit); --trace times the
# last re-setup's steps; --resetups applies to the distributed AMG only.
tessera_driver_test(driver.amg.resetups RANKS 1 2 3 4
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:16 --distributed --backend host --resetups 3 --trace
                    EXPECT_OUTPUT "re-setup \\(same pattern, values only. records where P's values come from\\): [0-9.]+ s\nrepeated re-setups \\(2, replaying that record\\): median [0-9.]+ s[^\n]*\nstep trace of re-setup 3 of 3[^\n]*\n.*\n  galerkin +[0-9]+ +[0-9.]+ +[0-9.]+  @RANK_COLUMNS@\n.*converged after")
tessera_driver_test(driver.amg.resetups_need_distributed RANKS 1 EXPECT_EXIT 2
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:8 --backend host --resetups 2
                    EXPECT_OUTPUT "--setups, --resetups, --timeline, --trace, --tentative, --merge, --transpose-p, --galerkin-operands and --solve-operands apply to the distributed AMG")
# --solves N repeats the GPU solve from the same initial guess, on one GPU as distributed: the
# one-GPU cycle runs eagerly on its first call, is captured on its second and replayed after
# (--no-cuda-graph: every step launched from the host). The host backend refuses it.
tessera_driver_test(driver.amg.gpu_solves RANKS 1 GPU
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:16 --backend gpu --solves 3
                    EXPECT_OUTPUT "cycle as a CUDA graph: replayed\n.*converged after [0-9]+ iterations.*\nrepeated solves \\(2, same initial guess\\): median [0-9.]+ s, [0-9.]+ ms/iteration, iterations \\[[0-9]+,[0-9]+\\]\n")
tessera_driver_test(driver.amg.gpu_solves_no_graph RANKS 1 GPU
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:16 --backend gpu --solves 2 --no-cuda-graph
                    EXPECT_OUTPUT "cycle as a CUDA graph: off\n.*converged after [0-9]+ iterations.*\nrepeated solves \\(1, same initial guess\\)")
tessera_driver_test(driver.amg.solves_need_gpu RANKS 1 EXPECT_EXIT 2
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:8 --backend host --solves 2
                    EXPECT_OUTPUT "--solves repeats the GPU solves \\(--backend gpu, one GPU or distributed\\): this run is on the host backend")
# A non-symmetric A (convdiff3d) takes FGMRES on any rank count (by default restart 30 and
# classical Gram-Schmidt twice; --restart and --gram-schmidt mgs change them); a symmetric file
# (the numeric test of A against A^T over the ranks) keeps CG; --compare runs the baselines'
# flexible GMRES beside Tessera's FGMRES, with the same restart.
tessera_driver_test(driver.amg.fgmres RANKS 1 2 3 4
                    COMMAND $<TARGET_FILE:tessera-amg> --gen convdiff3d:16 --distributed --backend host --history
                    EXPECT_OUTPUT "; FGMRES\\(30, CGS2\\) \\+ AMG\n.*  it    1  [0-9.e+-]+\n.*converged after [0-9]+ iterations")
tessera_driver_test(driver.amg.fgmres_restart_mgs RANKS 1 2 3 4
                    COMMAND $<TARGET_FILE:tessera-amg> --gen convdiff3d:16 --distributed --backend host --history
                            --restart 6 --gram-schmidt mgs
                    EXPECT_OUTPUT "; FGMRES\\(6, MGS\\) \\+ AMG\n.*  it    7  [0-9.e+-]+\n.*converged after [0-9]+ iterations")
# The second pass on demand reports how often it ran; one pass (PETSc's default), by the serial
# driver's path on 1 rank and the distributed one's on 2-4.
tessera_driver_test(driver.amg.fgmres_cgs_ifneeded RANKS 1 2 3 4
                    COMMAND $<TARGET_FILE:tessera-amg> --gen convdiff3d:16 --distributed --backend host
                            --gram-schmidt cgs-ifneeded
                    EXPECT_OUTPUT "; FGMRES\\(30, CGS2 if needed\\) \\+ AMG\n.*converged after [0-9]+ iterations.*\n[^\n]*, second Gram-Schmidt pass in [0-9]+ of [0-9]+ steps\n")
tessera_driver_test(driver.amg.fgmres_cgs RANKS 1 2 3 4
                    COMMAND $<TARGET_FILE:tessera-amg> --gen convdiff3d:16 --backend host --gram-schmidt cgs
                    EXPECT_OUTPUT "FGMRES\\(30, CGS\\)[^\n]*\n.*converged after [0-9]+ iterations")
# --pmat separate-kinds: the hierarchy from A without its cross-kind couplings, CG on A. On a
# slender frame (frame2d:48:30) that took 28 iterations on 1-4 ranks where the rigid-body modes
# took 149: the bound of 40 fails a hierarchy built from A, or from a matrix that kept the
# couplings. np1 is the serial driver's path, the others the distributed one's. The hierarchy's
# entries over A's 60106 (not over the separated level 0's 33414): 0.9315 on 1-4 ranks. A matrix
# of one kind of dof has nothing to separate.
tessera_driver_test(driver.amg.separate_kinds RANKS 1 2 3 4
                    COMMAND $<TARGET_FILE:tessera-amg> --gen frame2d:48:30 --backend host --pmat separate-kinds
                    EXPECT_OUTPUT "\npreconditioner built from A without the couplings between its 3 kinds of dof \\([0-9]+ nnz. block size 1, the constant\\)[^\n]*\n.*converged after ([0-9]|[1-3][0-9]|40) iterations.*\noperator complexity over A's 60106 entries: 0\\.93[0-9]+ ")
# --filtered-smoothing on the same frame: 28 iterations on 1-4 ranks (np1 the serial hierarchy,
# the others the distributed one, which equals it), and the hierarchy's entries over A's 0.7789
# instead of 0.9315 (the bound 0.8 fails an unfiltered hierarchy).
tessera_driver_test(driver.amg.filtered_smoothing RANKS 1 2 3 4
                    COMMAND $<TARGET_FILE:tessera-amg> --gen frame2d:48:30 --backend host --pmat separate-kinds
                            --filtered-smoothing
                    EXPECT_OUTPUT "converged after ([0-9]|[1-3][0-9]|40) iterations.*\noperator complexity over A's 60106 entries: 0\\.7[0-9]+ ")
# The JSON's side of it (check_pmat_json.cmake): pmat, and operator_complexity_over_a only there.
foreach(n 1 2 3 4)
  add_test(NAME driver.amg.pmat_json.np${n}
           COMMAND ${CMAKE_COMMAND} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DRANKS=${n} -DDRIVER=$<TARGET_FILE:tessera-amg>
                   -DDIR=${CMAKE_CURRENT_BINARY_DIR}/pmat_json.np${n}
                   -P ${PROJECT_SOURCE_DIR}/tests/drivers/check_pmat_json.cmake)
  set_tests_properties(driver.amg.pmat_json.np${n} PROPERTIES LABELS "host;mpi;driver" PROCESSORS ${n}
                       TIMEOUT 300 ENVIRONMENT "${TESSERA_TEST_ENV}" PASS_REGULAR_EXPRESSION "check_pmat_json: PASS")
endforeach()
tessera_driver_test(driver.amg.separate_kinds_one_kind RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:8 --backend host --pmat separate-kinds
                    EXPECT_OUTPUT "--pmat separate-kinds: A has one kind of dof")
# (bcsstk08 with --coarse-size 100: 3 levels, 40 iterations on 1 and 3 ranks.)
tessera_driver_test(driver.amg.symmetric_file_cg RANKS 1 2 3 4
                    COMMAND $<TARGET_FILE:tessera-amg> --A ${_mat}/bcsstk08.mtx.gz --backend host --coarse-size 100
                    EXPECT_OUTPUT "; CG \\+ AMG[ \n].*\n    2 [^\n]*\n.*converged after ([0-9]|[1-5][0-9]) iterations")
if(TESSERA_HAVE_HYPRE AND TESSERA_HAVE_PETSC)
  # Every row converged (no '*' after the iteration count); GAMG smooths a non-symmetric A by
  # SOR. np1 is the serial driver's path, np2-4 the distributed one's.
  tessera_driver_test(driver.amg.compare_fgmres RANKS 1 2 3 4
                      COMMAND $<TARGET_FILE:tessera-amg> --gen convdiff3d:10 --backend host --compare hypre,gamg
                              --restart 20
                      EXPECT_OUTPUT "Tessera SA-AMG-FGMRES\\(20, CGS2\\) +[^\n]* [0-9]+ +[0-9.e-]+ [^\n]*\n  hypre BoomerAMG-FlexGMRES +[^\n]* [0-9]+ +[0-9.e-]+ [^\n]*\n  PETSc GAMG-FGMRES +[^\n]* [0-9]+ +[0-9.e-]+ .*FlexGMRES\\(20, modified Gram-Schmidt\\).*FGMRES\\(20, classical Gram-Schmidt, no refinement\\) \\+ GAMG agg, [^\n]*Richardson/SOR for a non-symmetric A")
endif()
tessera_driver_test(driver.amg.setups_need_distributed RANKS 1 EXPECT_EXIT 2
                    COMMAND $<TARGET_FILE:tessera-amg> --gen poisson3d:8 --setups 2
                    EXPECT_OUTPUT "--setups, --resetups, --timeline, --trace, --tentative, --merge, --transpose-p, --galerkin-operands and --solve-operands apply to the distributed AMG")
# --coordinates: an elasticity matrix read from a file gets its rigid-body modes from its nodes'
# coordinates (x y z, or x y in 2D; a frame's, 6 dofs a node, with its rotations), and solves as
# the generator's own problem does; so does
# --near-null with the modes written as vectors, for Tessera and for GAMG
# (check_coordinates_file.cmake); 1 rank is the serial driver's path, 2-4 the distributed one's.
add_executable(write_grid_problem ${PROJECT_SOURCE_DIR}/tests/support/write_grid_problem.cpp)
target_link_libraries(write_grid_problem PRIVATE tessera_amg)
foreach(n 1 2 3 4)
  foreach(case "coordinates_file;elasticity3d:12;3;6" "coordinates_file_2d;elasticity2d:48;2;3"
               "coordinates_file_frame;frame3d:10;6;6")
    list(GET case 0 name)
    list(GET case 1 spec)
    list(GET case 2 dofs)
    list(GET case 3 modes)
    add_test(NAME driver.amg.${name}.np${n}
             COMMAND ${CMAKE_COMMAND} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DRANKS=${n} -DDRIVER=$<TARGET_FILE:tessera-amg>
                     -DWRITER=$<TARGET_FILE:write_grid_problem> -DSPEC=${spec} -DDOFS=${dofs} -DMODES=${modes}
                     -DGAMG=$<BOOL:${TESSERA_HAVE_PETSC}> -DDIR=${CMAKE_CURRENT_BINARY_DIR}/${name}.np${n}
                     -P ${PROJECT_SOURCE_DIR}/tests/drivers/check_coordinates_file.cmake)
    set_tests_properties(driver.amg.${name}.np${n} PROPERTIES LABELS "host;mpi;driver" PROCESSORS ${n}
                         TIMEOUT 300 ENVIRONMENT "${TESSERA_TEST_ENV}")
  endforeach()
endforeach()
# --b FILE: the right-hand side from a file (each rank its rows) on 1-4 ranks (check_rhs_file.cmake).
foreach(n 1 2 3 4)
  add_test(NAME driver.amg.rhs_file.np${n}
           COMMAND ${CMAKE_COMMAND} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DRANKS=${n} -DDRIVER=$<TARGET_FILE:tessera-amg>
                   -DA=${_mat}/bcsstk08.mtx.gz -DROWS=1074 -DDIR=${CMAKE_CURRENT_BINARY_DIR}/rhs_file.np${n}
                   -P ${PROJECT_SOURCE_DIR}/tests/drivers/check_rhs_file.cmake)
  set_tests_properties(driver.amg.rhs_file.np${n} PROPERTIES LABELS "host;mpi;driver" PROCESSORS ${n}
                       TIMEOUT 300 ENVIRONMENT "${TESSERA_TEST_ENV}")
endforeach()
tessera_driver_test(driver.amg.rhs_wrong_shape RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND $<TARGET_FILE:tessera-amg> --backend host --A ${_mat}/bcsstk08.mtx.gz
                            --b ${CMAKE_CURRENT_BINARY_DIR}/bad_coordinates/5_nodes.mtx
                    EXPECT_OUTPUT "--b: expected a 1074 x 1 vector, got 5 x 3")
# Coordinates that cannot be A's (bcsstk08: 1074 rows, 358 nodes of 3 dofs), refused on every
# rank with exit code 2.
set(_xyz ${CMAKE_CURRENT_BINARY_DIR}/bad_coordinates)
set(_array "%%MatrixMarket matrix array real general\n")
string(REPEAT "0\n" 15 _zeros_15)
string(REPEAT "0\n" 179 _zeros_179)
string(REPEAT "0\n" 537 _zeros_537)
string(REPEAT "0\n" 1074 _zeros_1074)
file(WRITE ${_xyz}/four_columns.mtx "${_array}2 4\n0\n1\n0\n1\n0\n1\n0\n1\n")
file(WRITE ${_xyz}/nan.mtx "${_array}1 3\n0\nnan\n0\n")
file(WRITE ${_xyz}/5_nodes.mtx "${_array}5 3\n${_zeros_15}")
file(WRITE ${_xyz}/358_nodes.mtx "${_array}358 3\n${_zeros_1074}")
file(WRITE ${_xyz}/179_planar_nodes.mtx "${_array}179 2\n${_zeros_179}${_zeros_179}")
file(WRITE ${_xyz}/537_nodes.mtx "${_array}537 3\n${_zeros_1074}${_zeros_537}")
set(_amg $<TARGET_FILE:tessera-amg> --backend host)
set(_bcsstk08 --A ${_mat}/bcsstk08.mtx.gz)
tessera_driver_test(driver.amg.coordinates_with_gen RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_amg} --gen elasticity3d:4 --coordinates ${_xyz}/358_nodes.mtx
                    EXPECT_OUTPUT "--coordinates is for a matrix read with --A. --gen elasticity3d:4 makes its own")
tessera_driver_test(driver.amg.coordinates_four_columns RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_amg} ${_bcsstk08} --coordinates ${_xyz}/four_columns.mtx
                    EXPECT_OUTPUT "expected one row a node with 2 \\(x y\\) or 3 \\(x y z\\) columns, got 2 x 4")
tessera_driver_test(driver.amg.coordinates_planar_six_dofs RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_amg} ${_bcsstk08} --coordinates ${_xyz}/179_planar_nodes.mtx
                    EXPECT_OUTPUT "rigid-body modes in 2D need 2 dofs a node \\(the displacements\\) or 3 \\(the displacements and rotations\\), the block size is 6")
tessera_driver_test(driver.amg.coordinates_nan RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_amg} ${_bcsstk08} --coordinates ${_xyz}/nan.mtx
                    EXPECT_OUTPUT "is not finite")
tessera_driver_test(driver.amg.coordinates_not_whole_nodes RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_amg} ${_bcsstk08} --coordinates ${_xyz}/5_nodes.mtx
                    EXPECT_OUTPUT "5 nodes, but A's 1074 rows are not a whole number of dofs a node")
tessera_driver_test(driver.amg.coordinates_two_dofs RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_amg} ${_bcsstk08} --coordinates ${_xyz}/537_nodes.mtx
                    EXPECT_OUTPUT "rigid-body modes in 3D need 3 dofs a node \\(the displacements\\) or 6 \\(the displacements and rotations\\), the block size is 2")
tessera_driver_test(driver.amg.coordinates_block_size RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_amg} ${_bcsstk08} --coordinates ${_xyz}/358_nodes.mtx --block-size 6
                    EXPECT_OUTPUT "--block-size 6 disagrees with --coordinates: 1074 rows over 358 nodes are 3 dofs a node")
tessera_driver_test(driver.amg.coordinates_constant RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_amg} ${_bcsstk08} --coordinates ${_xyz}/358_nodes.mtx --null-space constant
                    EXPECT_OUTPUT "rigid-body near-null space. --null-space constant would ignore them")
tessera_driver_test(driver.amg.rigid_body_without_coordinates RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_amg} ${_bcsstk08} --null-space rigid-body
                    EXPECT_OUTPUT "--null-space rigid-body needs node coordinates: --coordinates FILE with --A")
# --near-null vectors that cannot be A's, or beside options that would make other vectors.
string(REPEAT "1\n" 1074 _ones_1074)
string(REPEAT "2\n" 1074 _twos_1074)
string(REPEAT "0\n" 1073 _zeros_1073)
file(WRITE ${_xyz}/zero_vector.mtx "${_array}1074 1\n${_zeros_1074}")
file(WRITE ${_xyz}/dependent_vectors.mtx "${_array}1074 2\n${_ones_1074}${_twos_1074}")
file(WRITE ${_xyz}/nan_vector.mtx "${_array}1074 1\n${_zeros_1073}nan\n")
foreach(case
    "near_null_zero|zero_vector.mtx|--near-null .*zero_vector.mtx: vector 0 is zero"
    "near_null_dependent|dependent_vectors.mtx|vector 1 is a combination of vectors 0..0 \\(its part outside"
    "near_null_nan|nan_vector.mtx|nan_vector.mtx:1076: value 'nan' is not finite"
    "near_null_rows|5_nodes.mtx|--near-null .*5_nodes.mtx: 5 x 3, expected A's 1074 rows and at least one vector")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 name)
  list(GET case 1 file)
  list(GET case 2 expected)
  tessera_driver_test(driver.amg.${name} RANKS 1 2 3 4 EXPECT_EXIT 2
                      COMMAND ${_amg} ${_bcsstk08} --near-null ${_xyz}/${file} EXPECT_OUTPUT "${expected}")
endforeach()
tessera_driver_test(driver.amg.near_null_sparse_file RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_amg} ${_bcsstk08} --near-null ${_mat}/bcsstk08.mtx.gz
                    EXPECT_OUTPUT "expected a Matrix Market array \\(one column a vector\\), got a 'coordinate' file")
tessera_driver_test(driver.amg.near_null_with_coordinates RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_amg} ${_bcsstk08} --near-null ${_xyz}/zero_vector.mtx --coordinates ${_xyz}/358_nodes.mtx
                    EXPECT_OUTPUT "--coordinates would make others \\(the rigid-body modes\\): give one of them")
tessera_driver_test(driver.amg.near_null_with_null_space RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_amg} ${_bcsstk08} --near-null ${_xyz}/zero_vector.mtx --null-space constant
                    EXPECT_OUTPUT "--near-null gives the near-null vectors themselves. --null-space constant would")
tessera_driver_test(driver.amg.near_null_block_size RANKS 1 2 3 4 EXPECT_EXIT 2
                    COMMAND ${_amg} ${_bcsstk08} --near-null ${_xyz}/zero_vector.mtx --block-size 5
                    EXPECT_OUTPUT "A's 1074 rows are not whole nodes of block size 5")
tessera_driver_test(driver.spmv.missing RANKS 1 2 3 4 EXPECT_EXIT 2 COMMAND ${_spmv} --A /nonexistent.mtx --backend host
                    EXPECT_OUTPUT "cannot open.*exit code 2")

# tessera-amg's near-null space (--near-null vectors, GAMG's orthonormal copy, the refusal of
# dependent vectors, the rigid-body modes of a rank's rows) on 1-4 ranks.
tessera_add_mpi_test(test_amg_near_null SOURCES drivers/test_amg_near_null.cpp
                     ${PROJECT_SOURCE_DIR}/drivers/amg_near_null.cpp LIBS tessera_driver_common tessera_amg)

# Host helpers of tessera-spgemm's row-batch mode (reference rows, sampled-row check, checksum).
tessera_add_test(test_spgemm_row_sample SOURCES drivers/test_spgemm_row_sample.cpp
                 ${PROJECT_SOURCE_DIR}/drivers/spgemm_row_batches.cpp LIBS tessera_driver_common)
