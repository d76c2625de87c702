// Filtered prolongator smoothing on the distributed setup (amg/dist/dist_filtered_operator.hpp),
// 1-4 ranks, a balanced partition and an uneven one with an empty rank:
//   - A_F, gathered, is the serial filtered operator of the gathered A bit for bit (pattern and
//     values, before and after a refresh from new values), on fresh random symmetric matrices
//     (nodes of 1, 2 and 3 dofs, two thresholds, 1x1 and empty) and on frames with their kinds
//     of dof separated; where no rank drops an entry, every rank says so (nullopt);
//   - A_F keeps only the ghosts its entries use, and its halo plan brings them;
//   - a re-setup refreshes A_F: on D A D (exact powers of two) it equals a fresh setup;
//   - a re-setup's transfer where the products run (on the GPUs) gets A_F refreshed and its omega.
// (The hierarchy against the serial one: test_dist_hierarchy.cpp.)
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "amg/dist/dist_amg.hpp"
#include "amg/dist/dist_filtered_operator.hpp"
#include "amg/dist/dist_hierarchy.hpp"
#include "amg/dist/dist_level_ops.hpp"
#include "amg/dist/dist_setup_backend.hpp"
#include "amg/filtered_operator.hpp"
#include "amg/prolongator_smoothing.hpp"
#include "amg/separate_kinds.hpp"
#include "dist_amg_test_util.hpp"
#include "support/random_matrix.hpp"

namespace tessera::amg {
namespace {

using testing::Problem;

/// R + R^T with a diagonal of (row's absolute sum + 1): symmetric, positive diagonal, couplings
/// of every strength.
Csr<double> random_symmetric(std::int64_t n, double density, std::uint64_t seed) {
  const Csr<double> r = tessera::testing::random_csr({n, n, density}, seed);
  std::vector<std::int64_t> rows, cols;
  std::vector<double> values, diagonal(static_cast<std::size_t>(n), 1.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t p = r.row_ptr[i]; p < r.row_ptr[i + 1]; ++p) {
      const std::int64_t j = r.col_idx[p];
      if (j == i) continue;
      rows.insert(rows.end(), {i, j}), cols.insert(cols.end(), {j, i});
      values.insert(values.end(), {r.values[p], r.values[p]});
      diagonal[i] += std::abs(r.values[p]), diagonal[j] += std::abs(r.values[p]);
    }
  for (std::int64_t i = 0; i < n; ++i) rows.push_back(i), cols.push_back(i), values.push_back(diagonal[i]);
  return csr_from_triplets<double>(n, n, rows, cols, values);
}

/// `a` with entry (i, j) times 2^(i % 3) 2^(j % 3): D A D, exact, so the strength graph (scaled
/// couplings) is bit for bit A's, while A_F's values are not a multiple of A's.
Csr<double> two_sided_scaled(Csr<double> a) {
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
      a.values[p] *= double(1 << (i % 3)) * double(1 << (a.col_idx[p] % 3));
  return a;
}

/// A frame's operator without its cross-kind couplings: scalar nodes, the constant near-null
/// space (the hierarchy of --pmat separate-kinds).
Problem separated_frame(const std::string& spec) {
  const gen::ProblemSpec s = gen::parse_spec(spec);
  const Csr<double> a = without_cross_kind_couplings(gen::generate(s), gen::block_size(s));
  return Problem{spec + " separated", a, constant_near_null_space(a.rows, 1)};
}

/// Rank 0 holds the serial A_F of `a` (nullopt where nothing is dropped); every rank checks the
/// distributed one on both partitions. Returns whether the case dropped entries.
bool expect_serial_filtered_operator(const dist::Communicator& comm, const Csr<double>& a, int block, double theta,
                                     std::uint64_t seed) {
  const NodeLayout nodes = uniform_nodes(a.rows, block);
  std::optional<FilteredOperator> serial = filtered_operator(a, nodes, strength_graph(a, nodes, theta));
  const Csr<double> scaled = two_sided_scaled(a);
  for (const bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "uneven partition with an empty rank" : "balanced partition");
    const dist::RowPartition rows = testing::aligned_partition(comm, a.rows, block, uneven, seed);
    const dist::DistMatrix da = dist::testing::distribute(comm, a, rows, rows);
    const DistNodes dnodes = uniform_dist_nodes(comm, da, block);
    std::optional<DistFilteredOperator> f =
        dist_filtered_operator(comm, da, dnodes, dist_strength_graph(comm, da, dnodes, theta));
    EXPECT_TRUE(dist::testing::same_on_every_rank(comm, f.has_value()));
    EXPECT_EQ(f.has_value(), serial.has_value()) << "rank " << comm.rank();
    if (!f || !serial) continue;
    // Only used ghosts, each a ghost of A, and a halo plan that brings every one of them.
    std::vector<char> used(f->a.ghost_cols.size(), 0);
    for (std::int32_t c : f->a.nonlocal.col_idx) used[c] = 1;
    EXPECT_EQ(std::count(used.begin(), used.end(), 0), 0) << "A_F keeps a ghost no entry uses";
    EXPECT_TRUE(std::includes(da.ghost_cols.begin(), da.ghost_cols.end(), f->a.ghost_cols.begin(),
                              f->a.ghost_cols.end()));
    EXPECT_EQ(f->a.halo.num_ghosts(), static_cast<std::int64_t>(f->a.ghost_cols.size()));
    for (const bool rescaled : {false, true}) {
      SCOPED_TRACE(rescaled ? "refreshed from D A D" : "first values");
      const dist::DistMatrix values = rescaled ? dist::testing::distribute(comm, scaled, rows, rows) : da;
      refresh_dist_filtered_values(values, *f);
      const Csr<double> gathered = dist::gather(comm, f->a);
      if (comm.rank() != 0) continue;
      refresh_filtered_values(rescaled ? scaled : a, *serial);
      EXPECT_EQ(gathered, serial->a);  // bit for bit: each diagonal summed in the serial order
    }
  }
  return serial.has_value();
}

TEST(DistFilteredOperator, IsTheSerialFilteredOperatorBitForBit) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  int filtered = 0;
  for (const std::int64_t n : {0, 1, 30, 96, 150})
    for (const int block : {1, 2, 3}) {
      if (n % block) continue;
      for (const double theta : {0.05, 0.2}) {
        SCOPED_TRACE(std::to_string(n) + " rows, block " + std::to_string(block) + ", theta " + std::to_string(theta));
        const Csr<double> a = random_symmetric(n, 0.1, seed + static_cast<std::uint64_t>(n * 10 + block));
        filtered += expect_serial_filtered_operator(comm, a, block, theta, seed);
      }
    }
  EXPECT_GE(filtered, 10) << "too few random cases dropped an entry to test the filter";
  for (const char* spec : {"frame2d:12:30", "frame3d:4:30"}) {
    SCOPED_TRACE(spec);
    const Problem pb = separated_frame(spec);
    EXPECT_TRUE(expect_serial_filtered_operator(comm, pb.a, 1, 0.02, seed)) << "the weak couplings were kept";
  }
  // The 7-point Laplacian's scaled couplings are all 1/6: nothing dropped at 0.02, on any rank.
  EXPECT_FALSE(expect_serial_filtered_operator(comm, testing::make_problem("poisson3d:6").a, 1, 0.02, seed));
}

