package main

import "github.com/gokern/kern/gpu"

//go:generate go run github.com/gokern/kern/cmd/kern gen

// A 256-bin histogram of bytes. Both versions are grid-stride loops over
// data (a fixed grid covers any length), adding into hist, which must be
// zero on entry:
//
//	v1 HistogramGlobal  one global atomic per byte: every block contends
//	                    for the same 256 counters in device memory.
//	v2 HistogramShared  each block counts into its own 256 bins in shared
//	                    memory (fast atomics, contention only within the
//	                    block), then adds its non-zero bins to hist: at
//	                    most 256 global atomics per block, however much
//	                    data it saw.

const bins = 256

// HistogramGlobal is v1.
//
//kern:kernel block=256 idx32
func HistogramGlobal(t gpu.Thread, data []uint8, hist []uint32) {
	stride := t.GridDim().X * t.BlockDim().X
	for i := t.GlobalX(); i < len(data); i += stride {
		gpu.AtomicAdd(&hist[data[i]], 1)
	}
}

// HistogramShared is v2. The block must have exactly 256 threads: thread
// k clears and merges bin k.
//
//kern:kernel block=256 idx32
func HistogramShared(t gpu.Thread, data []uint8, hist []uint32) {
	local := gpu.Shared[uint32](t, bins)
	k := t.ThreadIdx().X
	local[k] = 0
	t.Sync() // every bin is cleared before any thread counts

	stride := t.GridDim().X * t.BlockDim().X
	for i := t.GlobalX(); i < len(data); i += stride {
		gpu.AtomicAdd(&local[data[i]], 1)
	}
	t.Sync() // every count is in before the bins are read

	if n := local[k]; n != 0 {
		gpu.AtomicAdd(&hist[k], n)
	}
}
