tessera_add_test(test_amg_aggregation SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_aggregation.cpp LIBS tessera_amg)
tessera_add_test(test_amg_prolongator SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_prolongator.cpp LIBS tessera_amg)
tessera_add_test(test_amg_solve SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_solve.cpp LIBS tessera_amg)
tessera_add_test(test_amg_input SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_input.cpp LIBS tessera_amg)
