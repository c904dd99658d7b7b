"""triton_gemm.py: Triton's sm_90 matmul at the Hopper GEMM's tile, for
the SASS comparison of run.sh. C = A·Wᵀ, A [M, K] and W [N, K] bf16
through TMA tensor descriptors (block 128×64 each), BM = BN = 128,
BK = 64, 8 warps (two warpgroups of m64n128k16 wgmma), 4 stages: the shape
of ops/internal/mmh's kernel. Compiled for GPUTarget("cuda", 90, 32)
without a GPU.

Usage: python triton_gemm.py OUT.ptx [BN [STAGES]]

BN 256 (W's descriptor block 256×64, two warpgroups of m64n256k16) is the
tile of ops/internal/mmhw; STAGES defaults to 4.
"""
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def matmul_tma(a_desc, w_desc, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    n_tiles = tl.cdiv(N, BN)
    pm, pn = pid // n_tiles, pid % n_tiles
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        av = a_desc.load([pm * BM, k * BK])
        wv = w_desc.load([pn * BN, k * BK])
        acc = tl.dot(av, wv.T, acc)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def main():
    bn = int(sys.argv[2]) if len(sys.argv) > 2 else 128
    stages = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    sig = {"a_desc": "tensordesc<bf16[128,64]>", "w_desc": "tensordesc<bf16[%d,64]>" % bn, "c_ptr": "*bf16",
           "M": "i32", "N": "i32", "K": "i32"}
    cx = {"BM": 128, "BN": bn, "BK": 64}
    src = ASTSource(fn=matmul_tma, signature={**sig, **{k: "constexpr" for k in cx}}, constexprs=cx)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 8, "num_stages": stages})
    with open(sys.argv[1], "w") as f:
        f.write("// triton %s: BN=%d shared=%d num_warps=8 num_stages=%d\n" % (triton.__version__, bn, k.metadata.shared, stages))
        f.write(k.asm["ptx"])


if __name__ == "__main__":
    main()
