package ops

// Benchmarks: each op on the emulator at a moderate size (64k elements
// where the op allows), reporting wall time, elements per second
// ("elem/s"), the bytes the op must move ("MB/s", from b.SetBytes) and,
// on the emulator, the warp-instructions it executed per element
// ("warp-instr/elem", counted by an emu.Observer in one extra run: unlike
// wall time it does not depend on the machine's load). On the emulator
// these measure the interpreter, not a GPU: see docs/performance-ops.md.
// Run with
//
//	go test -run '^$' -bench . ./ops
//
// or with KERN_DEVICE=cuda on a GPU.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

// benchDev is the device the benchmarks run on: the emulator, or the
// device $KERN_DEVICE names (cuda for a GPU).
var benchDev = func() *kern.Device {
	if os.Getenv("KERN_DEVICE") == "" {
		return kern.OpenEmulator()
	}
	dev, err := kern.Open()
	if err != nil {
		panic(err)
	}
	return dev
}()

// stepCounter counts warp-instructions.
type stepCounter struct{ n atomic.Uint64 }

func (c *stepCounter) Step(*emu.Step)     { c.n.Add(1) }
func (c *stepCounter) Access(*emu.Access) {}

// bench times one op: setup allocates its buffers on dev and returns the
// op, which processes elems elements and moves bytes bytes.
func bench(b *testing.B, elems, bytes int, setup func(dev *kern.Device) func() error) {
	b.Helper()
	var steps stepCounter
	if benchDev.Kind() == "emu" {
		if err := setup(kern.OpenEmulator(emu.Options{Observer: &steps}))(); err != nil {
			b.Fatal(err)
		}
	}
	op := setup(benchDev)
	if err := op(); err != nil { // warm up: loads the module
		b.Fatal(err)
	}
	b.SetBytes(int64(bytes))
	b.ResetTimer()
	for b.Loop() {
		if err := op(); err != nil {
			b.Fatal(err)
		}
		if err := benchDev.Sync(); err != nil { // a GPU queues launches
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(elems)*float64(b.N)/b.Elapsed().Seconds(), "elem/s")
	if n := steps.n.Load(); n > 0 {
		b.ReportMetric(float64(n)/float64(elems), "warp-instr/elem")
	}
}

func benchBuf[T Float](b *testing.B, dev *kern.Device, n int) *kern.Buffer[T] {
	buf, _ := upload[T](b, dev, randn(rand.New(rand.NewPCG(uint64(n), 1)), n, 1))
	return buf
}

const (
	benchRows, benchCols = 64, 1024 // 64k elements
	benchN               = benchRows * benchCols
)

func BenchmarkRMSNorm(b *testing.B) {
	bench(b, benchN, 8*benchN, func(dev *kern.Device) func() error {
		x, w, out := benchBuf[float32](b, dev, benchN), benchBuf[float32](b, dev, benchCols), alloc[float32](b, dev, benchN)
		return func() error { return RMSNorm(dev, out, x, w, benchRows, benchCols, 1e-6) }
	})
}

// BenchmarkRMSNormVersions times v1 (block per row) and v2 (warp per row)
// on rows of 128 (a head) and 1024.
func BenchmarkRMSNormVersions(b *testing.B) {
	for _, cols := range []int{128, 1024} {
		rows := benchN / cols
		for _, v := range []int{rmsV1Block, rmsV2Warp} {
			b.Run(fmt.Sprintf("cols=%d/v%d", cols, v), func(b *testing.B) {
				bench(b, benchN, 8*benchN, func(dev *kern.Device) func() error {
					x, w, out := benchBuf[float32](b, dev, benchN), benchBuf[float32](b, dev, cols), alloc[float32](b, dev, benchN)
					return func() error { return rmsNorm(newShape("RMSNorm"), v, dev, out, x, w, rows, cols, 1e-6) }
				})
			})
		}
	}
}

func BenchmarkRMSNormBF16(b *testing.B) {
	bench(b, benchN, 4*benchN, func(dev *kern.Device) func() error {
		x, w, out := benchBuf[gpu.BFloat16](b, dev, benchN), benchBuf[gpu.BFloat16](b, dev, benchCols), alloc[gpu.BFloat16](b, dev, benchN)
		return func() error { return RMSNorm(dev, out, x, w, benchRows, benchCols, 1e-6) }
	})
}

func BenchmarkHeadRMSNorm(b *testing.B) {
	const tokens, heads, dim = 16, 32, 128
	bench(b, benchN, 8*benchN, func(dev *kern.Device) func() error {
		x, w, out := benchBuf[float32](b, dev, benchN), benchBuf[float32](b, dev, dim), alloc[float32](b, dev, benchN)
		return func() error { return HeadRMSNorm(dev, out, x, w, tokens, heads, dim, 1e-6) }
	})
}

func BenchmarkAddRMSNorm(b *testing.B) {
	bench(b, benchN, 16*benchN, func(dev *kern.Device) func() error {
		x, r, w := benchBuf[float32](b, dev, benchN), benchBuf[float32](b, dev, benchN), benchBuf[float32](b, dev, benchCols)
		out, ro := alloc[float32](b, dev, benchN), alloc[float32](b, dev, benchN)
		return func() error { return AddRMSNorm(dev, out, ro, x, r, w, benchRows, benchCols, 1e-6) }
	})
}

func BenchmarkLayerNorm(b *testing.B) {
	bench(b, benchN, 8*benchN, func(dev *kern.Device) func() error {
		x, w, bias := benchBuf[float32](b, dev, benchN), benchBuf[float32](b, dev, benchCols), benchBuf[float32](b, dev, benchCols)
		out := alloc[float32](b, dev, benchN)
		return func() error { return LayerNorm(dev, out, x, w, bias, benchRows, benchCols, 1e-6) }
	})
}

// BenchmarkSoftmaxVersions times v1 (three sweeps) and v2 (online).
func BenchmarkSoftmaxVersions(b *testing.B) {
	for v, k := range []kset{softmax3K, softmaxK} {
		b.Run(fmt.Sprintf("v%d", v+1), func(b *testing.B) {
			bench(b, benchN, 8*benchN, func(dev *kern.Device) func() error {
				x, out := benchBuf[float32](b, dev, benchN), alloc[float32](b, dev, benchN)
				return func() error { return softmax(k, "softmax", dev, out, x, benchRows, benchCols) }
			})
		})
	}
}

func BenchmarkRoPE(b *testing.B) {
	const tokens, heads, dim = 16, 32, 128
	bench(b, benchN, 8*benchN, func(dev *kern.Device) func() error {
		x, out := benchBuf[float32](b, dev, benchN), alloc[float32](b, dev, benchN)
		return func() error { return RoPE(dev, out, x, tokens, heads, dim, 1000, 1e6) }
	})
}

func BenchmarkSiLUMul(b *testing.B) {
	bench(b, benchN, 12*benchN, func(dev *kern.Device) func() error {
		g, u, out := benchBuf[float32](b, dev, benchN), benchBuf[float32](b, dev, benchN), alloc[float32](b, dev, benchN)
		return func() error { return SiLUMul(dev, out, g, u, benchN) }
	})
}

func BenchmarkGELU(b *testing.B) {
	bench(b, benchN, 8*benchN, func(dev *kern.Device) func() error {
		x, out := benchBuf[float32](b, dev, benchN), alloc[float32](b, dev, benchN)
		return func() error { return GELU(dev, out, x, benchN) }
	})
}

func BenchmarkGELUTanh(b *testing.B) {
	bench(b, benchN, 8*benchN, func(dev *kern.Device) func() error {
		x, out := benchBuf[float32](b, dev, benchN), alloc[float32](b, dev, benchN)
		return func() error { return GELUTanh(dev, out, x, benchN) }
	})
}

func BenchmarkAdd(b *testing.B) {
	bench(b, benchN, 12*benchN, func(dev *kern.Device) func() error {
		x, y, out := benchBuf[float32](b, dev, benchN), benchBuf[float32](b, dev, benchN), alloc[float32](b, dev, benchN)
		return func() error { return Add(dev, out, x, y, benchN) }
	})
}

func BenchmarkMulBF16(b *testing.B) {
	bench(b, benchN, 6*benchN, func(dev *kern.Device) func() error {
		x, y, out := benchBuf[gpu.BFloat16](b, dev, benchN), benchBuf[gpu.BFloat16](b, dev, benchN), alloc[gpu.BFloat16](b, dev, benchN)
		return func() error { return Mul(dev, out, x, y, benchN) }
	})
}

func BenchmarkScale(b *testing.B) {
	bench(b, benchN, 8*benchN, func(dev *kern.Device) func() error {
		x, out := benchBuf[float32](b, dev, benchN), alloc[float32](b, dev, benchN)
		return func() error { return Scale(dev, out, x, 0.5, benchN) }
	})
}

func BenchmarkCastF32ToBF16(b *testing.B) {
	bench(b, benchN, 6*benchN, func(dev *kern.Device) func() error {
		x, out := benchBuf[float32](b, dev, benchN), alloc[gpu.BFloat16](b, dev, benchN)
		return func() error { return Cast(dev, out, x, benchN) }
	})
}

func BenchmarkEmbedding(b *testing.B) {
	const vocab, tokens = 4096, benchRows
	ids := make([]int32, tokens)
	for j := range ids {
		ids[j] = int32(j * 61 % vocab)
	}
	bench(b, benchN, 8*benchN, func(dev *kern.Device) func() error {
		table, out, idBuf := benchBuf[float32](b, dev, vocab*benchCols), alloc[float32](b, dev, benchN), uploadT(b, dev, ids)
		return func() error { return Embedding(dev, out, table, idBuf, vocab, benchCols) }
	})
}

// BenchmarkArgmaxVersions times v1 (block per row) and v2 (two stages) on
// 4 rows of 16k.
func BenchmarkArgmaxVersions(b *testing.B) {
	const rows, cols = 4, benchN / 4
	for v := 1; v <= 2; v++ {
		b.Run(fmt.Sprintf("v%d", v), func(b *testing.B) {
			bench(b, benchN, 4*benchN, func(dev *kern.Device) func() error {
				x, out := benchBuf[float32](b, dev, benchN), alloc[int32](b, dev, rows)
				return func() error { return argmax(v, dev, out, x, rows, cols) }
			})
		})
	}
}

// BenchmarkSample times sampling 4 rows of 16k logits with temperature
// only (3 sweeps of the row) and with top-k and top-p (67 sweeps).
func BenchmarkSample(b *testing.B) {
	const rows, cols = 4, benchN / 4
	for _, c := range []struct {
		name   string
		sweeps int
		p      Sampling
	}{
		{"temperature", 3, Sampling{Temperature: 0.8, Seed: 1}},
		{"topk-topp", 67, Sampling{Temperature: 0.8, TopK: 50, TopP: 0.9, Seed: 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			bench(b, benchN, c.sweeps*4*benchN, func(dev *kern.Device) func() error {
				x, out := benchBuf[float32](b, dev, benchN), alloc[int32](b, dev, rows)
				return func() error { return Sample(dev, out, x, rows, cols, c.p) }
			})
		})
	}
}

func BenchmarkDequantInt8Rows(b *testing.B) {
	bench(b, benchN, 3*benchN, func(dev *kern.Device) func() error {
		w, s := uploadT(b, dev, make([]int8, benchN)), uploadT(b, dev, make([]float32, benchRows))
		out := alloc[gpu.BFloat16](b, dev, benchN)
		return func() error { return DequantInt8Rows(dev, out, w, s, benchRows, benchCols) }
	})
}

func BenchmarkDequantInt4(b *testing.B) {
	bench(b, benchN, benchN/2+2*benchN, func(dev *kern.Device) func() error {
		p, s := uploadT(b, dev, make([]uint8, benchN/2)), uploadT(b, dev, make([]float32, benchN/Int4Group))
		out := alloc[gpu.BFloat16](b, dev, benchN)
		return func() error { return DequantInt4(dev, out, p, s, benchRows, benchCols) }
	})
}

func BenchmarkDequantQ6(b *testing.B) {
	bench(b, benchN, benchN*3/4+2*benchN, func(dev *kern.Device) func() error {
		p, s := uploadT(b, dev, make([]uint8, benchN/4*3)), uploadT(b, dev, make([]float32, benchN/Q6Group))
		out := alloc[gpu.BFloat16](b, dev, benchN)
		return func() error { return DequantQ6(dev, out, p, s, benchRows, benchCols) }
	})
}
