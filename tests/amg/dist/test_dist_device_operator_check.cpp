// The distributed setup's check of a level's operator on the ranks' GPUs
// (amg/cuda/dist_device_operator_check.hpp) against the host check (check_dist_operator), on a
// balanced and an uneven partition with a rank owning no rows:
//   - a fit operator passes, and the check leaves the level's copy in the slot (A's blocks, bit
//     for bit), where a later check reads it without a second upload;
//   - each unfit operator -- a NaN in the owned block, an infinity in the ghost block, a missing,
//     zero, negative or infinite diagonal, each in one row of one rank -- is the host check's own
//     InputError on every rank, also where the copy in the slot is stale and must be refreshed
//     before the check reads it;
//   - an outer product left in the slot that is C's local block is the copy's (only the non-local
//     block is uploaded), cut to the host block's rows, unless new values dropped it;
//   - a rectangular operator is refused in the host's words before any upload;
//   - the inverse diagonal divided on the device copy is the host's bit for bit, also after new
//     values, and the slot keeps the device's until the values change;
//   - a whole setup with the GPU backend (device_setup_backend, which checks every level on the
//     device) refuses an unfit A with the host setup's words, and builds the host backend's
//     levels from a fit one, each level's device copy holding its host blocks bit for bit.
// A GPU on every rank, maybe shared (label gpu; exit 77 without).
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <utility>

#include "amg/cuda/device_operator_slot.hpp"
#include "amg/cuda/device_setup_backend.hpp"
#include "amg/cuda/dist_device_operator_check.hpp"
#include "amg/dist/dist_amg.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "dist/cuda/device_context.hpp"
#include "dist/cuda/device_dist_matrix.hpp"
#include "dist/cuda/device_held_operand.hpp"
#include "dist/ptap.hpp"
#include "dist_amg_test_util.hpp"

namespace tessera::amg {
namespace {

/// `a` with entry (row, col) changed by `change` (the entry must exist).
Csr<double> with_entry(Csr<double> a, std::int64_t row, std::int64_t col, const std::function<void(double&)>& change) {
  for (std::int64_t p = a.row_ptr[row]; p < a.row_ptr[row + 1]; ++p)
    if (a.col_idx[p] == col) {
      change(a.values[p]);
      return a;
    }
  ADD_FAILURE() << "no entry (" << row << ", " << col << ")";
  return a;
}

/// `a` without entry (row, col).
Csr<double> without_entry(const Csr<double>& a, std::int64_t row, std::int64_t col) {
  std::vector<std::int64_t> rows, cols;
  std::vector<double> values;
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
      if (i != row || a.col_idx[p] != col) rows.push_back(i), cols.push_back(a.col_idx[p]), values.push_back(a.values[p]);
  return csr_from_triplets<double>(a.rows, a.cols, rows, cols, values);
}

/// An entry of a row of the last rank owning rows in a column another rank owns (a ghost column
/// of that rank); where one rank owns every row, an off-diagonal entry.
std::pair<std::int64_t, std::int64_t> ghost_entry(const Csr<double>& a, const dist::RowPartition& rows) {
  const int last = rows.owner(a.rows - 1);
  for (std::int64_t r = rows.begin(last); r < a.rows; ++r)
    for (std::int64_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p)
      if (rows.owner(a.col_idx[p]) != last) return {r, a.col_idx[p]};
  int owning = 0;  // an uneven partition may leave one rank all the rows
  for (int r = 0; r < rows.num_ranks(); ++r) owning += rows.end(r) > rows.begin(r);
  EXPECT_EQ(owning, 1) << "no ghost column on the last rank, though " << owning << " ranks own rows";
  return {a.rows - 5, a.rows - 6};
}

struct UnfitCase {
  std::string name, words;  // words: what the host check's message must say
  Csr<double> a;
};

std::vector<UnfitCase> unfit_cases(const Csr<double>& a, const dist::RowPartition& rows) {
  const std::int64_t row = a.rows - 5;  // owned by the last rank owning rows
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::string at = " at row " + std::to_string(row);
  const auto [ghost_row, ghost_col] = ghost_entry(a, rows);
  return {
      {"a NaN in the owned block", "non-finite value nan" + at, with_entry(a, row, row - 1, [&](double& v) { v = nan; })},
      {"an infinity in the ghost block (the owned block on one rank)",
       "non-finite value inf at row " + std::to_string(ghost_row),
       with_entry(a, ghost_row, ghost_col, [&](double& v) { v = inf; })},
      {"a missing diagonal", "no diagonal entry in row " + std::to_string(row), without_entry(a, row, row)},
      {"a zero diagonal", "zero diagonal 0" + at, with_entry(a, row, row, [](double& v) { v = 0.0; })},
      {"a negative diagonal", "negative diagonal -2" + at, with_entry(a, row, row, [](double& v) { v = -2.0; })},
      {"an infinite diagonal", "non-finite value inf" + at, with_entry(a, row, row, [&](double& v) { v = inf; })},
  };
}

class DistDeviceOperatorCheck : public ::testing::Test {
 protected:
  const dist::Communicator comm;
  dist::gpu::DeviceContext ctx{comm};
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  const testing::Problem pb = testing::make_problem("poisson3d:9");

  std::string host_error(const dist::DistMatrix& a) {
    return dist::testing::input_error_on_every_rank(comm, [&] { check_dist_operator(comm, a, "A"); });
  }
  std::string device_error(const dist::DistMatrix& a, DeviceOperatorSlot& slot) {
    return dist::testing::input_error_on_every_rank(
        comm, [&] { gpu::dist_device_check_operator(comm, a, "A", slot, ctx.compute()); });
  }
};

TEST_F(DistDeviceOperatorCheck, FitOperatorPassesAndLeavesItsCopyInTheSlot) {
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, uneven, seed);
    const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
    DeviceOperatorSlot slot;
    EXPECT_NO_THROW(gpu::dist_device_check_operator(comm, a, "A", slot, ctx.compute()));
    EXPECT_NE(slot.matrix, nullptr) << "the check made no device copy";  // not ASSERT: the next check is collective
    if (slot.matrix) {
      EXPECT_EQ(slot.matrix->host, &a);
      EXPECT_EQ(cuda::download(slot.matrix->local, ctx.compute()), a.local);
      EXPECT_EQ(cuda::download(slot.matrix->nonlocal, ctx.compute()), a.nonlocal);
    }
    const dist::gpu::DeviceDistMatrix* copy = slot.matrix.get();
    EXPECT_NO_THROW(gpu::dist_device_check_operator(comm, a, "A", slot, ctx.compute()));
    EXPECT_EQ(slot.matrix.get(), copy) << "a second check uploaded A again";
  }
}

