#pragma once
// Shared by the tile SpGEMM GPU tests: run the device product from host CSR inputs (device
// CSR->tile conversion, poisoned outputs), and compare with the host reference under the
// stated rounding bound.
//
// Error bound. For c_ij = sum of n_ij products a_ik b_kj, any summation order in arithmetic
// with unit roundoff u gives |fl(c_ij) - c_ij| <= gamma(n_ij) (|A||B|)_ij, gamma(n) =
// n u / (1 - n u) (Higham, Accuracy and Stability, 3.1). The reference sums in double, so
// |c - c_ref| <= (gamma_u(n) + gamma_2^-53(n)) (|A||B|)_ij; we test against 2 n u (|A||B|)_ij
// (+ a tiny absolute floor for gradual underflow). Zero-filled MMA operands add exact zeros.
//   fp64: u = 2^-53.   fp32 (FMA, exact fp32 arithmetic): u = 2^-24.
//   fp16: inputs rounded to binary16 (relative 2^-11 each, part of the data: the reference
//   uses the rounded inputs); products of two halves are exact in fp32, accumulation in fp32
//   by the tensor core, whose internal alignment may truncate: u = 2^-23 (two fp32 ulps).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "local/core/precision.hpp"
#include "local/cuda/tile_convert.hpp"
#include "local/cuda/tile_spgemm.hpp"
#include "local/formats/convert.hpp"
#include "local/reference/kernels.hpp"

namespace tessera::testing {

template <class T>
double unit_roundoff_of() {
  if constexpr (std::is_same_v<T, double>) return std::ldexp(1.0, -53);
  else if constexpr (std::is_same_v<T, float>) return std::ldexp(1.0, -24);
  else return std::ldexp(1.0, -23);
}

template <class T>
Csr<double> abs_values(const Csr<T>& a) {
  Csr<double> m = convert_values<double>(a);
  for (auto& v : m.values) v = std::fabs(v);
  return m;
}

template <class T>
Csr<double> ones_like(const Csr<T>& a) {
  Csr<double> m = convert_values<double>(a);
  for (auto& v : m.values) v = 1.0;
  return m;
}

/// Result of one device product, back on the host in double.
struct GpuProduct {
  Csr<double> c;
  cuda::TileSpgemmInfo info;
};

/// C = A*B on the device in value type T: host -> device CSR -> device tiles -> symbolic ->
/// poison C's values (0xff bytes: NaN) -> numeric [-> drop_zeros] -> device CSR -> host.
template <class T>
GpuProduct gpu_product(const Csr<T>& a, const Csr<T>& b, const cuda::TileSpgemmOptions& options = {}) {
  const auto da = cuda::to_tiles(cuda::upload(a));
  const auto db = cuda::to_tiles(cuda::upload(b));
  cuda::TileSpgemm<T> plan(options);
  cuda::DeviceTileMatrix<cuda::spgemm_output_t<T>> dc;
  plan.symbolic(da, db, dc);
  dc.values.fill_bytes(0xff);
  plan.numeric(da, db, dc);
  if (options.drop_zeros) dc = cuda::drop_zeros(dc);
  return {convert_values<double>(cuda::download(cuda::to_csr(dc))), plan.info()};
}

/// Same pattern as the reference and every value within the bound above.
template <class T>
void expect_matches_reference(const Csr<T>& a, const Csr<T>& b, const Csr<double>& c, bool keep_zeros = true) {
  const Csr<double> ref = ref::spgemm(a, b, ref::SpgemmOptions{keep_zeros});
  ASSERT_EQ(c.rows, ref.rows);
  ASSERT_EQ(c.cols, ref.cols);
  ASSERT_EQ(c.row_ptr, ref.row_ptr) << "row pattern differs";
  ASSERT_EQ(c.col_idx, ref.col_idx) << "column pattern differs";
  if (ref.nnz() == 0) return;
  const Csr<double> magnitude = ref::spgemm(abs_values(a), abs_values(b), ref::SpgemmOptions{true});
  const Csr<double> terms = ref::spgemm(ones_like(a), ones_like(b), ref::SpgemmOptions{true});
  // With keep_zeros = false the reference pattern is a subset: look the entry up by column.
  const double u = unit_roundoff_of<T>();
  for (std::int64_t i = 0; i < c.rows; ++i) {
    std::int64_t m = magnitude.row_ptr[i];
    for (std::int64_t e = c.row_ptr[i]; e < c.row_ptr[i + 1]; ++e) {
      while (magnitude.col_idx[m] != c.col_idx[e]) ++m;
      const double bound = 2.0 * terms.values[m] * u * magnitude.values[m] + 1e-300;
      ASSERT_LE(std::fabs(c.values[e] - ref.values[e]), bound)
          << "C(" << i << "," << c.col_idx[e] << ") = " << c.values[e] << ", reference " << ref.values[e] << ", "
          << terms.values[m] << " terms";
    }
  }
}

}  // namespace tessera::testing
