#!/usr/bin/env bash
# Compile the eight measured kernels with kern (as shipped and with nobounds) and their CUDA C
# twins with clang-16 (int and 64-bit indices), assemble each with ptxas 12.4, disassemble with
# nvdisasm, and write SASS statistics, the tables and the ratio check.
# usage: scripts/sass-parity/run.sh [WORKDIR]   (from anywhere; WORKDIR defaults to
#        ${KERN_SASS_DIR:-~/.cache/kern/sass-parity}, the only place it writes besides the
#        tool cache of get-nvidia-tools and a scratch copy in $TMPDIR)
# needs go, python3, clang-16 (apt-get install -y clang-16); exits 1 when check.py does.
# SASS_PARITY_VARIANTS picks what to build (default: kern kernnb clang clang64; the ratio
# check needs only kern and clang, which is what CI builds).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KERN=$(cd "$HERE/../.." && pwd)
W=${1:-${KERN_SASS_DIR:-$HOME/.cache/kern/sass-parity}}
B=$W/build; R=$W/results; mkdir -p "$B" "$R"
PTXAS=$("$HERE/get-nvidia-tools"); NVDIS=$(dirname "$PTXAS")/nvdisasm
# kernel  kern-target  cuda-file
K="SiluGate ./examples/fused_silu_gate.SiluGate silu_gate
SumPartial ./examples/reduction.SumPartial reduction
RMSNorm ./examples/rms_norm.RMSNorm rms_norm
Softmax ./examples/softmax.Softmax softmax
TransposePadded ./examples/transpose.TransposePadded transpose
HistogramShared ./examples/histogram.HistogramShared histogram
MatMul32 ./examples/tiled_matmul_f32.MatMul32 matmul32
MatMulMMA ./internal/conformance.MatMulMMA matmul_mma"
V=${SASS_PARITY_VARIANTS:-kern kernnb clang clang64}
NB=$(mktemp -d); trap 'rm -rf "$NB"' EXIT
(cd "$KERN" && go build -o "$NB/kern.bin" ./cmd/kern)
if [[ " $V " == *" kernnb "* ]]; then
  # kern with //kern:kernel ... nobounds, in a scratch copy
  mkdir "$NB/src"; (cd "$KERN" && tar --exclude=.git -cf - .) | tar -xf - -C "$NB/src"
  (cd "$NB/src" && sed -i 's|^//kern:kernel block=\([^ ]*\)$|//kern:kernel block=\1 nobounds|' \
    examples/*/kernels.go internal/conformance/kernels.go)
fi
: > "$R/stats.jsonl"
echo "$K" | while read -r name tgt cu; do
  for arch in sm_80 sm_90; do
    ptxv=$([ $arch = sm_80 ] && echo ptx70 || echo ptx78)
    (cd "$KERN" && "$NB/kern.bin" ptx -arch $arch "$tgt") > "$B/kern_${name}_$arch.ptx"
    if [ -d "$NB/src" ]; then (cd "$NB/src" && "$NB/kern.bin" ptx -arch $arch "$tgt") > "$B/kernnb_${name}_$arch.ptx"; fi
    for idx in int long; do
      v=$([ $idx = int ] && echo clang || echo clang64)
      [[ " $V " == *" $v "* ]] || continue
      clang-16 --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=$arch -Xclang -target-feature \
        -Xclang +$ptxv -O3 -DIDX=$idx -S "$HERE/cuda/$cu.cu" -o "$B/${v}_${name}_$arch.ptx"
    done
    for v in $V; do
      # An idx32 kernel's launches within 32-bit limits run its entry <name>_i32: count that one.
      ent=$name; grep -q "^\.visible \.entry ${name}_i32(" "$B/${v}_${name}_$arch.ptx" && ent="$name:${name}_i32"
      SASS_OUT="$B/${v}_${name}_$arch.sass" python3 "$HERE/sass_stats.py" "$PTXAS" "$NVDIS" $arch "$B/${v}_${name}_$arch.ptx" $ent |
        sed "s/^{/{\"variant\": \"$v\", /" >> "$R/stats.jsonl"
    done
  done
done
python3 "$HERE/table.py" "$R/stats.jsonl" > "$R/table.md"
python3 "$HERE/check.py" "$HERE/limits.txt" "$R/stats.jsonl" | tee "$R/ratios.md"
