package main

// qwen3 bench: prefill and decode speed without a tokenizer, from a model
// directory or from random weights at a preset's shapes (-preset
// qwen3-0.6b, qwen3-4b), with the bytes a decode step must read and the
// rate that implies (compare with the GPU's memory bandwidth: the decode
// roofline).

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/gguf"
	"github.com/gokern/kern/llm/qwen3"
	"github.com/gokern/kern/llm/sample"
)

func bench(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "model directory (its config.json and weights)")
	randomW := fs.Bool("random-weights", false, "with -model: random weights at its config.json's shapes")
	var names []string
	for n := range qwen3.Presets {
		names = append(names, n)
	}
	sort.Strings(names)
	preset := fs.String("preset", "", "random weights at a preset's shapes: "+strings.Join(names, ", "))
	device := fs.String("device", "", "emu, native, cuda or cuda:N (default: $KERN_DEVICE, else the first GPU)")
	promptLen := fs.Int("prompt", 128, "prompt tokens")
	steps := fs.Int("n", 32, "decode steps")
	bw := fs.Float64("bandwidth", 0, "the device's memory bandwidth in GB/s, to print the share of the roofline")
	seed := fs.Uint64("seed", 1, "random weight seed")
	useOps := fs.Bool("ops", false, "the forward pass on package ops (bf16 activations and KV cache, tensor cores)")
	graphs := fs.Bool("graphs", true, "with -ops: replay decode steps from a captured graph")
	persistent := fs.Bool("persistent", false, "with -ops: a decode step of up to 8 sequences as one persistent (cooperative) launch a layer (qwen3.Model.UsePersistentDecode)")
	phases := fs.Bool("phases", false, "with -persistent: time the layer's phases on the device (each block's cycle counter; qwen3.Model.PersistentPhases) and print them after the run")
	opsMatmul := fs.Bool("ops-matmul", false, "float32 path with its projections on ops.Matmul over split activations (qwen3.OpsMatmul)")
	poolTokens := fs.Int("pool", 0, "KV pool capacity in tokens (0: what the run needs); a server's pool holds its batch × context, and the pool sets the split grid of decode attention (ops.DecodePartition), so -pool 40960 times the attention a server runs")
	batch := fs.Int("batch", 1, "sequences decoding together (continuous batching's step): each gets -prompt tokens, then -n steps; tokens/s is over all of them")
	var sp sample.Params
	candidates := fs.Int("candidates", 64, "each row's largest logits picked on the device (ops.TopK; one for greedy) and drawn from on the host, as the engine does on a GPU; 0: every row's logits downloaded and drawn from on the host, as on the emulator")
	fs.Float64Var(&sp.Temperature, "temperature", 0, "> 0: draw each token as the engine does (llm/sample), e.g. Qwen3's -temperature 0.6 -top-k 20 -top-p 0.95; 0: greedy")
	fs.IntVar(&sp.TopK, "top-k", 0, "with -temperature: keep the k most likely tokens (0: all)")
	fs.Float64Var(&sp.TopP, "top-p", 0, "with -temperature: nucleus mass (0: all)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := sp.Validate(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if *device != "" {
		os.Setenv("KERN_DEVICE", *device)
	}
	dev, err := kern.Open()
	if err != nil {
		return err
	}
	defer dev.Close()
	var m *qwen3.Model
	switch {
	case *preset != "":
		cfg, ok := qwen3.Presets[*preset]
		if !ok {
			return fmt.Errorf("bench: no preset %q (have %s)", *preset, strings.Join(names, ", "))
		}
		m, err = qwen3.NewRandom(dev, cfg, *seed)
	case *model != "" && *randomW:
		var cfg *qwen3.Config
		if cfg, err = qwen3.LoadConfig(*model); err == nil {
			m, err = qwen3.NewRandom(dev, *cfg, *seed)
		}
	case strings.HasSuffix(*model, ".gguf"):
		m, err = loadGGUF(dev, *model)
	case *model != "":
		m, err = qwen3.Load(dev, *model, qwen3.LoadOptions{})
	default:
		return fmt.Errorf("bench: -model DIR or -preset NAME is required")
	}
	if err != nil {
		return err
	}
	defer m.Free()
	if *opsMatmul && !*useOps {
		m.Matmul = &qwen3.OpsMatmul{Fallback: m.Matmul}
	}
	if *useOps {
		if err := m.UseOps(); err != nil {
			return err
		}
		if *graphs {
			if err := m.EnableGraphs(); err != nil {
				return err
			}
		}
		if *persistent {
			if err := m.UsePersistentDecode(true); err != nil {
				return err
			}
		}
	} else if *persistent {
		return fmt.Errorf("bench: -persistent runs on the ops path: add -ops")
	}
	if *phases {
		if !*persistent {
			return fmt.Errorf("bench: -phases times the persistent layer: add -ops -persistent")
		}
		if err := m.ProfilePersistentDecode(true); err != nil {
			return err
		}
		defer func() {
			if err == nil {
				err = printPhases(stdout, dev, m)
			}
		}()
	}
	if *batch < 1 || *promptLen < 1 || *steps < 0 || *poolTokens < 0 {
		return fmt.Errorf("bench: -batch and -prompt must be ≥ 1, -n and -pool ≥ 0")
	}
	pk, err := newPicker(dev, m, *batch, *candidates, sp)
	if err != nil {
		return err
	}
	defer pk.free()
	defer func() {
		if err == nil {
			fmt.Fprintln(stdout, pk.summary())
		}
	}()
	if *batch > 1 {
		return benchBatch(ctx, stdout, dev, m, *batch, *promptLen, *steps, *poolTokens, *bw, sp, pk)
	}
	c := m.Config
	cache, err := m.NewCache(max(*poolTokens, *promptLen+*steps+1)) // + timeSteps' untimed step
	if err != nil {
		return err
	}
	defer cache.Free()
	prompt := make([]int32, *promptLen)
	for i := range prompt {
		prompt[i] = int32((i*7919 + 13) % c.VocabSize)
	}
	next := [][]int32{prompt}
	step := func() error {
		out, err := m.Forward(cache, next[0], false)
		if err != nil {
			return err
		}
		return pk.pick(out, next)
	}
	fmt.Fprintf(stdout, "sampling: %s\n", pk.describe(sp))
	fmt.Fprintf(stdout, "launches: %s\n", launchMode(dev))
	fmt.Fprintf(stdout, "device: %s\nforward: %s\nmodel: %d layers, hidden %d, heads %d/%d×%d, vocab %d; weights %.1f MB\n",
		dev, forwardPath(m), c.NumHiddenLayers, c.HiddenSize, c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim, c.VocabSize, float64(m.WeightBytes())/1e6)
	return timeSteps(ctx, stdout, m, 1, *promptLen, *steps, *bw, step)
}

