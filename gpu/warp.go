package gpu

// Warp collectives. Every lane of the warp must call the same collective
// together (the compiler uses the full mask 0xffffffff), as CUDA's *_sync
// intrinsics with a full mask require.

// ShflXor returns v from lane Lane()^laneMask (shfl.sync.bfly).
func ShflXor[T Word](t Thread, v T, laneMask int) T {
	return shuffle(t.th, v, func(lane int) int { return lane ^ laneMask })
}

// ShflDown returns v from lane Lane()+delta, or the caller's own v when that
// lane is past 31 (shfl.sync.down).
func ShflDown[T Word](t Thread, v T, delta int) T {
	return shuffle(t.th, v, func(lane int) int {
		if lane+delta < WarpSize {
			return lane + delta
		}
		return lane
	})
}

// ShflUp returns v from lane Lane()-delta, or the caller's own v when that
// lane is below 0 (shfl.sync.up).
func ShflUp[T Word](t Thread, v T, delta int) T {
	return shuffle(t.th, v, func(lane int) int {
		if lane-delta >= 0 {
			return lane - delta
		}
		return lane
	})
}

// ShflIdx returns v from lane srcLane mod 32 (shfl.sync.idx).
func ShflIdx[T Word](t Thread, v T, srcLane int) T {
	return shuffle(t.th, v, func(int) int { return srcLane & (WarpSize - 1) })
}

// WarpSum returns the sum of v over the warp to every lane (a butterfly of
// shfl.sync.bfly; floating-point sums are added in the butterfly's order).
func WarpSum[T Number](t Thread, v T) T {
	for m := WarpSize / 2; m > 0; m /= 2 {
		v += ShflXor(t, v, m)
	}
	return v
}

// WarpMax returns the maximum of v over the warp to every lane.
func WarpMax[T Number](t Thread, v T) T {
	for m := WarpSize / 2; m > 0; m /= 2 {
		v = max(v, ShflXor(t, v, m))
	}
	return v
}

// WarpMin returns the minimum of v over the warp to every lane.
func WarpMin[T Number](t Thread, v T) T {
	for m := WarpSize / 2; m > 0; m /= 2 {
		v = min(v, ShflXor(t, v, m))
	}
	return v
}

// Ballot returns a mask with bit i set when lane i's pred is true
// (vote.sync.ballot.b32).
func Ballot(t Thread, pred bool) uint32 { return ballot(t.th, pred) }

// Any reports whether pred is true on any lane (vote.sync.any.pred).
func Any(t Thread, pred bool) bool { return ballot(t.th, pred) != 0 }

// All reports whether pred is true on every lane of the warp
// (vote.sync.all.pred); in a block's partial last warp, on every lane it
// has.
func All(t Thread, pred bool) bool { return ballot(t.th, pred) == warpLanes(t.th) }
