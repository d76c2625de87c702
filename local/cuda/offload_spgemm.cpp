// Host code only (no kernels): upload, the device SpGEMM driver (DeviceProduct, one-shot), download.
#include "local/cuda/offload_spgemm.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <type_traits>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/device_product.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::cuda {
namespace {

/// Runs `step` and adds its wall time, the device synchronised on both sides, to `seconds`.
template <class F>
auto timed(double& seconds, F&& step) {
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  const auto start = std::chrono::steady_clock::now();
  const auto stop = [&] {
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if constexpr (std::is_void_v<decltype(step())>) {
    step();
    stop();
  } else {
    auto result = step();
    stop();
    return result;
  }
}

/// No entries or a zero dimension: the product is structurally empty, no need for the device
/// (and cuSPARSE is not asked to handle zero-sized operands). DeviceProduct skips these too.
bool trivially_empty(std::int64_t a_rows, std::int64_t a_nnz, std::int64_t b_cols, std::int64_t b_nnz) {
  return a_rows == 0 || b_cols == 0 || a_nnz == 0 || b_nnz == 0;
}

bool trivially_empty(const Csr<double>& a, const Csr<double>& b) {
  return trivially_empty(a.rows, a.nnz(), b.cols, b.nnz());
}

/// A host operand on the device in the form `which` reads. Not movable: the view points into it.
struct DeviceOperand {
  DeviceOperand() = default;
  DeviceOperand(const DeviceOperand&) = delete;
  DeviceOperand& operator=(const DeviceOperand&) = delete;

  DeviceCsr<double> csr;  // cuSPARSE reads it in place; freed once in tiles
  ProductOperand form;
  OperandView view;
};

void upload_operand(const Csr<double>& host, OffloadStats& s, DeviceOperand& out) {
  out.csr = timed(s.upload, [&] { return upload(host); });
}

/// Binds an uploaded operand in the form of the (resolved) engine `which`.
void bind_operand(OffloadSpgemm which, OffloadStats& s, DeviceOperand& out) {
  out.view = timed(s.convert, [&] { return out.form.bind(out.csr, which, nullptr); });
  if (which == OffloadSpgemm::tile) out.csr = DeviceCsr<double>{};  // the tiles hold it now
}

/// One-shot multiply (symbolic + numeric, or cuSPARSE's plain SpGEMM); empty products are
/// left to DeviceProduct and not counted.
void run_product(DeviceProduct& product, const OperandView& a, const OperandView& b, OffloadStats& s) {
  if (!trivially_empty(a.rows, a.nnz, b.cols, b.nnz)) {
    ++s.products;
    if (product.engine() == OffloadSpgemm::tile) ++s.tile_products;
  }
  timed(s.product, [&] { product.multiply(a, b); });
}

/// C into CSR on the device (tiles -> CSR, or cuSPARSE's C row-sorted by CUB), then to the host.
Csr<double> download_result(DeviceProduct& product, OffloadStats& s) {
  DeviceCsr<double> c;
  timed(s.convert, [&] { product.result_csr(c); });
  return timed(s.download, [&] { return download(c); });
}

void require_conformal(const Csr<double>& a, const Csr<double>& b, const char* what) {
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, "offload ", what, ": inner dimensions differ (", a.rows, "x", a.cols,
                        " times ", b.rows, "x", b.cols, ")");
}

constexpr bool kOneShot = false;  // DeviceProduct's keep_plan: nothing is run again

}  // namespace

OffloadSpgemm parse_offload_spgemm(const std::string& name) {
  if (name == "tile") return OffloadSpgemm::tile;
  if (name == "cusparse") return OffloadSpgemm::cusparse;
  if (name == "hash") return OffloadSpgemm::hash;
  if (name == "auto") return OffloadSpgemm::automatic;
  throw InputError(detail::concat("unknown device SpGEMM '", name, "': expected tile, cusparse, hash or auto"));
}

const char* to_string(OffloadSpgemm which) {
  switch (which) {
    case OffloadSpgemm::tile: return "tile";
    case OffloadSpgemm::cusparse: return "cusparse";
    case OffloadSpgemm::hash: return "hash";
    case OffloadSpgemm::automatic: return "auto";
  }
  return "?";
}

OffloadStats& OffloadStats::operator+=(const OffloadStats& o) {
  upload += o.upload;
  convert += o.convert;
  product += o.product;
  download += o.download;
  products += o.products;
  tile_products += o.tile_products;
  return *this;
}

Csr<double> offload_spgemm(const Csr<double>& a, const Csr<double>& b, OffloadSpgemm which, OffloadStats& stats) {
  require_conformal(a, b, "SpGEMM");
  if (trivially_empty(a, b)) return Csr<double>::empty(a.rows, b.cols);
  DeviceOperand da, db;
  upload_operand(a, stats, da);
  upload_operand(b, stats, db);
  DeviceProduct product(which, nullptr, kOneShot);
  const OffloadSpgemm engine = timed(stats.convert, [&] { return product.resolve_engine(da.csr, db.csr); });
  bind_operand(engine, stats, da);
  bind_operand(engine, stats, db);
  run_product(product, da.view, db.view, stats);
  return download_result(product, stats);
}

Csr<double> offload_galerkin(const Csr<double>& a, const Csr<double>& p, OffloadSpgemm which, OffloadStats& stats) {
  require_conformal(a, p, "Galerkin product");
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "offload Galerkin product: A must be square, it is ", a.rows, "x", a.cols);
  if (trivially_empty(a, p)) return Csr<double>::empty(p.cols, p.cols);
  DeviceOperand da, dp, dr;
  upload_operand(a, stats, da);
  upload_operand(p, stats, dp);
  upload_operand(ref::transpose(p), stats, dr);
  DeviceProduct a_p(which, nullptr, kOneShot), r_a_p(which, nullptr, kOneShot);
  const OffloadSpgemm ap_engine = timed(stats.convert, [&] { return a_p.resolve_engine(da.csr, dp.csr); });
  bind_operand(ap_engine, stats, da);
  bind_operand(ap_engine, stats, dp);
  run_product(a_p, da.view, dp.view, stats);
  // A*P stays on the device: in tiles when both products run on tiles, else in CSR (rows
  // sorted) bound in the form of R*(A*P)'s engine.
  DeviceCsr<double> ap_csr;
  ProductOperand ap_form;
  OperandView ap;
  if (ap_engine == OffloadSpgemm::tile) {
    timed(stats.convert, [&] { r_a_p.resolve_engine(dr.csr, *a_p.tile_result().tiles); });
  } else {
    timed(stats.convert, [&] { a_p.result_csr(ap_csr); });
    timed(stats.convert, [&] { r_a_p.resolve_engine(dr.csr, ap_csr); });
  }
  if (ap_engine == OffloadSpgemm::tile && r_a_p.engine() == OffloadSpgemm::tile) {
    ap = a_p.tile_result();
  } else {
    if (ap_engine == OffloadSpgemm::tile) timed(stats.convert, [&] { a_p.result_csr(ap_csr); });
    ap = timed(stats.convert, [&] { return ap_form.bind(ap_csr, r_a_p.engine(), nullptr); });
  }
  bind_operand(r_a_p.engine(), stats, dr);
  run_product(r_a_p, dr.view, ap, stats);
  return download_result(r_a_p, stats);
}

}  // namespace tessera::cuda
