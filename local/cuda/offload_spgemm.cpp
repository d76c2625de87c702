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
    if (product.engine() == OffloadSpgemm::cusparse) ++s.cusparse_products;
  }
  timed(s.product, [&] { product.multiply(a, b); });
}

/// C into CSR on the device (tiles -> CSR, or cuSPARSE's C row-sorted by CUB), then to the host;
/// the device CSR is moved into `kept` if given.
Csr<double> download_result(DeviceProduct& product, OffloadStats& s, DeviceCsr<double>* kept = nullptr) {
  DeviceCsr<double> c;
  timed(s.convert, [&] { product.result_csr(c); });
  Csr<double> host = timed(s.download, [&] { return download(c); });
  if (kept) *kept = std::move(c);
  return host;
}

void require_conformal(std::int64_t a_rows, std::int64_t a_cols, std::int64_t b_rows, std::int64_t b_cols,
                       const char* what) {
  TESSERA_REQUIRE_INPUT(a_cols == b_rows, "offload ", what, ": inner dimensions differ (", a_rows, "x", a_cols,
                        " times ", b_rows, "x", b_cols, ")");
}

void require_chain(const Csr<double>& l, std::int64_t a_rows, std::int64_t a_cols, const Csr<double>& b) {
  require_conformal(a_rows, a_cols, b.rows, b.cols, "chained product (A*B)");
  TESSERA_REQUIRE_INPUT(l.cols == a_rows, "offload chained product: L is ", l.rows, "x", l.cols, ", A*B is ", a_rows,
                        "x", b.cols);
}

constexpr bool kOneShot = false;  // DeviceProduct's keep_plan: nothing is run again

/// A*B with both on the device (`da.csr`, `db.csr`, not trivially empty).
Csr<double> multiply_operands(DeviceOperand& da, DeviceOperand& db, OffloadSpgemm which, OffloadStats& stats) {
  DeviceProduct product(which, nullptr, kOneShot);
  const OffloadSpgemm engine = timed(stats.convert, [&] { return product.resolve_engine(da.csr, db.csr); });
  bind_operand(engine, stats, da);
  bind_operand(engine, stats, db);
  run_product(product, da.view, db.view, stats);
  return download_result(product, stats);
}

/// The inner product alone, for its count, where L has no entries: nothing to keep A*B for.
Csr<double> inner_product_only(std::int64_t l_rows, DeviceOperand& da, DeviceOperand& db, OffloadSpgemm which,
                               OffloadStats& stats, std::int64_t* inner_entries) {
  const Csr<double> ab = multiply_operands(da, db, which, stats);  // (binding may free db.csr)
  if (inner_entries) *inner_entries = ab.nnz();
  return Csr<double>::empty(l_rows, ab.cols);
}

/// L*(A*B) with all three on the device (L with entries; A and B not trivially empty), A*B kept
/// there, and L*(A*B) too in `kept` if given.
Csr<double> chain_operands(DeviceOperand& dl, DeviceOperand& da, DeviceOperand& db, OffloadSpgemm which,
                           OffloadStats& stats, std::int64_t* inner_entries, DeviceCsr<double>* kept = nullptr) {
  DeviceProduct a_b(which, nullptr, kOneShot), l_a_b(which, nullptr, kOneShot);
  const OffloadSpgemm ab_engine = timed(stats.convert, [&] { return a_b.resolve_engine(da.csr, db.csr); });
  bind_operand(ab_engine, stats, da);
  bind_operand(ab_engine, stats, db);
  run_product(a_b, da.view, db.view, stats);
  // A*B stays on the device: in tiles when both products run on tiles, else in CSR (rows
  // sorted) bound in the form of L*(A*B)'s engine.
  DeviceCsr<double> ab_csr;
  ProductOperand ab_form;
  OperandView ab;
  if (ab_engine == OffloadSpgemm::tile) {
    timed(stats.convert, [&] { l_a_b.resolve_engine(dl.csr, *a_b.tile_result().tiles); });
  } else {
    timed(stats.convert, [&] { a_b.result_csr(ab_csr); });
    timed(stats.convert, [&] { l_a_b.resolve_engine(dl.csr, ab_csr); });
  }
  if (ab_engine == OffloadSpgemm::tile && l_a_b.engine() == OffloadSpgemm::tile) {
    ab = a_b.tile_result();
  } else {
    if (ab_engine == OffloadSpgemm::tile) timed(stats.convert, [&] { a_b.result_csr(ab_csr); });
    ab = timed(stats.convert, [&] { return ab_form.bind(ab_csr, l_a_b.engine(), nullptr); });
  }
  if (inner_entries) *inner_entries = ab.nnz;
  bind_operand(l_a_b.engine(), stats, dl);
  run_product(l_a_b, dl.view, ab, stats);
  return download_result(l_a_b, stats, kept);
}

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
  cusparse_products += o.cusparse_products;
  return *this;
}

