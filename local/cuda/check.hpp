#pragma once
// Every CUDA, cuSPARSE and NCCL call is checked; a failure becomes tessera::DeviceError naming
// the call and the location. Kernel launches are followed by TESSERA_CHECK_LAUNCH().
#include <cuda_runtime_api.h>

#include "local/core/error.hpp"

#define TESSERA_CUDA_CHECK(call)                                                                   \
  do {                                                                                             \
    const cudaError_t tessera_status_ = (call);                                                    \
    if (tessera_status_ != cudaSuccess)                                                            \
      throw ::tessera::DeviceError(::tessera::detail::concat(#call, " failed at ", __FILE__, ":",  \
                                                             __LINE__, ": ",                       \
                                                             cudaGetErrorString(tessera_status_))); \
  } while (0)

#define TESSERA_CHECK_LAUNCH() TESSERA_CUDA_CHECK(cudaGetLastError())
