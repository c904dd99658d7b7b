// The //kern:kernel directive's options: block shapes in one, two and
// three dimensions, and nobounds.
package directive

import "github.com/gokern/kern/gpu"

//kern:kernel block=16x16
func Block2D(t gpu.Thread, m []float32, cols int) {
	r, c := t.GlobalY(), t.GlobalX()
	if c < cols && r*cols+c < len(m) && r >= 0 {
		m[r*cols+c] *= 2
	}
}

//kern:kernel block=8x8x4
func Block3D(t gpu.Thread, v []float32, nx, ny int) {
	x, y, z := t.GlobalX(), t.GlobalY(), t.GlobalZ()
	if k := (z*ny+y)*nx + x; k < len(v) && x < nx && y < ny {
		v[k] = float32(t.LinearIdx() + t.BlockDim().Z + t.GridDim().Y)
	}
}

//kern:kernel block=1024 nobounds
func BlockMax(t gpu.Thread, v []float32) {
	v[t.GlobalX()] = 1
}

//kern:kernel
func NoBlock(t gpu.Thread, v []float32) {
	if i := t.GlobalX(); i < len(v) {
		v[i] = 1
	}
}

// minblocks=1 adds .minnctapersm 1 after .maxntid.
//
//kern:kernel block=128 minblocks=1
func MinBlocks(t gpu.Thread, v []float32) {
	if i := t.GlobalX(); i < len(v) {
		v[i] = 2
	}
}

// maxregs=40 adds .maxnreg 40; unlike minblocks= it needs no block=.
//
//kern:kernel maxregs=40
func MaxRegs(t gpu.Thread, v []float32) {
	if i := t.GlobalX(); i < len(v) {
		v[i] = 3
	}
}
