# An elasticity matrix read from a file with its node coordinates (--A A.mtx --coordinates
# XYZ.mtx) is solved as the generator's own problem is: the same rigid-body modes (MODES of them:
# 6 in 3D, 3 in 2D), so the same iterations and residual. Without the coordinates the file gets
# one constant a component (DOFS of them), and takes more iterations: the coordinates are what
# the rotations need.
# Usage: cmake -DMPIEXEC=... -DRANKS=N -DDRIVER=.../tessera-amg -DWRITER=.../write_grid_problem
#              -DSPEC=elasticity3d:12 -DDOFS=3 -DMODES=6 -DDIR=scratch-dir -P check_coordinates_file.cmake
foreach(var MPIEXEC RANKS DRIVER WRITER SPEC DOFS MODES DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_coordinates_file.cmake: -D${var}=... is required")
  endif()
endforeach()
set(spec ${SPEC})
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
execute_process(COMMAND ${WRITER} ${spec} ${DIR}/A.mtx ${DIR}/xyz.mtx RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "write_grid_problem exited with ${status}")
endif()

# Runs the driver on RANKS ranks with `args`, leaves its JSON in the variable `out_var`.
function(solve out_var name)
  execute_process(COMMAND ${MPIEXEC} -np ${RANKS} --oversubscribe ${DRIVER} --backend host --tol 1e-8
                          --json ${DIR}/${name}.json ${ARGN}
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  message("${name}:\n${output}${errors}")
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "tessera-amg ${ARGN} exited with ${status}")
  endif()
  file(READ ${DIR}/${name}.json json)
  set(${out_var} "${json}" PARENT_SCOPE)
endfunction()

function(require condition_text)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "check failed: ${condition_text}")
  endif()
endfunction()

solve(generated generated --gen ${spec})
solve(from_files from_files --A ${DIR}/A.mtx --coordinates ${DIR}/xyz.mtx)
solve(constant constant --A ${DIR}/A.mtx --block-size ${DOFS})
foreach(run generated from_files constant)
  foreach(key iterations relative_residual near_null_vectors block_size operator_complexity)
    string(JSON ${run}_${key} GET "${${run}}" ${key})
  endforeach()
endforeach()

require("the files' near-null space has ${MODES} vectors, got ${from_files_near_null_vectors}"
        from_files_near_null_vectors EQUAL MODES)
require("block size ${DOFS} from the coordinates, got ${from_files_block_size}" from_files_block_size EQUAL DOFS)
require("the files take the generator's ${generated_iterations} iterations, got ${from_files_iterations}"
        from_files_iterations EQUAL generated_iterations)
require("the files give the generator's residual ${generated_relative_residual}, got ${from_files_relative_residual}"
        from_files_relative_residual STREQUAL generated_relative_residual)
require("the files give the generator's operator complexity ${generated_operator_complexity}, got ${from_files_operator_complexity}"
        from_files_operator_complexity STREQUAL generated_operator_complexity)
require("without coordinates: ${DOFS} constant vectors, got ${constant_near_null_vectors}"
        constant_near_null_vectors EQUAL DOFS)
require("the constant space takes more iterations (${constant_iterations}) than the rigid-body modes (${from_files_iterations})"
        constant_iterations GREATER from_files_iterations)
message("check_coordinates_file: PASS (${SPEC} on ${RANKS} rank(s): ${from_files_iterations} iterations with the "
        "coordinates, as generated; ${constant_iterations} without)")
