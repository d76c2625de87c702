#pragma once
// Exact conversions between the formats, and between value types.
#include "local/core/precision.hpp"
#include "local/formats/csr.hpp"
#include "local/formats/tile_matrix.hpp"

namespace tessera {

/// CSR -> tiles. Exact: every stored entry (explicit zeros included) keeps its value.
template <class T>
TileMatrix<T> to_tiles(const Csr<T>& a);

/// Tiles -> CSR. Exact inverse of to_tiles.
template <class T>
Csr<T> to_csr(const TileMatrix<T>& a);

/// Changes the value type. Narrowing to float or Half first checks every value is finite and
/// within the target's range (InputError naming the entry otherwise); rounding is to nearest.
template <class To, class From>
Csr<To> convert_values(const Csr<From>& a, const std::string& what = "matrix");

/// Values as doubles (for checks and error measurement).
template <class T>
std::vector<double> values_as_double(const HostArray<T>& values);

}  // namespace tessera
