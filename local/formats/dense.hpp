#pragma once
// DenseMatrix: a host multi-vector (X, Y of SpMM), row-major or column-major, always double.
#include <cstdint>
#include <vector>

namespace tessera {

enum class Layout { row_major, col_major };

struct DenseMatrix {
  std::int64_t rows = 0, cols = 0;
  Layout layout = Layout::row_major;
  std::vector<double> data;  // rows*cols

  DenseMatrix() = default;
  DenseMatrix(std::int64_t r, std::int64_t c, Layout l, double fill = 0.0)
      : rows(r), cols(c), layout(l), data(static_cast<std::size_t>(r * c), fill) {}

  std::int64_t index(std::int64_t i, std::int64_t j) const {
    return layout == Layout::row_major ? i * cols + j : j * rows + i;
  }
  double& at(std::int64_t i, std::int64_t j) { return data[index(i, j)]; }
  double at(std::int64_t i, std::int64_t j) const { return data[index(i, j)]; }
};

}  // namespace tessera
