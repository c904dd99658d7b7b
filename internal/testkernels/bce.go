package testkernels

import "github.com/gokern/kern/gpu"

// Kernels whose bounds checks the range analysis removes, or must keep,
// depending on values only known at launch (bce_test.go in package kern
// runs them at shapes that make the kept checks fail).

// RowShift writes out[r*cols+j] = 2*row[(j+shift) % cols] over row r =
// x[r*cols:(r+1)*cols]: row[j] is proven (j < cols = len(row)); the
// shifted read, negative when shift is, keeps its check; so does out.
//
//kern:kernel block=64
func RowShift(t gpu.Thread, x, out []float32, cols, shift int) {
	r := t.BlockIdx().X
	row := x[r*cols : (r+1)*cols]
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		out[r*cols+j] = row[j] + 2*row[(j+shift)%cols]
	}
}

// TilePitch stages a 16×16 tile in shared memory with rows 17 apart
// (proven: ty, tx < 16 by block=16x4 and k < 16), then reads it back with
// a pitch chosen at launch (kept).
//
//kern:kernel block=16x4
func TilePitch(t gpu.Thread, x, out []float32, pitch int) {
	s := gpu.Shared[float32](t, 16*17)
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	for k := 0; k < 16; k += 4 {
		if i := (ty+k)*16 + tx; i < len(x) {
			s[(ty+k)*17+tx] = x[i]
		}
	}
	t.Sync()
	for k := 0; k < 16; k += 4 {
		if i := (ty+k)*16 + tx; i < len(out) {
			out[i] = s[tx*pitch+ty+k]
		}
	}
}

// ByteBins counts bytes into 200 shared bins: a byte indexes them, so only
// values of 200 and more fail (the check is kept); clearing bin tid&127
// and merging are proven.
//
//kern:kernel block=128
func ByteBins(t gpu.Thread, data []uint8, bins []uint32) {
	local := gpu.Shared[uint32](t, 200)
	tid := t.ThreadIdx().X
	local[tid&127] = 0
	if tid < 72 {
		local[tid+128] = 0
	}
	t.Sync()
	for i := t.GlobalX(); i < len(data); i += t.GridDim().X * t.BlockDim().X {
		gpu.AtomicAdd(&local[data[i]], 1)
	}
	t.Sync()
	for b := tid; b < len(local); b += t.BlockDim().X {
		if b < len(bins) {
			gpu.AtomicAdd(&bins[b], local[b])
		}
	}
}
