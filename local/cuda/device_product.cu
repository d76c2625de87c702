#include "local/cuda/device_product.hpp"

#include <cub/device/device_segmented_sort.cuh>
#include <cusparse.h>

#include <map>

#include "local/core/error.hpp"
#include "local/cuda/check.hpp"
#include "local/cuda/cub_call.cuh"
#include "local/cuda/index_kernels.cuh"
#include "local/cuda/tile_convert.hpp"

namespace tessera::cuda {

namespace {

bool g_force_cusparse_row_sort = false;  // testing_hooks::force_cusparse_row_sort

constexpr int kThreads = 256;

/// Clears *sorted if some row of C (int32 offsets, as cuSPARSE writes them) has its columns out
/// of increasing order; one thread per row.
__global__ void rows_sorted_kernel(std::int64_t rows, const std::int32_t* row_ptr, const std::int32_t* col,
                                   int* sorted) {
  const std::int64_t r = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  for (std::int32_t k = row_ptr[r] + 1; k < row_ptr[r + 1]; ++k)
    if (col[k] <= col[k - 1]) {
      *sorted = 0;
      return;
    }
}

void check_cusparse(cusparseStatus_t status, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw DeviceError(detail::concat("device SpGEMM: ", call, ": ", cusparseGetErrorString(status)));
}
#define TESSERA_CUSPARSE(call) check_cusparse((call), #call)

/// One cuSPARSE handle per host thread and device, made on first use: cusparseCreate costs far
/// more than a product on a coarse level. Never destroyed: at exit the CUDA runtime may be gone.
cusparseHandle_t thread_handle(cudaStream_t s) {
  thread_local std::map<int, cusparseHandle_t> handles;
  int device = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  cusparseHandle_t& h = handles[device];
  if (!h) TESSERA_CUSPARSE(cusparseCreate(&h));
  TESSERA_CUSPARSE(cusparseSetStream(h, s));
  return h;
}

cusparseSpMatDescr_t make_descr(const OperandView& m) {
  cusparseSpMatDescr_t d = nullptr;
  TESSERA_CUSPARSE(cusparseCreateCsr(&d, m.rows, m.cols, m.nnz, const_cast<std::int32_t*>(m.row_ptr32),
                                     const_cast<std::int32_t*>(m.csr->col_idx.data()),
                                     const_cast<double*>(m.csr->values.data()), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  return d;
}

/// Re-points a descriptor at the operand's current arrays (they may have been reallocated).
void rebind(cusparseSpMatDescr_t d, const OperandView& m) {
  TESSERA_CUSPARSE(cusparseCsrSetPointers(d, const_cast<std::int32_t*>(m.row_ptr32),
                                          const_cast<std::int32_t*>(m.csr->col_idx.data()),
                                          const_cast<double*>(m.csr->values.data())));
}

DeviceTileMatrix<double> empty_tiles(std::int64_t rows, std::int64_t cols, cudaStream_t s) {
  DeviceTileMatrix<double> t;
  t.rows = rows, t.cols = cols;
  t.tile_row_ptr.allocate(std::size_t(t.tile_rows() + 1), s);
  t.tile_row_ptr.fill_bytes(0, s);
  t.value_offset.allocate(1, s);
  t.value_offset.fill_bytes(0, s);
  return t;
}

}  // namespace

/// cuSPARSE's SpGEMM state of one product: descriptors, the buffers that the reuse API's
/// compute needs (4 and 5 of the reuse sequence), C as cuSPARSE writes it, and the row-sorting
/// order. one_shot() fills C through the plain API instead and keeps no buffer. With hand_over
/// (one-shot products, multiply_into) C's columns and values move to the caller's CSR when its
/// rows come out sorted; a kept plan then computes straight into the caller's arrays.
struct CusparseReusePlan {
  static constexpr cusparseSpGEMMAlg_t kAlg = CUSPARSE_SPGEMM_CSR_ALG_DETERMINITIC;  // bitwise repeatable
  // The plain API takes ALG1/2/3, not the reuse API's CSR_ALG_*; ALG1 is deterministic too.
  static constexpr cusparseSpGEMMAlg_t kOneShotAlg = CUSPARSE_SPGEMM_ALG1;
  static constexpr cusparseOperation_t kOp = CUSPARSE_OPERATION_NON_TRANSPOSE;
  cusparseSpMatDescr_t a = nullptr, b = nullptr, c = nullptr;
  cusparseSpGEMMDescr_t spgemm = nullptr;
  DeviceBuffer<unsigned char> buffer4, buffer5;
  std::int64_t c_nnz = 0;
  DeviceBuffer<std::int32_t> c_row_ptr, c_col;
  DeviceBuffer<double> c_values;
  DeviceBuffer<std::int64_t> order;  // sorted entry k = cuSPARSE entry order[k]
  bool identity_order = false;       // cuSPARSE's rows came out sorted: no order needed
  bool hand_over = false;            // C's arrays may move to the caller (one-shot, or multiply_into)

  ~CusparseReusePlan() {
    if (spgemm) cusparseSpGEMM_destroyDescr(spgemm);
    if (c) cusparseDestroySpMat(c);
    if (b) cusparseDestroySpMat(b);
    if (a) cusparseDestroySpMat(a);
  }

  /// workEstimation, nnz, copy: C's pattern, once. Buffers 1-3 are freed as soon as the
  /// sequence allows (as in NVIDIA's spgemm_reuse sample).
  void symbolic(const OperandView& av, const OperandView& bv, cudaStream_t s) {
    const cusparseHandle_t h = thread_handle(s);
    a = make_descr(av), b = make_descr(bv);
    TESSERA_CUSPARSE(cusparseCreateCsr(&c, av.rows, bv.cols, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I,
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    TESSERA_CUSPARSE(cusparseSpGEMM_createDescr(&spgemm));
    std::size_t bytes1 = 0, bytes2 = 0, bytes3 = 0, bytes4 = 0, bytes5 = 0;
    TESSERA_CUSPARSE(cusparseSpGEMMreuse_workEstimation(h, kOp, kOp, a, b, c, kAlg, spgemm, &bytes1, nullptr));
    DeviceBuffer<unsigned char> buffer1(bytes1, s);
    TESSERA_CUSPARSE(cusparseSpGEMMreuse_workEstimation(h, kOp, kOp, a, b, c, kAlg, spgemm, &bytes1, buffer1.data()));
    TESSERA_CUSPARSE(cusparseSpGEMMreuse_nnz(h, kOp, kOp, a, b, c, kAlg, spgemm, &bytes2, nullptr, &bytes3, nullptr,
                                             &bytes4, nullptr));
    DeviceBuffer<unsigned char> buffer2(bytes2, s), buffer3(bytes3, s);
    buffer4.allocate(bytes4, s);
    TESSERA_CUSPARSE(cusparseSpGEMMreuse_nnz(h, kOp, kOp, a, b, c, kAlg, spgemm, &bytes2, buffer2.data(), &bytes3,
                                             buffer3.data(), &bytes4, buffer4.data()));
    buffer1.release(), buffer2.release();
    std::int64_t rows = 0, cols = 0;
    TESSERA_CUSPARSE(cusparseSpMatGetSize(c, &rows, &cols, &c_nnz));
    c_row_ptr.allocate(std::size_t(rows + 1), s);
    c_col.allocate(std::size_t(c_nnz), s);
    c_values.allocate(std::size_t(c_nnz), s);
    TESSERA_CUSPARSE(cusparseCsrSetPointers(c, c_row_ptr.data(), c_col.data(), c_values.data()));
    TESSERA_CUSPARSE(cusparseSpGEMMreuse_copy(h, kOp, kOp, a, b, c, kAlg, spgemm, &bytes5, nullptr));
    buffer5.allocate(bytes5, s);
    TESSERA_CUSPARSE(cusparseSpGEMMreuse_copy(h, kOp, kOp, a, b, c, kAlg, spgemm, &bytes5, buffer5.data()));
  }

  /// C = A*B once through the plain API (workEstimation x2, compute x2, copy, as the cuSPARSE
  /// spgemm sample): cheaper than the reuse sequence when nothing is run again. The work
  /// buffers are freed on return; C stays in c_row_ptr/c_col/c_values for sorted_pattern.
  void one_shot(const OperandView& av, const OperandView& bv, cudaStream_t s) {
    const cusparseHandle_t h = thread_handle(s);
    hand_over = true;  // C is read once (result_csr)
    a = make_descr(av), b = make_descr(bv);
    TESSERA_CUSPARSE(cusparseCreateCsr(&c, av.rows, bv.cols, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I,
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    TESSERA_CUSPARSE(cusparseSpGEMM_createDescr(&spgemm));
    const double alpha = 1, beta = 0;
    constexpr auto alg = kOneShotAlg;
    std::size_t bytes1 = 0, bytes2 = 0;
    TESSERA_CUSPARSE(cusparseSpGEMM_workEstimation(h, kOp, kOp, &alpha, a, b, &beta, c, CUDA_R_64F, alg, spgemm,
                                                   &bytes1, nullptr));
    DeviceBuffer<unsigned char> buffer1(bytes1, s);
    TESSERA_CUSPARSE(cusparseSpGEMM_workEstimation(h, kOp, kOp, &alpha, a, b, &beta, c, CUDA_R_64F, alg, spgemm,
                                                   &bytes1, buffer1.data()));
    TESSERA_CUSPARSE(
        cusparseSpGEMM_compute(h, kOp, kOp, &alpha, a, b, &beta, c, CUDA_R_64F, alg, spgemm, &bytes2, nullptr));
    DeviceBuffer<unsigned char> buffer2(bytes2, s);
    TESSERA_CUSPARSE(cusparseSpGEMM_compute(h, kOp, kOp, &alpha, a, b, &beta, c, CUDA_R_64F, alg, spgemm, &bytes2,
                                            buffer2.data()));
    std::int64_t rows = 0, cols = 0;
    TESSERA_CUSPARSE(cusparseSpMatGetSize(c, &rows, &cols, &c_nnz));
    c_row_ptr.allocate(std::size_t(rows + 1), s);
    c_col.allocate(std::size_t(c_nnz), s);
    c_values.allocate(std::size_t(c_nnz), s);
    TESSERA_CUSPARSE(cusparseCsrSetPointers(c, c_row_ptr.data(), c_col.data(), c_values.data()));
    TESSERA_CUSPARSE(cusparseSpGEMM_copy(h, kOp, kOp, &alpha, a, b, &beta, c, CUDA_R_64F, alg, spgemm));
  }

  /// C's values for the operands' current values: the only cuSPARSE call of a re-run.
  void numeric(const OperandView& av, const OperandView& bv, cudaStream_t s) {
    const cusparseHandle_t h = thread_handle(s);
    rebind(a, av), rebind(b, bv);
    const double alpha = 1, beta = 0;
    TESSERA_CUSPARSE(
        cusparseSpGEMMreuse_compute(h, kOp, kOp, &alpha, a, b, &beta, c, CUDA_R_64F, kAlg, spgemm));
  }

  /// C's sorted pattern into `out` and the order that sorts the values (cuSPARSE does not
  /// promise sorted rows; the Csr invariant needs them).
  void sorted_pattern(DeviceCsr<double>& out, std::int64_t rows, std::int64_t cols, cudaStream_t s) {
    out.rows = rows, out.cols = cols, out.nnz = c_nnz;
    out.row_ptr.allocate(std::size_t(rows + 1), s);
    convert(rows + 1, c_row_ptr.data(), out.row_ptr.data(), s);
    // cuSPARSE does not promise sorted rows, but often delivers them: one pass over C's columns
    // decides, and sorted rows skip the segmented sort (the largest cost of this path: 60 ms of
    // 75 on random:1000000:10 A*A) and the permutation. A one-shot product then hands its arrays
    // over instead of copying them (sorted_values takes the values), and so does a kept plan
    // writing into the caller's CSR (multiply_into: C held once).
    identity_order = c_nnz > 0 && !g_force_cusparse_row_sort && rows_sorted(rows, s);
    if (identity_order && hand_over) {
      out.col_idx = std::move(c_col);
      return;
    }
    out.col_idx.allocate(std::size_t(c_nnz), s);
    out.values.allocate(std::size_t(c_nnz), s);
    if (c_nnz == 0) return;
    if (identity_order) {
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(out.col_idx.data(), c_col.data(), sizeof(std::int32_t) * std::size_t(c_nnz),
                                         cudaMemcpyDeviceToDevice, s));
      return;
    }
    order.allocate(std::size_t(c_nnz), s);
    DeviceBuffer<std::int64_t> entries(std::size_t(c_nnz), s);
    fill_iota(c_nnz, entries.data(), s);
    cub_call(s, [&](void* temp, std::size_t& bytes) {
      return cub::DeviceSegmentedSort::StableSortPairs(temp, bytes, c_col.data(), out.col_idx.data(), entries.data(),
                                                       order.data(), c_nnz, rows, out.row_ptr.data(),
                                                       out.row_ptr.data() + 1, s);
    });
  }

  void sorted_values(DeviceCsr<double>& out, cudaStream_t s) {
    if (c_nnz == 0) return;
    if (identity_order && hand_over)
      out.values = std::move(c_values);  // the caller's CSR holds C from now on
    else if (identity_order)
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(out.values.data(), c_values.data(), sizeof(double) * std::size_t(c_nnz),
                                         cudaMemcpyDeviceToDevice, s));
    else
      gather(c_nnz, order.data(), c_values.data(), out.values.data(), s);
  }

  /// C's arrays are the caller's (handed over by a kept plan): computes write there.
  bool c_in_caller() const { return hand_over && identity_order; }

  /// Re-points C's descriptor at the caller's columns and values (the same CSR, or one with its
  /// pattern), so that the next compute writes there. Only while c_in_caller().
  void write_c_into(DeviceCsr<double>& out) {
    TESSERA_CUSPARSE(cusparseCsrSetPointers(c, c_row_ptr.data(), out.col_idx.data(), out.values.data()));
  }

  bool rows_sorted(std::int64_t rows, cudaStream_t s) const {
    DeviceBuffer<int> flag(1, s);
    const int one = 1;
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(flag.data(), &one, sizeof(int), cudaMemcpyHostToDevice, s));
    if (rows > 0) {
      rows_sorted_kernel<<<grid_for(rows, kThreads), kThreads, 0, s>>>(rows, c_row_ptr.data(), c_col.data(),
                                                                       flag.data());
      TESSERA_CHECK_LAUNCH();
    }
    return flag.download(s)[0] == 1;
  }

  std::int64_t bytes() const {
    return std::int64_t(buffer4.bytes() + buffer5.bytes() + c_row_ptr.bytes() + c_col.bytes() + c_values.bytes() +
                        order.bytes());
  }
};

void testing_hooks::force_cusparse_row_sort(bool on) { g_force_cusparse_row_sort = on; }

DeviceCsr<double> empty_device_csr(std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  DeviceCsr<double> c;
  c.rows = rows, c.cols = cols;
  c.row_ptr.allocate(std::size_t(rows + 1), stream);
  c.row_ptr.fill_bytes(0, stream);
  return c;
}

// ---- ProductOperand ----

OperandView ProductOperand::bind(const DeviceCsr<double>& a, OffloadSpgemm which, cudaStream_t s,
                                 bool values_changed) {
  TESSERA_REQUIRE_INPUT(which != OffloadSpgemm::automatic,
                        "device SpGEMM operand: bound before the product's engine was resolved");
  if (built_)
    TESSERA_REQUIRE_INPUT(a.rows == rows_ && a.nnz == nnz_, "device SpGEMM operand: re-bound with another pattern (",
                          a.rows, " rows, ", a.nnz, " entries after ", rows_, ", ", nnz_, ")");
  OperandView v;
  v.rows = a.rows, v.cols = a.cols, v.nnz = a.nnz;
  if (which == OffloadSpgemm::tile) {
    if (!tiles_built_) tiles_ = to_tiles(a, source_, s);
    else if (values_changed) refresh_tile_values(a, source_, tiles_, s);
    tiles_built_ = true;
    v.tiles = &tiles_;
  } else if (which == OffloadSpgemm::hash) {
    v.csr = &a;  // read in place, int64 offsets
  } else {
    TESSERA_REQUIRE_INPUT(a.nnz < (std::int64_t{1} << 31), "cuSPARSE SpGEMM needs int32 offsets; the operand has ",
                          a.nnz, " entries");
    if (!row_ptr32_built_) {
      row_ptr32_.allocate(std::size_t(a.rows + 1), s);
      convert(a.rows + 1, a.row_ptr.data(), row_ptr32_.data(), s);
    }
    row_ptr32_built_ = true;
    v.csr = &a;
    v.row_ptr32 = row_ptr32_.data();
  }
  built_ = true, rows_ = a.rows, nnz_ = a.nnz;
  return v;
}

std::int64_t ProductOperand::bytes() const {
  return std::int64_t(tiles_.tile_row_ptr.bytes() + tiles_.tile_col.bytes() + tiles_.bitmap.bytes() +
                      tiles_.value_offset.bytes() + tiles_.values.bytes() + source_.bytes() + row_ptr32_.bytes());
}

// ---- DeviceProduct ----

DeviceProduct::DeviceProduct(OffloadSpgemm which, cudaStream_t stream, bool keep_plan)
    : which_(which), automatic_(which == OffloadSpgemm::automatic), stream_(stream), keep_plan_(keep_plan) {}
DeviceProduct::~DeviceProduct() = default;
DeviceProduct::DeviceProduct(DeviceProduct&&) noexcept = default;
DeviceProduct& DeviceProduct::operator=(DeviceProduct&&) noexcept = default;

OffloadSpgemm DeviceProduct::resolve_engine(const DeviceCsr<double>& a, const DeviceCsr<double>& b) {
  if (which_ != OffloadSpgemm::automatic) return which_;
  estimate_ = estimate_spgemm_work(a, b, stream_);
  return which_ = choose_spgemm_engine(estimate_);
}

OffloadSpgemm DeviceProduct::resolve_engine(const DeviceCsr<double>& a, const DeviceTileMatrix<double>& b) {
  if (which_ != OffloadSpgemm::automatic) return which_;
  estimate_ = estimate_spgemm_work(a, b, stream_);
  return which_ = choose_spgemm_engine(estimate_);
}

void DeviceProduct::assign_engine(OffloadSpgemm engine) {
  TESSERA_REQUIRE_INPUT(engine != OffloadSpgemm::automatic, "device SpGEMM: assign a concrete engine, not automatic");
  TESSERA_REQUIRE_INPUT(which_ == OffloadSpgemm::automatic || which_ == engine, "device SpGEMM: the product runs ",
                        to_string(which_), ", it cannot be reassigned to ", to_string(engine));
  which_ = engine;
}

/// Checks shared by multiply and multiply_into; records the operands' sizes for the next re-run.
void DeviceProduct::begin_run(const OperandView& a, const OperandView& b, bool into_caller) {
  TESSERA_REQUIRE_INPUT(which_ != OffloadSpgemm::automatic,
                        "device SpGEMM: multiply() before resolve_engine() on an automatic product");
  if (have_symbolic_)
    TESSERA_REQUIRE_INPUT(into_caller == into_caller_, "device SpGEMM: ",
                          into_caller ? "multiply_into() after multiply()" : "multiply() after multiply_into()",
                          " on one product (C is kept in one place: use one of them throughout)");
  into_caller_ = into_caller;
  TESSERA_REQUIRE_INPUT(a.cols == b.rows, "device SpGEMM: inner dimensions differ (", a.rows, "x", a.cols, " times ",
                        b.rows, "x", b.cols, ")");
  if (have_symbolic_)
    TESSERA_REQUIRE_INPUT(a.nnz == a_nnz_ && b.nnz == b_nnz_ && a.rows == rows_ && b.cols == cols_,
                          "device SpGEMM: re-run with other patterns (nnz ", a.nnz, ", ", b.nnz, " after ", a_nnz_,
                          ", ", b_nnz_, ")");
  rows_ = a.rows, cols_ = b.cols, a_nnz_ = a.nnz, b_nnz_ = b.nnz;
  empty_ = a.rows == 0 || b.cols == 0 || a.nnz == 0 || b.nnz == 0;
}

void DeviceProduct::run_engine(const OperandView& a, const OperandView& b) {
  if (empty_) {
    if (!have_symbolic_ && which_ == OffloadSpgemm::tile) c_tiles_ = empty_tiles(rows_, cols_, stream_);
  } else if (which_ == OffloadSpgemm::tile) {
    tile_multiply(a, b);
  } else if (which_ == OffloadSpgemm::hash) {
    hash_multiply(a, b, hash_c_);
  } else {
    cusparse_multiply(a, b);
  }
  have_symbolic_ = true;
}

void DeviceProduct::multiply(const OperandView& a, const OperandView& b) {
  begin_run(a, b, /*into_caller=*/false);
  run_engine(a, b);
}

void DeviceProduct::multiply_into(const OperandView& a, const OperandView& b, DeviceCsr<double>& c) {
  // C written over an operand would be read and written at once (and reallocated under the
  // symbolic phase's feet): refuse it.
  for (const DeviceCsr<double>* operand : {a.csr, b.csr})
    TESSERA_REQUIRE_INPUT(operand != &c && (operand == nullptr || c.values.size() == 0 ||
                                            (operand->values.data() != c.values.data() &&
                                             operand->col_idx.data() != c.col_idx.data())),
                          "device SpGEMM: multiply_into's C is one of its operands");
  // A kept plan writes the pattern it built into the arrays it filled the first time: a re-run
  // must pass that CSR (the same object, or one moved from it: a move keeps the buffers).
  const bool rewrites_in_place = have_symbolic_ && (keep_plan_ || which_ == OffloadSpgemm::tile);
  if (rewrites_in_place)
    TESSERA_REQUIRE_INPUT(c.row_ptr.data() == into_buffers_[0] && c.col_idx.data() == into_buffers_[1] &&
                              c.values.data() == into_buffers_[2] && c.nnz == into_nnz_ && c.rows == rows_,
                          "device SpGEMM: multiply_into re-run with another C than the first run filled (",
                          c.rows, " rows, ", c.nnz, " entries; a copy or another matrix has other buffers)");
  begin_run(a, b, /*into_caller=*/true);
  run_into(a, b, c);
  into_buffers_[0] = c.row_ptr.data(), into_buffers_[1] = c.col_idx.data(), into_buffers_[2] = c.values.data();
  into_nnz_ = c.nnz;
}

void DeviceProduct::run_into(const OperandView& a, const OperandView& b, DeviceCsr<double>& c) {
  if (!empty_ && which_ == OffloadSpgemm::hash) {
    hash_multiply(a, b, c);  // the numeric phase writes c: no copy of C here
    have_symbolic_ = have_csr_pattern_ = true;
    if (!keep_plan_) hash_.reset();  // nothing kept for a re-run
  } else if (!empty_ && which_ == OffloadSpgemm::cusparse && keep_plan_) {
    cusparse_multiply_into(a, b, c);
  } else {  // tile (C stays in tiles), one-shot cuSPARSE (hands C over), empty products
    run_engine(a, b);
    copy_result_csr(c);
  }
}

void DeviceProduct::tile_multiply(const OperandView& a, const OperandView& b) {
  TESSERA_REQUIRE_INPUT(a.tiles && b.tiles, "device SpGEMM: the tile product needs operands in tiles");
  if (!have_symbolic_) {
    plan_ = TileSpgemm<double>({}, stream_);  // drop_zeros off: the structural pattern
    plan_.symbolic(*a.tiles, *b.tiles, c_tiles_);
  }
  plan_.numeric(*a.tiles, *b.tiles, c_tiles_);
}

void DeviceProduct::cusparse_multiply(const OperandView& a, const OperandView& b) {
  TESSERA_REQUIRE_INPUT(a.csr && a.row_ptr32 && b.csr && b.row_ptr32,
                        "device SpGEMM: the cuSPARSE product needs CSR operands with int32 row offsets");
  if (!keep_plan_) {  // nothing kept: every run is a fresh one-shot product with a new C
    cusparse_ = std::make_unique<CusparseReusePlan>();
    cusparse_->one_shot(a, b, stream_);
    have_csr_pattern_ = false;
    return;
  }
  if (!have_symbolic_) {
    cusparse_ = std::make_unique<CusparseReusePlan>();
    cusparse_->symbolic(a, b, stream_);
  }
  cusparse_->numeric(a, b, stream_);
}

/// Kept plan: the first run sorts C into `c` and hands cuSPARSE's arrays over when the rows were
/// sorted; from then on cuSPARSE computes into c's values. Rows that needed sorting keep the
/// copy-and-gather of result_csr (cuSPARSE's C and the sorted one: C twice, the rare case).
void DeviceProduct::cusparse_multiply_into(const OperandView& a, const OperandView& b, DeviceCsr<double>& c) {
  const bool in_caller = have_symbolic_ && cusparse_->c_in_caller();
  if (in_caller) cusparse_->write_c_into(c);  // multiply_into checked c is the CSR the first run filled
  cusparse_multiply(a, b);
  if (!have_symbolic_) cusparse_->hand_over = true;  // before the first sort into c
  have_symbolic_ = true;
  if (!in_caller) copy_result_csr(c);
}

void DeviceProduct::cusparse_result_csr(DeviceCsr<double>& c) {
  TESSERA_REQUIRE_INPUT(cusparse_ != nullptr, "device SpGEMM: result_csr() called twice on a one-shot product");
  if (!have_csr_pattern_) cusparse_->sorted_pattern(c, rows_, cols_, stream_);
  TESSERA_REQUIRE_INPUT(c.nnz == cusparse_->c_nnz, "device SpGEMM: result_csr() into a matrix of another pattern");
  cusparse_->sorted_values(c, stream_);
  if (!keep_plan_) cusparse_.reset();  // C now lives in `c`: free cuSPARSE's copy and the order
}

/// C into `c`: hash_c_ (multiply) or the caller's CSR (multiply_into), pattern from the kept
/// symbolic phase on re-runs.
void DeviceProduct::hash_multiply(const OperandView& a, const OperandView& b, DeviceCsr<double>& c) {
  TESSERA_REQUIRE_INPUT(a.csr && b.csr, "device SpGEMM: the hash product needs CSR operands");
  if (!have_symbolic_ || !keep_plan_ || !hash_) {  // one-shot: hash_ was freed with C's hand-over
    hash_ = std::make_unique<HashSpgemm>(stream_);
    hash_->symbolic(*a.csr, *b.csr, c);
    have_csr_pattern_ = false;
  }
  hash_->numeric(*a.csr, *b.csr, c);  // a re-run's c: hash_c_, or the CSR multiply_into checked
}

void DeviceProduct::hash_result_csr(DeviceCsr<double>& c) {
  TESSERA_REQUIRE_INPUT(hash_ != nullptr, "device SpGEMM: result_csr() called twice on a one-shot product");
  if (!keep_plan_) {  // C is read once: hand it over
    c = std::move(hash_c_);
    hash_c_ = DeviceCsr<double>{};
    hash_.reset();
    return;
  }
  auto copy = [&](auto& to, const auto& from) {
    if (from.size())
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data(), from.bytes(), cudaMemcpyDeviceToDevice, stream_));
  };
  if (!have_csr_pattern_) {
    c.rows = hash_c_.rows, c.cols = hash_c_.cols, c.nnz = hash_c_.nnz;
    c.row_ptr.allocate(hash_c_.row_ptr.size(), stream_);
    c.col_idx.allocate(hash_c_.col_idx.size(), stream_);
    c.values.allocate(hash_c_.values.size(), stream_);
    copy(c.row_ptr, hash_c_.row_ptr);
    copy(c.col_idx, hash_c_.col_idx);
  }
  TESSERA_REQUIRE_INPUT(c.nnz == hash_c_.nnz, "device SpGEMM: result_csr() into a matrix of another pattern");
  copy(c.values, hash_c_.values);
}

OperandView DeviceProduct::tile_result() const {
  TESSERA_REQUIRE_INPUT(have_symbolic_ && which_ == OffloadSpgemm::tile,
                        "device SpGEMM: tile_result() needs a tile product that has run");
  OperandView v;
  v.rows = rows_, v.cols = cols_, v.nnz = c_tiles_.nnz;
  v.tiles = &c_tiles_;
  return v;
}

void DeviceProduct::result_csr(DeviceCsr<double>& c) {
  TESSERA_REQUIRE_INPUT(have_symbolic_, "device SpGEMM: result_csr() before multiply()");
  TESSERA_REQUIRE_INPUT(!into_caller_, "device SpGEMM: result_csr() on a product that runs multiply_into() (C is in "
                                       "the caller's matrix)");
  copy_result_csr(c);
}

void DeviceProduct::copy_result_csr(DeviceCsr<double>& c) {
  if (empty_) {
    if (!have_csr_pattern_) c = empty_device_csr(rows_, cols_, stream_);
  } else if (which_ == OffloadSpgemm::tile) {
    if (!have_csr_pattern_) c = to_csr(c_tiles_, stream_);
    else refresh_csr_values(c_tiles_, c, stream_);
  } else if (which_ == OffloadSpgemm::hash) {
    hash_result_csr(c);
  } else {
    cusparse_result_csr(c);
  }
  have_csr_pattern_ = true;
}

std::int64_t DeviceProduct::bytes() const {
  const auto& t = c_tiles_;
  return std::int64_t(t.tile_row_ptr.bytes() + t.tile_col.bytes() + t.bitmap.bytes() + t.value_offset.bytes() +
                      t.values.bytes()) +
         (cusparse_ ? cusparse_->bytes() : 0) + (hash_ ? hash_->bytes() : 0) + hash_c_.bytes();
}

}  // namespace tessera::cuda
