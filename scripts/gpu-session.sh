#!/usr/bin/env bash
# kern's checks and figures on a lent GPU machine, in one call: the device
# and its libraries, `kern bench` (matmul, attention, ops, memcpy) with
# -json rows, `qwen3 bench` at Qwen3-0.6B and -4B shapes, the -tags gpu
# tests, and PyTorch's figures at the same shapes (scripts/gpu-ref.py).
#
#	bash scripts/gpu-build.sh                    # here, with Go
#	bash scripts/gpu-session.sh [phase ...]      # there, from the repo root
#
# Phases: info tests bench qwen3 ref (all, in that order, by default);
# profile (Nsight Compute over a Qwen3 decode step), e2e (the engine's
# commands and server on a tiny model) and diag on request.
# Every step has its own time limit so that one hang cannot eat the
# lease. Results go to $OUT (the device tool's folder) or /tmp/kern-gpu:
# bench.txt, qwen3.txt, ref.txt, tests.txt and bench-json.tar (the rows).
set -u
out=${OUT:-/tmp/kern-gpu}
mkdir -p "$out"
root=$PWD
bin=$root/.gpubin
# The binaries travel packed (.gpupack, from scripts/gpu-build.sh).
[ -x "$bin/kern" ] || [ ! -f .gpupack/gpubin.tar.xz ] || tar -xJf .gpupack/gpubin.tar.xz
phases=${*:-info tests bench qwen3 ref}
export KERN_REQUIRE_GPU=1
[ -d "$bin/qwen3-ref" ] && export KERN_QWEN3_REF=$bin/qwen3-ref

# cuBLAS: the toolkit's copy if the loader knows one, else the pip wheel's.
if ! ldconfig -p | grep -q 'libcublas\.so\.1[23] '; then
	lib=$(find /usr/local /opt /usr/lib -name 'libcublas.so.1[23]' 2>/dev/null | head -1)
	[ -n "$lib" ] && export KERN_LIBCUBLAS=$lib
fi

step() { # step SECONDS LOG CMD...: run with a limit, log, say how it ended
	local limit=$1 log=$2; shift 2
	local t0=$SECONDS
	echo "\$ $*" >>"$log"
	timeout -k 5 "$limit" "$@" >>"$log" 2>&1
	local rc=$?
	echo "[rc=$rc, $((SECONDS - t0)) s] $*" | tee -a "$log"
	return 0
}

