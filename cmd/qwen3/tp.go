package main

// -tp N: the model split over N devices (package llm/tp). With -tp-comm
// local the ranks are goroutines of this process; with socket or nccl
// this process is rank 0 (it runs the engine and the HTTP server) and
// starts ranks 1 … N-1 as processes of this same executable in "rank"
// mode, one per device, meeting in a fresh rendezvous directory of Unix
// sockets.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/engine"
	"github.com/gokern/kern/llm/qwen3"
	"github.com/gokern/kern/llm/tokenizer"
	"github.com/gokern/kern/llm/tp"
)

// openTP opens the engine over a split model; dev is rank 0's device.
func (c *common) openTP(ctx context.Context, dev *kern.Device, stderr io.Writer) (*engine.Engine, func(), error) {
	comm := c.tpComm
	if comm == "" {
		comm = "local"
		if dev.Kind() == "cuda" {
			comm = "nccl"
		}
	}
	if comm != "local" && comm != "socket" && comm != "nccl" {
		dev.Close()
		return nil, nil, fmt.Errorf("-tp-comm %q: want local, socket or nccl", comm)
	}
	if strings.HasSuffix(c.model, ".gguf") {
		dev.Close()
		return nil, nil, fmt.Errorf("-tp %d: a .gguf model is not split (tensor parallelism loads Hugging Face safetensors directories)", c.tp)
	}
	tokDir := c.tok
	if tokDir == "" {
		tokDir = c.model
	}
	tok, err := tokenizer.Load(tokDir)
	if err != nil {
		dev.Close()
		return nil, nil, err
	}
	gen, err := qwen3.LoadGenerationConfig(c.model)
	if err != nil {
		dev.Close()
		return nil, nil, err
	}
	if !c.quiet {
		fmt.Fprintf(stderr, "tensor parallel: %d ranks (%s)\n", c.tp, comm)
	}
	var runner engine.Runner
	var cfg *qwen3.Config
	var ranks *tp.Ranks
	var rdir string
	// grace is how long the ranks get to end by themselves: after rank
	// 0's quit order they do at once; after a failed start there is
	// nothing of theirs to wait for.
	grace := time.Duration(0)
	cleanup := func() {
		if ranks != nil {
			if err := ranks.Stop(grace); err != nil && grace > 0 {
				fmt.Fprintln(stderr, "qwen3:", err)
			}
		}
		if rdir != "" {
			os.RemoveAll(rdir)
		}
	}
	if comm == "local" {
		devs := []*kern.Device{dev}
		for r := 1; r < c.tp; r++ {
			d, err := rankDevice(dev, c.firstGPU()+r)
			if err != nil {
				closeDevs(devs)
				return nil, nil, err
			}
			devs = append(devs, d)
		}
		m, err := tp.LoadLocal(devs, c.model)
		if err != nil {
			closeDevs(devs)
			return nil, nil, err
		}
		runner, cfg = m.Runner(), m.Config
		cleanup = func() { closeDevs(devs[1:]) }
	} else {
		// Unix socket paths are short (≤ 107 bytes): the directory is
		// under /tmp, not $TMPDIR.
		if rdir, err = os.MkdirTemp("/tmp", "kern-tp-"); err != nil {
			dev.Close()
			return nil, nil, err
		}
		cl := tp.Clique{Dir: rdir, Rank: 0, Size: c.tp, NCCL: comm == "nccl"}
		exe, err := os.Executable()
		if err == nil {
			ranks, err = tp.Spawn(exe, func(r int) []string { return c.rankArgs(dev, cl, r) }, c.tp, stderr)
		}
		if err != nil {
			cleanup()
			dev.Close()
			return nil, nil, err
		}
		jctx, done := ranks.WatchJoin(ctx)
		l, err := tp.Lead(jctx, dev, cl, c.model)
		if err != nil && context.Cause(jctx) != nil && !errors.Is(context.Cause(jctx), context.Canceled) {
			err = fmt.Errorf("%w (%v)", err, context.Cause(jctx))
		}
		done()
		if err != nil {
			cleanup()
			dev.Close()
			return nil, nil, err
		}
		runner, cfg = l, l.Config
		// A rank that ends while serving breaks the clique: the next
		// step fails at once and /health turns 503 (serve.go).
		go func() {
			<-ranks.Dead()
			l.Break(ranks.Why())
		}()
	}
	e, err := engine.NewRunner(runner, cfg, gen, tok, c.options(nil))
	if err != nil {
		runner.Free()
		cleanup()
		dev.Close()
		return nil, nil, err
	}
	grace = 10 * time.Second
	return e, func() { e.Close(); cleanup(); dev.Close() }, nil
}

// firstGPU is rank 0's CUDA ordinal (-device or $KERN_DEVICE cuda:N,
// else 0); rank r is on N+r.
func (c *common) firstGPU() int {
	spec := c.device
	if spec == "" {
		spec = os.Getenv("KERN_DEVICE")
	}
	n, err := strconv.Atoi(strings.TrimPrefix(spec, "cuda:"))
	if err != nil || !strings.HasPrefix(spec, "cuda:") {
		return 0
	}
	return n
}

// rankDevice opens another device of dev's kind (CUDA ordinal gpu on a
// GPU).
func rankDevice(dev *kern.Device, gpu int) (*kern.Device, error) {
	switch dev.Kind() {
	case "cuda":
		return kern.OpenCUDA(gpu)
	case "native":
		return kern.OpenNative(), nil
	}
	return kern.OpenEmulator(), nil
}

func closeDevs(devs []*kern.Device) {
	for _, d := range devs {
		d.Close()
	}
}

// rankArgs are rank r's command line.
func (c *common) rankArgs(dev *kern.Device, cl tp.Clique, r int) []string {
	device := dev.Kind()
	if device == "cuda" {
		device = "cuda:" + strconv.Itoa(c.firstGPU()+r)
	}
	comm := "socket"
	if cl.NCCL {
		comm = "nccl"
	}
	return []string{"rank", "-model", c.model, "-device", device, "-tp", strconv.Itoa(cl.Size), "-rank", strconv.Itoa(r),
		"-tp-dir", cl.Dir, "-tp-comm", comm}
}

// rank is a follower process: ranks 1 … N-1 of a split model, started
// by rank 0 (not meant to be run by hand).
func rank(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("rank", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "model directory")
	device := fs.String("device", "", "this rank's device")
	size := fs.Int("tp", 0, "ranks in all")
	r := fs.Int("rank", 0, "this rank (1 … tp-1)")
	dir := fs.String("tp-dir", "", "rank 0's rendezvous directory")
	comm := fs.String("tp-comm", "socket", "socket or nccl")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *device != "" {
		os.Setenv("KERN_DEVICE", *device)
	}
	dev, err := kern.Open()
	if err != nil {
		return err
	}
	defer dev.Close()
	// Ctrl-C reaches the whole process group; rank 0 alone decides when
	// the ranks stop (it orders them to quit, or its connections close).
	ctx = context.WithoutCancel(ctx)
	return tp.Follow(ctx, dev, tp.Clique{Dir: *dir, Rank: *r, Size: *size, NCCL: *comm == "nccl"}, *model)
}
