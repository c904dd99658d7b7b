package gpu

// Transposed (MN-major) wgmma operands (PTX ISA §9.7.15, the imm-trans-a
// and imm-trans-b operands of wgmma.mma_async, and "Shared Memory Matrix
// Layout"). A K-major operand stores the k values of one row of A (one
// column of B) contiguously; an MN-major one stores the M (or N) values
// of one k contiguously: a row-major B of K×N, such as attention's V
// tile [kv, d] in P·V, is MN-major and needs no transposing copy.
//
// MN-major layouts, for the 16-bit element (mn, k), in bytes, with the
// descriptor's start, lbo and sbo (the canonical layouts of the PTX ISA;
// CUTLASS's GmmaDescriptor for Major::MN says the same):
//
//	no swizzle:      start + mn/8·sbo + k/8·lbo + k%8·16 + mn%8·2
//	                 (core matrices of 8 k-rows × 8 mn-values, 128
//	                 contiguous bytes; sbo steps along MN, lbo along K)
//	W-byte swizzle:  a = start + mn/(W/2)·lbo + k/8·sbo + k%8·W + mn%(W/2)·2,
//	                 then the swizzle of a (SwizzleAddr): W/2 mn-values per
//	                 row of W bytes, 8 k-rows an 8W-byte atom; lbo steps
//	                 between atoms along MN, sbo between groups of 8 k
//
// Note the roles of lbo and sbo swap between the unswizzled and swizzled
// MN-major forms. A TMA box of W bytes per row (W/2 values of the
// contiguous dimension) and R rows lands as R/8 atoms of 8W bytes: the
// swizzled MN-major layout with sbo = 8W.

// Major is the layout of a wgmma operand in shared memory: the PTX
// immediate imm-trans-a / imm-trans-b (0 K-major, 1 MN-major).
type Major int

const (
	KMajor  Major = iota // k contiguous: A row-major M×K, B stored N×K
	MNMajor              // m or n contiguous: A stored K×M, B row-major K×N
)

// WGMMAF16Major is WGMMAF16 with the layout of each operand given: a
// (64×16) and b (16×N) are K-major or MN-major (constants).
func WGMMAF16Major[A WGAccum](t Thread, acc *A, a, b uint64, accumulate bool, aMajor, bMajor Major) {
	wgmmaMajor(t.th, acc, a, nil, b, accumulate, false, aMajor, bMajor)
}

// WGMMABF16Major is WGMMAF16Major for bf16 A and B.
func WGMMABF16Major[A WGAccum](t Thread, acc *A, a, b uint64, accumulate bool, aMajor, bMajor Major) {
	wgmmaMajor(t.th, acc, a, nil, b, accumulate, true, aMajor, bMajor)
}

// WGMMAF16RegAMajor is WGMMAF16RegA with B's layout given (a constant):
// attention's P·V, P from registers and V row-major, is
// WGMMAF16RegAMajor(t, &o, p, vDesc, true, gpu.MNMajor).
func WGMMAF16RegAMajor[A WGAccum](t Thread, acc *A, a [4]uint32, b uint64, accumulate bool, bMajor Major) {
	wgmmaMajor(t.th, acc, 0, &a, b, accumulate, false, KMajor, bMajor)
}

// WGMMABF16RegAMajor is WGMMAF16RegAMajor for bf16 A and B.
func WGMMABF16RegAMajor[A WGAccum](t Thread, acc *A, a [4]uint32, b uint64, accumulate bool, bMajor Major) {
	wgmmaMajor(t.th, acc, 0, &a, b, accumulate, true, KMajor, bMajor)
}

// WGMMAOperandOffset is the shared address of 16-bit element (mn, k) of
// an operand of the given layout described by desc: for A, mn is the
// row; for B, the column (WGMMAElemOffset is the K-major case). Package
// emu implements the same function.
func WGMMAOperandOffset(desc uint64, major Major, mn, k int) int {
	if major == KMajor {
		return WGMMAElemOffset(desc, mn, k)
	}
	start := int(desc&0x3fff) << 4
	lbo := int(desc>>16&0x3fff) << 4
	sbo := int(desc>>32&0x3fff) << 4
	var w int
	switch desc >> 62 {
	case 0:
		return start + mn/8*sbo + k/8*lbo + k%8*16 + mn%8*2
	case 1:
		w = 128
	case 2:
		w = 64
	default:
		w = 32
	}
	return SwizzleAddr(start+mn/(w/2)*lbo+k/8*sbo+k%8*w+mn%(w/2)*2, w)
}
