#!/usr/bin/env bash
# Cold start of `qwen3 serve`: wall time from launching the process to
# /ready answering 200, and to the first token of a one-token completion;
# and the process's peak resident memory (VmHWM), for each KV budget.
#
#   scripts/coldstart.sh MODEL_DIR [DEVICE] [KV_TOKENS...]
#
# TOKENIZER=DIR names a tokenizer directory other than MODEL_DIR.
# TP=N (and TP_COMM=local|socket|nccl) splits the model over N ranks
# (qwen3 serve -tp); with rank processes (socket, nccl) the peak memory
# is given for rank 0 and for the largest other rank.
#
# DEVICE is emu (default), native or cuda. On emu and native the model and
# the KV cache live in host memory, so VmHWM grows with -kv-tokens; on a
# GPU they are device memory (see nvidia-smi) and VmHWM is the host side.
set -euo pipefail
model=${1:?usage: scripts/coldstart.sh MODEL_DIR [DEVICE] [KV_TOKENS...]}
dev=${2:-emu}
shift $(( $# >= 2 ? 2 : 1 ))
budgets=("$@")
[ ${#budgets[@]} -gt 0 ] || budgets=(256 4096)
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(mktemp -d)/qwen3
(cd "$root" && go build -o "$bin" ./cmd/qwen3)
port=$(( 20000 + RANDOM % 20000 ))
now() { date +%s.%N; }
tp=()
[ "${TP:-1}" -gt 1 ] && tp=(-tp "$TP" ${TP_COMM:+-tp-comm "$TP_COMM"})
printf '%-10s %-12s %-14s %-12s %s\n' kv-tokens ready_s first_token_s peak_rss_MB rank_rss_MB
for kv in "${budgets[@]}"; do
	t0=$(now)
	"$bin" serve -q -device "$dev" -model "$model" -addr "127.0.0.1:$port" -kv-tokens "$kv" -ctx 128 ${TOKENIZER:+-tokenizer "$TOKENIZER"} ${tp[@]+"${tp[@]}"} >/dev/null 2>&1 &
	pid=$!
	until curl -sf "http://127.0.0.1:$port/ready" >/dev/null 2>&1; do
		kill -0 $pid 2>/dev/null || { echo "serve exited" >&2; exit 1; }
		sleep 0.01
	done
	t1=$(now)
	curl -sf "http://127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' \
		-d '{"prompt":[1,2,3,4],"max_tokens":1}' >/dev/null
	t2=$(now)
	rss=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
	rank=0
	for c in $(pgrep -P $pid || true); do
		r=$(awk '/VmHWM/ {print $2}' /proc/$c/status 2>/dev/null || echo 0)
		[ "${r:-0}" -gt $rank ] && rank=$r
	done
	kill -INT $pid; wait $pid 2>/dev/null || true
	printf '%-10s %-12.3f %-14.3f %-12.1f %.1f\n' "$kv" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t0" | bc)" "$(echo "$rss / 1024" | bc -l)" "$(echo "$rank / 1024" | bc -l)"
done
