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

void upload_operand(const Csr<double>& host, OffloadSpgemm which, OffloadStats& s, DeviceOperand& out) {
  out.csr = timed(s.upload, [&] { return upload(host); });
  out.view = timed(s.convert, [&] { return out.form.bind(out.csr, which, nullptr); });
  if (which == OffloadSpgemm::tile) out.csr = DeviceCsr<double>{};  // the tiles hold it now
}

/// One-shot multiply (symbolic + numeric, or cuSPARSE's plain SpGEMM); empty products are
/// left to DeviceProduct and not counted.
void run_product(DeviceProduct& product, const OperandView& a, const OperandView& b, OffloadStats& s) {
  if (!trivially_empty(a.rows, a.nnz, b.cols, b.nnz)) ++s.products;
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
  DeviceOperand da, db;
  upload_operand(a, which, stats, da);
  upload_operand(b, which, stats, db);
  DeviceProduct product(which, nullptr, kOneShot);
  run_product(product, da.view, db.view, stats);
  return download_result(product, stats);
}

Csr<double> offload_galerkin(const Csr<double>& a, const Csr<double>& p, OffloadSpgemm which, OffloadStats& stats) {
  require_conformal(a, p, "Galerkin product");
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "offload Galerkin product: A must be square, it is ", a.rows, "x", a.cols);
  if (trivially_empty(a, p)) return Csr<double>::empty(p.cols, p.cols);
  DeviceOperand da, dp, dr;
  upload_operand(a, which, stats, da);
  upload_operand(p, which, stats, dp);
  upload_operand(ref::transpose(p), which, stats, dr);
  DeviceProduct a_p(which, nullptr, kOneShot), r_a_p(which, nullptr, kOneShot);
  run_product(a_p, da.view, dp.view, stats);
  // A*P stays on the device: in tiles on the tile path, else in CSR (rows sorted, int32 offsets).
  DeviceCsr<double> ap_csr;
  ProductOperand ap_form;
  OperandView ap = which == OffloadSpgemm::tile ? a_p.tile_result() : OperandView{};
  if (which == OffloadSpgemm::cusparse) {
    timed(stats.convert, [&] { a_p.result_csr(ap_csr); });
    ap = timed(stats.convert, [&] { return ap_form.bind(ap_csr, which, nullptr); });
  }
  run_product(r_a_p, dr.view, ap, stats);
  return download_result(r_a_p, stats);
}

}  // namespace tessera::cuda
