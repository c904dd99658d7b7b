package gpu

// Atomics on global or shared memory (atom.*). p is the address of a slice
// element or shared cell, e.g. &hist[b]. Each returns the value at *p before
// the operation. They are relaxed, device-scope operations (atom.relaxed.gpu
// semantics of PTX ISA §9.7.13.5): they order nothing but themselves.

// AtomicAdd adds v to *p.
func AtomicAdd[T ~int | ~int32 | ~int64 | ~uint32 | ~uint64 | ~float32 | ~float64](p *T, v T) T {
	return atomicRMW(p, func(old T) T { return old + v })
}

// AtomicMax stores max(*p, v) in *p.
func AtomicMax[T ~int | ~int32 | ~int64 | ~uint32 | ~uint64](p *T, v T) T {
	return atomicRMW(p, func(old T) T { return max(old, v) })
}

// AtomicMin stores min(*p, v) in *p.
func AtomicMin[T ~int | ~int32 | ~int64 | ~uint32 | ~uint64](p *T, v T) T {
	return atomicRMW(p, func(old T) T { return min(old, v) })
}

// AtomicCAS stores new in *p if *p == cmp (compared bitwise for floats).
func AtomicCAS[T ~int | ~int32 | ~int64 | ~uint32 | ~uint64 | ~float32 | ~float64](p *T, cmp, new T) T {
	return atomicRMW(p, func(old T) T {
		if bitsEqual(old, cmp) {
			return new
		}
		return old
	})
}

// AtomicExch stores v in *p.
func AtomicExch[T ~int | ~int32 | ~int64 | ~uint32 | ~uint64 | ~float32 | ~float64](p *T, v T) T {
	return atomicRMW(p, func(T) T { return v })
}

// ThreadFence orders this thread's memory accesses before it against those
// after it, for every thread of the device (fence.acq_rel.gpu, PTX ISA
// §9.7.13.4 "membar/fence"; sm_70). With a relaxed atomic it makes the
// release and acquire patterns of a grid-wide hand-off: a block stores
// its results and syncs (t.Sync), then one thread fences, bumps a counter
// with AtomicAdd and fences again; the block whose thread saw the final
// count syncs once more and may then read every other block's results.
// In native mode the atomics of package gpu already order plain accesses
// (sync/atomic), so it does nothing there.
func ThreadFence(t Thread) {}
