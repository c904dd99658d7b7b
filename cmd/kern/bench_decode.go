//go:build !kerngen

package main

// kern bench matmul, decode rows: the weight-streaming matmuls of batch-1
// (and batch-16) decoding, on a model's projection shapes.
//
// At M = 1…16 a linear layer reads its whole weight to produce a few rows,
// so it is bound by memory: the figure is GB/s of weight bytes moved (the
// weight once, as stored: N·K·2 for bf16, N·K/2 + N·⌈K/128⌉·4 for W4A16's
// nibbles and group scales, N·K + N·4 for W8A8's bytes and channel
// scales) over the median time, and on a GPU that as a % of the DRAM
// peak. Activations and outputs (M·K and M·N elements) are left out: on
// Qwen3-4B's shapes they are under 0.3% of the weight's bytes at M = 1
// and up to 3.8% (W4A16 o) at M = 16.
//
// The projections of one layer, from -decode-dims (hidden, query heads,
// KV heads, head dim, intermediate; Qwen3-4B's 2560,32,8,128,9728 on a
// GPU):
//
//	qkv     N = (heads + 2·kvHeads)·headDim, K = hidden  (fused Q, K, V)
//	o       N = hidden, K = heads·headDim
//	gate/up N = 2·intermediate, K = hidden               (fused, SwiGLU's input)
//	down    N = hidden, K = intermediate
//
// and the formats:
//
//	bf16   ops.Matmul, bf16 x·Wᵀ → bf16
//	W4A16  ops.MatmulInt4, bf16 x, group-128 int4 W → bf16
//	W8A8   ops.MatmulInt8, int8 x (row scales), int8 W (channel scales) → bf16
//
// Each row's note names the kernel ops picked (ops.MatmulVersion,
// MatmulInt4Version, MatmulInt8Version). The bf16 rows come three times:
// the decode GEMV ops.Matmul runs ("gemv v2"), its first version ("gemv
// v1", ops.GEMVv1 set while it runs) in a row named "… (old)", and its
// v3 ("gemv v3 split S", ops.GEMVv3 set; S its splits of K on this GPU)
// in a row named "… (v3)"; on a GPU, v3 again at each other split count
// of 1, 2, 4 and 8 (ops.GEMVv3Splits) in rows "… (v3 split S)", the sweep
// that tunes v3's plan. A decoder's weights are far
// larger than any L2, so every layer reads its weight cold; a single
// projection (31 MB for Qwen3-4B's bf16 qkv) fits an H100's 50 MB L2, so
// on a GPU each timed run is preceded, outside its events, by an ops.Add
// over buffers of twice the L2 that evicts the weight. The "decode bf16
// layer" rows (bench_decode_layer.go) then time the four projections back
// to back, as a decode step runs them.

import (
	"fmt"
	"math"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops"
)

// decodeProj is one projection of a layer: c[M,N] = x[M,K]·W[N,K]ᵀ.
type decodeProj struct {
	name string
	n, k int
}

// decodeProjs derives a layer's projections from -decode-dims.
func decodeProjs(d [5]int) []decodeProj {
	hidden, heads, kvHeads, headDim, inter := d[0], d[1], d[2], d[3], d[4]
	return []decodeProj{
		{"qkv", (heads + 2*kvHeads) * headDim, hidden},
		{"o", hidden, heads * headDim},
		{"gate/up", 2 * inter, hidden},
		{"down", hidden, inter},
	}
}

// Qwen3-4B's dims, the GPU default, and a layer small enough for the
// emulator (K a multiple of 128, so every format runs its real path).
var (
	qwen3_4BDims  = [5]int{2560, 32, 8, 128, 9728}
	tinyDecodeDim = [5]int{256, 4, 2, 32, 384}
)

// decodeFormats are the weight formats of the decode rows.
var decodeFormats = []string{"bf16", "W4A16", "W8A8"}

// weightBytes is what a format stores for an N×K weight.
func weightBytes(format string, n, k int) float64 {
	switch format {
	case "W4A16":
		return float64(n*k/2 + n*((k+127)/128)*4)
	case "W8A8":
		return float64(n*k + n*4)
	}
	return float64(n * k * 2)
}

