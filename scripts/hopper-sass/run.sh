#!/usr/bin/env bash
# The Hopper GEMM's main loops in SASS next to Triton's sm_90 matmul at the
# same tile (docs/performance.md, "Hopper GEMM"). Needs python3 with
# triton (a venv: python3 -m venv /tmp/tv && /tmp/tv/bin/pip install triton;
# set TRITON_PY=/tmp/tv/bin/python), ptxas 13.x (scripts/fetch-ptxas.sh)
# and nvdisasm (scripts/sass-parity/get-nvidia-tools). Writes only to a
# scratch directory.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KERN=$(cd "$HERE/../.." && pwd)
PTXAS=${KERN_PTXAS_90A:-$("$KERN/scripts/fetch-ptxas.sh" 2>/dev/null)}
NVDIS=$(dirname "$("$KERN/scripts/sass-parity/get-nvidia-tools")")/nvdisasm
PY=${TRITON_PY:-python3}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
TRITON_DEFAULT_FP_FUSION=1 "$PY" "$HERE/triton_gemm.py" "$W/triton.ptx" 2>/dev/null
head -1 "$W/triton.ptx"
python3 "$HERE/loops.py" "$PTXAS" "$NVDIS" "$KERN/ops/internal/mmh/mmh_kern_sm_90a.ptx" GemmBF16BF16
python3 "$HERE/loops.py" "$PTXAS" "$NVDIS" "$W/triton.ptx" matmul_tma
# The 128x256 tile (ops/internal/mmhw) against Triton's at BN = 256.
TRITON_DEFAULT_FP_FUSION=1 "$PY" "$HERE/triton_gemm.py" "$W/triton256.ptx" 256 4 2>/dev/null
head -1 "$W/triton256.ptx"
python3 "$HERE/loops.py" "$PTXAS" "$NVDIS" "$KERN/ops/internal/mmhw/mmhw_kern_sm_90a.ptx" GemmBF16BF16
python3 "$HERE/loops.py" "$PTXAS" "$NVDIS" "$W/triton256.ptx" matmul_tma
