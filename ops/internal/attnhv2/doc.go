// Package attnhv2 keeps the second Hopper (sm_90a) FlashAttention
// forward kernel at head dim 128: K/V tiles of 128 keys like package
// attnh, but in the first version's order (S_j = Q·K_jᵀ issued, then
// tile j-1's softmax while it runs, then P·V, then a wait for both),
// which copies S out of the wgmma accumulator every tile where attnh
// does not, and overlaps the whole softmax with S where attnh overlaps
// part of it with P·V. ops.FlashAttention runs it when
// ops.AttentionHopperVersion is 2, so that one GPU session can time it
// beside attnh and attnh64 (kern bench attention prints all three);
// remove it once the GPU figures have chosen.
//
//kern:arch sm_90a
package attnhv2

//go:generate go run -tags kerngen github.com/gokern/kern/cmd/kern gen
