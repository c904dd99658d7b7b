// Package decodek holds the decode attention kernels behind
// ops.PagedAttention (paged KV cache, split-K). Use them through package
// ops, which checks shapes and sizes the launches; the kernels trust that.
package decodek

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen
