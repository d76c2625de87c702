# Included by the check scripts that ctest runs with cmake -P: require_definitions(VAR...) fails
# the script, naming it and the first missing one, unless every VAR was given as -DVAR=...
function(require_definitions)
  get_filename_component(script "${CMAKE_SCRIPT_MODE_FILE}" NAME)
  foreach(var IN LISTS ARGN)
    if(NOT DEFINED ${var})
      message(FATAL_ERROR "${script}: -D${var}=... is required")
    endif()
  endforeach()
endfunction()
