#pragma once
// Device-resident CSR and tile matrices (same arrays and invariants as the host formats in
// local/formats/), with exact host<->device copies.
#include "local/cuda/device_buffer.hpp"
#include "local/formats/csr.hpp"
#include "local/formats/tile_matrix.hpp"

namespace tessera::cuda {

template <class T>
struct DeviceCsr {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  DeviceBuffer<std::int64_t> row_ptr;
  DeviceBuffer<std::int32_t> col_idx;
  DeviceBuffer<T> values;
  /// Device bytes of the three arrays (the memory reports of the AMG preconditioners).
  std::int64_t bytes() const { return std::int64_t(row_ptr.bytes() + col_idx.bytes() + values.bytes()); }
};

template <class T>
struct DeviceTileMatrix {
  std::int64_t rows = 0, cols = 0, num_tiles = 0, nnz = 0;
  DeviceBuffer<std::int64_t> tile_row_ptr;
  DeviceBuffer<std::int32_t> tile_col;
  DeviceBuffer<std::uint64_t> bitmap;
  DeviceBuffer<std::int64_t> value_offset;
  DeviceBuffer<T> values;
  std::int64_t tile_rows() const { return tile::count(rows); }
  std::int64_t tile_cols() const { return tile::count(cols); }
};

template <class T>
DeviceCsr<T> upload(const Csr<T>& a, cudaStream_t stream = nullptr) {
  DeviceCsr<T> d;
  d.rows = a.rows;
  d.cols = a.cols;
  d.nnz = a.nnz();
  d.row_ptr.upload(a.row_ptr, stream);
  d.col_idx.upload(a.col_idx, stream);
  d.values.upload(a.values, stream);
  return d;
}

/// DeviceBuffer::release_on for the three arrays.
template <class T>
void release_on(DeviceCsr<T>& d, cudaStream_t stream) {
  d.row_ptr.release_on(stream);
  d.col_idx.release_on(stream);
  d.values.release_on(stream);
}

template <class T>
Csr<T> download(const DeviceCsr<T>& d, cudaStream_t stream = nullptr) {
  Csr<T> a;
  a.rows = d.rows;
  a.cols = d.cols;
  a.row_ptr = d.row_ptr.template download<HostArray<std::int64_t>>(stream);
  a.col_idx = d.col_idx.template download<HostArray<std::int32_t>>(stream);
  a.values = d.values.template download<HostArray<T>>(stream);
  return a;
}

template <class T>
DeviceTileMatrix<T> upload(const TileMatrix<T>& a, cudaStream_t stream = nullptr) {
  DeviceTileMatrix<T> d;
  d.rows = a.rows;
  d.cols = a.cols;
  d.num_tiles = a.num_tiles();
  d.nnz = a.nnz();
  d.tile_row_ptr.upload(a.tile_row_ptr, stream);
  d.tile_col.upload(a.tile_col, stream);
  d.bitmap.upload(a.bitmap, stream);
  d.value_offset.upload(a.value_offset, stream);
  d.values.upload(a.values, stream);
  return d;
}

template <class T>
TileMatrix<T> download(const DeviceTileMatrix<T>& d, cudaStream_t stream = nullptr) {
  TileMatrix<T> a;
  a.rows = d.rows;
  a.cols = d.cols;
  a.tile_row_ptr = d.tile_row_ptr.download(stream);
  a.tile_col = d.tile_col.download(stream);
  a.bitmap = d.bitmap.download(stream);
  a.value_offset = d.value_offset.download(stream);
  a.values = d.values.download(stream);
  return a;
}

}  // namespace tessera::cuda
