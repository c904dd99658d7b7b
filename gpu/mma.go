package gpu

// Tensor-core matrix multiply-accumulate, warp-wide (mma.sync.aligned,
// PTX ISA §9.7.14.5). All 32 lanes call it together; each lane holds a
// fixed part of each matrix in registers ("fragments"). With
// groupID = Lane()/4 and tig = Lane()%4 (thread-in-group):
//
// m16n8k16, A is 16×16 row-major f16/bf16, B is 16×8 column-major, C/D 16×8
// f32. Each uint32 packs two 16-bit elements, the lower column (A) or lower
// row (B) in bits 0..15 (see PackHalf2):
//
//	a[0]: A[groupID  ][tig*2 .. tig*2+1]     a[1]: A[groupID+8][tig*2 .. tig*2+1]
//	a[2]: A[groupID  ][tig*2+8 .. tig*2+9]   a[3]: A[groupID+8][tig*2+8 .. tig*2+9]
//	b[0]: B[tig*2 .. tig*2+1][groupID]       b[1]: B[tig*2+8 .. tig*2+9][groupID]
//	c[0], c[1]: C[groupID  ][tig*2], C[groupID  ][tig*2+1]
//	c[2], c[3]: C[groupID+8][tig*2], C[groupID+8][tig*2+1]
//
// m16n8k32 s8, A is 16×32 row-major int8, B is 32×8 column-major, C/D 16×8
// int32. Each uint32 packs four int8, the lowest column (A) or row (B) in
// bits 0..7:
//
//	a[0]: A[groupID  ][tig*4 .. tig*4+3]     a[1]: A[groupID+8][tig*4 .. tig*4+3]
//	a[2]: A[groupID  ][tig*4+16 .. +19]      a[3]: A[groupID+8][tig*4+16 .. +19]
//	b[0]: B[tig*4 .. tig*4+3][groupID]       b[1]: B[tig*4+16 .. tig*4+19][groupID]
//	c as for m16n8k16.

// MMAF16 computes D = A·B + C for m16n8k16 with f16 inputs and f32
// accumulators (mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32).
func MMAF16(t Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return mmaF16(t.th, a, b, c, false)
}

// MMABF16 is MMAF16 with bfloat16 inputs
// (mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32).
func MMABF16(t Thread, a [4]uint32, b [2]uint32, c [4]float32) [4]float32 {
	return mmaF16(t.th, a, b, c, true)
}

// MMAS8 computes D = A·B + C for m16n8k32 with int8 inputs and int32
// accumulators, wrapping on overflow
// (mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32).
func MMAS8(t Thread, a [4]uint32, b [2]uint32, c [4]int32) [4]int32 {
	return mmaS8(t.th, a, b, c)
}

// ldmatrix (PTX ISA §9.7.14.5.15) loads 8×8 matrices of 16-bit elements
// from shared memory into fragments, warp-wide. For matrix i (of 1, 2 or
// 4), lanes 8i..8i+7 each give the address of one 16-byte row (row j of
// matrix i comes from lane 8i+j). Afterwards lane L holds in register i the
// elements [L/4][2*(L%4)] and [L/4][2*(L%4)+1] of matrix i, packed as
// PackHalf2 does. The .trans forms load each matrix transposed. Addresses
// must be 16-byte aligned and in shared memory.

// LdMatrixX1 loads one 8×8 matrix; lanes 0..7 supply row addresses.
func LdMatrixX1[T Elem](t Thread, row *T) uint32 { return ldmatrix(t.th, row, 1, false)[0] }

// LdMatrixX2 loads two 8×8 matrices; lanes 0..15 supply row addresses.
func LdMatrixX2[T Elem](t Thread, row *T) [2]uint32 {
	r := ldmatrix(t.th, row, 2, false)
	return [2]uint32{r[0], r[1]}
}

// LdMatrixX4 loads four 8×8 matrices; all lanes supply row addresses.
func LdMatrixX4[T Elem](t Thread, row *T) [4]uint32 { return ldmatrix(t.th, row, 4, false) }

// LdMatrixX1Trans is LdMatrixX1 with each matrix transposed.
func LdMatrixX1Trans[T Elem](t Thread, row *T) uint32 { return ldmatrix(t.th, row, 1, true)[0] }

// LdMatrixX2Trans is LdMatrixX2 with each matrix transposed.
func LdMatrixX2Trans[T Elem](t Thread, row *T) [2]uint32 {
	r := ldmatrix(t.th, row, 2, true)
	return [2]uint32{r[0], r[1]}
}

// LdMatrixX4Trans is LdMatrixX4 with each matrix transposed.
func LdMatrixX4Trans[T Elem](t Thread, row *T) [4]uint32 { return ldmatrix(t.th, row, 4, true) }
