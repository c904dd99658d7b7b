package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// One tensor-core tile: D (16×8, float32) = A (16×16, f16) · B (16×8, f16),
// computed by one warp with gpu.MMAF16 (mma.sync m16n8k16). A, B and D are
// row-major in global memory. The two kernels differ only in how each
// lane gets its fragments, the pieces of A and B it holds in registers.
//
// The fragment layout (gpu/mma.go), with g = Lane()/4 and q = Lane()%4:
// each uint32 register packs two halves, the lower column (A) or row (B)
// in bits 0..15.
//
//	a[0] = A[g  ][2q], A[g  ][2q+1]      a[2] = A[g  ][2q+8], A[g  ][2q+9]
//	a[1] = A[g+8][2q], A[g+8][2q+1]      a[3] = A[g+8][2q+8], A[g+8][2q+9]
//	b[0] = B[2q  ][g], B[2q+1][g]        b[1] = B[2q+8][g],   B[2q+9][g]
//	d[0], d[1] = D[g][2q], D[g][2q+1]    d[2], d[3] = D[g+8][2q], D[g+8][2q+1]
//
// So the 32 lanes split A into four 8×8 quadrants, one per register, each
// lane holding two neighbouring elements of a row of each quadrant; B into
// two 8×8 halves along K, each lane holding two neighbouring elements of a
// column.

// MMAFromGlobal loads each lane's fragments straight from global memory,
// element by element, following the table above. Launch one warp.
//
//kern:kernel block=32
func MMAFromGlobal(t gpu.Thread, a, b []gpu.Half, d []float32) {
	g, q := t.Lane()/4, t.Lane()%4
	frag := [4]uint32{
		gpu.PackHalf2(a[g*16+2*q], a[g*16+2*q+1]),
		gpu.PackHalf2(a[(g+8)*16+2*q], a[(g+8)*16+2*q+1]),
		gpu.PackHalf2(a[g*16+2*q+8], a[g*16+2*q+9]),
		gpu.PackHalf2(a[(g+8)*16+2*q+8], a[(g+8)*16+2*q+9]),
	}
	// B is row-major (k×n = 16×8), so a lane's pair B[2q][g], B[2q+1][g]
	// are 8 elements apart.
	bfrag := [2]uint32{
		gpu.PackHalf2(b[(2*q)*8+g], b[(2*q+1)*8+g]),
		gpu.PackHalf2(b[(2*q+8)*8+g], b[(2*q+9)*8+g]),
	}
	acc := gpu.MMAF16(t, frag, bfrag, [4]float32{})
	storeD(t, d, acc)
}

// MMAFromShared stages A and B in shared memory and loads the fragments
// with ldmatrix, which reads 8×8 matrices of halves — eight 16-byte rows,
// their addresses given by eight lanes — and hands each lane exactly the
// pairs the fragment layout asks for. Launch one warp.
//
//kern:kernel block=32
func MMAFromShared(t gpu.Thread, a, b []gpu.Half, d []float32) {
	as := gpu.Shared[gpu.Half](t, 16*16)
	bs := gpu.Shared[gpu.Half](t, 16*8)
	l := t.Lane()
	for i := l; i < 16*16; i += 32 {
		as[i] = a[i]
	}
	for i := l; i < 16*8; i += 32 {
		bs[i] = b[i]
	}
	t.Sync()

	// A: four 8×8 matrices, matrix i = l/8 being the quadrant register
	// a[i] holds: rows 8·(i%2).., columns 8·(i/2)... Lane l gives the
	// address of row l%8 of matrix l/8. Each row is 8 halves, 16 bytes.
	i, j := l/8, l%8
	frag := gpu.LdMatrixX4(t, &as[(8*(i%2)+j)*16+8*(i/2)])

	// B: two 8×8 matrices, rows k = 0..7 and 8..15 of B, addressed by
	// lanes 0..15 (lanes 16..31 repeat them; .x2 ignores those). B is
	// stored k-major but the fragment wants pairs along k, down a column,
	// so load each matrix transposed: lane L then gets B[2q][g],
	// B[2q+1][g] of it.
	bfrag := gpu.LdMatrixX2Trans(t, &bs[(l%16)*8])

	acc := gpu.MMAF16(t, frag, bfrag, [4]float32{})
	storeD(t, d, acc)
}

// storeD writes a lane's accumulator fragment to D (16×8, row-major).
func storeD(t gpu.Thread, d []float32, acc [4]float32) {
	g, q := t.Lane()/4, t.Lane()%4
	d[g*8+2*q], d[g*8+2*q+1] = acc[0], acc[1]
	d[(g+8)*8+2*q], d[(g+8)*8+2*q+1] = acc[2], acc[3]
}
