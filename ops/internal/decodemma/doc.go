// Package decodemma holds version 2 of the decode attention kernels behind
// ops.PagedAttention: the two products of a decode step, S = Q·Kᵀ and
// O = P·V, on the tensor cores (mma.sync m16n8k16), each warp an
// independent online softmax over its own 16-token steps, so the main
// loop has no block barrier and issues all of a step's K and V loads
// before the first product that needs them. Version 1 (CUDA-core dot
// products) is ops/internal/decodek; its split-K reduce serves both.
// Use them through package ops, which checks shapes and sizes the
// launches; the kernels trust that.
package decodemma

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen
