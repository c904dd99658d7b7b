// The CUDA C twin of ops/internal/mm TCBF16BF16 (v2, W[N,K] layout), for
// the SASS comparison in docs/performance.md: the same 128x128x32 block
// tile, 8 warps of 64x32, 3-stage cp.async pipeline with zero-fill at the
// edges, XOR-swizzled shared memory and ldmatrix.x4, written as a
// CUTLASS-style CUDA programmer would (32-bit indices, fully unrolled
// copies). The epilogue stores bf16 directly from the fragments.
// Build (no CUDA headers):
//   clang-16 --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 -O3 -S matmul_tc.cu -o twin.ptx
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __launch_bounds__(n) __attribute__((launch_bounds(n)))
#define FI __inline__ __attribute__((always_inline)) __device__

enum { BM = 128, BN = 128, BK = 32, WM = 64, WN = 32, STAGES = 3, THREADS = 256 };


FI int swz4(int r, int ch) { return ch ^ ((r >> 1) & 3); }

FI void cp_async16(unsigned dst, const void *src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes));
}
FI void ldsm_x4(unsigned addr, unsigned (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
FI void mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
FI unsigned short to_bf16(float f) {  // round to nearest even (finite inputs)
  unsigned u = __builtin_bit_cast(unsigned, f);
  return (unsigned short)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

// One thread's copies of a 128x32 tile (A or W): 2 chunks of 16 bytes.
FI void load_tile(unsigned s, const unsigned short *g, int r0, int lim, int ld, int k0, int k) {
  int tid = __nvvm_read_ptx_sreg_tid_x();
#pragma unroll
  for (int i = 0; i < 2; i++) {
    int id = tid + i * THREADS, r = id >> 2, ch = id & 3;
    bool ok = r0 + r < lim && k0 + ch * 8 < k;
    const unsigned short *src = ok ? g + (long)(r0 + r) * ld + k0 + ch * 8 : g;
    cp_async16(s + (r * BK + swz4(r, ch) * 8) * 2, src, ok ? 16 : 0);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
TCTwin(unsigned short *c, const unsigned short *a, const unsigned short *w, int m, int n, int k) {
  __shared__ __attribute__((aligned(128))) unsigned short sm[STAGES * (BM + BN) * BK];
  unsigned sA = (unsigned)(unsigned long)(__attribute__((address_space(3))) unsigned short *)sm;
  unsigned sB = sA + STAGES * BM * BK * 2;
  int tid = __nvvm_read_ptx_sreg_tid_x(), l = tid & 31, warp = tid >> 5;
  int m0 = __nvvm_read_ptx_sreg_ctaid_y() * BM, n0 = __nvvm_read_ptx_sreg_ctaid_x() * BN;
  int wm0 = (warp >> 2) * WM, wn0 = (warp & 3) * WN;
  int ktiles = (k + BK - 1) / BK;
  int lr = ((l >> 3) & 1) * 8 + (l & 7), lc = l >> 4, lb = (l >> 4) * 8 + (l & 7);
  unsigned aOff[2], bOff[2];
#pragma unroll
  for (int kk = 0; kk < 2; kk++) {
    aOff[kk] = ((wm0 + lr) * BK + swz4(lr, 2 * kk + lc) * 8) * 2;
    bOff[kk] = ((wn0 + lb) * BK + swz4(lb, 2 * kk + ((l >> 3) & 1)) * 8) * 2;
  }
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < ktiles) {
      load_tile(sA + s * BM * BK * 2, a, m0, m, k, s * BK, k);
      load_tile(sB + s * BN * BK * 2, w, n0, n, k, s * BK, k);
    }
    asm volatile("cp.async.commit_group;");
  }
  float acc[4][4][4] = {};
  int rs = 0, ws = STAGES - 1;
  for (int kt = 0; kt < ktiles; kt++) {
    asm volatile("cp.async.wait_group 1;");
    __syncthreads();
    if (kt + STAGES - 1 < ktiles) {
      load_tile(sA + ws * BM * BK * 2, a, m0, m, k, (kt + STAGES - 1) * BK, k);
      load_tile(sB + ws * BN * BK * 2, w, n0, n, k, (kt + STAGES - 1) * BK, k);
    }
    asm volatile("cp.async.commit_group;");
    unsigned sa = sA + rs * BM * BK * 2, sb = sB + rs * BN * BK * 2;
#pragma unroll
    for (int kk = 0; kk < 2; kk++) {
      unsigned fa[4][4], fb[2][4];
#pragma unroll
      for (int i = 0; i < 4; i++) ldsm_x4(sa + aOff[kk] + i * 16 * BK * 2, fa[i]);
#pragma unroll
      for (int p = 0; p < 2; p++) ldsm_x4(sb + bOff[kk] + p * 16 * BK * 2, fb[p]);
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) mma_bf16(acc[i][j], fa[i], fb[j / 2][(j & 1) * 2], fb[j / 2][(j & 1) * 2 + 1]);
    }
    rs = rs + 1 == STAGES ? 0 : rs + 1;
    ws = ws + 1 == STAGES ? 0 : ws + 1;
  }
  asm volatile("cp.async.wait_group 0;");
  int g = l >> 2, q = l & 3;
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        int row = m0 + wm0 + i * 16 + g + h * 8, col = n0 + wn0 + j * 8 + 2 * q;
        if (row < m && col < n) c[(long)row * n + col] = to_bf16(acc[i][j][2 * h]);
        if (row < m && col + 1 < n) c[(long)row * n + col + 1] = to_bf16(acc[i][j][2 * h + 1]);
      }
}
