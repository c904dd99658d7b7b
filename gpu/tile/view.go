package tile

import "github.com/gokern/kern/gpu"

// Codec converts between a storage element type T and float32, the type
// tiles compute in. F32, F16 and BF16 are the codecs; the methods are
// unexported so that only they exist.
type Codec[T any] interface {
	~struct{}
	load(T) float32
	store(float32) T
}

// F32 stores float32 as is.
type F32 struct{}

// F16 stores IEEE half precision (gpu.Half), rounding to nearest even.
type F16 struct{}

// BF16 stores bfloat16 (gpu.BFloat16), rounding to nearest even.
type BF16 struct{}

// I8 stores int8: Store rounds to nearest even and saturates to
// [-128, 127] (NaN stores 0), as cvt.rni.sat.s8.f32 does; Load is exact.
// Scaling (quantization) is the kernel's: multiply before the Store.
type I8 struct{}

func (F32) load(v float32) float32        { return v }
func (F32) store(v float32) float32       { return v }
func (F16) load(v gpu.Half) float32       { return v.Float32() }
func (F16) store(v float32) gpu.Half      { return gpu.ToHalf(v) }
func (BF16) load(v gpu.BFloat16) float32  { return v.Float32() }
func (BF16) store(v float32) gpu.BFloat16 { return gpu.ToBFloat16(v) }
func (I8) load(v int8) float32            { return float32(v) }

func (I8) store(v float32) int8 {
	if v != v {
		return 0
	}
	v = min(max(v, -128), 127)
	// Adding and subtracting 1.5·2^23 rounds |v| < 2^22 to an integer,
	// to nearest even, in float32 arithmetic (exact on every device).
	return int8((v + 0x1.8p23) - 0x1.8p23)
}

// In is a read-only view of input elements (a row, a vector, a matrix).
// Nothing in this package writes through it, and the compiler rejects a
// kernel that writes an In or the slice it views (WriteToInput).
type In[T any, C Codec[T]] []T

// Input views s as a read-only input with codec C.
func Input[C Codec[T], T any](s []T) In[T, C] { return In[T, C](s) }

// Row returns row r of v viewed as a row-major matrix with rows of cols
// elements; a row past the end is short or empty.
func (v In[T, C]) Row(r, cols int) In[T, C] {
	lo := min(r*cols, len(v))
	return v[lo:min(lo+cols, len(v))]
}

// Part is the calling block's partition of an output: one row of it. Its
// elements are the only ones of the output the block can reach, so two
// blocks never write the same element (indexes are bounds-checked, as any
// slice's).
type Part[T any, C Codec[T]] []T

// Rows partitions s, a row-major matrix of rows of cols elements, one row
// per block, and returns the calling block's: row RowOf(t). A block past
// the last row gets an empty partition (its stores do nothing).
func Rows[C Codec[T], T any](t gpu.Thread, s []T, cols int) Part[T, C] {
	lo := min(RowOf(t)*cols, len(s))
	return Part[T, C](s[lo:min(lo+cols, len(s))])
}

// RowOf is the index of the row the calling block owns in a Rows
// partition, for reading the same row of an input: the block's linear
// index in the grid, so that blocks of a 2-D or 3-D grid own different
// rows too.
func RowOf(t gpu.Thread) int {
	b, g := t.BlockIdx(), t.GridDim()
	return b.X + g.X*(b.Y+g.Y*b.Z)
}

// Load loads v into a row tile: element e of the tile is v[e] for
// e < len(v), and fill past its end (the mask of a ragged edge).
func Load[R Regs, T any, C Codec[T]](t gpu.Thread, v In[T, C], fill float32) Row[R] {
	var c C
	var r Row[R]
	tid, b := t.ThreadIdx().X, t.BlockDim().X
	//kern:unroll
	for j := range len(r.v) {
		if e := j*b + tid; e < len(v) {
			r.v[j] = c.load(v[e])
		} else {
			r.v[j] = fill
		}
	}
	return r
}

// Store writes the first len(p) elements of r to the block's partition.
func Store[R Regs, T any, C Codec[T]](t gpu.Thread, p Part[T, C], r Row[R]) {
	var c C
	tid, b := t.ThreadIdx().X, t.BlockDim().X
	//kern:unroll
	for j := range len(r.v) {
		if e := j*b + tid; e < len(p) {
			p[e] = c.store(r.v[j])
		}
	}
}
