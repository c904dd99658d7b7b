package ops

// Benchmarks: each op once on the emulator at a moderate size (64k
// elements where the op allows), reporting wall time, elements per second
// ("elem/s") and the bytes the op must move ("MB/s", from b.SetBytes).
// On the emulator these measure the interpreter, not a GPU: see
// docs/performance-ops.md. Run with
//
//	go test -run '^$' -bench . ./ops

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gokern/kern"
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

// bench times op, which processes elems elements and moves bytes bytes.
func bench(b *testing.B, elems, bytes int, op func() error) {
	b.Helper()
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
}

func benchBuf[T Float](b *testing.B, n int) *kern.Buffer[T] {
	buf, _ := upload[T](b, benchDev, randn(rand.New(rand.NewPCG(uint64(n), 1)), n, 1))
	return buf
}

const (
	benchRows, benchCols = 64, 1024 // 64k elements
	benchN               = benchRows * benchCols
)

func BenchmarkRMSNorm(b *testing.B) {
	x, w, out := benchBuf[float32](b, benchN), benchBuf[float32](b, benchCols), alloc[float32](b, benchDev, benchN)
	bench(b, benchN, 8*benchN, func() error { return RMSNorm(benchDev, out, x, w, benchRows, benchCols, 1e-6) })
}

func BenchmarkRMSNormBF16(b *testing.B) {
	x, w, out := benchBuf[gpu.BFloat16](b, benchN), benchBuf[gpu.BFloat16](b, benchCols), alloc[gpu.BFloat16](b, benchDev, benchN)
	bench(b, benchN, 4*benchN, func() error { return RMSNorm(benchDev, out, x, w, benchRows, benchCols, 1e-6) })
}

func BenchmarkHeadRMSNorm(b *testing.B) {
	const tokens, heads, dim = 16, 32, 128
	x, w, out := benchBuf[float32](b, benchN), benchBuf[float32](b, dim), alloc[float32](b, benchDev, benchN)
	bench(b, benchN, 8*benchN, func() error { return HeadRMSNorm(benchDev, out, x, w, tokens, heads, dim, 1e-6) })
}

func BenchmarkAddRMSNorm(b *testing.B) {
	x, r, w := benchBuf[float32](b, benchN), benchBuf[float32](b, benchN), benchBuf[float32](b, benchCols)
	out, ro := alloc[float32](b, benchDev, benchN), alloc[float32](b, benchDev, benchN)
	bench(b, benchN, 16*benchN, func() error { return AddRMSNorm(benchDev, out, ro, x, r, w, benchRows, benchCols, 1e-6) })
}

func BenchmarkLayerNorm(b *testing.B) {
	x, w, bias, out := benchBuf[float32](b, benchN), benchBuf[float32](b, benchCols), benchBuf[float32](b, benchCols), alloc[float32](b, benchDev, benchN)
	bench(b, benchN, 8*benchN, func() error { return LayerNorm(benchDev, out, x, w, bias, benchRows, benchCols, 1e-6) })
}

func BenchmarkSoftmax(b *testing.B) {
	x, out := benchBuf[float32](b, benchN), alloc[float32](b, benchDev, benchN)
	bench(b, benchN, 8*benchN, func() error { return Softmax(benchDev, out, x, benchRows, benchCols) })
}

func BenchmarkSoftmaxThreeSweep(b *testing.B) {
	x, out := benchBuf[float32](b, benchN), alloc[float32](b, benchDev, benchN)
	bench(b, benchN, 8*benchN, func() error { return softmax(softmax3K, "softmax", benchDev, out, x, benchRows, benchCols) })
}

func BenchmarkRoPE(b *testing.B) {
	const tokens, heads, dim = 16, 32, 128
	x, out := benchBuf[float32](b, benchN), alloc[float32](b, benchDev, benchN)
	bench(b, benchN, 8*benchN, func() error { return RoPE(benchDev, out, x, tokens, heads, dim, 1000, 1e6) })
}

func BenchmarkSiLUMul(b *testing.B) {
	g, u, out := benchBuf[float32](b, benchN), benchBuf[float32](b, benchN), alloc[float32](b, benchDev, benchN)
	bench(b, benchN, 12*benchN, func() error { return SiLUMul(benchDev, out, g, u, benchN) })
}

func BenchmarkGELU(b *testing.B) {
	x, out := benchBuf[float32](b, benchN), alloc[float32](b, benchDev, benchN)
	bench(b, benchN, 8*benchN, func() error { return GELU(benchDev, out, x, benchN) })
}

