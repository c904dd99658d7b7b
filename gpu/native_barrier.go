package gpu

// Block-wide collectives of native mode: Sync (bar.sync) and block
// reductions, both rendezvous of every thread of the block.

func (th *thread) syncBlock() {
	b := th.blk
	if b.bar.arrive(th, waitInfo{kind: kindSync, pc: callerPC()}) {
		b.bar.release(b)
	}
}

// blockReduce combines v over the block. The order of operations is the one
// a warp-shuffle lowering uses: each warp combines its lanes with WarpSum's
// xor butterfly, then the per-warp results are combined by the same
// butterfly (see butterfly). For integers the order does not matter; for
// floats it makes the native result a fixed function of the inputs.
func blockReduce[T Number](th *thread, v T, op func(a, b T) T) T {
	b := th.blk
	b.red[th.linear] = wordBits(v)
	if b.bar.arrive(th, waitInfo{kind: kindBlockReduce, pc: callerPC()}) {
		b.redOut = wordBits(reduceBlock(b.red, op))
		b.bar.release(b)
	}
	return wordFrom[T](b.redOut)
}

// reduceBlock combines the values whose bit patterns are in, warp by warp
// and then across warps.
func reduceBlock[T Number](in []uint64, op func(a, b T) T) T {
	var perWarp [MaxBlockThreads / WarpSize]T
	nw := 0
	for base := 0; base < len(in); base += WarpSize {
		var lanes [WarpSize]T
		n := min(WarpSize, len(in)-base)
		for i := range n {
			lanes[i] = wordFrom[T](in[base+i])
		}
		perWarp[nw] = butterfly(lanes[:n], op)
		nw++
	}
	return butterfly(perWarp[:nw], op)
}

// butterfly returns lane 0's value after WarpSum's butterfly over v (at
// step m, lane i takes op(v[i], v[i^m])), a lane whose partner lies past
// len(v) keeping its value, as if padded with op's identity. It overwrites v.
func butterfly[T Number](v []T, op func(a, b T) T) T {
	for m := WarpSize / 2; m > 0; m /= 2 {
		for i := 0; i < m && i+m < len(v); i++ {
			v[i] = op(v[i], v[i+m])
		}
	}
	return v[0]
}