// An outer product left in the slot that is C's local block (the coarse operator on one rank) is
// taken for the copy instead of the host's: the test gives it other values than the host's to
// tell them apart, and one row more than the host block (an empty partial row for another rank),
// which the copy cuts. New host values drop it before it is taken. (Where T is not C, the copy's
// blocks from it are the host's: DeviceSetupRefusesAsTheHostSetupAndBuildsItsLevels on 2-4 ranks,
// and test_dist_device_smoothing.)
TEST_F(DistDeviceOperatorCheck, CopyTakesTheLocalBlockAProductLeftInTheSlot) {
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, uneven, seed);
    const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
    const auto product_of = [&](double scale) {
      Csr<double> made = a.local;
      for (double& v : made.values) v *= scale;
      made.row_ptr.push_back(made.nnz());
      made.rows += 1;
      auto kept = std::make_shared<dist::gpu::DeviceHeldProduct>();
      EXPECT_EQ(cudaGetDevice(&kept->device), cudaSuccess);
      kept->product = cuda::upload(made, ctx.compute());
      EXPECT_EQ(cudaStreamSynchronize(ctx.compute()), cudaSuccess);
      return kept;
    };
    const auto kept_as_c = [&](double scale) {
      auto kept = std::make_shared<dist::KeptOuterProduct>();
      kept->t = product_of(scale);
      kept->t_is_c = true;
      return kept;
    };
    DeviceOperatorSlot slot;
    slot.outer_product = kept_as_c(2.0);
    EXPECT_NO_THROW(gpu::dist_device_check_operator(comm, a, "A", slot, ctx.compute()));
    EXPECT_NE(slot.matrix, nullptr);  // not ASSERT: the next check is collective
    EXPECT_EQ(slot.outer_product, nullptr) << "the product's block was not taken";
    Csr<double> want = a.local;
    for (double& v : want.values) v *= 2.0;
    if (slot.matrix) {
      EXPECT_EQ(cuda::download(slot.matrix->local, ctx.compute()), want) << "the copy is not the product's block";
      EXPECT_EQ(cuda::download(slot.matrix->nonlocal, ctx.compute()), a.nonlocal);
    }

    DeviceOperatorSlot dropped;
    dropped.outer_product = kept_as_c(3.0);
    dropped.values_changed();
    EXPECT_EQ(dropped.outer_product, nullptr) << "new host values kept the product's block";
    EXPECT_NO_THROW(gpu::dist_device_check_operator(comm, a, "A", dropped, ctx.compute()));
    EXPECT_NE(dropped.matrix, nullptr);  // not ASSERT: the next partition is collective
    if (dropped.matrix) EXPECT_EQ(cuda::download(dropped.matrix->local, ctx.compute()), a.local);
  }
}

TEST_F(DistDeviceOperatorCheck, UnfitOperatorIsTheHostErrorOnEveryRank) {
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, uneven, seed);
    const dist::DistMatrix fit = dist::testing::distribute(comm, pb.a, rows, rows);
    for (const UnfitCase& c : unfit_cases(pb.a, rows)) {
      SCOPED_TRACE(c.name);
      const dist::DistMatrix a = dist::testing::distribute(comm, c.a, rows, rows);
      const std::string want = host_error(a);
      EXPECT_NE(want.find(c.words), std::string::npos) << want;
      DeviceOperatorSlot slot;
      EXPECT_EQ(device_error(a, slot), want);
      if (c.a.nnz() != pb.a.nnz()) continue;  // the missing diagonal: another pattern
      // The fit values first, checked and left in the slot; then the unfit ones, the slot told:
      // the check refreshes the copy before it reads it.
      dist::DistMatrix changing = fit;
      DeviceOperatorSlot stale;
      EXPECT_NO_THROW(gpu::dist_device_check_operator(comm, changing, "A", stale, ctx.compute()));
      changing.local.values = a.local.values;
      changing.nonlocal.values = a.nonlocal.values;
      stale.values_changed();
      EXPECT_EQ(device_error(changing, stale), want);
    }
  }
}

TEST_F(DistDeviceOperatorCheck, InverseDiagonalIsTheHostsBitForBit) {
  // Diagonals of many magnitudes and mantissas, so that the divisions round.
  std::mt19937_64 rng(seed);
  Csr<double> varied = pb.a;
  for (std::int64_t r = 0; r < varied.rows; ++r)
    for (std::int64_t p = varied.row_ptr[r]; p < varied.row_ptr[r + 1]; ++p)
      if (varied.col_idx[p] == r)
        varied.values[p] = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(rng),
                                      static_cast<int>(rng() % 41) - 20);
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, uneven, seed);
    dist::DistMatrix a = dist::testing::distribute(comm, varied, rows, rows);
    DeviceOperatorSlot slot;
    const std::vector<double> got = gpu::dist_device_inverse_diagonal(comm, a, slot, ctx.compute());
    EXPECT_EQ(got, owned_inverse_diagonal(a));
    EXPECT_EQ(got.size(), static_cast<std::size_t>(a.owned_rows()));
    // Not ASSERTs: the divisions below are collective.
    EXPECT_NE(slot.matrix, nullptr) << "no device copy left in the slot";
    // The slot keeps the device's, which the download is, for the phases that read it there.
    EXPECT_NE(gpu::current_inverse_diagonal(slot, a), nullptr) << "no device 1 / a_ii left in the slot";
    if (slot.inverse_diagonal) EXPECT_EQ(slot.inverse_diagonal->download(ctx.compute()), got);
    // New values, the slot told: the old division goes with them, and the copy is refreshed
    // before the next.
    for (double& v : a.local.values) v *= 3.0;
    slot.values_changed();
    EXPECT_EQ(gpu::current_inverse_diagonal(slot, a), nullptr) << "1 / a_ii of the old values kept";
    const std::vector<double> again = gpu::dist_device_inverse_diagonal(comm, a, slot, ctx.compute());
    EXPECT_EQ(again, owned_inverse_diagonal(a));
    EXPECT_NE(gpu::current_inverse_diagonal(slot, a), nullptr);
    if (slot.inverse_diagonal) EXPECT_EQ(slot.inverse_diagonal->download(ctx.compute()), again);
  }
}

