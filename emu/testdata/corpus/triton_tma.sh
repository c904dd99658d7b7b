#!/usr/bin/env bash
# triton_tma.sh regenerates triton_matmul_tma_sm90a.ptx, the sm_90 matmul
# that emu's TestTritonTMAMatmul runs: Triton's TMA + wgmma matmul at the
# Hopper GEMM's tile (BM = BN = 128, BK = 64, 8 warps, 4 stages), from
# scripts/hopper-sass/triton_gemm.py (the same PTX whose SASS
# docs/performance.md compares), compiled for GPUTarget("cuda", 90, 32)
# without a GPU. Needs python3 with triton in a venv outside the
# repository: python3 -m venv /tmp/tv && /tmp/tv/bin/pip install triton,
# then TRITON_PY=/tmp/tv/bin/python. Made with triton 3.9.0.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
PY=${TRITON_PY:-python3}
TRITON_DEFAULT_FP_FUSION=1 "$PY" "$here/../../../scripts/hopper-sass/triton_gemm.py" "$here/triton_matmul_tma_sm90a.ptx"
