package gpu

// Warpgroup matrix multiply-accumulate (wgmma, PTX ISA §9.7.15, sm_90a).
//
// A warpgroup is four consecutive warps (threads 128w .. 128w+127) that
// issue one wgmma.mma_async together; it computes D (64×N, f32) += A
// (64×16) × B (16×N), A and B f16 or bf16. Warp i of the group holds
// rows 16i .. 16i+15 of D in registers, in the m16n8 accumulator layout of
// mma.sync repeated over N/8 column blocks: with g = Lane()/4 and
// q = Lane()%4, acc[4j+0], acc[4j+1] are D[16i+g][8j+2q], D[16i+g][8j+2q+1]
// and acc[4j+2], acc[4j+3] the same columns of row 16i+g+8.
//
// A and B come from shared memory through matrix descriptors
// (WGMMADesc); A may instead come from registers (the ...RegA forms, in
// mma.sync's m16n8k16 A layout for the warp's 16 rows). Both operands are
// K-major here: A is 64 rows of 16 k-values, B is N rows (one per output
// column) of 16 k-values — B stored "N×K", as B^T.
//
// wgmma is asynchronous: the accumulator registers are not to be read
// or written until WGMMAWaitGroup says the group that contains the
// operation is complete, and WGMMAFence must precede the first wgmma
// after the registers were written by other instructions (PTX ISA
// §9.7.15, "Asynchronous wgmma Proxy Operations"). Shared-memory
// operands written with ordinary stores need FenceProxyAsync and a
// barrier before the wgmma that reads them.

// WGAccum is the f32 accumulator of one thread for N = 64, 128 or 256
// (N/2 registers).
type WGAccum interface {
	[32]float32 | [64]float32 | [128]float32
}

// Swizzle is a shared-memory swizzle mode of a matrix descriptor or a
// tensor map: the 16-byte chunk index within a row of 32, 64 or 128 bytes
// is XORed with the row index modulo 2, 4 or 8.
type Swizzle int

const (
	SwizzleNone Swizzle = iota
	Swizzle32B
	Swizzle64B
	Swizzle128B
)

// Bytes is the row width the swizzle pattern repeats over (16 for none).
func (s Swizzle) Bytes() int { return [...]int{16, 32, 64, 128}[s&3] }

// descMode is the descriptor's 2-bit layout type (PTX ISA §9.7.15.5.1
// "Matrix Descriptor Format", bits 62-63).
func (s Swizzle) descMode() uint64 { return [...]uint64{0, 3, 2, 1}[s&3] }

// WGMMADesc builds the 64-bit shared-memory matrix descriptor of a K-major
// operand whose first element is at p (PTX ISA §9.7.15, "Matrix Descriptor Format"): start address
// bits 0-13 (address>>4), leading-dimension byte offset (lbo>>4) bits
// 16-29, stride-dimension byte offset (sbo>>4) bits 32-45, base offset 0,
// swizzle mode bits 62-63.
//
// The layout is made of 8-row groups. Without swizzle, a group is core
// matrices of 8 rows × 16 bytes stored as 128 contiguous bytes; lbo is the
// distance between core matrices along K, sbo between 8-row groups. With a
// swizzle of W bytes, each row of a group is W contiguous bytes (W/2
// k-values), the group is 8W bytes, sbo is the distance between groups
// (8W when they are packed) and lbo is unused; the tile must be aligned to
// 8W bytes. Advancing the descriptor by 32 bytes along K (adding 2) moves
// to the next k16 slice inside a swizzled row.
func WGMMADesc[T Elem](t Thread, p *T, lbo, sbo int, swizzle Swizzle) uint64 {
	return wgmmaDesc(t.th, p, lbo, sbo, swizzle)
}

// WGMMAF16 is *acc += A×B (accumulate false: *acc = A×B) for f16 A and B
// given by descriptors (wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16,
// PTX ISA §9.7.15, "wgmma.mma_async"). N is 2×len(*acc). The accumulator
// is updated in place, asynchronously: acc must be a local array kept in
// registers (indexed only by constants) and is not to be read or written
// until WGMMAWaitGroup retires the operation's group.
func WGMMAF16[A WGAccum](t Thread, acc *A, a, b uint64, accumulate bool) {
	wgmma(t.th, acc, a, nil, b, accumulate, false)
}

// WGMMABF16 is WGMMAF16 for bf16 A and B.
func WGMMABF16[A WGAccum](t Thread, acc *A, a, b uint64, accumulate bool) {
	wgmma(t.th, acc, a, nil, b, accumulate, true)
}

// WGMMAF16RegA is WGMMAF16 with A from registers: a holds the warp's 16
// rows of A in mma.sync's m16n8k16 A fragment layout (see MMAF16).
func WGMMAF16RegA[A WGAccum](t Thread, acc *A, a [4]uint32, b uint64, accumulate bool) {
	wgmma(t.th, acc, 0, &a, b, accumulate, false)
}

// WGMMABF16RegA is WGMMAF16RegA for bf16 A and B.
func WGMMABF16RegA[A WGAccum](t Thread, acc *A, a [4]uint32, b uint64, accumulate bool) {
	wgmma(t.th, acc, 0, &a, b, accumulate, true)
}

// WGMMAFence orders the warpgroup's earlier register and shared-memory
// accesses before the wgmma operations that follow (wgmma.fence, PTX ISA
// §9.7.15).
func WGMMAFence(t Thread) { wgmmaSync(t.th) }

// WGMMACommitGroup closes the group of wgmma operations issued since the
// last commit (wgmma.commit_group, PTX ISA §9.7.15).
func WGMMACommitGroup(t Thread) { wgmmaSync(t.th) }

// WGMMAWaitGroup waits until at most n (a constant 0..7) committed groups
// are pending (wgmma.wait_group, PTX ISA §9.7.15).
func WGMMAWaitGroup(t Thread, n int) { wgmmaSync(t.th) }
