# find_package(Tessera) from an installed tree (install + build a consumer + run it).
add_test(NAME packaging.find_package
         COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}/consumer
                 -DWORK_DIR=${PROJECT_BINARY_DIR}/packaging-test -P ${CMAKE_CURRENT_LIST_DIR}/check_install.cmake)
set_tests_properties(packaging.find_package PROPERTIES LABELS host TIMEOUT 600 RUN_SERIAL ON
                     PASS_REGULAR_EXPRESSION "consumer: 4096 rows, [2-9] levels")
