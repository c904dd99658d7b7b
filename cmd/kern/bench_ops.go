//go:build !kerngen

package main

// kern bench ops: package ops' memory-bound kernels at one size each.
//
// On a GPU each op runs on a kern Stream between two kern events
// (Stream.Record, kern.Elapsed) and the figure is bandwidth: the bytes the
// op must move at least (every input read once, every output written
// once) / median time, and that as a % of the DRAM peak (2 × memory clock
// × bus width / 8, from cuda.DeviceInfo). A memory-bound op near 80–90%
// of peak is as fast as it can be. The default size, 16Mi elements (64 MiB
// of float32 per tensor), is far larger than any L2 cache, so the data
// really comes from DRAM.
//
// On the emulator the figure is instructions per element: the thread-
// instructions (one per lane that executed an instruction) all of the op's
// threads ran, counted by an emu.Observer in one extra run, divided by the
// elements. Unlike the emulator's wall time, which measures the
// interpreter, it is a property of the PTX kern emitted and does not depend
// on the machine. In native mode only the wall time means anything.
//
//	op          elements moved per element of x (cols = row length)
//	RMSNorm     read x, write out: 2 (and the weight, cols elements, once)
//	AddRMSNorm  read x and residual, write out and residualOut: 4 (and the weight)
//	Softmax     read x, write out: 2 (v2 reads x twice; the figure counts once)
//	SiLUMul     read gate and up, write out: 3
//	GELU        read x, write out: 2
//	Add         read a and b, write out: 3
//	RoPE        read x, write out: 2

import (
	"fmt"
	"math"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops"
)

func benchOps(env *benchEnv) error {
	switch env.cfg.opsDtype {
	case "f16":
		return benchOpsOf[gpu.Half](env, "f16")
	case "bf16":
		return benchOpsOf[gpu.BFloat16](env, "bf16")
	}
	return benchOpsOf[float32](env, "f32")
}

// opCase is one op, set up on a device with its buffers.
type opCase struct {
	name  string
	moved int // elements the op must read and write
	dev   *kern.Device
	run   func(q kern.Queue) error
}

// opsShape is the size the ops run at.
type opsShape struct {
	n, rows, cols  int
	heads, headDim int // RoPE: rows tokens × heads × headDim = n
}

func newOpsShape(env *benchEnv) (opsShape, error) {
	n, cols := env.cfg.opsN, env.cfg.opsCols
	gpuSized := env.isCUDA()
	if n == 0 {
		n = 1 << 12
		if gpuSized {
			n = 1 << 24
		}
	}
	if cols == 0 {
		cols = 256
		if gpuSized {
			cols = 4096
		}
	}
	cols = min(cols, n)
	if cols < 2 || cols%2 != 0 {
		return opsShape{}, fmt.Errorf("rows of %d elements: -cols (at most -n) must be even and at least 2, for RoPE's head dimension", cols)
	}
	rows := n / cols
	s := opsShape{n: rows * cols, rows: rows, cols: cols, heads: 1, headDim: cols}
	if cols%128 == 0 {
		s.heads, s.headDim = cols/128, 128
	}
	return s, nil
}

