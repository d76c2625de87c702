#include "dist/spgemm.hpp"

#include "dist/communicator.hpp"
#include "local/core/step_trace.hpp"
#include "local/core/stopwatch.hpp"

namespace tessera::dist {

DistSpgemm::DistSpgemm(const Communicator& comm, const DistMatrix& a, const DistMatrix& b, LocalSpgemm local)
    : product_(comm, a, b, std::move(local)) {
  const Stopwatch clock;
  Csr<double> rows = product_.multiply(comm);
  TESSERA_TRACE_STEP("spgemm.assemble");
  c_ = assemble_compact(comm, std::move(rows), product_.compact_to_global(), a.row_partition, b.col_partition);
  finish_stats(product_.stats(), clock.seconds());
}

void DistSpgemm::recompute(const Communicator& comm, const DistMatrix& a, const DistMatrix& b) {
  product_.refresh(comm, a, b);
  const Stopwatch clock;
  // The product's entries are C's in row order (the compact numbering is monotone).
  set_values_in_row_order(c_, product_.multiply(comm).values);
  finish_stats(product_.stats(), clock.seconds());
}

void DistSpgemm::finish_stats(const DistStats& from_product, double seconds) {
  stats_ = from_product;
  stats_.compute_seconds += seconds;
  stats_.rows = c_.owned_rows();
  stats_.nnz = c_.nnz();
}

DistMatrix spgemm(const Communicator& comm, const DistMatrix& a, const DistMatrix& b, DistStats* stats) {
  DistSpgemm product(comm, a, b);
  if (stats) *stats += product.stats();
  return product.result();
}

}  // namespace tessera::dist
