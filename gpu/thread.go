package gpu

// Thread is the handle a kernel receives as its first parameter. It names
// the executing GPU thread and is the token every collective operation
// (barrier, shuffle, tensor-core op) takes, so that the compiler can see which
// calls need the whole warp or block to arrive together.
//
// A Thread is only valid inside the kernel invocation that received it.
type Thread struct{ th *thread }

// ThreadIdx is the thread's index within its block (%tid).
func (t Thread) ThreadIdx() Dim3 { return t.th.tid }

// BlockIdx is the block's index within the grid (%ctaid).
func (t Thread) BlockIdx() Dim3 { return t.th.blk.ctaid }

// BlockDim is the shape of a block (%ntid).
func (t Thread) BlockDim() Dim3 { return t.th.blk.ntid }

// GridDim is the shape of the grid in blocks (%nctaid).
func (t Thread) GridDim() Dim3 { return t.th.blk.nctaid }

// GlobalX is BlockIdx().X*BlockDim().X + ThreadIdx().X.
func (t Thread) GlobalX() int { return t.th.blk.ctaid.X*t.th.blk.ntid.X + t.th.tid.X }

// GlobalY is BlockIdx().Y*BlockDim().Y + ThreadIdx().Y.
func (t Thread) GlobalY() int { return t.th.blk.ctaid.Y*t.th.blk.ntid.Y + t.th.tid.Y }

// GlobalZ is BlockIdx().Z*BlockDim().Z + ThreadIdx().Z.
func (t Thread) GlobalZ() int { return t.th.blk.ctaid.Z*t.th.blk.ntid.Z + t.th.tid.Z }

// LinearIdx is the thread's rank within its block, x fastest:
// (ThreadIdx.Z*BlockDim.Y + ThreadIdx.Y)*BlockDim.X + ThreadIdx.X.
func (t Thread) LinearIdx() int { return t.th.linear }

// Lane is the thread's lane in its warp, 0..31 (%laneid).
func (t Thread) Lane() int { return t.th.linear % WarpSize }

// Warp is the index of the thread's warp within its block: LinearIdx()/32.
func (t Thread) Warp() int { return t.th.linear / WarpSize }

// Sync is a block-wide barrier (bar.sync 0): every thread of the block must
// reach the same Sync before any continues, and shared and global writes
// made before it are visible to the block after it. It must not be reached
// under control flow that differs between the block's threads; the compiler
// rejects a Sync it cannot prove uniform.
func (t Thread) Sync() { t.th.syncBlock() }

// SyncWarp is a warp-wide barrier over all 32 lanes (bar.warp.sync -1).
func (t Thread) SyncWarp() { t.th.syncWarp() }

// WarpSize is the number of lanes in a warp on every NVIDIA GPU.
const WarpSize = 32
