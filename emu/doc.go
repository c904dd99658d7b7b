// Package emu executes PTX text on the CPU: it is kern's proof of
// correctness on machines without an NVIDIA GPU, and the base of its
// sanitizers and profiler.
//
// emu runs the exact PTX that kern's compiler emits (PTX ISA 7.x/8.x for
// sm_80), so a kernel that is right on emu is right in the form the driver
// JIT-compiles, not just in its Go source. The work is split in phases:
//
//  1. lex.go, parse.go, parse_decl.go: text to a small syntax tree (module
//     directives, variables, entries, statements). Errors carry the PTX line.
//  2. decode*.go: each entry is decoded once, at Load, into a flat slice of
//     inst values — an opcode, resolved register indices, immediates, the
//     branch target as an index, and the function that executes it. Nothing
//     interprets strings while a kernel runs. Unknown instructions are load
//     errors naming the instruction and line.
//  3. launch.go, block.go, warp.go: the machine. A launch runs its blocks on
//     GOMAXPROCS goroutines; a block is a set of warps of 32 lanes (threads
//     numbered x fastest) sharing shared memory and barriers. Each lane has
//     its own PC (Volta-style independent thread scheduling): each step the
//     warp runs the lanes that share the lowest PC, so divergent paths all
//     run and lanes reconverge when their PCs meet again.
//  4. exec_*.go: instruction families (integer, float, conversion, memory,
//     atomics, warp collectives, tensor cores, async copies). Each handler
//     loops over the lanes of one warp-instruction.
//
// Memory is modelled per PTX state space (PTX ISA §5.1): .param (the packed
// kernel arguments, read-only), .global (Device allocations, which look like
// real pointers from 0x7f0000000000), .shared (per block: static variables,
// then the dynamic extern array), .local (per thread) and the generic space,
// whose shared and local windows cvta converts to and from.
//
// Float results are exactly rounded as PTX specifies for the .rn/.rz/.rm/.rp
// modes (round.go). Approximate instructions (ex2.approx, sin.approx, ...)
// are computed in float64 and rounded once, which is within the error bounds
// the ISA states but not bit-identical to a GPU.
//
// An Observer (observe.go) sees every memory access with its lane mask and
// addresses; when none is installed the execution path pays one nil check
// per memory instruction.
package emu