AmgOptions filtered_options() {
  AmgOptions o;
  o.coarse_size = 40;
  o.filtered_smoothing = true;
  return o;
}

/// The separated frame2d:16:30 on an uneven partition with an empty rank: A, D A D
/// (two_sided_scaled) and the rank's rows of the near-null space.
struct FrameOnRanks {
  dist::DistMatrix a, scaled;
  NearNullSpace near_null;
};

FrameOnRanks separated_frame_on_ranks(const dist::Communicator& comm, std::uint64_t seed) {
  const Problem pb = separated_frame("frame2d:16:30");
  const dist::RowPartition rows = testing::aligned_partition(comm, pb.a.rows, 1, true, seed);
  return {dist::testing::distribute(comm, pb.a, rows, rows),
          dist::testing::distribute(comm, two_sided_scaled(pb.a), rows, rows),
          testing::owned_rows(pb.near_null, rows.begin(comm.rank()), rows.end(comm.rank()))};
}

// A re-setup on D A D refreshes each level's A_F from the new values (a stale A_F would be off by
// factors of 2 to 16) and gives the fresh setup's hierarchy: level 0's A_F bit for bit, the rest
// to rounding.
TEST(DistFilteredSmoothing, ResetupRefreshesTheFilteredOperator) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const FrameOnRanks frame = separated_frame_on_ranks(comm, seed);
  DistAmg reused(comm, frame.a, frame.near_null, filtered_options());
  reused.resetup(frame.scaled);
  const DistAmg fresh(comm, frame.scaled, frame.near_null, filtered_options());
  const DistHierarchy &r = reused.hierarchy(), &f = fresh.hierarchy();
  ASSERT_EQ(r.levels.size(), f.levels.size());
  ASSERT_GE(r.levels.size(), 3u);
  ASSERT_TRUE(r.levels[0].filtered) << "the separated frame's graph dropped nothing";
  for (std::size_t l = 0; l + 1 < r.levels.size(); ++l) {
    SCOPED_TRACE("level " + std::to_string(l));
    ASSERT_EQ(r.levels[l].filtered.has_value(), f.levels[l].filtered.has_value());
    const Csr<double> rf = r.levels[l].filtered ? dist::gather(comm, r.levels[l].filtered->a) : Csr<double>{};
    const Csr<double> ff = f.levels[l].filtered ? dist::gather(comm, f.levels[l].filtered->a) : Csr<double>{};
    const Csr<double> rp = dist::gather(comm, r.levels[l].p), fp = dist::gather(comm, f.levels[l].p);
    if (comm.rank() != 0) continue;
    if (l == 0)
      EXPECT_EQ(rf, ff) << "level 0's A_F from the same values";
    else
      testing::expect_equal_to_rounding(rf, ff, "A_F");
    testing::expect_equal_to_rounding(rp, fp, "P");
  }
}