// timeSteps times step's first call (the prefill of batch prompts of
// promptLen tokens) and then, after one untimed decode step, steps calls
// (one token per sequence), and prints the rates and the bytes a decode
// step reads at least: every weight once, and the K and V of the
// positions so far, at the mean position.
//
// The untimed step takes what a process pays once: the first launch of
// each decode kernel (on a GPU, the driver compiling its module's PTX
// when its cache has no copy) and the capture of the decode graph. Timed,
// it made a fresh H100's first 0.6B runs 67 and 78 ms a token where later
// ones took 2.4 (docs/performance-gpu.md, 2026-11-28).
func timeSteps(ctx context.Context, stdout io.Writer, m *qwen3.Model, batch, promptLen, steps int, bw float64, step func() error) error {
	t0 := time.Now()
	if err := step(); err != nil {
		return err
	}
	pre := time.Since(t0)
	pos := promptLen // where the timed steps start
	if steps > 0 {
		if err := step(); err != nil {
			return err
		}
		pos++
	}
	t0 = time.Now()
	for s := 0; s < steps; s++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := step(); err != nil {
			return err
		}
	}
	dec := time.Since(t0) / time.Duration(max(steps, 1))
	kv := m.KVBytesPerPosition() * int64(batch) * int64(pos+steps/2)
	bytes := float64(m.WeightBytes() + kv)
	gbs := bytes / dec.Seconds() / 1e9
	if batch == 1 {
		fmt.Fprintf(stdout, "prefill: %d tokens in %v (%.1f tokens/s)\n", promptLen, pre.Round(time.Microsecond), float64(promptLen)/pre.Seconds())
		fmt.Fprintf(stdout, "decode: %v per token (%.1f tokens/s), %.1f MB read per token at least: %.1f GB/s", dec.Round(time.Microsecond), 1/dec.Seconds(), bytes/1e6, gbs)
	} else {
		fmt.Fprintf(stdout, "prefill: %d×%d tokens in %v (%.1f tokens/s)\n", batch, promptLen, pre.Round(time.Microsecond), float64(batch*promptLen)/pre.Seconds())
		fmt.Fprintf(stdout, "decode: %v per step of %d tokens (%.1f tokens/s), %.1f MB read per step at least: %.1f GB/s", dec.Round(time.Microsecond), batch, float64(batch)/dec.Seconds(), bytes/1e6, gbs)
	}
	if bw > 0 {
		fmt.Fprintf(stdout, " = %.1f%% of %.0f GB/s", 100*gbs/bw, bw)
	}
	fmt.Fprintln(stdout)
	return nil
}

