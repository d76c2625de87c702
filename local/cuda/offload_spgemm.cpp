// Host code only (no kernels): it drives the device products of tessera_local.
#include "local/cuda/offload_spgemm.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <vector>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/cusparse_spgemm.hpp"
#include "local/cuda/tile_convert.hpp"
#include "local/cuda/tile_spgemm.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::cuda {
namespace {

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

/// No entries or a zero dimension: the product is structurally empty, no need for the device
/// (and cuSPARSE is not asked to handle zero-sized operands).
bool trivially_empty(const Csr<double>& a, const Csr<double>& b) {
  return a.rows == 0 || b.cols == 0 || a.nnz() == 0 || b.nnz() == 0;
}

// ---- tile path ----

DeviceTileMatrix<double> upload_tiles(const Csr<double>& a, OffloadStats& s) {
  const DeviceCsr<double> d = timed(s.upload, [&] { return upload(a); });
  return timed(s.convert, [&] { return to_tiles(d); });
}

DeviceTileMatrix<double> tile_product(const DeviceTileMatrix<double>& a, const DeviceTileMatrix<double>& b,
                                      OffloadStats& s) {
  ++s.products;
  return timed(s.product, [&] {
    TileSpgemm<double> plan;  // drop_zeros off: the structural pattern is kept
    DeviceTileMatrix<double> c;
    plan.symbolic(a, b, c);
    plan.numeric(a, b, c);
    return c;
  });
}

Csr<double> download_tiles(const DeviceTileMatrix<double>& c, OffloadStats& s) {
  const DeviceCsr<double> d = timed(s.convert, [&] { return to_csr(c); });
  return timed(s.download, [&] { return download(d); });
}

Csr<double> tile_multiply(const Csr<double>& a, const Csr<double>& b, OffloadStats& s) {
  const DeviceTileMatrix<double> da = upload_tiles(a, s), db = upload_tiles(b, s);
  return download_tiles(tile_product(da, db, s), s);
}

Csr<double> tile_galerkin(const Csr<double>& a, const Csr<double>& p, OffloadStats& s) {
  const DeviceTileMatrix<double> da = upload_tiles(a, s), dp = upload_tiles(p, s);
  const DeviceTileMatrix<double> dr = upload_tiles(ref::transpose(p), s);
  const DeviceTileMatrix<double> ap = tile_product(da, dp, s);
  return download_tiles(tile_product(dr, ap, s), s);  // an empty A*P has no tiles: handled
}

// ---- cuSPARSE path ----

DeviceCsr32<double> upload_csr32(const Csr<double>& a, OffloadStats& s) {
  const DeviceCsr<double> d = timed(s.upload, [&] { return upload(a); });
  return timed(s.convert, [&] { return to_int32_offsets(d); });
}

DeviceCsr32<double> cusparse_product(const DeviceCsr32<double>& a, const DeviceCsr32<double>& b, OffloadStats& s) {
  ++s.products;
  CusparseSpgemmRun<double> run = timed(s.product, [&] { return cusparse_spgemm(a, b); });  // ALG1, the default
  if (run.status != CusparseSpgemmStatus::success)
    throw DeviceError(detail::concat("offload SpGEMM: cuSPARSE SpGEMM (", a.rows, "x", a.cols, " times ", b.rows, "x",
                                     b.cols, ") failed: ", to_string(run.status), ": ", run.message));
  return std::move(run.c);
}

/// Sorts each row's columns (carrying the values); rows already sorted are left alone.
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

Csr<double> download_csr32(const DeviceCsr32<double>& c, OffloadStats& s) {
  return timed(s.download, [&] {
    Csr<double> host = download(c);
    sort_rows(host);
    return host;
  });
}

Csr<double> cusparse_multiply(const Csr<double>& a, const Csr<double>& b, OffloadStats& s) {
  const DeviceCsr32<double> da = upload_csr32(a, s), db = upload_csr32(b, s);
  return download_csr32(cusparse_product(da, db, s), s);
}

Csr<double> cusparse_galerkin(const Csr<double>& a, const Csr<double>& p, OffloadStats& s) {
  const DeviceCsr32<double> da = upload_csr32(a, s), dp = upload_csr32(p, s);
  const DeviceCsr32<double> dr = upload_csr32(ref::transpose(p), s);
  const DeviceCsr32<double> ap = cusparse_product(da, dp, s);
  if (ap.nnz == 0) return Csr<double>::empty(p.cols, p.cols);  // cuSPARSE gets no empty operand
  return download_csr32(cusparse_product(dr, ap, s), s);
}

void require_conformal(const Csr<double>& a, const Csr<double>& b, const char* what) {
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, "offload ", what, ": inner dimensions differ (", a.rows, "x", a.cols,
                        " times ", b.rows, "x", b.cols, ")");
}

}  // namespace

OffloadSpgemm parse_offload_spgemm(const std::string& name) {
  if (name == "tile") return OffloadSpgemm::tile;
  if (name == "cusparse") return OffloadSpgemm::cusparse;
  throw InputError(detail::concat("unknown device SpGEMM '", name, "': expected tile or cusparse"));
}

const char* to_string(OffloadSpgemm which) { return which == OffloadSpgemm::tile ? "tile" : "cusparse"; }

OffloadStats& OffloadStats::operator+=(const OffloadStats& o) {
  upload += o.upload;
  convert += o.convert;
  product += o.product;
  download += o.download;
  products += o.products;
  return *this;
}

Csr<double> offload_spgemm(const Csr<double>& a, const Csr<double>& b, OffloadSpgemm which, OffloadStats& stats) {
  require_conformal(a, b, "SpGEMM");
  if (trivially_empty(a, b)) return Csr<double>::empty(a.rows, b.cols);
  return which == OffloadSpgemm::tile ? tile_multiply(a, b, stats) : cusparse_multiply(a, b, stats);
}

Csr<double> offload_galerkin(const Csr<double>& a, const Csr<double>& p, OffloadSpgemm which, OffloadStats& stats) {
  require_conformal(a, p, "Galerkin product");
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "offload Galerkin product: A must be square, it is ", a.rows, "x", a.cols);
  if (trivially_empty(a, p)) return Csr<double>::empty(p.cols, p.cols);
  return which == OffloadSpgemm::tile ? tile_galerkin(a, p, stats) : cusparse_galerkin(a, p, stats);
}

}  // namespace tessera::cuda
