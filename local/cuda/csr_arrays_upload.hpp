#pragma once
// A CSR matrix's host arrays (CsrArrays: someone else's, in their index widths, such as a PETSc
// seqaij matrix's) to the device as they are: checked where they lie, copied once, the offsets
// widened to int64 and the columns narrowed to int32 on the device. A Csr copy first (to_csr,
// the host reference) would write every entry to fresh host pages before the upload.
#include <cuda_runtime_api.h>

#include <string>

#include "local/cuda/device_matrix.hpp"
#include "local/formats/csr_arrays.hpp"

namespace tessera::cuda {

/// The same DeviceCsr as upload(to_csr(a, what)): InputError as validate(a) (run first, on the
/// host threads), and `a`'s arrays may be reused once it returns.
template <class Offset, class Index>
DeviceCsr<double> upload(const CsrArrays<Offset, Index>& a, const std::string& what, cudaStream_t stream);

/// Whether `a` has `d`'s pattern: the same dimensions, row offsets and columns (compared on the
/// device, `a`'s offsets and columns copied there for it; waits for `stream`). Values are not
/// compared, and `a` is not validated: a pattern equal to a DeviceCsr's is valid.
template <class Offset, class Index>
bool same_pattern(const DeviceCsr<double>& d, const CsrArrays<Offset, Index>& a, cudaStream_t stream);

}  // namespace tessera::cuda
