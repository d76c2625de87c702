# tessera-amg --pmat separate-kinds --json: the JSON names the matrix the hierarchy was built from
# and gives the hierarchy's entries over A's (operator_complexity_over_a), which is below the
# operator complexity over the separated level 0 (a frame's level 0 keeps about half of A's
# entries) and above 0; a hierarchy built from A has no such key (its operator complexity is over
# A already).
# Usage: cmake -DMPIEXEC=... -DRANKS=N -DDRIVER=.../tessera-amg -DDIR=scratch -P check_pmat_json.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../support/require_definitions.cmake)
require_definitions(MPIEXEC RANKS DRIVER DIR)
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
include(${CMAKE_CURRENT_LIST_DIR}/solve_with_driver.cmake)
solve(separated separated --gen frame2d:48:30 --pmat separate-kinds)
solve(from_a from_a --gen frame2d:48:30)
string(JSON pmat GET "${separated}" pmat)
string(JSON complexity GET "${separated}" operator_complexity)
string(JSON over_a GET "${separated}" operator_complexity_over_a)
if(NOT pmat STREQUAL "separate-kinds")
  message(FATAL_ERROR "--pmat separate-kinds: the JSON's pmat is '${pmat}'")
endif()
if(NOT over_a GREATER 0 OR NOT over_a LESS complexity)
  message(FATAL_ERROR "operator_complexity_over_a ${over_a} is not in (0, ${complexity}), the operator complexity "
                      "over the separated level 0")
endif()
string(JSON from_a_pmat GET "${from_a}" pmat)
string(JSON absent ERROR_VARIABLE missing GET "${from_a}" operator_complexity_over_a)
if(NOT from_a_pmat STREQUAL "a" OR NOT missing)
  message(FATAL_ERROR "built from A: pmat '${from_a_pmat}', operator_complexity_over_a '${absent}' (expected none)")
endif()
message("check_pmat_json: PASS (${RANKS} rank(s): operator complexity ${complexity} over level 0, ${over_a} over A)")
