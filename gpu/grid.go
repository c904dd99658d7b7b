package gpu

// Grid-wide synchronization. A persistent kernel (one block per SM that
// loops over a whole model layer, a decode step, or the phases of a
// reduction) needs every block to finish a phase before any block starts
// the next: CUDA's cooperative groups grid.sync(). Launching one kernel
// per phase does the same at the cost of a launch and a ramp-up each,
// which dominates when each phase moves only a few microseconds of data.
//
// GridSync is only correct when every block of the grid is resident on
// the GPU at once (a waiting block holds its SM; a block that never got
// one would never arrive). So a kernel that calls it is cooperative: kern
// launches it with the driver's cooperative attribute, which refuses a
// grid larger than the device holds at once, and checks the grid itself
// first (Kernel.MaxCooperativeBlocks says how many fit).

// GridSync waits until every thread of the grid has called it, and makes
// every memory write before it, by any thread of the grid, visible to
// every thread after it (gpu scope, as ThreadFence).
//
// Every thread of every block must call it the same number of times, as
// every thread of a block must reach each Sync; a block that returns
// before a GridSync the others wait at leaves them waiting (native mode
// reports that as a *BarrierError; on a GPU and on the emulator the launch
// does not end unless a device bounds check has failed, which every
// waiting block notices). A kernel that calls GridSync is launched
// cooperatively (see above); in native mode, RunNativeCooperative runs
// such a kernel.
//
// It is built from a block barrier, one atomic arrival per block on a
// counter kern allocates per queue (and per captured launch) and clears
// before the launch, and a spin until that counter reaches the round's
// last arrival (PTX: bar.sync, fence.acq_rel.gpu, atom.global.add,
// ld.relaxed.gpu with nanosleep, bar.red.or).
func GridSync(t Thread) { t.th.gridSync() }
