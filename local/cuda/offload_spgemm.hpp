#pragma once
// Host Csr in, device product, host Csr out: the offload behind the AMG setup products on one
// GPU (amg/cuda/device_level_ops) and the rank-local products of the distributed SpGEMM/PtAP
// (dist/cuda/device_local_spgemm). A thin wrapper of the one device SpGEMM driver
// (local/cuda/device_product.hpp): the operands are uploaded (A may also come from the device),
// bound (ProductOperand), multiplied by a one-shot DeviceProduct (keep_plan false: no plan
// outlives the call) and downloaded:
//   tile:     8x8 bitmap tiles on the device, the tensor-core TileSpgemm (symbolic + numeric),
//             C converted back to CSR on the device;
//   cusparse: cuSPARSE SpGEMM ALG1 on the operands in place (int32 row offsets), C's rows
//             sorted on the device (CUB segmented sort: cuSPARSE does not promise sorted rows,
//             the Csr invariant needs them);
//   hash:     Tessera's row-wise hash SpGEMM (local/cuda/hash_spgemm.hpp) on the CSR operands in
//             place, sorted C, exact allocation;
//   automatic: per product, the engine the work estimate picks (spgemm_engine_choice.hpp: tile
//             SpGEMM where tiles are well filled, else hash SpGEMM, cuSPARSE for power-law
//             rows), resolved on the device CSR operands before they are bound.
// All three keep the structural pattern (entries that cancel to zero stay, no drop_zeros), as
// ref::spgemm with keep_zeros does: callers that refresh values in place rely on it.
// Operands with no entries (or a zero dimension) give the empty product without a device call.
// Runs on the current device, on the default stream, synchronously.
#include <cstdint>
#include <string>

#include "local/formats/csr.hpp"

namespace tessera::cuda {

enum class OffloadSpgemm { tile, cusparse, hash, automatic };

template <class T>
struct DeviceCsr;  // local/cuda/device_matrix.hpp (declared only: this header is host-safe)

/// "tile" | "cusparse" | "hash" | "auto"; anything else is an InputError.
OffloadSpgemm parse_offload_spgemm(const std::string& name);
const char* to_string(OffloadSpgemm which);

/// Where the offloaded products spent their time (wall seconds around synchronised steps), on
/// DeviceProduct's phases:
///   convert  = ProductOperand::bind (CSR -> tiles, or int32 row offsets for cuSPARSE; nothing
///              for hash) and DeviceProduct::result_csr (tiles -> CSR, cuSPARSE's C row-sorted by
///              CUB and given int64 offsets, or hash's sorted C handed over), A*P's included in
///              the Galerkin product on the cuSPARSE and hash paths, and automatic's work
///              estimates;
///   product  = DeviceProduct::multiply (TileSpgemm or HashSpgemm symbolic + numeric, or
///              cuSPARSE's one-shot workEstimation + compute + copy, its buffers' allocations
///              included).
struct OffloadStats {
  double upload = 0;    // host -> device (Csr operands; R = P^T is formed on the host, not timed)
  double convert = 0;   // see above: format changes on the device, C's row sort included
  double product = 0;   // the SpGEMMs themselves
  double download = 0;  // device -> host (the products' sorted CSR)
  int products = 0;     // device SpGEMM calls (empty products, skipped without one, not counted)
  int tile_products = 0;  // of which on the tile SpGEMM: with cusparse_products, what automatic chose
  int cusparse_products = 0;  // of which on cuSPARSE (the rest on the hash SpGEMM)
  double transfers() const { return upload + download; }
  double total() const { return upload + convert + product + download; }
  OffloadStats& operator+=(const OffloadStats& o);
};

/// C = A*B on the device. InputError if a.cols != b.rows; DeviceError if a CUDA or cuSPARSE
/// call fails (out of memory included). Adds its timings to `stats`.
Csr<double> offload_spgemm(const Csr<double>& a, const Csr<double>& b, OffloadSpgemm which, OffloadStats& stats);

/// The same with A already on the device (for example assembled there from a device copy of
/// a distributed matrix): it is moved in, converted in place and freed by the product, and must
/// be ready on the default stream. Not uploaded, so not timed as a transfer.
Csr<double> offload_spgemm(DeviceCsr<double>&& a, const Csr<double>& b, OffloadSpgemm which, OffloadStats& stats);

/// C = A*B with both operands on the device and C left there, rows sorted (no download): for a
/// caller whose next step reads C on the device (the distributed smoothing's merge). A is moved in
/// and freed as above; B is only read (the product's tiles of it are its own).
DeviceCsr<double> offload_spgemm_on_device(DeviceCsr<double>&& a, const DeviceCsr<double>& b, OffloadSpgemm which,
                                           OffloadStats& stats);

/// L * (A * B) on the device, A*B kept there between the two products (in tiles when both run
/// on tiles, else in sorted CSR): no download and upload of the inner product. Each product
/// picks its engine as offload_spgemm does. `inner_entries`, if given, receives nnz(A*B) (the
/// inner product is formed, for its count, even when L has no entries). InputError if the
/// dimensions do not chain.
Csr<double> offload_chain(const Csr<double>& l, const Csr<double>& a, const Csr<double>& b, OffloadSpgemm which,
                          OffloadStats& stats, std::int64_t* inner_entries = nullptr);

/// The same with A already on the device, moved in as for offload_spgemm.
Csr<double> offload_chain(const Csr<double>& l, DeviceCsr<double>&& a, const Csr<double>& b, OffloadSpgemm which,
                          OffloadStats& stats, std::int64_t* inner_entries = nullptr);

/// The same with all three already on the device (a backend made L and B there too), each
/// moved in and freed by the products as A is. Nothing is uploaded. With `kept`, the product's
/// device CSR, which the download reads, is moved there instead of freed (a caller whose next
/// step reads it on the device); it is left empty (no arrays) where no device product ran.
Csr<double> offload_chain(DeviceCsr<double>&& l, DeviceCsr<double>&& a, DeviceCsr<double>&& b, OffloadSpgemm which,
                          OffloadStats& stats, std::int64_t* inner_entries = nullptr,
                          DeviceCsr<double>* kept = nullptr);

/// C = P^T A P on the device as R * (A * P) with R = P^T formed on the host (ref::transpose)
/// and A*P kept on the device between the two products. A square, a.cols == p.rows.
Csr<double> offload_galerkin(const Csr<double>& a, const Csr<double>& p, OffloadSpgemm which, OffloadStats& stats);

}  // namespace tessera::cuda
