// = examples/tiled_matmul_f32 MatMul16: 16x16 threads, one element of a 16x16 tile of C each.
// Not in run.sh's table (MatMul32 is the measured tiled matmul); kept as the reference for
// MatMul16's register count (docs/performance.md, "MatMul16 at ptxas's full-occupancy target"):
//   clang-16 --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 -O3 [-DIDX=long] -S matmul16.cu
#include "common.cuh"
#define T16 16
extern "C" __global__ void __launch_bounds__(256)
MatMul16(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, IDX m, IDX n, IDX k) {
  __shared__ float as[T16 * T16], bs[T16 * T16];
  IDX tx = tid_x, ty = tid_y;
  IDX row = bid_y * T16 + ty, col = bid_x * T16 + tx;
  float acc = 0;
  for (IDX k0 = 0; k0 < k; k0 += T16) {
    float av = 0.0f, bv = 0.0f;
    if (row < m && k0 + tx < k) av = a[row * k + k0 + tx];
    if (k0 + ty < k && col < n) bv = b[(k0 + ty) * n + col];
    as[ty * T16 + tx] = av;
    bs[ty * T16 + tx] = bv;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < T16; kk++) acc = __builtin_fmaf(as[ty * T16 + kk], bs[kk * T16 + tx], acc);
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}
