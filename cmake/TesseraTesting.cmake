# Test helpers. Every test asserts real values; GPU tests carry the label `gpu` and, with no
# device present, exit with code 77 which ctest counts as *skipped* (never as passed).
include(GoogleTest)
find_package(GTest REQUIRED)

set(TESSERA_SKIP_CODE 77)
# In every test program: new host arrays poisoned (tests/support/poison_host_arrays.cpp).
set(TESSERA_POISON_HOST_ARRAYS_SOURCE ${PROJECT_SOURCE_DIR}/tests/support/poison_host_arrays.cpp)
# The drivers and MPI programs that tests run get it from the environment (TESSERA_POISON_HOST_ARRAYS).
set(TESSERA_TEST_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1"
    "TESSERA_MATRIX_DIR=${PROJECT_SOURCE_DIR}/../shared/matrices" "TESSERA_POISON_HOST_ARRAYS=1")

# tessera_add_test(NAME SOURCES ... [LIBS ...]): host test, one ctest entry per GoogleTest case.
function(tessera_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES} ${TESSERA_POISON_HOST_ARRAYS_SOURCE})
  target_link_libraries(${name} PRIVATE tessera_test_support GTest::gtest_main ${T_LIBS})
  # No ENVIRONMENT: gtest_discover_tests splits a list-valued property into separate arguments
  # (CMake 3.25 gave these tests only TESSERA_TEST_ENV's first variable and read the rest as
  # property names). They need none of it: they start no MPI, find the matrices through the
  # compiled-in default (tests/support/matrix_files.cpp) and poison host arrays themselves.
  # DISCOVERY_TIMEOUT: listing the cases loads the CUDA libraries the library links (about
  # 1.3 GB: cuBLASLt, NCCL, cuSPARSE, cuSOLVER); from a cold page cache that took CI more than
  # the default 5 s and ctest gave up before running anything (0.15 s when warm).
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 300 PROPERTIES LABELS host)
endfunction()

# tessera_add_gpu_test(NAME SOURCES ... [LIBS ...]): device test against the host reference.
# Built whenever nvcc exists (so CI compiles it); run only where a GPU is present.
function(tessera_add_gpu_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  if(TESSERA_HAVE_CUDA)
    add_executable(${name} ${T_SOURCES} ${TESSERA_POISON_HOST_ARRAYS_SOURCE})
    target_link_libraries(${name} PRIVATE tessera_test_support tessera_gpu_test_main GTest::gtest ${T_LIBS})
    add_test(NAME ${name} COMMAND ${name})
  else()
    add_test(NAME ${name} COMMAND sh -c "echo 'SKIPPED: ${name} needs the CUDA backend (built without nvcc)'; exit ${TESSERA_SKIP_CODE}")
  endif()
  set_tests_properties(${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE ${TESSERA_SKIP_CODE}
                       ENVIRONMENT "${TESSERA_TEST_ENV}")
endfunction()

# tessera_add_mpi_test(NAME SOURCES ... [LIBS ...] [RANKS 1 2 3 4] [GPU [OWN_GPU]] [DEFINES ...]):
# one ctest entry per rank count, run through mpiexec (oversubscribed: CI has 2 cores). GPU
# tests run wherever every rank sees a device, ranks sharing one through the host-staged
# transport; OWN_GPU ones (NCCL itself, the peer route) need a GPU per rank and skip otherwise.
function(tessera_add_mpi_test name)
  cmake_parse_arguments(T "GPU;OWN_GPU" "" "SOURCES;LIBS;RANKS;DEFINES" ${ARGN})
  if(NOT T_RANKS)
    set(T_RANKS 1 2 3 4)
  endif()
  if(T_GPU AND NOT TESSERA_HAVE_CUDA)
    foreach(n IN LISTS T_RANKS)
      add_test(NAME ${name}.np${n} COMMAND sh -c "echo 'SKIPPED: needs the CUDA backend'; exit ${TESSERA_SKIP_CODE}")
      set_tests_properties(${name}.np${n} PROPERTIES LABELS "gpu;mpi" SKIP_RETURN_CODE ${TESSERA_SKIP_CODE})
    endforeach()
    return()
  endif()
  add_executable(${name} ${T_SOURCES} ${TESSERA_POISON_HOST_ARRAYS_SOURCE})
  if(T_DEFINES)
    target_compile_definitions(${name} PRIVATE ${T_DEFINES})
  endif()
  if(T_GPU)
    set(main tessera_gpu_mpi_test_main)
    if(T_OWN_GPU)
      set(main tessera_gpu_own_mpi_test_main)
    endif()
    target_link_libraries(${name} PRIVATE tessera_test_support ${main} GTest::gtest ${T_LIBS})
    set(labels "gpu;mpi")
  else()
    target_link_libraries(${name} PRIVATE tessera_test_support tessera_mpi_test_main GTest::gtest ${T_LIBS})
    set(labels "host;mpi")
  endif()
  foreach(n IN LISTS T_RANKS)
    add_test(NAME ${name}.np${n}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} --oversubscribe ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}.np${n} PROPERTIES LABELS "${labels}" PROCESSORS ${n} TIMEOUT 600
                         SKIP_RETURN_CODE ${TESSERA_SKIP_CODE} ENVIRONMENT "${TESSERA_TEST_ENV}")
  endforeach()
endfunction()

# tessera_add_mpi_test_variant(NAME VARIANT ENV VAR=value... [RANKS ...] [GPU [OWN_GPU]]): more
# ctest entries, NAME.VARIANT.npN, of the executable tessera_add_mpi_test(NAME ...) made, run with
# an extra environment (e.g. the NCCL halo route where the default would be the peer route).
# OWN_GPU: the variant needs a GPU per rank (where ranks share one it would repeat the default
# entries) and is skipped without (TESSERA_TEST_OWN_GPU, tests/support/mpi_test_main.cpp).
function(tessera_add_mpi_test_variant name variant)
  cmake_parse_arguments(T "GPU;OWN_GPU" "" "ENV;RANKS" ${ARGN})
  if(T_OWN_GPU)
    list(APPEND T_ENV TESSERA_TEST_OWN_GPU=1)
  endif()
  if(NOT T_RANKS)
    set(T_RANKS 1 2 3 4)
  endif()
  foreach(n IN LISTS T_RANKS)
    set(test ${name}.${variant}.np${n})
    if(T_GPU AND NOT TESSERA_HAVE_CUDA)
      add_test(NAME ${test} COMMAND sh -c "echo 'SKIPPED: needs the CUDA backend'; exit ${TESSERA_SKIP_CODE}")
      set_tests_properties(${test} PROPERTIES LABELS "gpu;mpi" SKIP_RETURN_CODE ${TESSERA_SKIP_CODE})
      continue()
    endif()
    add_test(NAME ${test}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} --oversubscribe ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set(labels "host;mpi")
    if(T_GPU)
      set(labels "gpu;mpi")
    endif()
    set_tests_properties(${test} PROPERTIES LABELS "${labels}" PROCESSORS ${n} TIMEOUT 600
                         SKIP_RETURN_CODE ${TESSERA_SKIP_CODE} ENVIRONMENT "${TESSERA_TEST_ENV};${T_ENV}")
  endforeach()
endfunction()
