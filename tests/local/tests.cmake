tessera_add_test(test_formats SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_formats.cpp)