func benchDecode(env *benchEnv) error {
	dims := env.cfg.decodeDims
	if dims == [5]int{} {
		dims = tinyDecodeDim
		if env.isCUDA() {
			dims = qwen3_4BDims
		}
	}
	s, err := env.dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	l2 := 0
	if env.isCUDA() {
		l2 = env.info.L2CacheSize
	}
	flush, err := newL2Flush(env.dev, l2)
	if err != nil {
		return err
	}
	defer flush.free()
	for _, p := range decodeProjs(dims) {
		for _, format := range decodeFormats {
			for _, m := range env.cfg.decodeM {
				gs := []gemvKind{gemvCurrent}
				if format == "bf16" && m <= gemvMaxM {
					gs = append(gs, decodeGEMVs(env, m, p)...)
				}
				// Go on with the other cases; reported at the end.
				env.failed = append(env.failed, decodeCase(env, s, flush, p, format, m, gs)...)
			}
		}
	}
	env.failed = append(env.failed, benchDecodeLayers(env, s, flush, dims)...)
	env.notef("matmul: decode rows are %s's layer (-decode-dims %d,%d,%d,%d,%d); GB/s counts the weight's bytes as stored", decodeModel(dims), dims[0], dims[1], dims[2], dims[3], dims[4])
	if !env.isCUDA() {
		env.notef("matmul: on %s the decode shapes are small and GB/s measures that device, not a GPU", env.dev.Kind())
	}
	return nil
}

func decodeModel(d [5]int) string {
	switch d {
	case qwen3_4BDims:
		return "Qwen3-4B"
	case tinyDecodeDim:
		return "a tiny model"
	}
	return "the given model"
}

// gemvMaxM is the largest M ops.Matmul sends to its decode GEMV.
const gemvMaxM = 16

// gemvKind is which decode GEMV a bf16 row times: the one ops.Matmul
// runs, its first version (ops.GEMVv1) or its v3 (ops.GEMVv3), v3 with
// its own plan (splits 0) or a given number of splits of K.
type gemvKind struct{ version, splits int }

var (
	gemvCurrent = gemvKind{}
	gemvOld     = gemvKind{version: 1}
	gemvV3      = gemvKind{version: 3}
)

// suffix is the row name's tail for g.
func (g gemvKind) suffix() string {
	switch {
	case g == gemvOld:
		return " (old)"
	case g.version == 3 && g.splits > 0:
		return fmt.Sprintf(" (v3 split %d)", g.splits)
	case g.version == 3:
		return " (v3)"
	}
	return ""
}

// decodeSweep is the split counts of v3's sweep.
var decodeSweep = []int{1, 2, 4, 8}

// decodeGEMVs are the bf16 rows' GEMVs after the current one: v1 and v3,
// and on a GPU v3 at each split count of the sweep its plan does not
// already take.
func decodeGEMVs(env *benchEnv, m int, p decodeProj) []gemvKind {
	gs := []gemvKind{gemvOld, gemvV3}
	if !env.isCUDA() {
		return gs
	}
	ops.GEMVv3 = true
	defer func() { ops.GEMVv3 = false }()
	plan := ops.MatmulVersion(env.dev, m, p.n, p.k, ops.WeightNK)
	for _, sp := range decodeSweep {
		if plan != fmt.Sprintf("gemv v3 split %d", sp) && sp <= (p.k+31)/32 { // v3 takes no more splits than chunks of K
			gs = append(gs, gemvKind{version: 3, splits: sp})
		}
	}
	return gs
}

// decodeCase sets up one format at one projection and M and times it,
// for bf16 once per GEMV of gs (each in a row of its own, on the same
// buffers: a weight of up to 100 MB is made and uploaded once). It
// returns the errors of the rows that failed.
func decodeCase(env *benchEnv, s *kern.Stream, flush *l2Flush, p decodeProj, format string, m int, gs []gemvKind) []error {
	al := &allocs{dev: env.dev}
	defer al.free()
	n, k := p.n, p.k
	var run func() error
	var version string
	switch format {
	case "bf16":
		x, w, c := bf16Buf(al, m*k), bf16Buf(al, n*k), bf16Buf(al, m*n)
		run = func() error { return ops.Matmul(s, c, x, w, m, n, k, ops.MatmulOpts[gpu.BFloat16]{}) }
	case "W4A16":
		x, c := bf16Buf(al, m*k), bf16Buf(al, m*n)
		packed := filled(al, n*k/2, uint8(0x9a)) // nibbles 10 and 9: 2 and 1 after the -8
		scales := filled(al, n*((k+127)/128), float32(0x1p-7))
		version = ops.MatmulInt4Version(m, n, k)
		run = func() error { return ops.MatmulInt4(s, c, x, packed, scales, m, n, k) }
	case "W8A8":
		a, w := filled(al, m*k, int8(1)), filled(al, n*k, int8(-1))
		as, ws := filled(al, m, float32(0x1p-7)), filled(al, n, float32(0x1p-7))
		c := bf16Buf(al, m*n)
		version = ops.MatmulInt8Version(m, n, k)
		run = func() error { return ops.MatmulInt8(s, c, a, as, w, ws, m, n, k) }
	}
	var errs []error
	for _, g := range gs {
		name := "decode " + format + " " + p.name + g.suffix()
		err := al.err
		if err == nil {
			err = decodeRow(env, s, flush, name, format, m, n, k, g, version, run)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("kern bench matmul: %s m=%d: %w", name, m, err))
		}
	}
	return errs
}

// decodeRow times run (with g's GEMV knobs set for bf16) and adds its
// row.
func decodeRow(env *benchEnv, s *kern.Stream, flush *l2Flush, name, format string, m, n, k int, g gemvKind, version string, run func() error) error {
	if format == "bf16" {
		ops.GEMVv1, ops.GEMVv3, ops.GEMVv3Splits = g.version == 1, g.version == 3, g.splits
		defer func() { ops.GEMVv1, ops.GEMVv3, ops.GEMVv3Splits = false, false, 0 }()
		version = ops.MatmulVersion(env.dev, m, n, k, ops.WeightNK)
	}
	sec, err := timeRuns(env.cfg, func() (time.Duration, error) {
		if err := flush.run(s); err != nil {
			return 0, err
		}
		return timeOnStream(s, run)
	})
	if err != nil {
		return err
	}
	bytes := weightBytes(format, n, k)
	row := benchRow{bench: "matmul", name: name, size: fmt.Sprintf("%d×%d×%d", m, n, k),
		time: sec, value: bytes / sec / 1e9, unit: "GB/s", peak: math.NaN(), note: version}
	if env.isCUDA() {
		row.peak = env.pctOfPeak(bytes / sec)
	}
	env.add(row)
	return nil
}

// allocs collects a case's buffers: the first error stops further
// uploads, and free releases what was made.
type allocs struct {
	dev   *kern.Device
	err   error
	frees []func() error
}

func (a *allocs) free() {
	for _, f := range a.frees {
		f()
	}
}

// bf16Buf uploads n bfloat16s in [-0.25, 0.25].
func bf16Buf(al *allocs, n int) *kern.Buffer[gpu.BFloat16] {
	xs := make([]gpu.BFloat16, n)
	for i := range xs {
		xs[i] = gpu.ToBFloat16(float32(i%17-8) / 32)
	}
	return upload(al, xs)
}

// filled uploads n copies of v.
func filled[T gpu.Elem](al *allocs, n int, v T) *kern.Buffer[T] {
	xs := make([]T, n)
	for i := range xs {
		xs[i] = v
	}
	return upload(al, xs)
}

func upload[T gpu.Elem](al *allocs, xs []T) *kern.Buffer[T] {
	if al.err != nil {
		return nil
	}
	b, err := kern.Upload(al.dev, xs)
	if err != nil {
		al.err = err
		return nil
	}
	al.frees = append(al.frees, b.Free)
	return b
}

// l2Flush evicts the L2 before a timed run by reading a buffer of twice
// the L2's size (ops.Argmax over it: reads only, one int32 per row
// written). A flush that writes (an Add into a third buffer, as this
// bench first did) leaves the L2 full of dirty lines, and their write-back
// then competes with the timed kernel for DRAM: on an H100 that added
// 10–15 µs to every decode row. Clean lines are dropped for free. It is a
// no-op for an L2 of 0 bytes (off CUDA, or where the driver reports none).
type l2Flush struct {
	rows, cols int
	x          *kern.Buffer[float32]
	out        *kern.Buffer[int32]
}

// flushCols is the row length of the flush's Argmax.
const flushCols = 4096

func newL2Flush(dev *kern.Device, l2Bytes int) (*l2Flush, error) {
	f := &l2Flush{}
	if l2Bytes <= 0 {
		return f, nil
	}
	f.cols = flushCols
	f.rows = (2*l2Bytes/4 + flushCols - 1) / flushCols
	var err error
	if f.x, err = kern.Alloc[float32](dev, f.rows*f.cols); err == nil {
		f.out, err = kern.Alloc[int32](dev, f.rows)
	}
	if err != nil {
		f.free()
		return nil, fmt.Errorf("L2 flush buffers: %w", err)
	}
	return f, nil
}

func (f *l2Flush) run(q kern.Queue) error {
	if f.rows == 0 {
		return nil
	}
	return ops.Argmax(q, f.out, f.x, f.rows, f.cols)
}

func (f *l2Flush) free() {
	if f.x != nil {
		f.x.Free()
	}
	if f.out != nil {
		f.out.Free()
	}
}
