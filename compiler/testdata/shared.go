// Shared memory: static arrays, a transpose tile padded against bank
// conflicts, dynamic shared memory.
package shared

import "github.com/gokern/kern/gpu"

// Reverse reverses each block's 256 elements through shared memory.
//
//kern:kernel block=256
func Reverse(t gpu.Thread, x []float32) {
	s := gpu.Shared[float32](t, 256)
	tid := t.ThreadIdx().X
	i := t.GlobalX()
	if i < len(x) {
		s[tid] = x[i]
	}
	t.Sync()
	if i < len(x) {
		x[i] = s[255-tid]
	}
}

const tile = 32

// Transpose transposes a rows×cols matrix in 32×32 tiles; the tile has one
// extra column so a column read touches 32 different banks.
//
//kern:kernel block=32x8
func Transpose(t gpu.Thread, in []float32, rows, cols int, out []float32) {
	s := gpu.Shared[float32](t, tile*(tile+1))
	bx, by := t.BlockIdx().X*tile, t.BlockIdx().Y*tile
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
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

// TwoArrays declares two static arrays of different types.
//
//kern:kernel block=128
func TwoArrays(t gpu.Thread, x []float64, n []int32) {
	a := gpu.Shared[float64](t, 128)
	b := gpu.Shared[int32](t, 64)
	tid := t.ThreadIdx().X
	a[tid] = float64(tid)
	if tid < 64 {
		b[tid] = int32(tid)
	}
	t.Sync()
	i := t.GlobalX()
	if i < len(x) && i < len(n) {
		x[i] = a[127-tid]
		n[i] = b[tid%64]
	}
}

// Dynamic uses the shared memory sized at launch.
//
//kern:kernel
func Dynamic(t gpu.Thread, x []float32) {
	s := gpu.DynShared[float32](t)
	tid := t.ThreadIdx().X
	i := t.GlobalX()
	if tid < len(s) && i < len(x) {
		s[tid] = x[i] * 2
	}
	t.Sync()
	if tid < len(s) && i < len(x) {
		x[i] = s[len(s)-1-tid]
	}
}

// SharedInHelper allocates shared memory in a helper: one allocation per
// call site.
//
//kern:kernel block=64
func SharedInHelper(t gpu.Thread, x []int32) {
	a := scratch(t)
	tid := t.ThreadIdx().X
	a[tid] = int32(tid)
	t.Sync()
	if i := t.GlobalX(); i < len(x) {
		x[i] = a[63-tid]
	}
}

func scratch(t gpu.Thread) []int32 { return gpu.Shared[int32](t, 64) }