Csr<double> offload_spgemm(const Csr<double>& a, const Csr<double>& b, OffloadSpgemm which, OffloadStats& stats) {
  require_conformal(a.rows, a.cols, b.rows, b.cols, "SpGEMM");
  if (trivially_empty(a, b)) return Csr<double>::empty(a.rows, b.cols);
  return offload_spgemm(timed(stats.upload, [&] { return upload(a); }), b, which, stats);
}

Csr<double> offload_spgemm(DeviceCsr<double>&& a, const Csr<double>& b, OffloadSpgemm which, OffloadStats& stats) {
  require_conformal(a.rows, a.cols, b.rows, b.cols, "SpGEMM");
  if (trivially_empty(a.rows, a.nnz, b.cols, b.nnz())) return Csr<double>::empty(a.rows, b.cols);
  DeviceOperand da, db;
  da.csr = std::move(a);
  upload_operand(b, stats, db);
  return multiply_operands(da, db, which, stats);
}

DeviceCsr<double> offload_spgemm_on_device(DeviceCsr<double>&& a, const DeviceCsr<double>& b, OffloadSpgemm which,
                                           OffloadStats& stats) {
  require_conformal(a.rows, a.cols, b.rows, b.cols, "SpGEMM");
  if (trivially_empty(a.rows, a.nnz, b.cols, b.nnz)) return empty_device_csr(a.rows, b.cols, nullptr);
  DeviceOperand da;
  da.csr = std::move(a);
  DeviceProduct product(which, nullptr, kOneShot);
  const OffloadSpgemm engine = timed(stats.convert, [&] { return product.resolve_engine(da.csr, b); });
  bind_operand(engine, stats, da);
  ProductOperand b_form;
  const OperandView b_view = timed(stats.convert, [&] { return b_form.bind(b, engine, nullptr); });
  run_product(product, da.view, b_view, stats);
  DeviceCsr<double> c;
  timed(stats.convert, [&] { product.result_csr(c); });
  return c;
}

Csr<double> offload_chain(const Csr<double>& l, const Csr<double>& a, const Csr<double>& b, OffloadSpgemm which,
                          OffloadStats& stats, std::int64_t* inner_entries) {
  require_chain(l, a.rows, a.cols, b);
  if (inner_entries) *inner_entries = 0;
  if (trivially_empty(a, b)) return Csr<double>::empty(l.rows, b.cols);
  return offload_chain(l, timed(stats.upload, [&] { return upload(a); }), b, which, stats, inner_entries);
}

Csr<double> offload_chain(const Csr<double>& l, DeviceCsr<double>&& a, const Csr<double>& b, OffloadSpgemm which,
                          OffloadStats& stats, std::int64_t* inner_entries) {
  require_chain(l, a.rows, a.cols, b);
  if (inner_entries) *inner_entries = 0;
  if (trivially_empty(a.rows, a.nnz, b.cols, b.nnz())) return Csr<double>::empty(l.rows, b.cols);
  DeviceOperand dl, da, db;
  da.csr = std::move(a);
  upload_operand(b, stats, db);
  if (l.rows == 0 || l.nnz() == 0) return inner_product_only(l.rows, da, db, which, stats, inner_entries);
  upload_operand(l, stats, dl);
  return chain_operands(dl, da, db, which, stats, inner_entries);
}

Csr<double> offload_chain(DeviceCsr<double>&& l, DeviceCsr<double>&& a, DeviceCsr<double>&& b, OffloadSpgemm which,
                          OffloadStats& stats, std::int64_t* inner_entries, DeviceCsr<double>* kept) {
  require_conformal(a.rows, a.cols, b.rows, b.cols, "chained product (A*B)");
  TESSERA_REQUIRE_INPUT(l.cols == a.rows, "offload chained product: L is ", l.rows, "x", l.cols, ", A*B is ", a.rows,
                        "x", b.cols);
  if (inner_entries) *inner_entries = 0;
  if (trivially_empty(a.rows, a.nnz, b.cols, b.nnz)) return Csr<double>::empty(l.rows, b.cols);
  DeviceOperand dl, da, db;
  da.csr = std::move(a);
  db.csr = std::move(b);
  if (l.rows == 0 || l.nnz == 0) return inner_product_only(l.rows, da, db, which, stats, inner_entries);
  dl.csr = std::move(l);
  return chain_operands(dl, da, db, which, stats, inner_entries, kept);
}

Csr<double> offload_galerkin(const Csr<double>& a, const Csr<double>& p, OffloadSpgemm which, OffloadStats& stats) {
  require_conformal(a.rows, a.cols, p.rows, p.cols, "Galerkin product");
  TESSERA_REQUIRE_INPUT(a.rows == a.cols, "offload Galerkin product: A must be square, it is ", a.rows, "x", a.cols);
  if (trivially_empty(a, p)) return Csr<double>::empty(p.cols, p.cols);
  return offload_chain(ref::transpose(p), a, p, which, stats);
}

}  // namespace tessera::cuda
