#pragma once
// Host Csr in, device product, host Csr out: the offload behind the AMG setup products on one
// GPU (amg/cuda/device_level_ops) and the rank-local products of the distributed SpGEMM/PtAP
// (dist/cuda/device_local_spgemm). The operands are uploaded and multiplied either
//   tile:     converted to 8x8 bitmap tiles on the device (to_tiles), multiplied by the
//             tensor-core TileSpgemm (symbolic + numeric), converted back (to_csr);
//   cusparse: cuSPARSE SpGEMM ALG1 on CSR with int32 offsets (the ablation baseline).
// Both keep the structural pattern (entries that cancel to zero stay, no drop_zeros), as
// ref::spgemm with keep_zeros does: callers that refresh values in place rely on it. Rows of
// the result are sorted (cuSPARSE does not promise it, the Csr invariant needs it).
// Operands with no entries (or a zero dimension) give the empty product without a device call.
// Runs on the current device, on the default stream, synchronously.
#include <string>

#include "local/formats/csr.hpp"

namespace tessera::cuda {

enum class OffloadSpgemm { tile, cusparse };

/// "tile" | "cusparse"; anything else is an InputError.
OffloadSpgemm parse_offload_spgemm(const std::string& name);
const char* to_string(OffloadSpgemm which);

/// Where the offloaded products spent their time (wall seconds around synchronised steps).
struct OffloadStats {
  double upload = 0;    // host -> device (Csr operands)
  double convert = 0;   // CSR -> tiles and tiles -> CSR (tile path) or int32 offsets (cuSPARSE)
  double product = 0;   // the SpGEMMs themselves: symbolic + numeric (tile) or cuSPARSE
  double download = 0;  // device -> host (the products), row sorting included
  int products = 0;     // device SpGEMM calls (empty products skipped on the host not counted)
  double transfers() const { return upload + download; }
  double total() const { return upload + convert + product + download; }
  OffloadStats& operator+=(const OffloadStats& o);
};

/// C = A*B on the device. InputError if a.cols != b.rows; DeviceError if a CUDA or cuSPARSE
/// call fails (out of memory included). Adds its timings to `stats`.
Csr<double> offload_spgemm(const Csr<double>& a, const Csr<double>& b, OffloadSpgemm which, OffloadStats& stats);

/// C = P^T A P on the device as R * (A * P) with R = P^T formed on the host (ref::transpose)
/// and A*P kept on the device between the two products. A square, a.cols == p.rows.
Csr<double> offload_galerkin(const Csr<double>& a, const Csr<double>& p, OffloadSpgemm which, OffloadStats& stats);

}  // namespace tessera::cuda
