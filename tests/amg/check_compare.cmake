# Runs `tessera-amg --gen poisson3d:16 --tol 1e-8 --compare hypre,gamg --json JSON` on RANKS
# ranks and checks the side-by-side JSON: Tessera and both baselines present, each converged with
# iterations > 0, a recomputed relative residual <= 1e-8, positive times, real complexities and
# speedups (their arithmetic is checked in test_baselines.cpp, CMake has no floating point).
# Usage: cmake -DMPIEXEC=... -DRANKS=N -DDRIVER=.../tessera-amg -DJSON=out.json -P check_compare.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../support/require_definitions.cmake)
require_definitions(MPIEXEC RANKS DRIVER JSON)
file(REMOVE ${JSON})
execute_process(COMMAND ${MPIEXEC} -np ${RANKS} --oversubscribe ${DRIVER} --gen poisson3d:16 --tol 1e-8
                        --compare hypre,gamg --json ${JSON}
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
message("${output}${errors}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "tessera-amg exited with ${status}")
endif()
file(READ ${JSON} json)

function(require condition_text)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "check failed: ${condition_text}")
  endif()
endfunction()

string(JSON rows LENGTH "${json}" compare)
require("compare has 3 rows (Tessera, hypre, gamg), got ${rows}" rows EQUAL 3)
set(expected_names "Tessera" "hypre BoomerAMG" "PETSc GAMG")
math(EXPR last "${rows} - 1")
foreach(i RANGE ${last})
  list(GET expected_names ${i} expected)
  foreach(key solver converged iterations relative_residual setup_seconds solve_seconds total_seconds
              operator_complexity grid_complexity tessera_speedup)
    string(JSON ${key} GET "${json}" compare ${i} ${key})
  endforeach()
  string(FIND "${solver}" "${expected}" at)
  require("row ${i} is '${solver}', expected ${expected}" at EQUAL 0)
  require("${solver}: converged is ${converged}" converged)
  require("${solver}: iterations ${iterations} > 0" iterations GREATER 0)
  require("${solver}: relative residual ${relative_residual} <= 1e-8" relative_residual LESS_EQUAL 1e-8)
  require("${solver}: relative residual ${relative_residual} > 0" relative_residual GREATER 0)
  require("${solver}: setup ${setup_seconds} s > 0" setup_seconds GREATER 0)
  require("${solver}: solve ${solve_seconds} s > 0" solve_seconds GREATER 0)
  require("${solver}: operator complexity ${operator_complexity} >= 1" operator_complexity GREATER_EQUAL 1)
  require("${solver}: grid complexity ${grid_complexity} >= 1" grid_complexity GREATER_EQUAL 1)
  if(i EQUAL 0)
    require("Tessera's speedup over itself is 1, got ${tessera_speedup}" tessera_speedup EQUAL 1)
  else()
    require("${solver}: Tessera speedup ${tessera_speedup} > 0" tessera_speedup GREATER 0)
  endif()
endforeach()
message("check_compare: PASS (${rows} solvers converged to <= 1e-8 on ${RANKS} rank(s))")
