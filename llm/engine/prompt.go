package engine

// Prompt logprobs (vLLM's prompt_logprobs; the completions API's echo
// with logprobs): the log probability of each prompt token given the
// tokens before it. They need the logits of every prompt row, which the
// batched step does not keep (it keeps each sequence's last row), so a
// request that asks for them is prefilled at admission, by itself, in
// chunks whose rows' logits are all kept (Runner.Forward with all), and
// joins the batch with its first token sampled. Its prompt is not
// matched against the prefix cache (every row must be computed); its
// blocks are stored there when it ends, like any request's. The batch
// waits while it prefills, as it would for any prefill of that length.

import (
	"fmt"

	"github.com/gokern/kern/llm/qwen3"
)

// promptChunk bounds the rows of one all-logits pass: their logits come
// to the host whole, 32 rows × Qwen3's 151,936 = 19 MB.
const promptChunk = 32

// prefillAll prefills j's whole prompt into j.seq, recording the prompt
// logprobs, and samples j's first token; it reports whether j is done.
func (e *Engine) prefillAll(j *job) (bool, error) {
	V := e.Config.VocabSize
	var buf, last []float32
	for i := 0; i < len(j.prompt); i += promptChunk {
		chunk := j.prompt[i:min(i+promptChunk, len(j.prompt))]
		out, err := e.forward([]*qwen3.Seq{j.seq}, [][]int32{chunk}, true)
		if err == nil {
			if len(buf) != len(chunk)*V {
				buf = make([]float32, len(chunk)*V)
			}
			err = out.CopyTo(buf)
		}
		if err != nil {
			return false, fmt.Errorf("engine: prefilling for prompt logprobs (rows %d to %d): %w", i, i+len(chunk), err)
		}
		e.stats.steps.Add(1)
		e.stats.forwarded.Add(int64(len(chunk)))
		for k := range chunk {
			// Row p's logits are the distribution of token p+1.
			if p := i + k; p+1 < len(j.prompt) {
				j.res.PromptLogprobs = append(j.res.PromptLogprobs, logprobs(buf[k*V:(k+1)*V], j.prompt[p+1], j.promptTop))
			}
		}
		last = buf[(len(chunk)-1)*V:]
	}
	j.next, j.rest = nil, nil
	j.events <- event{tok: -1, plp: append([]SampledLogprob{}, j.res.PromptLogprobs...)}
	return e.advance(j, last, j.smp.Next(last, j.seen), nil), nil
}
