# Every jobs/*.sbatch run for real: without Slurm (mpirun) and under a throw-away single-node
# Slurm on localhost (run-local-slurm.sh says how). Skipped (77) without slurm-wlm or root;
# it needs the drivers the scripts run, so it exists only when they are built.
if(TARGET tessera-spgemm)
  add_test(NAME slurm.jobs
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run-local-slurm.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  # RESOURCE_LOCK: the daemons bind the fixed ports 6817/6818. PROCESSORS: the multi-rank jobs
  # run 2 ranks.
  set_tests_properties(slurm.jobs PROPERTIES LABELS slurm TIMEOUT 300 SKIP_RETURN_CODE ${TESSERA_SKIP_CODE}
                       RESOURCE_LOCK slurm-ports PROCESSORS 2 ENVIRONMENT "${TESSERA_TEST_ENV}")

  # petsc-app.sbatch runs PETSc's tutorial ex45 with the plugin; both are defined later in this
  # directory (petsc/tests.cmake), hence the deferred call. Without them the script is skipped.
  function(tessera_slurm_pass_petsc_paths)
    if(TARGET petsc_tutorial_ex45 AND TARGET tessera_petsc)
      set_property(TEST slurm.jobs APPEND PROPERTY ENVIRONMENT
                   "TESSERA_PETSC_APP=$<TARGET_FILE:petsc_tutorial_ex45>"
                   "TESSERA_PETSC_PLUGIN=$<TARGET_FILE:tessera_petsc>")
    endif()
  endfunction()
  cmake_language(DEFER CALL tessera_slurm_pass_petsc_paths)
endif()
