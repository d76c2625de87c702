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

/// Where lane (g, t)'s f64 fragment elements lie in a tile's bitmap, fixed for the kernel: B's
/// (t, g) and (t + 4, g) are bit 8t + g of its low and of its high 32-bit half, A's (g, t) and
/// (g, t + 4) bits 8(g % 4) + t and + 4 of its half g / 4. So a fragment element costs an AND
/// and a popcount of one 32-bit word. The 64-bit masks of a variable shift it replaces cost
/// more, and ptxas rebuilt them every hit where it kept fewer registers (Nsight Compute on the
/// listed kernel, rmat:16:16: 151 instructions a hit at 63 registers, 168 at 55, now 138).
struct FragmentLane {
  unsigned b_bit, b_below;  // bit 8t + g of a half, and the bits below it
  unsigned a_bit[2], a_below[2];  // bits 8(g % 4) + t and + 4 of A's half, and those below each
  bool a_high;  // g >= 4: A's elements are in its high half
};

__device__ __forceinline__ FragmentLane fragment_lane(int g, int t) {
  FragmentLane l;
  l.b_bit = 1u << tile::bit_index(t, g);
  l.b_below = l.b_bit - 1u;
  l.a_bit[0] = 1u << tile::bit_index(g % 4, t);
  l.a_bit[1] = l.a_bit[0] << 4;
  l.a_below[0] = l.a_bit[0] - 1u;
  l.a_below[1] = l.a_bit[1] - 1u;
  l.a_high = g >= 4;
  return l;
}

/// The element of `bit` in one 32-bit half of a tile's bitmap whose set bits below the half
/// number `rank_base` (0 for the low half), or 0 where absent.
__device__ __forceinline__ double half_element(const double* values, std::int64_t offset, unsigned half,
                                               int rank_base, unsigned bit, unsigned below) {
  return (half & bit) ? values[offset + rank_base + __popc(half & below)] : 0.0;
}

__device__ __forceinline__ FragmentsF64 load_fragments(const double* a, const double* b, const PairOperands& p,
                                                       const FragmentLane& l) {
  const auto low = [](std::uint64_t bm) { return static_cast<unsigned>(bm); };
  const auto high = [](std::uint64_t bm) { return static_cast<unsigned>(bm >> 32); };
  FragmentsF64 f;
  f.a[0] = half_element(b, p.b1_off, low(p.b1_bm), 0, l.b_bit, l.b_below);
  f.a[1] = half_element(b, p.b2_off, low(p.b2_bm), 0, l.b_bit, l.b_below);
  f.a[2] = half_element(b, p.b1_off, high(p.b1_bm), __popc(low(p.b1_bm)), l.b_bit, l.b_below);
  f.a[3] = half_element(b, p.b2_off, high(p.b2_bm), __popc(low(p.b2_bm)), l.b_bit, l.b_below);
  const unsigned a_half = l.a_high ? high(p.a_bm) : low(p.a_bm);
  const int a_base = l.a_high ? __popc(low(p.a_bm)) : 0;
  f.b[0] = half_element(a, p.a_off, a_half, a_base, l.a_bit[0], l.a_below[0]);
  f.b[1] = half_element(a, p.a_off, a_half, a_base, l.a_bit[1], l.a_below[1]);
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
