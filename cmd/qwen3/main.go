// Command qwen3 runs Qwen3 models (Hugging Face directories) and Llama
// models (a Hugging Face directory with model_type llama, or a single
// .gguf file such as SmolLM2-135M-Instruct's) on kern: on a GPU through
// CUDA, or on kern's PTX emulator or native mode where there is none.
// A -model path ending in .gguf brings its own tokenizer and chat
// template.
//
//	qwen3 generate -model DIR -prompt "Once upon a time" [-chat] [-n 64]
//	qwen3 chat     -model DIR
//	qwen3 serve    -model DIR [-addr 127.0.0.1:8080]   (OpenAI API; see llm/server)
//	qwen3 bench    -preset qwen3-0.6b [-prompt 128 -n 32 -bandwidth 3350]   (random weights)
//
// -device picks emu, native or cuda (the default is $KERN_DEVICE, else
// the first GPU). -tokenizer DIR is needed when tokenizer.json is not in
// the model directory. Sampling flags: -temperature (0 = greedy),
// -top-k, -top-p, -min-p, -repetition-penalty, -seed; the defaults come
// from the model's generation_config.json when it has them.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/engine"
	"github.com/gokern/kern/llm/sample"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "qwen3:", err)
		os.Exit(1)
	}
}

const usage = `usage: qwen3 generate|chat|serve|bench -model DIR [flags]; qwen3 MODE -h lists the flags`

// common are the flags every mode has.
type common struct {
	model, tok, device string
	ctxLen             int
	kvTokens           int
	noPrefixCache      bool
	onKVEvents         func([]engine.KVEvent) // set by serve -kv-events
	maxTokens          int
	p                  sample.Params
	noThink            bool
	stop               string
	quiet              bool
	tp                 int
	tpComm             string
	ops                opsMode
	opsMatmul          bool
	persistent         bool
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.model, "model", "", "Hugging Face model directory (config.json, model.safetensors) or a .gguf file")
	fs.StringVar(&c.tok, "tokenizer", "", "directory of tokenizer.json (default: the model directory)")
	fs.StringVar(&c.device, "device", "", "emu, native, cuda or cuda:N (default: $KERN_DEVICE, else the first GPU)")
	fs.IntVar(&c.ctxLen, "ctx", 0, "context length in tokens (default: min(max_position_embeddings, 4096))")
	fs.BoolVar(&c.noPrefixCache, "no-prefix-cache", false, "prefill every prompt in full instead of reusing cached KV blocks of earlier requests")
	fs.IntVar(&c.kvTokens, "kv-tokens", 0, "KV cache budget in token positions shared by all requests; memory is sized from it, not from the device (default: 2·ctx)")
	fs.IntVar(&c.maxTokens, "n", 128, "most tokens to generate")
	fs.Float64Var(&c.p.Temperature, "temperature", -1, "sampling temperature, 0 for greedy (default: the model's, else 0)")
	fs.IntVar(&c.p.TopK, "top-k", -1, "keep the k most likely tokens (default: the model's, else all)")
	fs.Float64Var(&c.p.TopP, "top-p", -1, "nucleus sampling mass (default: the model's, else 1)")
	fs.Float64Var(&c.p.MinP, "min-p", -1, "drop tokens below min-p × the top probability (default: the model's, else 0)")
	fs.Float64Var(&c.p.RepetitionPenalty, "repetition-penalty", -1, "penalty on tokens already seen (default: the model's, else 1)")
	fs.Uint64Var(&c.p.Seed, "seed", 0, "random seed")
	fs.BoolVar(&c.noThink, "no-think", false, "chat template with thinking off (enable_thinking=false)")
	fs.StringVar(&c.stop, "stop", "", "comma-separated stop strings")
	fs.BoolVar(&c.quiet, "q", false, "no loading progress or statistics on stderr")
	fs.IntVar(&c.tp, "tp", 1, "tensor parallelism: split the model over this many devices (Megatron layout, see llm/tp); with -device cuda:N, rank r is on GPU N+r")
	fs.StringVar(&c.tpComm, "tp-comm", "", "with -tp: local (one process, a goroutine per rank, any device), socket (a process per rank, collectives through rank 0 over Unix sockets, any device) or nccl (a process per GPU); default nccl on cuda, else local")
	c.ops = opsAuto
	fs.Var(&c.ops, "ops", "forward pass on package ops: bf16/f16 activations and KV cache, tensor cores, decode graphs (bf16/f16 weights); auto: on a GPU where the model allows it, -ops=false: the float32 path")
	fs.BoolVar(&c.persistent, "persistent", false, "with the ops forward pass: a decode step of up to 8 sequences as one persistent launch a layer (a request's tokens are a solo run's while steps have at most 8 sequences)")
	fs.BoolVar(&c.opsMatmul, "ops-matmul", false, "float32 forward pass with its projections on ops.Matmul over split activations (float32 accuracy, tensor cores)")
}

