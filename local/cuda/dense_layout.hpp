#pragma once
// Dense matrices between layouts on the device: the column-major X of an SpMM copied to a
// row-major scratch, so that kernels whose lanes run along a row of X read it coalesced.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "local/core/host_device.hpp"

namespace tessera::cuda {

/// Offset of element (r, c) of a dense matrix with `height` rows and k columns: row-major
/// (leading dimension k) or column-major (leading dimension height).
template <bool kRowMajor>
TESSERA_HD std::int64_t dense_index(std::int64_t r, std::int64_t c, std::int64_t height, std::int64_t k) {
  return kRowMajor ? r * k + c : c * height + r;
}

/// dst (row-major, leading dimension cols) = src (column-major, leading dimension rows).
/// 32x32 tiles through shared memory: both sides are read and written coalesced.
template <class T>
void col_to_row_major(std::int64_t rows, std::int64_t cols, const T* src, T* dst, cudaStream_t stream = nullptr);

}  // namespace tessera::cuda
