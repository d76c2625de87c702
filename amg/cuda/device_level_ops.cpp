// Host code only (no kernels): it drives tessera_local's device products.
#include "amg/cuda/device_level_ops.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "local/core/error.hpp"
#include "local/cuda/cusparse_spgemm.hpp"
#include "local/cuda/tile_convert.hpp"
#include "local/cuda/tile_spgemm.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::amg::gpu {
namespace {

using tessera::cuda::DeviceCsr;
using tessera::cuda::DeviceCsr32;
using tessera::cuda::DeviceTileMatrix;

/// Runs `step` and adds its wall time, the device synchronised on both sides, to `seconds`.
template <class F>
auto timed(double& seconds, F&& step) {
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  const auto start = std::chrono::steady_clock::now();
  auto result = step();
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

// ---- tile path ----

DeviceTileMatrix<double> upload_tiles(const Csr<double>& a, DeviceSetupStats& s) {
  const DeviceCsr<double> d = timed(s.upload, [&] { return tessera::cuda::upload(a); });
  return timed(s.convert, [&] { return tessera::cuda::to_tiles(d); });
}

DeviceTileMatrix<double> tile_product(const DeviceTileMatrix<double>& a, const DeviceTileMatrix<double>& b,
                                      DeviceSetupStats& s) {
  ++s.products;
  return timed(s.product, [&] {
    tessera::cuda::TileSpgemm<double> plan;  // drop_zeros off: the structural pattern is kept
    DeviceTileMatrix<double> c;
    plan.symbolic(a, b, c);
    plan.numeric(a, b, c);
    return c;
  });
}

Csr<double> download_tiles(const DeviceTileMatrix<double>& c, DeviceSetupStats& s) {
  const DeviceCsr<double> d = timed(s.convert, [&] { return tessera::cuda::to_csr(c); });
  return timed(s.download, [&] { return tessera::cuda::download(d); });
}

Csr<double> tile_multiply(const Csr<double>& a, const Csr<double>& b, DeviceSetupStats& s) {
  const DeviceTileMatrix<double> da = upload_tiles(a, s), db = upload_tiles(b, s);
  return download_tiles(tile_product(da, db, s), s);
}

Csr<double> tile_galerkin(const Csr<double>& a, const Csr<double>& p, DeviceSetupStats& s) {
  const DeviceTileMatrix<double> da = upload_tiles(a, s), dp = upload_tiles(p, s);
  const DeviceTileMatrix<double> dr = upload_tiles(ref::transpose(p), s);
  const DeviceTileMatrix<double> ap = tile_product(da, dp, s);
  return download_tiles(tile_product(dr, ap, s), s);
}

// ---- cuSPARSE path ----

DeviceCsr32<double> upload_csr32(const Csr<double>& a, DeviceSetupStats& s) {
  const DeviceCsr<double> d = timed(s.upload, [&] { return tessera::cuda::upload(a); });
  return timed(s.convert, [&] { return tessera::cuda::to_int32_offsets(d); });
}

DeviceCsr32<double> cusparse_product(const DeviceCsr32<double>& a, const DeviceCsr32<double>& b, DeviceSetupStats& s) {
  ++s.products;
  tessera::cuda::CusparseSpgemmRun<double> run =
      timed(s.product, [&] { return tessera::cuda::cusparse_spgemm(a, b); });  // ALG1, the default
  if (run.status != tessera::cuda::CusparseSpgemmStatus::success)
    throw DeviceError(detail::concat("AMG setup: cuSPARSE SpGEMM (", a.rows, "x", a.cols, " times ", b.rows, "x", b.cols,
                                     ") failed: ", to_string(run.status), ": ", run.message));
  return std::move(run.c);
}

/// cuSPARSE does not promise sorted columns in C; the Csr invariant needs them.
void sort_rows(Csr<double>& c) {
  std::vector<std::int64_t> order;
  std::vector<std::int32_t> cols;
  std::vector<double> vals;
  for (std::int64_t i = 0; i < c.rows; ++i) {
    const auto first = c.col_idx.begin() + c.row_ptr[i], last = c.col_idx.begin() + c.row_ptr[i + 1];
    if (std::is_sorted(first, last)) continue;
    const std::int64_t len = c.row_length(i), base = c.row_ptr[i];
    order.resize(std::size_t(len));
    std::iota(order.begin(), order.end(), base);
    std::sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) { return c.col_idx[x] < c.col_idx[y]; });
    cols.clear(), vals.clear();
    for (const std::int64_t k : order) cols.push_back(c.col_idx[k]), vals.push_back(c.values[k]);
    std::copy(cols.begin(), cols.end(), c.col_idx.begin() + base);
    std::copy(vals.begin(), vals.end(), c.values.begin() + base);
  }
}

Csr<double> download_csr32(const DeviceCsr32<double>& c, DeviceSetupStats& s) {
  Csr<double> host = timed(s.download, [&] { return tessera::cuda::download(c); });
  sort_rows(host);
  return host;
}

Csr<double> cusparse_multiply(const Csr<double>& a, const Csr<double>& b, DeviceSetupStats& s) {
  const DeviceCsr32<double> da = upload_csr32(a, s), db = upload_csr32(b, s);
  return download_csr32(cusparse_product(da, db, s), s);
}

Csr<double> cusparse_galerkin(const Csr<double>& a, const Csr<double>& p, DeviceSetupStats& s) {
  const DeviceCsr32<double> da = upload_csr32(a, s), dp = upload_csr32(p, s);
  const DeviceCsr32<double> dr = upload_csr32(ref::transpose(p), s);
  const DeviceCsr32<double> ap = cusparse_product(da, dp, s);
  return download_csr32(cusparse_product(dr, ap, s), s);
}

void require_conformal(const Csr<double>& a, const Csr<double>& b, const char* what) {
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, "AMG device setup ", what, ": inner dimensions differ (", a.rows, "x", a.cols,
                        " times ", b.rows, "x", b.cols, ")");
}

}  // namespace

SetupSpgemm parse_setup_spgemm(const std::string& name) {
  if (name == "tile") return SetupSpgemm::tile;
  if (name == "cusparse") return SetupSpgemm::cusparse;
  throw InputError(detail::concat("unknown setup SpGEMM '", name, "': expected tile or cusparse"));
}

const char* to_string(SetupSpgemm s) { return s == SetupSpgemm::tile ? "tile" : "cusparse"; }

LevelOps device_setup_ops(SetupSpgemm which, std::shared_ptr<DeviceSetupStats> stats) {
  if (!stats) stats = std::make_shared<DeviceSetupStats>();
  LevelOps ops = host_reference_ops();
  const bool tile = which == SetupSpgemm::tile;
  ops.multiply = [tile, stats](const Csr<double>& a, const Csr<double>& b) {
    require_conformal(a, b, "product");
    return tile ? tile_multiply(a, b, *stats) : cusparse_multiply(a, b, *stats);
  };
  ops.galerkin = [tile, stats](const Csr<double>& a, const Csr<double>& p) {
    require_conformal(a, p, "Galerkin product");
    TESSERA_REQUIRE_INPUT(a.rows == a.cols, "AMG device setup: Galerkin product needs a square A, it is ", a.rows, "x",
                          a.cols);
    return tile ? tile_galerkin(a, p, *stats) : cusparse_galerkin(a, p, *stats);
  };
  return ops;
}

}  // namespace tessera::amg::gpu
