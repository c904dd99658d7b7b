package gpu

// Block reductions. Every thread of the block must call the same reduction
// under uniform control flow (they contain barriers). The block size must
// be a multiple of 32 and at most 1024.

// BlockSum returns the sum of v over the block to every thread.
func BlockSum[T Number](t Thread, v T) T {
	return blockReduce(t.th, v, func(a, b T) T { return a + b })
}

// BlockMax returns the maximum of v over the block to every thread.
func BlockMax[T Number](t Thread, v T) T {
	return blockReduce(t.th, v, func(a, b T) T { return max(a, b) })
}

// BlockMin returns the minimum of v over the block to every thread.
func BlockMin[T Number](t Thread, v T) T {
	return blockReduce(t.th, v, func(a, b T) T { return min(a, b) })
}
