// Package tile is kern's tile level: a kernel body that works on whole
// tiles (load a row tile, combine tiles element-wise, reduce a tile,
// store it) instead of on one thread's elements. It is ordinary Go built
// on package gpu, so a tile kernel runs in native mode as written; the
// compiler inlines this package's functions like a kernel's own helpers
// (as it does package devmath), so a tile costs nothing beyond the
// thread-level code it stands for.
//
// # Row tiles
//
// A Row[R] is a 1-D tile of one row, owned by the whole block. Its shape
// is fixed at compile time by R, the per-thread register array: with
// R = [K]float32 and a block of B threads (the //kern:kernel block=), the
// tile holds K·B elements and thread i holds elements i, i+B, …, i+(K-1)·B
// in K registers. That mapping makes every load and store coalesced (the
// block's threads read consecutive elements for each register) and keeps
// the tile in registers: every loop over R is unrolled (//kern:unroll), so
// each element is a constant index into a local array. K is a power of two
// from 1 to 32 (the Regs constraint): a different K is a type error.
//
// Tiles need a 1-D block (block=256, not block=16x16): the mapping uses
// ThreadIdx().X and BlockDim().X only, and the compiler rejects a tile
// operation in a kernel with a 2-D or 3-D block= (TileBlockShape).
//
// Tiles compute in float32. Storage may be float32, float16, bfloat16 or
// int8: a view's codec (F32, F16, BF16, I8) converts on Load and rounds
// to nearest even on Store (saturating for I8), as the hand-written ops
// do.
//
// # 2-D tiles and Dot
//
// A Mat[R, K] (R = [I]K, K = [J]float32) is a 2-D tile of I·W × 32·J
// elements over the block's W warps: warp w holds I rows, lane l the
// columns l, l+32, … of each (mat.go). It has masked loads and stores
// (LoadMat, StoreMat with a Tiles partition), row and column broadcasts,
// element-wise ops and reductions along either axis that keep the
// tile's shape. Dot multiplies f16 or bf16 operands staged in swizzled
// shared memory (Stage) on the tensor cores, ldmatrix + mma.sync, into
// an Acc of float32, which Acc.Mat turns into a Mat for an epilogue
// (dot.go). kern check -v prints the layouts a kernel's tiles get.
//
// # Attention tiles
//
// A Frag is a block's 64-row accumulator tile in mma.sync's own register
// layout, so the scores S = Q·Kᵀ become the A operand of P·V without
// leaving registers (FlashAttention-2's layout); Col holds a value per
// row (RowMax, LaneRowSums and QuadSum, MulRows, Exp2), and Attn the
// lane's offsets into staged K/V tiles with QK, PV, Stage and Mask.
// Heads partitions an attention output by (query tile, head, sequence)
// (flash.go, flashpart.go; ops/internal/tileattn is the kernel).
//
// # Views and partitions
//
// A kernel reads its inputs through In views (read-only: In has no method
// or function that writes) and writes its outputs through a Part, the
// calling block's own partition: Rows gives block b row b of the output
// and nothing else, Tiles gives block (x, y) tile (y, x) of a matrix, so
// no two blocks can write the same element and a data race between
// blocks cannot be written. The compiler enforces the
// rest (compiler/partition.go): in a kernel that partitions a slice
// parameter, the slice may not be written directly or passed to a helper
// (PartitionEscape), and a slice viewed as an input may not be written or
// partitioned (WriteToInput).
//
// # Ragged edges
//
// Load masks the elements past the row's end (cols), filling them with a
// value the caller chooses: 0 for a sum, NegInf for a max, as Triton's
// other=. Store writes only the elements before cols. Element-wise ops
// apply to the fill values too, so choose a fill that the following ops
// keep neutral for the reduction after them (exp(-Inf) = 0).
package tile