// A re-setup's transfer where the products run (DistSetupBackend::transfer_on_device) recomputes
// P from the level's smoothing operator on the device: from the second re-setup on, the hierarchy
// must hand it A_F refreshed from the new A and omega from A_F's own lambda_max. A stand-in
// transfer, planned on every level, records level 0's A_F values and omega as it runs; they must
// equal a host re-setup's on the same values bit for bit (the same host steps). The values go
// A -> D A D -> A: an A_F left from the re-setup before is off by factors of 2 to 16, and omega
// from A's own lambda_max is another number.
class RecordingTransfer final : public DistLevelTransfer {
 public:
  struct Seen {
    HostArray<double> local, nonlocal;  // A_F's values
    double omega = 0;
    int runs = 0;
  };
  explicit RecordingTransfer(Seen* seen) : seen_(seen) {}
  void run(const dist::Communicator&, DistLevel& fine, DistLevel&) override {
    if (!seen_) return;  // a coarser level: its P, R and A_c keep the values they had
    seen_->local = fine.filtered->a.local.values;
    seen_->nonlocal = fine.filtered->a.nonlocal.values;
    seen_->omega = fine.omega;
    ++seen_->runs;
  }

 private:
  Seen* seen_;
};

TEST(DistFilteredSmoothing, TransferWhereTheProductsRunGetsTheRefreshedFilteredOperator) {
  const dist::Communicator comm;
  const std::uint64_t seed = dist::testing::shared_seed(comm);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const FrameOnRanks frame = separated_frame_on_ranks(comm, seed);
  RecordingTransfer::Seen seen;
  int plans = 0;
  DistSetupBackend backend;
  backend.transfer_on_device = [&](const dist::Communicator&, DistLevel&, DistLevel&) {
    return std::make_shared<RecordingTransfer>(plans++ == 0 ? &seen : nullptr);  // level 0 plans first
  };
  DistAmg stand_in(comm, frame.a, frame.near_null, filtered_options(), backend);
  DistAmg reference(comm, frame.a, frame.near_null, filtered_options());
  const std::size_t transfers = stand_in.hierarchy().levels.size() - 1;
  ASSERT_GE(transfers, 2u);
  ASSERT_TRUE(stand_in.hierarchy().levels[0].filtered) << "the separated frame's graph dropped nothing";
  EXPECT_EQ(plans, 0) << "a setup plans nothing";
  for (const dist::DistMatrix* a : {&frame.scaled, &frame.a}) {
    stand_in.resetup(*a);
    reference.resetup(*a);
  }
  EXPECT_EQ(plans, static_cast<int>(transfers)) << "the first re-setup plans every level";
  ASSERT_EQ(seen.runs, 1) << "the second re-setup runs level 0's transfer";
  const DistLevel& want = reference.hierarchy().levels[0];
  EXPECT_EQ(seen.local, want.filtered->a.local.values) << "rank " << comm.rank() << ": A_F not refreshed";
  EXPECT_EQ(seen.nonlocal, want.filtered->a.nonlocal.values) << "rank " << comm.rank() << ": A_F not refreshed";
  EXPECT_EQ(seen.omega, want.omega) << "omega not from A_F's lambda_max";
  EXPECT_NE(want.omega, prolongator_damping(want.eigen.safe)) << "A_F's and A's lambda_max agree: no test of omega";
}

}  // namespace
}  // namespace tessera::amg
