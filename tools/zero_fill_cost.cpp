// What a zero fill costs before a parallel write, on this machine (local/core/host_array.hpp).
// Sizes a 490 MB array of doubles two ways, then writes every entry from T threads:
//   resize       std::vector<double>::resize (value-initialised: zeroed on the calling thread)
//   no fill      new double[n] (default-initialised: the threads' writes touch the pages first)
// Run it with and without glibc keeping freed memory, to see fresh pages against reused ones:
//   g++ -O2 -pthread tools/zero_fill_cost.cpp -o zero_fill_cost
//   GLIBC_TUNABLES=glibc.malloc.hugetlb=1 ./zero_fill_cost 16
//   GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=4294967296:glibc.malloc.trim_threshold=68719476736 ./zero_fill_cost 16
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class Body>
void in_parallel(int threads, std::size_t n, Body body) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([=] { body(n * t / threads, n * (t + 1) / threads); });
  for (std::thread& t : pool) t.join();
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = 61000000;  // 490 MB of doubles: P^T's values at 7.1M rows a GPU
  const int threads = argc > 1 ? std::atoi(argv[1]) : 16;
  for (int rep = 0; rep < 5; ++rep) {
    const long f0 = minor_faults();
    auto t0 = std::chrono::steady_clock::now();
    double resize_s = 0, no_fill_s = 0;
    {
      std::vector<double> v;
      v.resize(n);
      in_parallel(threads, n, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) v[i] = double(i);
      });
      resize_s = seconds_since(t0);
    }
    const long f1 = minor_faults();
    t0 = std::chrono::steady_clock::now();
    {
      std::unique_ptr<double[]> v(new double[n]);
      in_parallel(threads, n, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) v[i] = double(i);
      });
      no_fill_s = seconds_since(t0);
    }
    const long f2 = minor_faults();
    std::printf("threads %d: resize + parallel write %.4f s (%ld page faults) | no fill + parallel write %.4f s (%ld)\n",
                threads, resize_s, f1 - f0, no_fill_s, f2 - f1);
  }
}
