#pragma once
// The tile product of the numeric phase: one warp computes two output tiles of one tile-row,
// C(I,J1) += A(I,K) B(K,J1) and C(I,J2) += A(I,K) B(K,J2), in one m16n8k8 MMA, so no output
// of the MMA is thrown away:
//
//   D(16x8) = Amma(16x8) * Bmma(8x8),  Amma = [B(K,J1)^T ; B(K,J2)^T],  Bmma = A(I,K)^T,
//   so D = [C(I,J1)^T ; C(I,J2)^T].
//
// Fragment layouts (PTX ISA, mma.m16n8k8; lane = 4*g + t):
//   f64  A: a0 (g,t) a1 (g+8,t) a2 (g,t+4) a3 (g+8,t+4)   B: b0 (k=t,n=g) b1 (k=t+4,n=g)
//   f16  A: a0,a1 (g,2t..2t+1) a2,a3 (g+8,2t..2t+1)        B: b0,b1 (k=2t..2t+1, n=g)
//   C/D (f64 and f32 alike): d0 (g,2t) d1 (g,2t+1) d2 (g+8,2t) d3 (g+8,2t+1)
// With the transposes above, each lane's four results are the tile elements
//   d0 = C1(2t,g)  d1 = C1(2t+1,g)  d2 = C2(2t,g)  d3 = C2(2t+1,g).
// A missing B tile has bitmap 0 and contributes zeros.
#include "local/cuda/tile_device.cuh"

namespace tessera::cuda::dev {

/// Operands of one pair product: the A tile and the two B tiles, as (offset, bitmap).
struct PairOperands {
  std::int64_t a_off, b1_off, b2_off;
  std::uint64_t a_bm, b1_bm, b2_bm;
};

/// The output element of accumulator d[i] of lane (g, t): tile (0: J1, 1: J2) and bit.
__device__ __forceinline__ int out_tile(int i) { return i >> 1; }
__device__ __forceinline__ int out_bit(int i, int g, int t) { return tile::bit_index(2 * t + (i & 1), g); }

/// The operands of one f64 MMA, as held by this lane (loaded ahead of the MMA, so the loads
/// of the next pair overlap the current MMA).
struct FragmentsF64 {
  double a[4], b[2];
};

__device__ __forceinline__ FragmentsF64 load_fragments(const double* a, const double* b, const PairOperands& p,
                                                       int g, int t) {
  FragmentsF64 f;
  f.a[0] = tile_element<double>(b, p.b1_off, p.b1_bm, tile::bit_index(t, g));
  f.a[1] = tile_element<double>(b, p.b2_off, p.b2_bm, tile::bit_index(t, g));
  f.a[2] = tile_element<double>(b, p.b1_off, p.b1_bm, tile::bit_index(t + 4, g));
  f.a[3] = tile_element<double>(b, p.b2_off, p.b2_bm, tile::bit_index(t + 4, g));
  f.b[0] = tile_element<double>(a, p.a_off, p.a_bm, tile::bit_index(g, t));
  f.b[1] = tile_element<double>(a, p.a_off, p.a_bm, tile::bit_index(g, t + 4));
  return f;
}

__device__ __forceinline__ void mma(const FragmentsF64& f, double (&d)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(f.a[0]), "d"(f.a[1]), "d"(f.a[2]), "d"(f.a[3]), "d"(f.b[0]), "d"(f.b[1]));
}

__device__ __forceinline__ unsigned pack_half2(unsigned short lo, unsigned short hi) {
  return static_cast<unsigned>(lo) | (static_cast<unsigned>(hi) << 16);
}

struct FragmentsF16 {
  unsigned a01, a23, b01;
};

__device__ __forceinline__ FragmentsF16 load_fragments(const Half* a, const Half* b, const PairOperands& p, int g,
                                                       int t) {
  FragmentsF16 f;
  f.a01 = pack_half2(half_bits(b, p.b1_off, p.b1_bm, tile::bit_index(2 * t, g)),
                     half_bits(b, p.b1_off, p.b1_bm, tile::bit_index(2 * t + 1, g)));
  f.a23 = pack_half2(half_bits(b, p.b2_off, p.b2_bm, tile::bit_index(2 * t, g)),
                     half_bits(b, p.b2_off, p.b2_bm, tile::bit_index(2 * t + 1, g)));
  f.b01 = pack_half2(half_bits(a, p.a_off, p.a_bm, tile::bit_index(g, 2 * t)),
                     half_bits(a, p.a_off, p.a_bm, tile::bit_index(g, 2 * t + 1)));
  return f;
}

__device__ __forceinline__ void mma(const FragmentsF16& f, float (&d)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(f.a01), "r"(f.a23), "r"(f.b01));
}

/// Broadcasts lane `src`'s pair operands to the warp.
__device__ __forceinline__ PairOperands shuffle_operands(const PairOperands& p, int src) {
  constexpr unsigned kAll = 0xffffffffu;
  return {__shfl_sync(kAll, p.a_off, src),  __shfl_sync(kAll, p.b1_off, src), __shfl_sync(kAll, p.b2_off, src),
          __shfl_sync(kAll, p.a_bm, src),   __shfl_sync(kAll, p.b1_bm, src),  __shfl_sync(kAll, p.b2_bm, src)};
}

/// Per-warp shared scratch of the FMA path: the three tiles expanded to dense 8x8.
template <class Acc>
struct PairScratch {
  Acc a[64], b1[64], b2[64];
};

/// Same results and lane mapping as load_fragments + mma, with FMA on dense copies in shared memory.
template <class T, class Acc>
__device__ __forceinline__ void fma_pair(const T* a, const T* b, const PairOperands& p, int g, int t, int lane,
                                         PairScratch<Acc>& s, Acc (&d)[4]) {
  __syncwarp();  // the previous product's reads are done
  for (int e = lane; e < tile::kElems; e += 32) {
    s.a[e] = tile_element<Acc>(a, p.a_off, p.a_bm, e);
    s.b1[e] = tile_element<Acc>(b, p.b1_off, p.b1_bm, e);
    s.b2[e] = tile_element<Acc>(b, p.b2_off, p.b2_bm, e);
  }
  __syncwarp();
#pragma unroll
  for (int k = 0; k < tile::kDim; ++k) {
    const Acc a_r0 = s.a[tile::bit_index(2 * t, k)], a_r1 = s.a[tile::bit_index(2 * t + 1, k)];
    const Acc b1 = s.b1[tile::bit_index(k, g)], b2 = s.b2[tile::bit_index(k, g)];
    d[0] = fma(a_r0, b1, d[0]);
    d[1] = fma(a_r1, b1, d[1]);
    d[2] = fma(a_r0, b2, d[2]);
    d[3] = fma(a_r1, b2, d[3]);
  }
}

}  // namespace tessera::cuda::dev
