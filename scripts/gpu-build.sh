#!/usr/bin/env bash
# Builds what scripts/gpu-session.sh runs on a lent GPU machine, which has
# no Go toolchain: the kern and qwen3 commands and the -tags gpu test
# binaries of every package with GPU tests, into .gpubin/, plus a copy of
# ../shared/qwen3-ref for the engine's reference tests, packed into
# .gpupack/ (both in .gitignore: binaries are never committed). Run from
# the repository root.
set -euo pipefail
out=.gpubin
mkdir -p "$out"
ld='-s -w'
go build -ldflags="$ld" -o "$out/kern" ./cmd/kern
go build -ldflags="$ld" -o "$out/qwen3" ./cmd/qwen3
go build -ldflags="$ld" -o "$out/fused_silu_gate" ./examples/fused_silu_gate # the README's main job
go build -ldflags="$ld" -o "$out/grid_sync" ./examples/grid_sync # gpu.GridSync against a launch per step
# package directory → test binary name
for p in . ./cuda ./cublas ./ops ./llm/qwen3 ./llm/engine ./internal/conformance; do
	n=${p#./}; n=${n//\//_}; [ "$n" = . ] && n=root
	go test -c -tags gpu -ldflags="$ld" -o "$out/$n.test" "$p"
done
(cd gomlx && go test -c -tags gpu -ldflags="$ld" -o "../$out/gomlx.test" .)
if [ -d ../shared/qwen3-ref ]; then
	rm -rf "$out/qwen3-ref" && cp -r ../shared/qwen3-ref "$out/qwen3-ref"
fi
# Packed, the binaries fit the device tool's 64 MiB with the tree.
mkdir -p .gpupack
tar -cf - "$out" | xz -T0 -6 >.gpupack/gpubin.tar.xz
du -sh "$out" .gpupack
