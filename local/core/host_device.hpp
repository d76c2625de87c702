#pragma once
// TESSERA_HD marks small helpers (bit tricks, index math) that both the host reference and
// the CUDA kernels call, so the two backends share one definition of the format's rules.
#if defined(__CUDACC__)
#define TESSERA_HD __host__ __device__ __forceinline__
#else
#define TESSERA_HD inline
#endif
