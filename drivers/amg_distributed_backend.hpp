#pragma once
// Where each step of tessera-amg's distributed setup runs, as the command line chooses: with
// --backend gpu the numeric steps run on the ranks' GPUs by default, and --setup host,
// --tentative, --merge, --transpose-p, --galerkin-operands and --solve-operands move them back to
// the host one by one (the ablations that docs/performance.md measures); --resetup-transfer device
// moves the later re-setups' transfer onto the GPUs. Each switch needs the ones before it on the
// GPUs, and a contradiction is an InputError.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "amg/dist/dist_setup_backend.hpp"
#include "dist/backend_choice.hpp"
#include "drivers/amg_distributed.hpp"
#include "drivers/amg_distributed_solve.hpp"

namespace tessera::driver::dist_amg {

/// Whether each step runs on the ranks' GPUs (false: on the host).
struct SetupPlacement {
  bool graph_phases = false;       // strength, aggregation and the eigenvalue estimates
  bool tentative = false;          // the tentative prolongator's QR
  bool merge = false;              // P's first merge (smoothing)
  bool transpose_p = false;        // the Galerkin product's P^T, next to the device merge
  bool galerkin_operands = false;  // the first Galerkin products read P and P^T where the merge left them
  bool solve_operands = false;     // the device solve's P and R are the copies the setup kept
};

/// The placement the options ask for; InputError where they contradict each other.
SetupPlacement setup_placement(const DistributedAmgOptions& o);

/// The setup's steps where `placement` puts them; the products run where `products` runs them.
/// The GPUs' steps run on the context's compute stream (`devices`), which must outlive the
/// hierarchy: the levels' device copies, which the solve reads too, live on it.
amg::DistSetupBackend setup_backend(Devices& devices, const DistributedAmgOptions& o, const SetupPlacement& placement,
                                    dist::LocalSpgemm products, std::shared_ptr<cuda::OffloadStats> stats);

/// The --json keys that say where each step ran ("device" or "host").
void add_placement_keys(nlohmann::json& out, const SetupPlacement& placement);

/// Rank 0's line on where the steps ran, after the setup products' times `products_json`.
void print_placement(const DistributedAmgOptions& o, const SetupPlacement& placement,
                     const nlohmann::json& products_json);

/// Where Tessera's setup and solve ran, for its row of the --compare table.
std::string where_tessera_ran(const DistributedAmgOptions& o, const SetupPlacement& placement, int ranks);

}  // namespace tessera::driver::dist_amg