for ph in $phases; do
	case $ph in
	info)
		nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
		echo "KERN_LIBCUBLAS=${KERN_LIBCUBLAS:-(loader path)}"
		step 60 "$out/bench.txt" "$bin/fused_silu_gate"
		step 60 "$out/bench.txt" "$bin/grid_sync"
		tail -12 "$out/bench.txt"
		;;
	bench)
		# One process per benchmark: a fault poisons its CUDA context,
		# and must not take the other benchmarks' figures with it.
		mkdir -p /tmp/bench-json
		for b in ${KERN_GPU_BENCHES:-matmul:150 attention:120 ops:60 memcpy:40}; do
			step ${b#*:} "$out/bench.txt" "$bin/kern" bench -json "/tmp/bench-json/${b%:*}.json" "${b%:*}"
			tar -cf "$out/bench-json.tar" -C /tmp bench-json # the device tool brings back 8 files at most
		done
		;;
	qwen3)
		bw=$(grep -o 'DRAM peak [0-9]*' "$out/bench.txt" 2>/dev/null | head -1 | awk '{print $3}')
		# Discarded: the first process to load each module pays the
		# driver's PTX compile (docs/performance-gpu.md, 2026-11-28).
		step 120 /dev/null "$bin/qwen3" bench -preset qwen3-0.6b -ops -prompt 64 -n 8
		for p in qwen3-0.6b qwen3-4b; do
			step 120 "$out/qwen3.txt" "$bin/qwen3" bench -preset $p -ops -bandwidth "${bw:-0}" -prompt 512 -n 64
			# One persistent launch a layer (llm/qwen3/mega.go) against the
			# six kernels of the row above; once first with the phase timer
			# (each block's cycle counter at the layer's phase boundaries,
			# printed per phase), which also loads its module.
			step 120 "$out/qwen3.txt" "$bin/qwen3" bench -preset $p -ops -persistent -phases -prompt 512 -n 4
			step 120 "$out/qwen3.txt" "$bin/qwen3" bench -preset $p -ops -persistent -bandwidth "${bw:-0}" -prompt 512 -n 64
			# The same without programmatic dependent launch between the
			# layers' cooperative launches (pdl.go).
			step 120 "$out/qwen3.txt" env KERN_PDL=0 "$bin/qwen3" bench -preset $p -ops -persistent -bandwidth "${bw:-0}" -prompt 512 -n 64
			# The same without programmatic dependent launch (gpu/pdl.go).
			step 120 "$out/qwen3.txt" env KERN_PDL=0 "$bin/qwen3" bench -preset $p -ops -bandwidth "${bw:-0}" -prompt 512 -n 64
			# The same with the RMSNorms before the q/k/v and gate/up GEMVs
			# as launches of their own (ops/matmul_norm.go): two a layer more.
			step 120 "$out/qwen3.txt" env KERN_FUSE_NORM=0 "$bin/qwen3" bench -preset $p -ops -bandwidth "${bw:-0}" -prompt 512 -n 64
		done
		step 120 "$out/qwen3.txt" "$bin/qwen3" bench -preset qwen3-0.6b -bandwidth "${bw:-0}" -prompt 128 -n 32
		for n in 8 32; do
			step 120 "$out/qwen3.txt" "$bin/qwen3" bench -preset qwen3-4b -ops -batch $n -bandwidth "${bw:-0}" -prompt 512 -n 32
		done
		# A step of 8 sequences on the persistent layer (at most 8 a step):
		# the latency model prices it as one sequence's step.
		step 120 "$out/qwen3.txt" "$bin/qwen3" bench -preset qwen3-4b -ops -persistent -batch 8 -bandwidth "${bw:-0}" -prompt 512 -n 32
		# PagedAttention v2 against v3 where the batched steps slowed
		# between the two machines (docs/performance-gpu.md, 2026-11-28).
		for n in 8 32; do
			step 120 "$out/qwen3.txt" env KERN_PAGED_VERSION=2 "$bin/qwen3" bench -preset qwen3-4b -ops -batch $n -bandwidth "${bw:-0}" -prompt 512 -n 32
		done
		# A server's pool (40960 tokens: decode attention's grid has 128
		# splits of up to 320 tokens, over which v3 spreads a 577-token
		# context, ops.DecodePartition) against the run-sized one above.
		step 120 "$out/qwen3.txt" "$bin/qwen3" bench -preset qwen3-0.6b -ops -pool 40960 -bandwidth "${bw:-0}" -prompt 512 -n 64
		step 120 "$out/qwen3.txt" "$bin/qwen3" bench -preset qwen3-4b -ops -batch 8 -pool 40960 -bandwidth "${bw:-0}" -prompt 512 -n 32
		# As the engine decodes: tokens drawn with Qwen3's generation
		# config from each row's 64 largest logits (ops.TopK), then from
		# the whole rows downloaded every step (-candidates 0, the engine
		# before llm/engine/candidates.go); and greedy the same two ways.
		for n in 1 16; do
			step 120 "$out/qwen3.txt" "$bin/qwen3" bench -preset qwen3-0.6b -ops -batch $n -bandwidth "${bw:-0}" -prompt 512 -n 32 -temperature 0.6 -top-k 20 -top-p 0.95
			step 120 "$out/qwen3.txt" "$bin/qwen3" bench -preset qwen3-0.6b -ops -batch $n -bandwidth "${bw:-0}" -prompt 512 -n 32 -temperature 0.6 -top-k 20 -top-p 0.95 -candidates 0
		done
		step 120 "$out/qwen3.txt" "$bin/qwen3" bench -preset qwen3-0.6b -ops -bandwidth "${bw:-0}" -prompt 512 -n 64 -candidates 0
		;;
	tests)
		# The test binaries run side by side, each in its package's
		# directory (their testdata), each with its own limit; their
		# lines go to one file as they come, prefixed with the binary.
		pids=()
		for t in root cuda cublas ops llm_qwen3 llm_engine internal_conformance gomlx; do
			dir=${t//_//}; [ $t = root ] && dir=.; [ $t = llm_qwen3 ] && dir=llm/qwen3
			( cd "$root/$dir" && step 150 /dev/stdout "$bin/$t.test" -test.timeout 145s 2>&1 |
				grep --line-buffered -v '^=== \|^    --- PASS\|^--- PASS' |
				stdbuf -oL sed "s|^|$t: |" >>"$out/tests.txt" ) &
			pids+=($!)
		done
		wait "${pids[@]}"
		grep -h 'rc=\|--- FAIL\|: FAIL\|: ok\|: PASS\|panic:' "$out/tests.txt"
		;;
	profile)
		# Where a decode step's time goes: every kernel of the ops path's
		# second decode step (graphs off, so each launch is its own), timed
		# by Nsight Compute, summed per kernel name.
		ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
		step 150 "$out/profile.txt" "$ncu" --csv --print-summary per-kernel --metrics gpu__time_duration.sum \
			--launch-skip 600 --launch-count 300 "$bin/qwen3" bench -preset qwen3-0.6b -ops -graphs=false -prompt 64 -n 4
		step 60 "$out/profile.txt" "$bin/qwen3" bench -preset qwen3-0.6b -ops -graphs=false -prompt 64 -n 64
		step 60 "$out/profile.txt" "$bin/qwen3" bench -preset qwen3-0.6b -ops -prompt 64 -n 64
		;;
	e2e)
		# The engine's commands on the GPU with a tiny model: generate on
		# both forward paths, then the server with a chat request, streamed
		# and not, and its metrics.
		tiny=$bin/qwen3-ref/tiny-qwen3/tiny-qwen3-tied tok=$bin/qwen3-ref/tiny-qwen3/tokenizer
		# -ops=false: the float32 path; no flag: -ops=auto, the ops path on a GPU.
		step 60 "$out/e2e.txt" "$bin/qwen3" generate -model "$tiny" -tokenizer "$tok" -device "${KERN_GPU_DEVICE:-cuda}" -ops=false -q -prompt "Hello" -n 16
		step 60 "$out/e2e.txt" "$bin/qwen3" generate -model "$tiny" -tokenizer "$tok" -device "${KERN_GPU_DEVICE:-cuda}" -q -prompt "Hello" -n 16
		"$bin/qwen3" serve -model "$tiny" -tokenizer "$tok" -device "${KERN_GPU_DEVICE:-cuda}" -name tiny -q -addr 127.0.0.1:8089 >>"$out/e2e.txt" 2>&1 &
		srv=$!
		for _ in $(seq 60); do curl -sf 127.0.0.1:8089/ready >/dev/null 2>&1 && break; sleep 0.5; done
		body='{"model":"tiny","messages":[{"role":"user","content":"Hi"}],"max_tokens":12,"temperature":0}'
		step 30 "$out/e2e.txt" curl -sS -H 'Content-Type: application/json' -d "$body" 127.0.0.1:8089/v1/chat/completions
		sbody='{"model":"tiny","messages":[{"role":"user","content":"Hi"}],"max_tokens":12,"temperature":0,"stream":true}'
		step 30 "$out/e2e.txt" curl -sS -N -H 'Content-Type: application/json' -d "$sbody" 127.0.0.1:8089/v1/chat/completions
		step 30 "$out/e2e.txt" sh -c "curl -sS 127.0.0.1:8089/metrics | head -30"
		kill $srv
		;;
	diag)
		step 60 "$out/diag.txt" nvidia-smi
		step 60 "$out/diag.txt" "$bin/kern" doctor
		(cd "$root" && step 60 "$out/diag.txt" "$bin/root.test" -test.run 'TestGPUFault' -test.v)
		step 90 "$out/diag.txt" "$bin/kern" bench -dtype bf16 attention
		;;
	ref)
		step 150 "$out/ref.txt" python3 "$root/scripts/gpu-ref.py"
		;;
	esac
done
# The tails the device tool shows: the tables.
for f in bench qwen3 ref diag profile e2e; do
	[ -f "$out/$f.txt" ] && { echo "===== $f"; grep -v '^\$' "$out/$f.txt" | tail -80; }
done
