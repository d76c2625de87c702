# Every jobs/*.sbatch run for real: without Slurm (mpirun) and under a throw-away single-node
# Slurm on localhost (run-local-slurm.sh says how). Skipped (77) without slurm-wlm or root;
# it needs the drivers the scripts run, so it exists only when they are built.
if(TARGET tessera-spgemm)
  add_test(NAME slurm.jobs
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run-local-slurm.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  # RESOURCE_LOCK: the daemons bind the fixed ports 6817/6818.
  set_tests_properties(slurm.jobs PROPERTIES LABELS slurm TIMEOUT 240 SKIP_RETURN_CODE ${TESSERA_SKIP_CODE}
                       RESOURCE_LOCK slurm-ports ENVIRONMENT "${TESSERA_TEST_ENV}")
endif()
