#pragma once
// HostArray<T>: the host arrays of the sparse formats (Csr's offsets, columns and values): a
// std::vector whose resize(n) and HostArray<T>(n) leave new elements of a trivial type
// uninitialised (default-initialised), as PETSc's PetscMalloc and Ginkgo's gko::array do.
//
// Why: every producer of a format writes each entry it sizes, often in parallel
// (host_ranges.hpp). std::vector<T>::resize first zero-fills on the calling thread, and at the
// distributed setup's sizes that pass was a serial write of gigabytes before the real one; on
// freshly mapped memory it is also where the kernel zeroes every page, on that one thread. On
// the 2x H200 host, sizing 490 MB with resize() and then writing it from 16 threads took
// 0.10-0.14 s against 0.013 s without the zero fill (tools/zero_fill_cost.cpp; the numbers are
// in docs/performance.md, twenty-second session).
//
// The rule that comes with it: resize(n) is for arrays about to be overwritten; where zeros are
// meant (counts, offsets), say so with assign(n, 0) or resize(n, 0). Everything else is a
// std::vector: iterators, ==, data(), push_back.
//
// TESSERA_POISON_HOST_ARRAYS=1 fills each new allocation with 0xff bytes (NaN doubles, -1
// indices), so an entry a producer forgot to write fails the tests instead of reading as the zero
// a fresh page happens to hold. Every test program sets it (tests/support/poison_host_arrays.cpp),
// and ctest sets it for the drivers it runs.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "local/core/host_ranges.hpp"

namespace tessera {

namespace detail {
/// Whether TESSERA_POISON_HOST_ARRAYS is set (and not "0"); read once.
inline bool poison_host_arrays() {
  static const bool on = [] {
    const char* v = std::getenv("TESSERA_POISON_HOST_ARRAYS");
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  }();
  return on;
}
}  // namespace detail

/// std::allocator, except that construction without arguments default-initialises (no zero
/// fill for trivial types); construction with arguments is unchanged.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() noexcept = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    T* p = std::allocator<T>::allocate(n);
    if (detail::poison_host_arrays()) std::memset(static_cast<void*>(p), 0xff, n * sizeof(T));
    return p;
  }

  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <class T, class U>
bool operator==(const DefaultInitAllocator<T>&, const DefaultInitAllocator<U>&) noexcept {
  return true;
}
template <class T, class U>
bool operator!=(const DefaultInitAllocator<T>&, const DefaultInitAllocator<U>&) noexcept {
  return false;
}

template <class T>
using HostArray = std::vector<T, DefaultInitAllocator<T>>;

/// [first, first + n) copied to `to`, or into a new HostArray, by ranges on the rank's threads
/// (host_ranges.hpp). A std::vector copy is one thread's pass: at the distributed setup's sizes
/// (a level's A, P^T, the Galerkin product: hundreds of MB) it ran at a fraction of the host's
/// copy bandwidth, serially between threaded steps.
template <class T>
void copy_on_threads(const T* first, std::size_t n, T* to) {
  static_assert(std::is_trivially_copyable_v<T>, "copy_on_threads copies bytes");
  host::for_ranges(static_cast<std::int64_t>(n), [&](std::int64_t begin, std::int64_t end) {
    if (end > begin) std::memcpy(static_cast<void*>(to + begin), first + begin, sizeof(T) * (end - begin));
  });
}
template <class T>
HostArray<T> copy_on_threads(const T* first, std::size_t n) {
  HostArray<T> out(n);  // every element written by the copy
  copy_on_threads(first, n, out.data());
  return out;
}

/// A HostArray of n copies of `value`, written by ranges on the rank's threads: assign(n, v)
/// is one thread's pass, and on fresh memory that thread also takes every page's first-touch
/// fault (a level's row offsets at 7M rows: 56 MB).
template <class T>
HostArray<T> filled_on_threads(std::size_t n, T value) {
  HostArray<T> out(n);  // every element written below
  host::for_ranges(static_cast<std::int64_t>(n), [&](std::int64_t begin, std::int64_t end) {
    std::fill(out.data() + begin, out.data() + end, value);
  });
  return out;
}

/// Whether [a, a + n) and [b, b + n) hold the same bytes, compared by ranges on the rank's
/// threads: a re-setup compares A's pattern with the one set up (hundreds of MB at level 0),
/// where one thread's pass made most of its check of A (0.053 s against the setup's 0.013 s
/// at 7.1M rows, docs/performance.md, thirty-fourth session).
template <class T>
bool equal_on_threads(const T* a, const T* b, std::size_t n) {
  static_assert(std::is_trivially_copyable_v<T>, "equal_on_threads compares bytes");
  std::atomic<bool> same{true};
  host::for_ranges(static_cast<std::int64_t>(n), [&](std::int64_t begin, std::int64_t end) {
    if (end > begin && std::memcmp(a + begin, b + begin, sizeof(T) * (end - begin)) != 0) same = false;
  });
  return same;
}
template <class T, class A, class B>
bool equal_on_threads(const std::vector<T, A>& a, const std::vector<T, B>& b) {
  return a.size() == b.size() && equal_on_threads(a.data(), b.data(), a.size());
}

/// Element-wise equality with a plain std::vector (tests state expected arrays that way).
template <class T>
bool operator==(const HostArray<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}
template <class T>
bool operator==(const std::vector<T>& a, const HostArray<T>& b) {
  return b == a;
}
template <class T>
bool operator!=(const HostArray<T>& a, const std::vector<T>& b) {
  return !(a == b);
}
template <class T>
bool operator!=(const std::vector<T>& a, const HostArray<T>& b) {
  return !(b == a);
}

}  // namespace tessera