func benchOpsOf[T ops.Float](env *benchEnv, dtype string) error {
	sh, err := newOpsShape(env)
	if err != nil {
		return err
	}
	cases, free, err := setupOps[T](env.dev, sh)
	if err != nil {
		return err
	}
	defer free()
	// On the emulator, count instructions in one run on a second emulator
	// with an observer, so the timed runs pay nothing for counting.
	var counted []opCase
	steps := &stepCounter{}
	if env.dev.Kind() == "emu" {
		cdev := kern.OpenEmulator(emu.Options{Observer: steps})
		defer cdev.Close()
		var cfree func()
		if counted, cfree, err = setupOps[T](cdev, sh); err != nil {
			return err
		}
		defer cfree()
	}
	s, err := env.dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	size := fmtCount(sh.n) + " " + dtype
	esize := elemSize[T]()
	for i, c := range cases {
		sec, err := timeRuns(env.cfg, func() (time.Duration, error) {
			return timeOnStream(s, func() error { return c.run(s) })
		})
		if err != nil {
			// Go on with the other ops; the failure is reported at the end.
			env.failed = append(env.failed, fmt.Errorf("kern bench ops: %s: %w", c.name, err))
			continue
		}
		bytes := float64(c.moved * esize)
		row := benchRow{bench: "ops", name: c.name, size: size, time: sec, peak: math.NaN()}
		switch env.dev.Kind() {
		case "cuda":
			row.value, row.unit = bytes/sec/1e9, "GB/s"
			row.peak = env.pctOfPeak(bytes / sec)
		case "emu":
			warp0, thread0 := steps.load()
			if err := counted[i].run(counted[i].dev); err != nil {
				env.failed = append(env.failed, fmt.Errorf("kern bench ops: %s (counting): %w", c.name, err))
				continue
			}
			warp1, thread1 := steps.load()
			perElem := func(a, b uint64) float64 { return float64(b-a) / float64(sh.n) }
			row.value, row.unit = perElem(thread0, thread1), "thread-instr/elem"
			row.note = fmt.Sprintf("%.2f warp-instr/elem, %.2f M elem/s emulated", perElem(warp0, warp1), float64(sh.n)/sec/1e6)
		default:
			row.value, row.unit = bytes/sec/1e9, "GB/s"
		}
		env.add(row)
	}
	switch env.dev.Kind() {
	case "emu":
		env.notef("ops: on emu the time is the emulator's wall time, not a GPU's; instructions per element are what to compare")
	case "native":
		env.notef("ops: native mode runs the kernels' Go code on the CPU, one goroutine per thread: GB/s is not a GPU's")
	}
	return nil
}

// setupOps allocates the ops' buffers on dev, filled with a fixed pattern
// in [-1, 1], and returns the ops and a function freeing the buffers.
func setupOps[T ops.Float](dev *kern.Device, sh opsShape) ([]opCase, func(), error) {
	var bufs []*kern.Buffer[T]
	free := func() {
		for _, b := range bufs {
			b.Free()
		}
	}
	vals := make([]T, sh.n)
	for i := range vals {
		vals[i] = fromFloat[T](float32(i%17-8) / 8)
	}
	var err error
	alloc := func(n int, fill bool) *kern.Buffer[T] {
		if err != nil {
			return nil
		}
		var b *kern.Buffer[T]
		if fill {
			b, err = kern.Upload(dev, vals[:n])
		} else {
			b, err = kern.Alloc[T](dev, n)
		}
		if err == nil {
			bufs = append(bufs, b)
		}
		return b
	}
	n, rows, cols := sh.n, sh.rows, sh.cols
	x, y, w := alloc(n, true), alloc(n, true), alloc(cols, true)
	out, out2 := alloc(n, false), alloc(n, false)
	if err != nil {
		free()
		return nil, nil, err
	}
	const eps = 1e-6
	cases := []opCase{
		{name: "RMSNorm", moved: 2*n + cols, run: func(q kern.Queue) error { return ops.RMSNorm(q, out, x, w, rows, cols, eps) }},
		{name: "AddRMSNorm", moved: 4*n + cols, run: func(q kern.Queue) error {
			return ops.AddRMSNorm(q, out, out2, x, y, w, rows, cols, eps)
		}},
		{name: "Softmax", moved: 2 * n, run: func(q kern.Queue) error { return ops.Softmax(q, out, x, rows, cols) }},
		{name: "SiLUMul", moved: 3 * n, run: func(q kern.Queue) error { return ops.SiLUMul(q, out, x, y, n) }},
		{name: "GELU", moved: 2 * n, run: func(q kern.Queue) error { return ops.GELU(q, out, x, n) }},
		{name: "Add", moved: 3 * n, run: func(q kern.Queue) error { return ops.Add(q, out, x, y, n) }},
		{name: "RoPE", moved: 2 * n, run: func(q kern.Queue) error {
			return ops.RoPE(q, out, x, rows, sh.heads, sh.headDim, 0, 10000)
		}},
	}
	for i := range cases {
		cases[i].dev = dev
	}
	return cases, free, nil
}

func fromFloat[T ops.Float](v float32) T {
	var z T
	switch any(z).(type) {
	case gpu.Half:
		return any(gpu.ToHalf(v)).(T)
	case gpu.BFloat16:
		return any(gpu.ToBFloat16(v)).(T)
	}
	return any(v).(T)
}

func elemSize[T ops.Float]() int {
	var z T
	if _, ok := any(z).(float32); ok {
		return 4
	}
	return 2
}
