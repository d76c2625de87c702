#pragma once
// RowBlock: rows [row_begin, row_end) of a global matrix with 64-bit global column indices.
// It is what the generators and the Matrix Market reader hand to the distributed layer, where
// one rank holds its rows only and global sizes may pass 2^31.
#include <cstdint>
#include <vector>

#include "local/core/host_array.hpp"
#include "local/formats/csr.hpp"

namespace tessera {

struct RowBlock {
  std::int64_t global_rows = 0, global_cols = 0;
  std::int64_t row_begin = 0, row_end = 0;
  HostArray<std::int64_t> row_ptr{0};  // (row_end - row_begin) + 1 entries
  HostArray<std::int64_t> col;         // global columns, sorted and unique within each row
  HostArray<double> values;

  std::int64_t local_rows() const { return row_end - row_begin; }
  std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
};

/// The whole matrix as a Csr (requires row_begin == 0, row_end == global_rows and columns
/// that fit int32; InputError otherwise).
Csr<double> to_csr(const RowBlock& block);

/// Rows [begin, end) of a Csr as a RowBlock.
RowBlock row_block(const Csr<double>& a, std::int64_t begin, std::int64_t end);

}  // namespace tessera
