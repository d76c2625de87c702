// Times the device graph phases of the SA setup (strength, aggregation, P_tent) against their
// host twins on large generated problems and checks that the results agree exactly (patterns,
// aggregates, coarse layout; values compared bit for bit and counted). Not a ctest: run by hand,
//   time_amg_setup_phases [spec ...]      (default: poisson3d:192 elasticity3d:40)
// Device times are the second of two runs (the first pays for the pool's first allocations),
// each ending with a device synchronisation; host times are one run of the host function.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "amg/aggregation.hpp"
#include "amg/cuda/device_setup_phases.hpp"
#include "amg/near_null_space.hpp"
#include "amg/strength.hpp"
#include "amg/tentative_prolongator.hpp"
#include "local/cuda/device_matrix.hpp"
#include "local/gen/generators.hpp"
#include "support/generated_near_null_space.hpp"

namespace {

using namespace tessera;
using Clock = std::chrono::steady_clock;

template <class F>
double seconds(F&& f) {
  const auto t0 = Clock::now();
  f();
  cudaDeviceSynchronize();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

template <class F>
double device_seconds(F&& f) {
  seconds(f);
  return seconds(f);
}

template <class A, class B>
long long differing(const std::vector<double, A>& x, const std::vector<double, B>& y) {
  if (x.size() != y.size()) return -1;
  long long n = 0;
  for (std::size_t i = 0; i < x.size(); ++i) n += x[i] != y[i];
  return n;
}

void run(const std::string& spec, double theta) {
  const gen::ProblemSpec s = gen::parse_spec(spec);
  const Csr<double> a = gen::generate(s);
  const int bs = gen::block_size(s);
  const amg::NodeLayout nodes = amg::uniform_nodes(a.rows, bs);
  const DenseMatrix b = tessera::testing::generated_near_null_space(s).vectors;
  const std::int64_t num_nodes = static_cast<std::int64_t>(nodes.size()) - 1;
  std::printf("%s: %lld rows, %lld nnz, %lld nodes, k = %lld, theta %g\n", spec.c_str(), (long long)a.rows,
              (long long)a.nnz(), (long long)num_nodes, (long long)b.cols, theta);

  Csr<double> graph;
  amg::Aggregates agg;
  amg::TentativeProlongator tent;
  const double h_strength = seconds([&] { graph = amg::strength_graph(a, nodes, theta); });
  const double h_agg = seconds([&] { agg = amg::aggregate(graph); });
  const double h_tent = seconds([&] { tent = amg::tentative_prolongator(agg, nodes, b); });

  const cuda::DeviceCsr<double> da = cuda::upload(a);
  cuda::DeviceBuffer<std::int64_t> dnodes;
  dnodes.upload(nodes);
  cuda::DeviceBuffer<double> db;
  db.upload(b.data);
  cuda::DeviceCsr<double> dgraph;
  amg::gpu::DeviceAggregates dagg;
  amg::gpu::DeviceTentativeProlongator dtent;
  const double d_strength = device_seconds([&] { dgraph = amg::gpu::device_strength_graph(da, dnodes.data(), num_nodes, theta); });
  const double d_agg = device_seconds([&] { dagg = amg::gpu::device_aggregate(dgraph); });
  const double d_tent = device_seconds([&] {
    dtent = amg::gpu::device_tentative_prolongator(dagg, dnodes.data(), num_nodes, a.rows, db.data(), static_cast<int>(b.cols));
  });

  const Csr<double> g = cuda::download(dgraph), p = cuda::download(dtent.p);
  const bool same_graph = g.row_ptr == graph.row_ptr && g.col_idx == graph.col_idx;
  const bool same_agg = dagg.count == agg.count && dagg.of_node.download() == agg.of_node && dagg.roots.download() == agg.roots;
  const bool same_p = p.row_ptr == tent.p.row_ptr && p.col_idx == tent.p.col_idx && dtent.coarse_nodes.download() == tent.coarse_nodes;
  std::printf("  strength     host %8.3f s  device %8.4f s  (x%.0f)  %lld edges, pattern %s, %lld values differ\n", h_strength,
              d_strength, h_strength / d_strength, (long long)graph.nnz(), same_graph ? "equal" : "DIFFERS",
              differing(g.values, graph.values));
  std::printf("  aggregation  host %8.3f s  device %8.4f s  (x%.0f)  %lld aggregates, %s\n", h_agg, d_agg, h_agg / d_agg,
              (long long)agg.count, same_agg ? "equal" : "DIFFER");
  std::printf("  tentative P  host %8.3f s  device %8.4f s  (x%.0f)  %lld coarse dofs, pattern %s, %lld P values and %lld "
              "coarse-vector values differ\n",
              h_tent, d_tent, h_tent / d_tent, (long long)dtent.coarse_dofs, same_p ? "equal" : "DIFFERS",
              differing(p.values, tent.p.values), differing(dtent.coarse_vectors.download(), tent.coarse_vectors.data));
  std::printf("  total        host %8.3f s  device %8.4f s\n", h_strength + h_agg + h_tent, d_strength + d_agg + d_tent);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> specs(argv + 1, argv + argc);
  if (specs.empty()) specs = {"poisson3d:192", "elasticity3d:40"};
  for (const std::string& spec : specs) run(spec, 0.02);
  return 0;
}
