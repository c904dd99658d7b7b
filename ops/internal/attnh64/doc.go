// Package attnh64 keeps the first Hopper (sm_90a) FlashAttention forward
// kernels, with K/V tiles of 64 keys, as they were before package attnh
// moved to tiles of 128 keys. ops.FlashAttention runs them at head dim 64
// (attnh compiles head dim 128 only) and, at head dim 128, when
// ops.AttentionHopperVersion is 1, so that one GPU session can time the
// versions side by side (kern bench attention prints each) and keep the
// fastest. flash.go describes the kernel.
//
//kern:arch sm_90a
package attnh64

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen
