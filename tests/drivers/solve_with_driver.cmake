# Included by the driver check scripts: solve(out_var name ARGS...) runs tessera-amg on RANKS
# ranks (host backend, tolerance 1e-8) with ARGS, prints its output, fails the script on a
# non-zero exit, and leaves the JSON it wrote (DIR/name.json) in the variable `out_var`.
# Needs MPIEXEC, RANKS, DRIVER and DIR.
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
