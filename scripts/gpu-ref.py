"""Reference figures from PyTorch on the GPU, at the shapes `kern bench`
uses: the ceilings (device-to-device copy, cuBLAS bf16/f16 GEMM) and
PyTorch's attention backends (FlashAttention-2 and cuDNN through
scaled_dot_product_attention) for kern's prefill rows.

Run by scripts/gpu-session.sh on a lent GPU machine, where PyTorch is
installed; never by CI. Prints one row per case: name, shape, median ms,
figure. Timing: CUDA events, 3 warm-ups, median of 10 runs.
"""

import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def median_ms(fn, warmup=3, runs=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def row(name, shape, ms, value, unit):
    print(f"{name:<34} {shape:<22} {ms:9.3f} ms {value:9.1f} {unit}", flush=True)


def main():
    dev = torch.device("cuda")
    p = torch.cuda.get_device_properties(dev)
    print(f"torch {torch.__version__} on {p.name}, {p.multi_processor_count} SMs", flush=True)

    n = 1 << 30  # bytes per copy
    src = torch.empty(n, dtype=torch.uint8, device=dev).random_()
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src))
    row("DtoD copy (read+write)", "1 GiB", ms, 2 * n / ms / 1e6, "GB/s")
    del src, dst

    for dt, name in ((torch.bfloat16, "bf16"), (torch.float16, "f16")):
        for s in (4096, 8192):
            a = torch.randn(s, s, device=dev, dtype=dt)
            b = torch.randn(s, s, device=dev, dtype=dt)
            ms = median_ms(lambda: a @ b)
            row(f"torch.matmul {name}", f"{s}³", ms, 2 * s**3 / ms / 1e9, "TFLOP/s")
            # x·Wᵀ, the linear layer's layout
            ms = median_ms(lambda: F.linear(a, b))
            row(f"F.linear (x·Wᵀ) {name}", f"{s}³", ms, 2 * s**3 / ms / 1e9, "TFLOP/s")

    # kern bench matmul's decode rows: Qwen3-4B's projections at M = 1
    # and 16, bf16, F.linear (cuBLAS). Each run reads a 2×L2 buffer first
    # (reads only: no dirty lines), so the weight comes from DRAM.
    flush = torch.empty(2 * p.L2_cache_size // 4 + 1, device=dev, dtype=torch.float32).normal_()
    for name, n, k in (("qkv", 6144, 2560), ("o", 2560, 4096), ("gate/up", 19456, 2560), ("down", 2560, 9728)):
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        for m in (1, 16):
            x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            times = []
            for i in range(13):
                flush.sum()
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                F.linear(x, w)
                b.record()
                b.synchronize()
                if i >= 3:
                    times.append(a.elapsed_time(b))
            ms = statistics.median(times)
            row(f"F.linear decode bf16 {name}", f"{m}×{n}×{k}", ms, 2 * n * k / ms / 1e6, "GB/s")
        del w
    del flush

    # kern bench attention's prefill shapes: 4 sequences × 4096 tokens ×
    # 16 heads × head dim 128 (and 256), flops 4·b·h·s²·d (half causal).
    b, h, s = 4, 16, 4096
    for d in (128, 256):
        for dt, name in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
            if d == 256 and dt == torch.bfloat16:
                continue
            q = torch.randn(b, h, s, d, device=dev, dtype=dt)
            k = torch.randn(b, h, s, d, device=dev, dtype=dt)
            v = torch.randn(b, h, s, d, device=dev, dtype=dt)
            flops = 4 * b * h * s * s * d
            for backend, bname in ((SDPBackend.FLASH_ATTENTION, "flash2"), (SDPBackend.CUDNN_ATTENTION, "cudnn")):
                for causal in (False, True):
                    if d == 256 and not causal:
                        continue
                    try:
                        with sdpa_kernel(backend):
                            ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
                    except Exception as e:  # a backend that refuses the shape
                        print(f"sdpa {bname} d{d} {name} causal={causal}: {type(e).__name__}: {str(e)[:120]}")
                        continue
                    f = flops / 2 if causal else flops
                    row(f"sdpa {bname} {'causal ' if causal else ''}d{d} {name}", f"{b}×{s}×{h}h×{d}", ms, f / ms / 1e9, "TFLOP/s")
            if d == 128 and dt == torch.float16:
                qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
                for backend, bname in ((SDPBackend.FLASH_ATTENTION, "flash2"), (SDPBackend.CUDNN_ATTENTION, "cudnn")):
                    try:
                        with sdpa_kernel(backend):
                            o = F.scaled_dot_product_attention(qg, kg, vg, is_causal=True)
                            g = torch.randn_like(o)
                            ms = median_ms(lambda: torch.autograd.grad(o, (qg, kg, vg), g, retain_graph=True))
                    except Exception as e:
                        print(f"sdpa backward {bname}: {type(e).__name__}: {str(e)[:120]}")
                        continue
                    row(f"sdpa {bname} backward causal d128 f16", f"{b}×{s}×{h}h×{d}", ms, 2.5 * flops / 2 / ms / 1e9, "TFLOP/s")
            del q, k, v
    return 0


if __name__ == "__main__":
    sys.exit(main())
