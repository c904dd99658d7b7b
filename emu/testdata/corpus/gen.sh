#!/usr/bin/env bash
# gen.sh regenerates the foreign-PTX corpus that emu's corpus tests run:
#   clang_sm80_O2.ptx, clang_sm90_O3.ptx   clang-16 (NVPTX) from kernels.cu (sm_90 with
#                                          -gline-tables-only: .loc lines)
#   clang_sm80_O0.ptx                      clang-16 unoptimized: a debug build's PTX
#   nvcc_sm80.ptx, nvcc_sm90.ptx           nvcc from the PyPI wheels
#   nvcc_sm80_G.ptx                        nvcc -G: a device debug build
#   triton_*.ptx                           Triton (triton_kernels.py)
#   triton_matmul_tma_sm90a.ptx            Triton's TMA + wgmma matmul: triton_tma.sh
# Nothing is installed in the repository: the wheels go to venvs under
# ${KERN_CORPUS_TMP:-/tmp/kern-corpus}. Needs clang-16 (apt-get install
# clang-16) and python3 with venv; no GPU.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=${KERN_CORPUS_TMP:-/tmp/kern-corpus}
mkdir -p "$tmp"
cd "$here"

# nvcc (CUDA 13 wheels): nvcc, cicc, the headers.
if [ ! -x "$tmp/nvcc/bin/python" ]; then
	python3 -m venv "$tmp/nvcc"
	"$tmp/nvcc/bin/pip" install -q nvidia-cuda-nvcc nvidia-nvvm nvidia-cuda-crt nvidia-cuda-runtime nvidia-cuda-cccl
fi
cu=$("$tmp/nvcc/bin/python" -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13"))')
"$cu/bin/nvcc" -ptx -arch=sm_80 -O3 kernels.cu -o nvcc_sm80.ptx
"$cu/bin/nvcc" -ptx -arch=sm_90 -lineinfo kernels.cu -o nvcc_sm90.ptx
"$cu/bin/nvcc" -ptx -arch=sm_80 -G kernels.cu -o nvcc_sm80_G.ptx

# clang-16 wants a CUDA installation's layout (include/, nvvm/libdevice/,
# bin/, version.json) and knows CUDA 12 headers at most: lay one out from
# the CUDA 12 wheels.
if [ ! -x "$tmp/cu12/bin/python" ]; then
	python3 -m venv "$tmp/cu12"
	"$tmp/cu12/bin/pip" install -q nvidia-cuda-nvcc-cu12 nvidia-cuda-runtime-cu12 nvidia-cuda-cccl-cu12
fi
n12=$("$tmp/cu12/bin/python" -c 'import nvidia, os; print(nvidia.__path__[0])')
root="$tmp/cudaroot"
rm -rf "$root"
mkdir -p "$root/bin" "$root/include" "$root/nvvm/libdevice"
cp -rs "$n12"/cuda_runtime/include/* "$n12"/cuda_nvcc/include/* "$n12"/cuda_cccl/include/* "$root/include/" 2>/dev/null || true
cp "$n12"/cuda_nvcc/nvvm/libdevice/* "$root/nvvm/libdevice/"
touch "$root/include/curand_mtgp32_kernel.h" "$root/bin/ptxas" # clang's wrapper includes it; unused
chmod +x "$root/bin/ptxas"
echo '{"cuda":{"version":"12.9.0"}}' >"$root/version.json"
clang() { clang-16 --cuda-path="$root" --cuda-device-only -Wno-unknown-cuda-version -S kernels.cu "$@"; }
clang --cuda-gpu-arch=sm_80 -O2 -o clang_sm80_O2.ptx
clang --cuda-gpu-arch=sm_80 -O0 -o clang_sm80_O0.ptx
clang --cuda-gpu-arch=sm_90 -O3 -gline-tables-only -o clang_sm90_O3.ptx

# Triton compiles for an explicit target without a GPU.
if [ ! -x "$tmp/triton/bin/python" ]; then
	python3 -m venv "$tmp/triton"
	"$tmp/triton/bin/pip" install -q triton numpy
fi
TRITON_DEFAULT_FP_FUSION=1 "$tmp/triton/bin/python" triton_kernels.py "$here"

# Source paths in .file directives relative to this folder, so the PTX
# does not depend on where the repository was checked out.
sed -i -e "s|$here/||g" -e "s|$cu/bin/../include/|cuda/include/|g" -e "s|$root/include/|cuda/include/|g" \
	-e 's|"/[^"]*/site-packages/|"|g' ./*.ptx
