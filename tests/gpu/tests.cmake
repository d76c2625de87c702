# gpu tests are added here (tessera_add_gpu_test)
