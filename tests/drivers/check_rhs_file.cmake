# tessera-amg --b FILE: the right-hand side read from a Matrix Market array (on several ranks
# each rank reads its rows, by byte ranges). b = all ones as a file solves exactly as the default
# b (the same iterations and residual, bit for bit); b = 2 (all twos) too, scaling being exact
# in binary; a b of other values takes its own iterations and converges. (--coarse-size 100:
# several levels, so that the iterations are a real count.)
# Usage: cmake -DMPIEXEC=... -DRANKS=N -DDRIVER=.../tessera-amg -DA=matrix.mtx.gz -DROWS=n -DDIR=scratch
#              -P check_rhs_file.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../support/require_definitions.cmake)
require_definitions(MPIEXEC RANKS DRIVER A ROWS DIR)
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
set(header "%%MatrixMarket matrix array real general\n% a comment\n${ROWS} 1\n")
string(REPEAT "1\n" ${ROWS} ones)
string(REPEAT "2.0\n" ${ROWS} twos)
file(WRITE ${DIR}/ones.mtx "${header}${ones}")
file(WRITE ${DIR}/twos.mtx "${header}${twos}")
set(values "")
foreach(i RANGE 1 ${ROWS})
  math(EXPR v "(${i} * 37) % 11 - 5")
  string(APPEND values "${v}\n")
endforeach()
file(WRITE ${DIR}/mixed.mtx "${header}${values}")

include(${CMAKE_CURRENT_LIST_DIR}/solve_with_driver.cmake)
set(common --A ${A} --coarse-size 100)
solve(default default ${common})
solve(ones ones ${common} --b ${DIR}/ones.mtx)
solve(twos twos ${common} --b ${DIR}/twos.mtx)
solve(mixed mixed ${common} --b ${DIR}/mixed.mtx)
foreach(run default ones twos mixed)
  foreach(key iterations relative_residual)
    string(JSON ${run}_${key} GET "${${run}}" ${key})
  endforeach()
endforeach()
foreach(run ones twos)
  if(NOT ${run}_iterations EQUAL default_iterations OR NOT ${run}_relative_residual STREQUAL default_relative_residual)
    message(FATAL_ERROR "b = ${run}: ${${run}_iterations} iterations, residual ${${run}_relative_residual}; "
                        "the default b: ${default_iterations}, ${default_relative_residual}")
  endif()
endforeach()
if(mixed_relative_residual STREQUAL default_relative_residual)
  message(FATAL_ERROR "b = mixed gave the default b's residual ${default_relative_residual}: was the file read?")
endif()
message("check_rhs_file: PASS (${RANKS} rank(s): ${default_iterations} iterations with b = 1 and 2 from files, as the "
        "default; ${mixed_iterations} with the mixed b)")
