# An elasticity (or frame) matrix read from a file with its node coordinates (--A A.mtx
# --coordinates XYZ.mtx) is solved as the generator's own problem is: the same rigid-body modes
# (MODES of them: 6 in 3D, 3 in 2D; with the rotation dofs where DOFS says the nodes rotate), so
# the same iterations and residual. The same modes given as vectors
# (--near-null MODES.mtx --block-size DOFS, written from the whole grid's centroid rather than
# summed over the ranks, so equal to rounding) take the same iterations and coarsen alike. Without
# either the file gets one constant a component (DOFS of them), and takes more iterations: the
# rotations are what the coordinates or the vectors add.
# With -DGAMG=1, PETSc GAMG given the vectors (--compare gamg: orthonormalised, MatNullSpaceCreate)
# takes the iterations it takes given the coordinates (MatNullSpaceCreateRigidBody; for nodes that
# rotate, which it does not know, the driver hands it the modes as vectors).
# Usage: cmake -DMPIEXEC=... -DRANKS=N -DDRIVER=.../tessera-amg -DWRITER=.../write_grid_problem
#              -DSPEC=elasticity3d:12 -DDOFS=3 -DMODES=6 -DDIR=scratch-dir [-DGAMG=1]
#              -P check_coordinates_file.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../support/require_definitions.cmake)
require_definitions(MPIEXEC RANKS DRIVER WRITER SPEC DOFS MODES DIR)
set(spec ${SPEC})
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
execute_process(COMMAND ${WRITER} ${spec} ${DIR}/A.mtx ${DIR}/xyz.mtx ${DIR}/modes.mtx RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "write_grid_problem exited with ${status}")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/solve_with_driver.cmake)

function(require condition_text)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "check failed: ${condition_text}")
  endif()
endfunction()

solve(generated generated --gen ${spec})
solve(from_files from_files --A ${DIR}/A.mtx --coordinates ${DIR}/xyz.mtx)
solve(constant constant --A ${DIR}/A.mtx --block-size ${DOFS})
solve(from_vectors from_vectors --A ${DIR}/A.mtx --near-null ${DIR}/modes.mtx --block-size ${DOFS})
foreach(run generated from_files constant from_vectors)
  foreach(key iterations relative_residual near_null_vectors near_null block_size operator_complexity)
    string(JSON ${run}_${key} GET "${${run}}" ${key})
  endforeach()
endforeach()

require("the files' near-null space has ${MODES} vectors, got ${from_files_near_null_vectors}"
        from_files_near_null_vectors EQUAL MODES)
require("block size ${DOFS} from the coordinates, got ${from_files_block_size}" from_files_block_size EQUAL DOFS)
# What each run says it used (nodes with as many dofs as modes rotate: 6 in 3D, 3 in 2D).
if(MODES EQUAL DOFS)
  set(turned ", their rotations too")
endif()
require("generated: '${generated_near_null}'"
        generated_near_null STREQUAL "rigid-body modes of the grid's nodes${turned}")
require("from files: '${from_files_near_null}'"
        from_files_near_null STREQUAL "rigid-body modes of the --coordinates nodes${turned}")
require("constant: '${constant_near_null}'" constant_near_null STREQUAL "one constant a component")
require("vectors: '${from_vectors_near_null}'"
        from_vectors_near_null STREQUAL "the vectors of --near-null ${DIR}/modes.mtx")
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
require("the vectors file holds ${MODES} vectors, got ${from_vectors_near_null_vectors}"
        from_vectors_near_null_vectors EQUAL MODES)
require("the vectors take the generator's ${generated_iterations} iterations, got ${from_vectors_iterations}"
        from_vectors_iterations EQUAL generated_iterations)
require("op. complexity: vectors ${from_vectors_operator_complexity}, generated ${generated_operator_complexity}"
        from_vectors_operator_complexity STREQUAL generated_operator_complexity)

if(GAMG)
  solve(gamg_coordinates gamg_coordinates --A ${DIR}/A.mtx --coordinates ${DIR}/xyz.mtx --compare gamg)
  solve(gamg_vectors gamg_vectors --A ${DIR}/A.mtx --near-null ${DIR}/modes.mtx --block-size ${DOFS} --compare gamg)
  foreach(run gamg_coordinates gamg_vectors)
    foreach(key iterations configuration)
      string(JSON ${run}_${key} GET "${${run}}" compare 1 ${key})
    endforeach()
  endforeach()
  require("GAMG is told of the vectors: ${gamg_vectors_configuration}"
          gamg_vectors_configuration MATCHES ", ${MODES} given near-null vectors")
  require("GAMG's iterations: vectors ${gamg_vectors_iterations}, coordinates ${gamg_coordinates_iterations}"
          gamg_vectors_iterations EQUAL gamg_coordinates_iterations)
endif()
message("check_coordinates_file: PASS (${SPEC} on ${RANKS} rank(s): ${from_files_iterations} iterations with the "
        "coordinates, as generated, and with the vectors; ${constant_iterations} without)")
