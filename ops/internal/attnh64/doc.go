// Package attnh64 keeps the first Hopper (sm_90a) FlashAttention forward
// kernels, with K/V tiles of 64 keys, as they were before package attnh
// moved to tiles of 128 keys: ops.FlashAttention runs them instead of
// attnh when ops.AttentionHopperV1 is set, so that one GPU session can
// time the two side by side (kern bench attention prints both) and keep
// the faster. The kernel is attnh's algorithm at FlashN = 64; flash.go
// describes it. Remove the package once the GPU figures have chosen.
//
//kern:arch sm_90a
package attnh64

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen
