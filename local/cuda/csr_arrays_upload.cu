#include "local/cuda/csr_arrays_upload.hpp"

#include <type_traits>

#include "local/cuda/index_kernels.cuh"

namespace tessera::cuda {
namespace {

// n host values of type From into device memory of type To: straight when the types agree,
// otherwise through a device copy of the From values, converted there.
template <class From, class To>
void upload_as(const From* host, std::int64_t n, To* device, cudaStream_t stream) {
  if (n <= 0) return;
  if constexpr (std::is_same_v<From, To>) {
    copy_to_device(device, host, std::size_t(n) * sizeof(To), stream);
  } else {
    DeviceBuffer<From> staged(std::size_t(n), stream);  // freed after the conversion, stream-ordered
    copy_to_device(staged.data(), host, staged.bytes(), stream);
    convert(n, staged.data(), device, stream);
  }
}

// A host array beside a device one of another width: the host one copied as it is.
template <class T>
DeviceBuffer<T> copy_as_is(const T* host, std::int64_t n, cudaStream_t stream) {
  DeviceBuffer<T> d(std::size_t(n), stream);
  upload_as(host, n, d.data(), stream);
  return d;
}

}  // namespace

template <class Offset, class Index>
DeviceCsr<double> upload(const CsrArrays<Offset, Index>& a, const std::string& what, cudaStream_t stream) {
  validate(a, what);  // columns then fit int32: the narrowing below loses nothing
  DeviceCsr<double> d;
  d.rows = a.rows;
  d.cols = a.cols;
  d.nnz = a.nnz();
  d.row_ptr.allocate(std::size_t(a.rows) + 1, stream);
  d.col_idx.allocate(std::size_t(d.nnz), stream);
  d.values.allocate(std::size_t(d.nnz), stream);
  upload_as(a.row_ptr, a.rows + 1, d.row_ptr.data(), stream);
  upload_as(a.col_idx, d.nnz, d.col_idx.data(), stream);
  upload_as(a.values, d.nnz, d.values.data(), stream);
  // Small copies return once staged, converted copies free their staging stream-ordered: wait,
  // so that `a` may be reused and a failure surfaces here.
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  return d;
}

template <class Offset, class Index>
bool same_pattern(const DeviceCsr<double>& d, const CsrArrays<Offset, Index>& a, cudaStream_t stream) {
  if (!a.row_ptr || a.rows != d.rows || a.cols != d.cols || a.nnz() != d.nnz) return false;
  const DeviceBuffer<Offset> offsets = copy_as_is(a.row_ptr, a.rows + 1, stream);
  if (any_difference(a.rows + 1, d.row_ptr.data(), offsets.data(), stream)) return false;
  const DeviceBuffer<Index> columns = copy_as_is(a.col_idx, d.nnz, stream);
  return !any_difference(d.nnz, d.col_idx.data(), columns.data(), stream);
}

#define TESSERA_INSTANTIATE(Offset, Index)                                                                         \
  template DeviceCsr<double> upload(const CsrArrays<Offset, Index>&, const std::string&, cudaStream_t);           \
  template bool same_pattern(const DeviceCsr<double>&, const CsrArrays<Offset, Index>&, cudaStream_t);
TESSERA_INSTANTIATE(std::int32_t, std::int32_t)
TESSERA_INSTANTIATE(std::int64_t, std::int64_t)
TESSERA_INSTANTIATE(std::int64_t, std::int32_t)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::cuda