// params fills unset sampling flags from generation_config.json.
func (c *common) params(e *engine.Engine) sample.Params {
	p, g := c.p, e.Gen
	pick := func(v *float64, model float64, def float64) {
		if *v < 0 {
			*v = def
			if model > 0 {
				*v = model
			}
		}
	}
	if p.Temperature < 0 && !g.DoSample {
		p.Temperature = 0
	}
	pick(&p.Temperature, g.Temperature, 0)
	pick(&p.TopP, g.TopP, 1)
	pick(&p.MinP, g.MinP, 0)
	pick(&p.RepetitionPenalty, g.RepetitionPenalty, 1)
	if p.TopK < 0 {
		p.TopK = max(g.TopK, 0)
	}
	return p
}

func (c *common) stops() []string {
	if c.stop == "" {
		return nil
	}
	return strings.Split(c.stop, ",")
}

// open opens the device and the model, with a progress line on stderr;
// closeAll closes the engine, the devices and any rank processes.
func (c *common) open(ctx context.Context, stderr io.Writer) (e *engine.Engine, closeAll func(), err error) {
	if c.model == "" {
		return nil, nil, fmt.Errorf("-model DIR is required")
	}
	if c.device != "" {
		os.Setenv("KERN_DEVICE", c.device)
	}
	dev, err := kern.Open()
	if err != nil {
		return nil, nil, err
	}
	if c.tp > 1 {
		return c.openTP(ctx, dev, stderr)
	}
	var progress func(done, total int64)
	if !c.quiet {
		fmt.Fprintf(stderr, "device: %s\n", dev)
		progress = loadProgress(stderr, c.model)
	}
	e, err = engine.Open(dev, c.model, c.options(progress))
	if err != nil {
		dev.Close()
		return nil, nil, err
	}
	if s, ok := e.Model.(engine.Single); ok && !c.quiet {
		path := "float32"
		if s.M.UsingOps() {
			path = "ops (bf16/f16 activations, tensor cores)"
		}
		if s.M.UsingPersistentDecode() {
			path += "; a decode step of up to 8 sequences: one persistent launch a layer"
		}
		fmt.Fprintf(stderr, "forward pass: %s\n", path)
	}
	return e, func() { e.Close(); dev.Close() }, nil
}

func (c *common) options(progress func(done, total int64)) engine.Options {
	return engine.Options{TokenizerDir: c.tok, Context: c.ctxLen, KVPositions: c.kvTokens, NoPrefixCache: c.noPrefixCache, OnKVEvents: c.onKVEvents, Progress: progress, Ops: c.ops == opsOn, OpsWhereFast: c.ops == opsAuto, OpsMatmul: c.opsMatmul, PersistentDecode: c.persistent}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%s", usage)
	}
	switch args[0] {
	case "generate":
		return generate(ctx, args[1:], stdout, stderr)
	case "chat":
		return chat(ctx, args[1:], stdin, stdout, stderr)
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "bench":
		return bench(ctx, args[1:], stdout, stderr)
	case "rank":
		return rank(ctx, args[1:], stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown mode %q; %s", args[0], usage)
}

// opsMode is the -ops flag: auto (the default), or a boolean.
type opsMode string

const (
	opsAuto opsMode = "auto"
	opsOn   opsMode = "true"
	opsOff  opsMode = "false"
)

func (o *opsMode) String() string { return string(*o) }

// IsBoolFlag lets -ops stand alone for -ops=true.
func (o *opsMode) IsBoolFlag() bool { return true }

func (o *opsMode) Set(v string) error {
	if v == string(opsAuto) {
		*o = opsAuto
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("want auto, true or false")
	}
	*o = opsOff
	if b {
		*o = opsOn
	}
	return nil
}
