package gpu

// Memory barriers in shared memory ("mbarriers", PTX ISA §9.7.13.15,
// sm_80+; the transaction-count forms and try_wait sm_90+), and the
// async-proxy fence (fence.proxy.async, PTX ISA §9.7.13.4, sm_90+).
//
// An mbarrier is an 8-byte aligned uint64 in shared memory (an element of
// gpu.Shared[uint64] or gpu.DynShared). It counts arrivals towards a phase:
// MbarrierInit sets the expected count; each MbarrierArrive counts one
// arrival; MbarrierArriveExpectTx also announces a number of bytes that
// asynchronous copies (TMA) will deliver. The phase completes when every
// expected arrival has happened and every announced byte has landed;
// the barrier then starts the next phase with the same expected count.
// Phases alternate parity 0, 1, 0, ...: a waiter of the phase with parity p
// calls MbarrierTryWait(t, bar, p) until it returns true, then flips p.
//
//	bar := gpu.Shared[uint64](t, 1)
//	if t.Lane() == 0 && t.Warp() == 0 {
//		gpu.MbarrierInit(t, &bar[0], 1)
//	}
//	t.Sync()
//	...
//	for !gpu.MbarrierTryWait(t, &bar[0], phase) {
//	}
//
// The 64-bit value is opaque on a GPU; native mode and the emulator share
// one encoding of it (see mbarrierState) so that the same kernel's
// arrivals and waits agree across both.

// MbarrierInit initialises the mbarrier at bar for count (1..2^20-1)
// expected arrivals per phase, phase parity 0 (mbarrier.init, PTX ISA
// §9.7.13.15, "mbarrier.init"). One thread initialises; a t.Sync follows
// before anyone else uses it.
func MbarrierInit(t Thread, bar *uint64, count int) { mbarrierInit(t.th, bar, count) }

// MbarrierArrive counts one arrival of this thread and returns an opaque
// token of the phase it arrived in (mbarrier.arrive, PTX ISA §9.7.13.15,
// "mbarrier.arrive").
func MbarrierArrive(t Thread, bar *uint64) uint64 { return mbarrierArrive(t.th, bar, 0) }

// MbarrierArriveExpectTx adds bytes (0..2^20-1) to the current phase's
// pending transaction count, then counts one arrival (mbarrier.arrive.expect_tx,
// PTX ISA §9.7.13.15, "mbarrier.arrive"; sm_90). The phase cannot complete
// until asynchronous copies that signal this mbarrier have delivered the
// bytes.
func MbarrierArriveExpectTx(t Thread, bar *uint64, bytes int) uint64 {
	return mbarrierArrive(t.th, bar, bytes)
}

// MbarrierCompleteTx marks bytes of the pending transaction count as
// delivered, as a finished TMA copy does (mbarrier.complete_tx, PTX ISA
// §9.7.13.15, "mbarrier.complete_tx"; sm_90). Kernels rarely need it; it
// lets a thread stand in for an asynchronous copy.
func MbarrierCompleteTx(t Thread, bar *uint64, bytes int) { mbarrierCompleteTx(t.th, bar, bytes) }

// MbarrierTryWait reports whether the phase of parity (0 or 1) has
// completed; it may wait a while before returning false, so callers loop on
// it (mbarrier.try_wait.parity, PTX ISA §9.7.13.15,
// "mbarrier.test_wait/mbarrier.try_wait"; sm_90). Memory written by the
// threads that arrived in the phase (and by the copies it waited for) is
// visible to this thread once it returns true.
func MbarrierTryWait(t Thread, bar *uint64, parity int) bool {
	return mbarrierTryWait(t.th, bar, parity)
}

// MbarrierInval invalidates the mbarrier at bar so that its 8 bytes can be
// reused as ordinary shared memory (mbarrier.inval, PTX ISA §9.7.13.15,
// "mbarrier.inval").
func MbarrierInval(t Thread, bar *uint64) { mbarrierInval(t.th, bar) }

// FenceProxyAsync orders this thread's earlier generic-proxy accesses to
// shared memory (ordinary loads and stores) before later async-proxy
// accesses (TMA copies, wgmma operand reads) and vice versa
// (fence.proxy.async.shared::cta, PTX ISA §9.7.13.4 "membar/fence"; sm_90).
// Write a tile with st.shared, fence, then hand it to TMA or wgmma.
func FenceProxyAsync(t Thread) {}
