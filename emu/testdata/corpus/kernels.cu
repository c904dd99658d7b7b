// kernels.cu: CUDA C kernels in the style of the CUDA samples, compiled to
// PTX by clang and nvcc (gen.sh) and run on emu by corpus_test.go, which
// holds a Go reference for each. extern "C" keeps the entry names plain.
#include <cstdio>
#include <cuda_fp16.h>
#ifndef __clang__
// clang-16 cannot parse the CUDA 12.9 CCCL headers cooperative groups
// include: cg_reduce is nvcc's only.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
#endif

extern "C" {

// vec_add: out[i] = a[i] + b[i].
__global__ void vec_add(float *out, const float *a, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

// reduce_sum: per block, a shared-memory tree then a warp-shuffle
// reduction; block sums are added to *out with atomicAdd. blockDim 256.
__global__ void reduce_sum(const float *x, float *out, int n) {
  __shared__ float s[256];
  int t = threadIdx.x;
  float v = 0;
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) v += x[i];
  s[t] = v;
  __syncthreads();
  for (int k = blockDim.x / 2; k >= 32; k /= 2) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t < 32) {
    v = s[t];
    for (int k = 16; k > 0; k /= 2) v += __shfl_down_sync(0xffffffffu, v, k);
    if (t == 0) atomicAdd(out, v);
  }
}

// scan_block: inclusive prefix sum of each 256-element block
// (Hillis-Steele, double-buffered in shared memory).
__global__ void scan_block(const int *in, int *out) {
  __shared__ int buf[2][256];
  int t = threadIdx.x, base = blockIdx.x * 256;
  int cur = 0;
  buf[0][t] = in[base + t];
  __syncthreads();
  for (int off = 1; off < 256; off *= 2) {
    int v = buf[cur][t];
    if (t >= off) v += buf[cur][t - off];
    buf[1 - cur][t] = v;
    cur = 1 - cur;
    __syncthreads();
  }
  out[base + t] = buf[cur][t];
}

// sgemm: C (MxN) = A (MxK) * B (KxN), row-major, 16x16 shared tiles;
// M, N, K multiples of 16. block (16,16), grid (N/16, M/16).
__global__ void sgemm(const float *A, const float *B, float *C, int M, int N, int K) {
  __shared__ float As[16][16], Bs[16][16];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  float acc = 0;
  for (int k0 = 0; k0 < K; k0 += 16) {
    As[ty][tx] = A[row * K + k0 + tx];
    Bs[ty][tx] = B[(k0 + ty) * N + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; k++) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * N + col] = acc;
}

// transpose: out (cols x rows) = in (rows x cols)^T through a padded
// 32x33 shared tile. block (32,8), grid (cols/32, rows/32).
__global__ void transpose(float *out, const float *in, int rows, int cols) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

// histogram: 64 bins of x[i] % 64, counted in shared memory then added
// to bins.
__global__ void histogram(const unsigned *x, unsigned *bins, int n) {
  __shared__ unsigned h[64];
  if (threadIdx.x < 64) h[threadIdx.x] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&h[x[i] % 64], 1u);
  __syncthreads();
  if (threadIdx.x < 64) atomicAdd(&bins[threadIdx.x], h[threadIdx.x]);
}

// half2_fma: out[i] = x[i]*y[i] + 1 in half2, then also
// outf[i] = float(x.lo) * float(y.hi) through the cuda_fp16 helpers.
__global__ void half2_fma(__half2 *out, float *outf, const __half2 *x, const __half2 *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = __hfma2(x[i], y[i], __float2half2_rn(1.0f));
  __half a = __low2half(x[i]), b = __high2half(y[i]);
  outf[i] = __half2float(__hmul(a, b)) + __half2float(__hadd(a, b));
}

// sync_count: each thread's predicate is x[t] > 0; writes the block's
// count, and, or into out[3*t .. 3*t+2].
__global__ void sync_count(const int *x, int *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int p = x[t] > 0;
  int c = __syncthreads_count(p);
  int a = __syncthreads_and(p);
  int o = __syncthreads_or(p);
  out[3 * t] = c;
  out[3 * t + 1] = a;
  out[3 * t + 2] = o;
}

// warp_ops: out[4t] butterfly sum of the warp (__shfl_xor_sync),
// out[4t+1] = the ballot of odd values, out[4t+2] = popc of it,
// out[4t+3] = the value of lane (lane+1)%32 (__shfl_sync).
__global__ void warp_ops(const unsigned *x, unsigned *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned v = x[t], s = v;
  for (int k = 16; k > 0; k /= 2) s += __shfl_xor_sync(0xffffffffu, s, k);
  unsigned b = __ballot_sync(0xffffffffu, v & 1);
  out[4 * t] = s;
  out[4 * t + 1] = b;
  out[4 * t + 2] = __popc(b);
  out[4 * t + 3] = __shfl_sync(0xffffffffu, v, (threadIdx.x + 1) % 32);
}