// benchBatch times batch sequences decoding together from one KV pool,
// as the server's continuous batching runs them: one prefill of all the
// prompts, then steps of one token per sequence, the next tokens picked
// by pk as the engine picks them.
func benchBatch(ctx context.Context, stdout io.Writer, dev *kern.Device, m *qwen3.Model, batch, promptLen, steps, poolTokens int, bw float64, sp sample.Params, pk *picker) error {
	c := m.Config
	const pageSize = 16
	per := (promptLen + steps + 1 + pageSize - 1) / pageSize // + timeSteps' untimed step
	pool, err := m.NewKVPool(max(batch*per, (poolTokens+pageSize-1)/pageSize), pageSize)
	if err != nil {
		return err
	}
	defer pool.Free()
	seqs := make([]*qwen3.Seq, batch)
	tokens := make([][]int32, batch)
	for i := range seqs {
		seqs[i] = pool.NewSeq()
		tokens[i] = make([]int32, promptLen)
		for j := range tokens[i] {
			tokens[i][j] = int32((j*7919 + 104729*i + 13) % c.VocabSize)
		}
	}
	step := func() error {
		logits, err := m.ForwardBatch(seqs, tokens)
		if err != nil {
			return err
		}
		return pk.pick(logits, tokens)
	}
	fmt.Fprintf(stdout, "sampling: %s\n", pk.describe(sp))
	fmt.Fprintf(stdout, "launches: %s\n", launchMode(dev))
	fmt.Fprintf(stdout, "device: %s\nforward: %s, %d sequences\nmodel: %d layers, hidden %d, heads %d/%d×%d; weights %.1f MB\n",
		dev, forwardPath(m), batch, c.NumHiddenLayers, c.HiddenSize, c.NumAttentionHeads, c.NumKeyValueHeads, c.HeadDim, float64(m.WeightBytes())/1e6)
	return timeSteps(ctx, stdout, m, batch, promptLen, steps, bw, step)
}

// forwardPath names the forward pass m runs.
func forwardPath(m *qwen3.Model) string {
	switch {
	case m.UsingPersistentDecode():
		return "ops (bf16/f16 activations and KV cache), a decode step of up to 8 sequences one persistent launch a layer"
	case m.UsingOps():
		return "ops (bf16/f16 activations and KV cache)"
	case isOpsMatmul(m):
		return "float32, projections on ops.Matmul (split activations)"
	}
	return "float32 (engine kernels)"
}

func isOpsMatmul(m *qwen3.Model) bool {
	_, ok := m.Matmul.(*qwen3.OpsMatmul)
	return ok
}

// loadGGUF loads a single-file GGUF model (the file is closed once the
// weights are uploaded).
func loadGGUF(dev *kern.Device, path string) (*qwen3.Model, error) {
	g, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	return qwen3.LoadGGUF(dev, g, qwen3.LoadOptions{})
}

// launchMode says whether kernels overlap their predecessors' tails
// (programmatic dependent launch, gpu/pdl.go), for timing with and
// without it.
func launchMode(dev *kern.Device) string {
	if dev.PDL() {
		return "programmatic dependent launch (KERN_PDL=0 turns it off)"
	}
	return "each kernel after the one before it completes"
}

// printPhases prints the persistent layer's phase timer (-phases) for
// the run's last decode step: cycles per block, over every block and
// layer (instructions on the emulator).
func printPhases(w io.Writer, dev *kern.Device, m *qwen3.Model) error {
	ph, err := m.PersistentPhases()
	if err != nil {
		return err
	}
	unit := "SM cycles"
	if dev.Kind() != "cuda" {
		unit = "executed instructions of the block (emulator) or ns (native), not cycles"
	}
	fmt.Fprintf(w, "persistent layer phases, the last decode step, per block (%s):\n", unit)
	fmt.Fprintf(w, "  %-40s %10s %10s %10s\n", "phase", "mean", "min", "max")
	total := 0.0
	for _, p := range ph {
		fmt.Fprintf(w, "  %-40s %10.0f %10.0f %10.0f\n", p.Phase, p.Mean, p.Min, p.Max)
		total += p.Mean
	}
	fmt.Fprintf(w, "  %-40s %10.0f\n", "layer", total)
	return nil
}