func BenchmarkGELUTanh(b *testing.B) {
	x, out := benchBuf[float32](b, benchN), alloc[float32](b, benchDev, benchN)
	bench(b, benchN, 8*benchN, func() error { return GELUTanh(benchDev, out, x, benchN) })
}

func BenchmarkAdd(b *testing.B) {
	x, y, out := benchBuf[float32](b, benchN), benchBuf[float32](b, benchN), alloc[float32](b, benchDev, benchN)
	bench(b, benchN, 12*benchN, func() error { return Add(benchDev, out, x, y, benchN) })
}

func BenchmarkMulBF16(b *testing.B) {
	x, y, out := benchBuf[gpu.BFloat16](b, benchN), benchBuf[gpu.BFloat16](b, benchN), alloc[gpu.BFloat16](b, benchDev, benchN)
	bench(b, benchN, 6*benchN, func() error { return Mul(benchDev, out, x, y, benchN) })
}

func BenchmarkScale(b *testing.B) {
	x, out := benchBuf[float32](b, benchN), alloc[float32](b, benchDev, benchN)
	bench(b, benchN, 8*benchN, func() error { return Scale(benchDev, out, x, 0.5, benchN) })
}

func BenchmarkCastF32ToBF16(b *testing.B) {
	x, out := benchBuf[float32](b, benchN), alloc[gpu.BFloat16](b, benchDev, benchN)
	bench(b, benchN, 6*benchN, func() error { return Cast(benchDev, out, x, benchN) })
}

func BenchmarkEmbedding(b *testing.B) {
	const vocab, tokens = 4096, benchRows
	table, out := benchBuf[float32](b, vocab*benchCols), alloc[float32](b, benchDev, benchN)
	ids := make([]int32, tokens)
	for j := range ids {
		ids[j] = int32(j * 61 % vocab)
	}
	idBuf := uploadT(b, benchDev, ids)
	bench(b, benchN, 8*benchN, func() error { return Embedding(benchDev, out, table, idBuf, vocab, benchCols) })
}

func BenchmarkArgmax(b *testing.B) {
	const rows, cols = 4, benchN / 4 // 16k: two stages
	x, out := benchBuf[float32](b, benchN), alloc[int32](b, benchDev, rows)
	bench(b, benchN, 4*benchN, func() error { return Argmax(benchDev, out, x, rows, cols) })
}

func BenchmarkArgmaxOneStage(b *testing.B) {
	const rows, cols = 4, benchN / 4
	x, out := benchBuf[float32](b, benchN), alloc[int32](b, benchDev, rows)
	bench(b, benchN, 4*benchN, func() error { return argmax(1, benchDev, out, x, rows, cols) })
}

func BenchmarkSampleTemperature(b *testing.B) {
	const rows, cols = 4, benchN / 4
	x, out := benchBuf[float32](b, benchN), alloc[int32](b, benchDev, rows)
	p := Sampling{Temperature: 0.8, Seed: 1}
	bench(b, benchN, 3*4*benchN, func() error { return Sample(benchDev, out, x, rows, cols, p) })
}

func BenchmarkSampleTopKTopP(b *testing.B) {
	const rows, cols = 4, benchN / 4
	x, out := benchBuf[float32](b, benchN), alloc[int32](b, benchDev, rows)
	p := Sampling{Temperature: 0.8, TopK: 50, TopP: 0.9, Seed: 1}
	bench(b, benchN, 67*4*benchN, func() error { return Sample(benchDev, out, x, rows, cols, p) })
}

func BenchmarkDequantInt8Rows(b *testing.B) {
	w, s := uploadT(b, benchDev, make([]int8, benchN)), uploadT(b, benchDev, make([]float32, benchRows))
	out := alloc[gpu.BFloat16](b, benchDev, benchN)
	bench(b, benchN, 3*benchN, func() error { return DequantInt8Rows(benchDev, out, w, s, benchRows, benchCols) })
}

func BenchmarkDequantInt4(b *testing.B) {
	p, s := uploadT(b, benchDev, make([]uint8, benchN/2)), uploadT(b, benchDev, make([]float32, benchN/Int4Group))
	out := alloc[gpu.BFloat16](b, benchDev, benchN)
	bench(b, benchN, benchN/2+2*benchN, func() error { return DequantInt4(benchDev, out, p, s, benchRows, benchCols) })
}

func BenchmarkDequantQ6(b *testing.B) {
	p, s := uploadT(b, benchDev, make([]uint8, benchN/4*3)), uploadT(b, benchDev, make([]float32, benchN/Q6Group))
	out := alloc[gpu.BFloat16](b, benchDev, benchN)
	bench(b, benchN, benchN*3/4+2*benchN, func() error { return DequantQ6(benchDev, out, p, s, benchRows, benchCols) })
}