// atomics: every thread adds to sum, takes the max, counts with a CAS
// loop, and swaps its index into last.  out = {sum, max, cascount, last}.
__global__ void atomics(const int *x, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&out[0], x[i]);
  atomicMax(&out[1], x[i]);
  int old = out[2], seen;
  do {
    seen = old;
    old = atomicCAS(&out[2], seen, seen + 1);
  } while (old != seen);
  atomicExch(&out[3], 1);
}

// int128: out[2i], out[2i+1] = low and high words of a[i]*b[i] + c[i] in
// 128-bit arithmetic, and hi[i] = (a*b + c) >> 100.
__global__ void int128(const unsigned long long *a, const unsigned long long *b,
                       const unsigned long long *c, unsigned long long *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned __int128 p = (unsigned __int128)a[i] * b[i] + c[i];
  p += (unsigned __int128)c[i] << 64;
  out[3 * i] = (unsigned long long)p;
  out[3 * i + 1] = (unsigned long long)(p >> 64);
  out[3 * i + 2] = (unsigned long long)(p >> 100);
}

// fib: naive recursion, not inlined; out[i] = fib(i % 20).
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__device__ __noinline__ int twice(int v) { return 2 * v; }
__device__ __noinline__ int square(int v) { return v * v; }

// recursive: out[i] = fib(i % 20); out[n+i] = (i odd ? twice : square)(i)
// through a function pointer.
__global__ void recursive(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = fib(i % 20);
  int (*volatile f)(int) = (i & 1) ? twice : square;
  out[n + i] = f(i);
}

// bitonic: sorts each block of 256 unsigned keys ascending in shared
// memory.
__global__ void bitonic(unsigned *x) {
  __shared__ unsigned s[256];
  int t = threadIdx.x;
  s[t] = x[blockIdx.x * 256 + t];
  __syncthreads();
  for (int k = 2; k <= 256; k *= 2)
    for (int j = k / 2; j > 0; j /= 2) {
      int p = t ^ j;
      if (p > t) {
        unsigned a = s[t], b = s[p];
        bool up = (t & k) == 0;
        if ((a > b) == up) { s[t] = b; s[p] = a; }
      }
      __syncthreads();
    }
  x[blockIdx.x * 256 + t] = s[t];
}

// nbody: acc[i] = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps)^1.5 over
// float4 positions (x, y, z, mass), in tiles of blockDim through shared
// memory.
__global__ void nbody(const float4 *p, float3 *acc, int n, float eps) {
  extern __shared__ float4 sh[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 me = p[i];
  float3 a = {0, 0, 0};
  for (int t0 = 0; t0 < n; t0 += blockDim.x) {
    sh[threadIdx.x] = p[t0 + threadIdx.x];
    __syncthreads();
    for (int j = 0; j < blockDim.x; j++) {
      float4 o = sh[j];
      float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
      float r2 = dx * dx + dy * dy + dz * dz + eps;
      float inv = rsqrtf(r2);
      float s = o.w * inv * inv * inv;
      a.x += dx * s;
      a.y += dy * s;
      a.z += dz * s;
    }
    __syncthreads();
  }
  acc[i] = a;
}

// hello: device printf with ints, unsigned, hex, long long, double, char
// and string arguments, from the first two threads of each block.
__global__ void hello(int n) {
  if (threadIdx.x < 2)
    printf("block %d thread %d: n=%d u=%u x=%#x ll=%lld f=%.3f c=%c s=%s\n", blockIdx.x, threadIdx.x, n,
           4000000000u, 255, -5000000000LL, 1.5f * threadIdx.x, 'A' + threadIdx.x, "ok");
}

#ifndef __clang__
// cg_reduce: per block, each 32-thread tile sums with cg::reduce, tile
// leaders combine in shared memory, thread 0 writes the block's sum;
// out[gridDim.x + b] is the block's maximum through a 16-thread tile's
// shfl_down.
__global__ void cg_reduce(const int *x, int *out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  __shared__ int part[32];
  int v = x[blockIdx.x * blockDim.x + threadIdx.x];
  int s = cg::reduce(tile, v, cg::plus<int>());
  if (tile.thread_rank() == 0) part[tile.meta_group_rank()] = s;
  cg::thread_block_tile<16> half = cg::tiled_partition<16>(block);
  int m = v;
  for (int k = half.size() / 2; k > 0; k /= 2) m = max(m, half.shfl_down(m, k));
  if (half.thread_rank() == 0) part[16 + half.meta_group_rank() % 16] = m;
  block.sync();
  if (block.thread_rank() == 0) {
    int t = 0, mx = part[16];
    for (int i = 0; i < (int)tile.meta_group_size(); i++) t += part[i];
    for (int i = 0; i < (int)half.meta_group_size() && i < 16; i++) mx = max(mx, part[16 + i]);
    out[blockIdx.x] = t;
    out[gridDim.x + blockIdx.x] = mx;
  }
}
#endif

}  // extern "C"
