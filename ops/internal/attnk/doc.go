// Package attnk holds the tensor-core attention kernels behind
// ops.FlashAttention and ops.PagedAttention. Use them through package ops,
// which checks shapes and sizes the launches; the kernels trust that.
package attnk

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen
