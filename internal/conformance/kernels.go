// Package conformance is an end-to-end check of the kernel language: the
// kinds of kernels users write first (element-wise, a shared-memory
// transpose, reductions, atomics histograms, bit unpacking, helpers, local
// arrays, data-dependent loops), each run on every device and compared
// with a plain Go reference.
package conformance

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

const tile = 32

// Silu computes out[i] = x[i] * sigmoid(x[i]).
//
//kern:kernel block=256
func Silu(t gpu.Thread, x, out []float32) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = x[i] / (1 + gpu.Exp(-x[i]))
	}
}

// Transpose writes the transpose of in (rows×cols, row-major) to out
// (cols×rows) through a 32×33 shared tile: the padding column puts the
// column reads of a warp in 32 different banks.
//
//kern:kernel block=32x8
func Transpose(t gpu.Thread, in, out []float32, rows, cols int) {
	s := gpu.Shared[float32](t, tile*(tile+1))
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	bx, by := t.BlockIdx().X*tile, t.BlockIdx().Y*tile
	for j := 0; j < tile; j += 8 {
		r, c := by+ty+j, bx+tx
		if r < rows && c < cols {
			s[(ty+j)*(tile+1)+tx] = in[r*cols+c]
		}
	}
	t.Sync()
	for j := 0; j < tile; j += 8 {
		r, c := bx+ty+j, by+tx
		if r < cols && c < rows {
			out[r*rows+c] = s[tx*(tile+1)+ty+j]
		}
	}
}

// TransposeNoPad is Transpose with a 32×32 tile: its column reads hit one
// bank 32 times.
//
//kern:kernel block=32x8
func TransposeNoPad(t gpu.Thread, in, out []float32, rows, cols int) {
	s := gpu.Shared[float32](t, tile*tile)
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	bx, by := t.BlockIdx().X*tile, t.BlockIdx().Y*tile
	for j := 0; j < tile; j += 8 {
		r, c := by+ty+j, bx+tx
		if r < rows && c < cols {
			s[(ty+j)*tile+tx] = in[r*cols+c]
		}
	}
	t.Sync()
	for j := 0; j < tile; j += 8 {
		r, c := bx+ty+j, by+tx
		if r < cols && c < rows {
			out[r*rows+c] = s[tx*tile+ty+j]
		}
	}
}

// SumBlocks adds each block's elements with a shared-memory tree, then
// adds the block sums into out[0] atomically.
//
//kern:kernel block=256
func SumBlocks(t gpu.Thread, x []float32, out []float32) {
	s := gpu.Shared[float32](t, 256)
	tid := t.ThreadIdx().X
	v := float32(0)
	if i := t.GlobalX(); i < len(x) {
		v = x[i]
	}
	s[tid] = v
	t.Sync()
	for stride := 128; stride > 0; stride /= 2 {
		if tid < stride {
			s[tid] += s[tid+stride]
		}
		t.Sync()
	}
	if tid == 0 {
		gpu.AtomicAdd(&out[0], s[0])
	}
}

// WarpShuffleSum reduces each warp with shuffles and the block with
// gpu.BlockSum, writing one sum per block.
//
//kern:kernel block=128
func WarpShuffleSum(t gpu.Thread, x []int32, sums []int32) {
	v := int32(0)
	if i := t.GlobalX(); i < len(x) {
		v = x[i]
	}
	for off := 16; off > 0; off /= 2 {
		v += gpu.ShflDown(t, v, off)
	}
	w := gpu.ShflIdx(t, v, 0) // lane 0 holds the warp's sum
	b := gpu.BlockSum(t, w) / 32
	if t.ThreadIdx().X == 0 {
		sums[t.BlockIdx().X] = b
	}
}

// Histogram counts bytes into 256 bins, privatised per block in shared
// memory, then merged into hist with global atomics.
//
//kern:kernel block=256
func Histogram(t gpu.Thread, data []uint8, hist []uint32) {
	local := gpu.Shared[uint32](t, 256)
	local[t.ThreadIdx().X] = 0
	t.Sync()
	for i := t.GlobalX(); i < len(data); i += t.GridDim().X * t.BlockDim().X {
		gpu.AtomicAdd(&local[data[i]], 1)
	}
	t.Sync()
	if n := local[t.ThreadIdx().X]; n > 0 {
		gpu.AtomicAdd(&hist[t.ThreadIdx().X], n)
	}
}

// Unpack6 expands 6-bit values, four packed little-endian in each three
// bytes, to int32 in -32..31.
//
//kern:kernel block=128
func Unpack6(t gpu.Thread, packed []uint8, out []int32) {
	g := t.GlobalX()
	if 4*g >= len(out) {
		return
	}
	word := uint32(packed[3*g]) | uint32(packed[3*g+1])<<8 | uint32(packed[3*g+2])<<16
	for k := 0; k < 4 && 4*g+k < len(out); k++ {
		out[4*g+k] = signExtend6((word >> (6 * k)) & 0x3f)
	}
}

func signExtend6(v uint32) int32 { return int32(v<<26) >> 26 }

// SortNetwork sorts each group of 8 values with a local array and a
// helper, and writes each group's median (the mean of elements 3 and 4).
//
//kern:kernel block=64
func SortNetwork(t gpu.Thread, x []float32, medians []float32) {
	g := t.GlobalX()
	if g >= len(medians) {
		return
	}
	var v [8]float32
	for k := range 8 {
		v[k] = x[8*g+k]
	}
	insertionSort(&v)
	medians[g] = (v[3] + v[4]) / 2
}

func insertionSort(v *[8]float32) {
	for i := 1; i < len(v); i++ {
		x := v[i]
		j := i - 1
		for j >= 0 && v[j] > x {
			v[j+1] = v[j]
			j--
		}
		v[j+1] = x
	}
}

// Collatz counts steps to reach 1 from each start, giving up (-1) after
// limit steps: a data-dependent loop with break and a switch.
//
//kern:kernel block=64
func Collatz(t gpu.Thread, start []uint64, steps []int32, limit int32) {
	i := t.GlobalX()
	if i >= len(start) {
		return
	}
	n, s := start[i], int32(0)
	for {
		if n <= 1 {
			break
		}
		if s == limit {
			s = -1
			break
		}
		switch n % 2 {
		case 0:
			n /= 2
		default:
			n = 3*n + 1
		}
		s++
	}
	steps[i] = s
}

// ReverseRacy reverses each 64-element block through shared memory but
// forgets the barrier between the writes and the reads: racecheck finds it.
//
//kern:kernel block=64
func ReverseRacy(t gpu.Thread, x, out []float32) {
	s := gpu.Shared[float32](t, 64)
	i := t.ThreadIdx().X
	s[i] = x[t.GlobalX()]
	out[t.GlobalX()] = s[63-i]
}

// Reverse is ReverseRacy with its barrier.
//
//kern:kernel block=64
func Reverse(t gpu.Thread, x, out []float32) {
	s := gpu.Shared[float32](t, 64)
	i := t.ThreadIdx().X
	s[i] = x[t.GlobalX()]
	t.Sync()
	out[t.GlobalX()] = s[63-i]
}

// Gather reads x[idx[i]] without device bounds checks: an index past the
// end is found by memcheck instead.
//
//kern:kernel block=64 nobounds
func Gather(t gpu.Thread, x []float32, idx []int32, out []float32) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = x[idx[i]]
	}
}

// Strided copies out[i] = x[i*stride]: neighbouring lanes read words
// stride apart, so each 4-byte load uses one 32-byte sector.
//
//kern:kernel block=256
func Strided(t gpu.Thread, x, out []float32, stride int) {
	if i := t.GlobalX(); i < len(out) {
		out[i] = x[i*stride]
	}
}

// MatMulMMA computes C = A·B with tensor cores, one warp per 16×8 tile of
// C. A is m×k row-major f16, B is given transposed (bt, n×k row-major, so
// each of B's columns is contiguous), C is m×n row-major f32; m, n and k
// must be multiples of 16, 8 and 16 (the kernel does nothing when k is
// not: that also proves each fragment register's two halves 4-byte
// aligned, so each PackHalf2(a[i], a[i+1]) is one 32-bit load). Fragments
// are loaded straight from global memory per the layout in gpu/mma.go:
// lane = 4·g + tg holds A rows g and g+8, columns 2tg, 2tg+1 (+8), and B
// columns g, rows 2tg, 2tg+1 (+8).
//
//kern:kernel block=128 idx32
func MatMulMMA(t gpu.Thread, a, bt []gpu.Half, c []float32, m, n, k int) {
	if k%16 != 0 {
		return
	}
	warp := t.BlockIdx().X*4 + t.Warp()
	tilesN := n / 8
	tm, tn := warp/tilesN, warp%tilesN
	if tm*16 >= m {
		return
	}
	g, tg := t.Lane()/4, t.Lane()%4
	row, col := tm*16+g, tn*8+g
	var acc [4]float32
	for k0 := 0; k0 < k; k0 += 16 {
		ai := row*k + k0 + 2*tg
		bi := col*k + k0 + 2*tg
		frA := [4]uint32{
			gpu.PackHalf2(a[ai], a[ai+1]),
			gpu.PackHalf2(a[ai+8*k], a[ai+8*k+1]),
			gpu.PackHalf2(a[ai+8], a[ai+9]),
			gpu.PackHalf2(a[ai+8*k+8], a[ai+8*k+9]),
		}
		frB := [2]uint32{gpu.PackHalf2(bt[bi], bt[bi+1]), gpu.PackHalf2(bt[bi+8], bt[bi+9])}
		acc = gpu.MMAF16(t, frA, frB, acc)
	}
	ci := row*n + tn*8 + 2*tg
	c[ci], c[ci+1] = acc[0], acc[1]
	c[ci+8*n], c[ci+8*n+1] = acc[2], acc[3]
}
