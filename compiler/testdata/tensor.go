// Tensor cores (mma.sync), ldmatrix from shared memory and cp.async.
package tensor

import "github.com/gokern/kern/gpu"

//kern:kernel block=32
func MMA(t gpu.Thread, a []uint32, b []uint32, c []float32, d []int32) {
	lane := t.Lane()
	var af [4]uint32
	var bf [2]uint32
	var cf [4]float32
	var ci [4]int32
	if 4*lane+3 < len(a) && 2*lane+1 < len(b) && 4*lane+3 < len(c) && 4*lane+3 < len(d) {
		af = [4]uint32{a[4*lane], a[4*lane+1], a[4*lane+2], a[4*lane+3]}
		bf = [2]uint32{b[2*lane], b[2*lane+1]}
		cf = [4]float32{c[4*lane], c[4*lane+1], c[4*lane+2], c[4*lane+3]}
		ci = [4]int32{d[4*lane], d[4*lane+1], d[4*lane+2], d[4*lane+3]}
	}
	f16 := gpu.MMAF16(t, af, bf, cf)
	bf16 := gpu.MMABF16(t, af, bf, f16)
	s8 := gpu.MMAS8(t, af, bf, ci)
	if 4*lane+3 < len(c) && 4*lane+3 < len(d) {
		for k := range 4 {
			c[4*lane+k] = bf16[k]
			d[4*lane+k] = s8[k]
		}
	}
}

// LdMatrix loads fragments from a shared tile of 16-bit values.
//
//kern:kernel block=32
func LdMatrix(t gpu.Thread, x []gpu.Half, out []uint32) {
	s := gpu.Shared[gpu.Half](t, 32*8)
	lane := t.Lane()
	for k := 0; k < 8; k++ {
		if j := k*32 + lane; j < len(x) {
			s[j] = x[j]
		}
	}
	t.Sync()
	row := &s[(lane%32)*8]
	r1 := gpu.LdMatrixX1(t, row)
	r2 := gpu.LdMatrixX2(t, row)
	r4 := gpu.LdMatrixX4(t, row)
	t1 := gpu.LdMatrixX1Trans(t, row)
	t2 := gpu.LdMatrixX2Trans(t, row)
	t4 := gpu.LdMatrixX4Trans(t, row)
	if lane < len(out) {
		out[lane] = r1 ^ r2[1] ^ r4[3] ^ t1 ^ t2[0] ^ t4[2]
	}
}

// CpAsync stages global data in shared memory with async copies of every
// size, then waits.
//
//kern:kernel block=64
func CpAsync(t gpu.Thread, x []float32, out []float32) {
	s := gpu.Shared[float32](t, 64*4)
	tid := t.ThreadIdx().X
	base := t.BlockIdx().X * 64 * 4
	if base+4*tid+3 < len(x) && base >= 0 {
		gpu.CpAsync(t, &s[4*tid], &x[base+4*tid], 16)
		gpu.CpAsync(t, &s[4*tid], &x[base+4*tid], 8)
		gpu.CpAsync(t, &s[4*tid], &x[base+4*tid], 4)
	}
	gpu.CpAsyncCommit(t)
	n := len(x) - base - 4*tid
	if n > 4 {
		n = 4
	}
	if n < 0 {
		n = 0
	}
	if base+4*tid < len(x) && base >= 0 {
		gpu.CpAsyncZFill(t, &s[4*tid], &x[base+4*tid], 16, 4*n)
	}
	gpu.CpAsyncCommit(t)
	gpu.CpAsyncWait(t, 1)
	gpu.CpAsyncWait(t, 0)
	t.Sync()
	if i := t.GlobalX(); i < len(out) {
		out[i] = s[4*tid]
	}
}
