"""triton_kernels.py: Triton kernels from its tutorials (vector add, fused
softmax, matmul in two tilings, flash attention's forward loop), compiled
to PTX for sm_80, and softmax, matmul and attention for sm_90 too, without
a GPU. gen.sh runs it; emu's triton_test.go runs the PTX and checks it
against Go references.

Usage: python triton_kernels.py OUTDIR
"""
import os
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + offs, num / den, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    n_tiles = tl.cdiv(N, BN)
    pm, pn = pid // n_tiles, pid % n_tiles
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kmask = rk < K - k * BK
        av = tl.load(a, mask=(rm[:, None] < M) & kmask[None, :], other=0.0)
        bv = tl.load(b, mask=kmask[:, None] & (rn[None, :] < N), other=0.0)
        acc += tl.dot(av, bv)
        a += BK * stride_ak
        b += BK * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_pipelined(a_ptr, b_ptr, c_ptr, M, N, K,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Row-major f16 A (MxK), B (KxN), C (MxN) with M, N, K multiples of the
    # tile: unmasked, vectorized loads and a 64x64 tile over 4 warps.
    pid = tl.program_id(0)
    n_tiles = N // BN
    pm, pn = pid // n_tiles, pid % n_tiles
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * K + rk[None, :]
    b = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BK
        b += BK * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, N_CTX, stride_q, stride_k, stride_v, stride_o,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    # Flash attention forward for one head (the tutorial's inner loop):
    # Q, K, V, Out are f16 [N_CTX, HEAD_DIM] row-major; online softmax in
    # base 2, P cast to f16 before the second dot as in the tutorial.
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + offs_m[:, None] * stride_q + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K + (start_n + offs_n)[None, :] * stride_k + offs_d[:, None])
        qk = tl.dot(q, k) * qk_scale
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + (start_n + offs_n)[:, None] * stride_v + offs_d[None, :])
        acc += tl.dot(p.to(tl.float16), v)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + offs_m[:, None] * stride_o + offs_d[None, :], acc.to(tl.float16))


def build(out, name, fn, signature, constexprs, num_warps=4, num_stages=3, arch=80):
    src = ASTSource(fn=fn, signature={**signature, **{k: "constexpr" for k in constexprs}}, constexprs=constexprs)
    k = triton.compile(src, target=GPUTarget("cuda", arch, 32),
                       options={"num_warps": num_warps, "num_stages": num_stages})
    ptx = k.asm["ptx"].replace(os.path.dirname(os.path.abspath(__file__)) + "/", "")
    with open(os.path.join(out, name), "w") as f:
        # The launch needs Triton's dynamic shared memory size and block.
        f.write("// triton_kernels.py: shared=%d num_warps=%d\n" % (k.metadata.shared, num_warps))
        f.write(ptx)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    build(out, "triton_add.ptx", add_kernel,
          {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024})
    for arch, suffix in ((80, ""), (90, "_sm90")):
        build_arch(out, arch, suffix)
    build(out, "triton_matmul_pipelined.ptx", matmul_pipelined,
          {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
          {"BM": 64, "BN": 64, "BK": 32})


def build_arch(out, arch, suffix):
    # softmax, matmul and attention for sm_80 and sm_90 (at these tile
    # sizes Triton uses mma.sync on both, not Hopper's wgmma).
    build(out, "triton_softmax%s.ptx" % suffix, softmax_kernel,
          {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32", "out_stride": "i32", "n_cols": "i32"},
          {"BLOCK": 128}, arch=arch)
    build(out, "triton_matmul%s.ptx" % suffix, matmul_kernel,
          {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32",
           "stride_cm": "i32", "stride_cn": "i32"},
          {"BM": 32, "BN": 32, "BK": 32}, arch=arch)
    build(out, "triton_attention%s.ptx" % suffix, attn_fwd,
          {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32", "N_CTX": "i32",
           "stride_q": "i32", "stride_k": "i32", "stride_v": "i32", "stride_o": "i32"},
          {"BLOCK_M": 32, "BLOCK_N": 32, "HEAD_DIM": 32}, arch=arch)


if __name__ == "__main__":
    main()
