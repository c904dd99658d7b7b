//go:build !kerngen

package main

// kern bench matmul, decode layer rows: a layer's four projections run back
// to back, as a decode step runs them.
//
// A projection timed alone (the rows of bench_decode.go) pays what one
// kernel costs before its first byte arrives and after its last: the
// grid's ramp, the first loads' latency, the reduction and the store. On
// an H100 that came to a fixed 15 µs a call for the GEMV (cuBLAS: 7 µs)
// against a marginal rate of 83% of the DRAM peak, so no projection of
// 21–100 MB could show more than 60% however well it streams. A decode
// step does not run a projection alone: its kernels follow each other, and
// with PDL one's ramp overlaps the previous one's tail. These rows time
// that: after one L2 flush, the four projections of L layers, each layer
// on weights of its own, in layer order; L is the fewest layers whose
// weights are twice the L2 (1 for Qwen3-4B, whose layer is 202 MB), so no
// weight is read from L2. Each call passes StaticWeights, as the engine
// does: under PDL a GEMV loads its first weights before it waits for the
// kernel before it. The figure is every weight byte over the pass's time,
// once launched from the stream and once replayed as a CUDA graph (the
// engine's decode step). It is the bandwidth a decode step's projections
// get, kernel boundaries included.

import (
	"fmt"
	"math"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops"
)

// layerProj is one projection of one layer copy: its own weight, the
// activations it reads and the output it writes.
type layerProj struct {
	p       decodeProj
	x, w, c *kern.Buffer[gpu.BFloat16]
}

// decodeLayers is how many copies of a layer of layerBytes the layer rows
// stream: the fewest whose weights are twice the L2, at least one.
func decodeLayers(layerBytes float64, l2 int) int {
	return max(1, int(math.Ceil(2*float64(l2)/layerBytes)))
}

// benchDecodeLayers adds the layer rows, one pair per M.
func benchDecodeLayers(env *benchEnv, s *kern.Stream, flush *l2Flush, dims [5]int) []error {
	projs := decodeProjs(dims)
	layerBytes := 0.0
	for _, p := range projs {
		layerBytes += weightBytes("bf16", p.n, p.k)
	}
	l2 := 0
	if env.isCUDA() {
		l2 = env.info.L2CacheSize
	}
	layers := decodeLayers(layerBytes, l2)
	var errs []error
	for _, m := range env.cfg.decodeM {
		if err := decodeLayerCase(env, s, flush, projs, layers, layerBytes, m); err != nil {
			errs = append(errs, fmt.Errorf("kern bench matmul: decode bf16 layer m=%d: %w", m, err))
		}
	}
	return errs
}

func decodeLayerCase(env *benchEnv, s *kern.Stream, flush *l2Flush, projs []decodeProj, layers int, layerBytes float64, m int) error {
	al := &allocs{dev: env.dev}
	defer al.free()
	// One x and one output per shape serve every layer: they are read
	// and written at M rows, a fraction of a percent of the weights.
	xs, cs := map[int]*kern.Buffer[gpu.BFloat16]{}, map[int]*kern.Buffer[gpu.BFloat16]{}
	var pass []layerProj
	for range layers {
		for _, p := range projs {
			if xs[p.k] == nil {
				xs[p.k] = bf16Buf(al, m*p.k)
			}
			if cs[p.n] == nil {
				cs[p.n] = bf16Buf(al, m*p.n)
			}
			pass = append(pass, layerProj{p: p, x: xs[p.k], w: bf16Buf(al, p.n*p.k), c: cs[p.n]})
		}
	}
	if al.err != nil {
		return al.err
	}
	run := func(q *kern.Stream) error {
		for _, lp := range pass {
			if err := ops.Matmul(q, lp.c, lp.x, lp.w, m, lp.p.n, lp.p.k, ops.MatmulOpts[gpu.BFloat16]{StaticWeights: true}); err != nil {
				return fmt.Errorf("%s: %w", lp.p.name, err)
			}
		}
		return nil
	}
	bytes := layerBytes * float64(layers)
	size := fmt.Sprintf("%d×layer×%d", m, layers) // rows of x × layers
	note := fmt.Sprintf("%s; qkv, o, gate/up, down back to back", ops.MatmulVersion(env.dev, m, pass[0].p.n, pass[0].p.k, ops.WeightNK))
	add := func(name string, sec float64) {
		row := benchRow{bench: "matmul", name: name, size: size, time: sec,
			value: bytes / sec / 1e9, unit: "GB/s", peak: math.NaN(),
			note: fmt.Sprintf("%s; %.1f µs a layer", note, sec/float64(layers)*1e6)}
		if env.isCUDA() {
			row.peak = env.pctOfPeak(bytes / sec)
		}
		env.add(row)
	}
	sec, err := timeRuns(env.cfg, func() (time.Duration, error) {
		if err := flush.run(s); err != nil {
			return 0, err
		}
		return timeOnStream(s, func() error { return run(s) })
	})
	if err != nil {
		return err
	}
	add("decode bf16 layer", sec)
	if !env.isCUDA() {
		return nil // a recorded graph off CUDA replays the same launches
	}
	g, err := s.Capture(run)
	if err != nil {
		return err
	}
	defer g.Close()
	sec, err = timeRuns(env.cfg, func() (time.Duration, error) {
		if err := flush.run(s); err != nil {
			return 0, err
		}
		return timeOnStream(s, func() error { return g.Launch(s) })
	})
	if err != nil {
		return err
	}
	add("decode bf16 layer (graph)", sec)
	return nil
}