TEST_F(DistDeviceOperatorCheck, RectangularOperatorIsRefusedBeforeAnyUpload) {
  const dist::RowPartition rows = dist::RowPartition::balanced_rows(pb.a.rows, comm.size());
  const dist::RowPartition cols = dist::RowPartition::balanced_rows(pb.a.rows + 1, comm.size());
  Csr<double> wide = pb.a;
  wide.cols += 1;
  const dist::DistMatrix a = dist::testing::distribute(comm, wide, rows, cols);
  DeviceOperatorSlot slot;
  const std::string want = host_error(a);
  EXPECT_NE(want.find("must be square"), std::string::npos) << want;
  EXPECT_EQ(device_error(a, slot), want);
  EXPECT_EQ(slot.matrix, nullptr) << "a refused operator was uploaded";
}

// The whole setup with the GPU backend: level 0 and every Galerkin product checked on the device.
TEST_F(DistDeviceOperatorCheck, DeviceSetupRefusesAsTheHostSetupAndBuildsItsLevels) {
  const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, true, seed);
  const NearNullSpace b = testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank()));
  AmgOptions o;
  o.coarse_size = 40;
  const auto backend = [&] { return gpu::device_setup_backend(ctx, cuda::OffloadSpgemm::automatic); };
  for (const UnfitCase& c : unfit_cases(pb.a, rows)) {
    SCOPED_TRACE(c.name);
    const dist::DistMatrix a = dist::testing::distribute(comm, c.a, rows, rows);
    const std::string want = dist::testing::input_error_on_every_rank(comm, [&] { DistAmg(comm, a, b, o); });
    EXPECT_EQ(dist::testing::input_error_on_every_rank(comm, [&] { DistAmg(comm, a, b, o, backend()); }), want);
  }
  const dist::DistMatrix a = dist::testing::distribute(comm, pb.a, rows, rows);
  const DistAmg host(comm, a, b, o);
  const DistAmg device(comm, a, b, o, backend());
  const auto &want = host.hierarchy().levels, &got = device.hierarchy().levels;
  ASSERT_GE(want.size(), 3u) << "the test wants a real hierarchy";
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t l = 0; l < got.size(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l));
    // Not ASSERT: the gathers below are collective.
    EXPECT_NE(got[l].device_a.matrix, nullptr) << "the level's check left no device copy";
    EXPECT_EQ(got[l].device_a.outer_product, nullptr) << "a product's T left after the setup";
    // The copy holds the level's host blocks, whether uploaded or made from the Galerkin
    // product's outer product on the device (every coarse level).
    if (got[l].device_a.matrix) {
      EXPECT_EQ(cuda::download(got[l].device_a.matrix->local, ctx.compute()), got[l].a.local);
      EXPECT_EQ(cuda::download(got[l].device_a.matrix->nonlocal, ctx.compute()), got[l].a.nonlocal);
    }
    const Csr<double> g = dist::gather(comm, got[l].a), w = dist::gather(comm, want[l].a);
    if (comm.rank() == 0) testing::expect_equal_to_rounding(g, w, "A");
  }
}

}  // namespace
}  // namespace tessera::amg
