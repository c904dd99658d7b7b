// Package emu executes PTX text on the CPU: it is kern's proof of
// correctness on machines without an NVIDIA GPU, and the base of its
// sanitizers and profiler.
//
// emu runs the exact PTX that kern's compiler emits (PTX ISA 7.x/8.x for
// sm_80), so a kernel that is right on emu is right in the form the driver
// JIT-compiles, not just in its Go source. It also runs what clang, nvcc
// and Triton emit (testdata/corpus), so a CUDA kernel can be run and
// sanitized without a GPU (LoadFile, EntryInfo.Pack, and kern emu).
//
//	m, err := emu.Load(ptx)                      // parse and decode, once
//	dev := emu.NewDevice(emu.Options{})
//	x, err := dev.Alloc(4 * n)                   // 0x7f00_0000_0000 and up
//	err = dev.Write(x, bytes)
//	err = dev.Launch(m, "Kernel", emu.LaunchConfig{Grid: [3]int{g}, Block: [3]int{256}, Params: packed})
//	addr, size, err := dev.Global(m, "kern_error")
//
// # Phases
//
//  1. lex.go, parse.go, parse_stmt.go, scope.go: text to a small syntax
//     tree (module directives, variables, entries, functions, statements).
//     Names declared in nested { } blocks are renamed apart. Every error
//     is collected with its PTX line (ErrorList): module-level ones fail
//     Load, those in a body belong to that function.
//  2. kernel.go, decode.go, inline.go, call.go: each entry is decoded
//     once, at Load, into a flat slice of inst values: the function that
//     executes it, resolved register slots, immediates as bit patterns,
//     branch targets as indices, the PTX line and the last .loc. Calls to
//     .func are expanded inline; recursive and indirect calls run on a
//     per-lane call stack. decode.go holds the table of every mnemonic emu
//     knows; anything else is a load error naming the instruction and
//     line, which fails that entry only (launching it returns the error).
//     Nothing interprets strings while a kernel runs.
//  3. launch.go, block.go, warp.go, control.go: the machine. A launch runs
//     its blocks on Options.Workers goroutines (GOMAXPROCS by default);
//     a block is warps of 32 lanes (threads numbered x fastest) sharing
//     shared memory and 16 named barriers. Each lane has its own PC
//     (independent thread scheduling, as on Volta and later): each step a
//     warp runs the lanes that share the lowest PC, so divergent paths all
//     run and lanes reconverge where their PCs meet. A .sync collective
//     runs when every non-exited lane of its member mask has reached it;
//     a barrier completes when every thread of the block that has not
//     exited has arrived. A block in which nothing can move is a deadlock
//     error describing where each warp waits.
//  4. exec_*.go: instruction families (integer, float, comparison,
//     conversion, memory, atomics, warp collectives, tensor cores, async
//     copies). Each handler loops over the lanes of one warp-instruction;
//     registers are stored lane-minor so that loop is over adjacent
//     words.
//
// # Memory
//
// Memory is modelled per PTX state space (PTX ISA §5.1): .param (the packed
// kernel arguments, read-only), .global and .const (Device allocations,
// 256-byte aligned from 0x7f0000000000 with unmapped gaps between them,
// and module variables, one copy per Device), .shared (per block: static
// variables, then dynamic extern arrays), .local (per thread) and the
// generic space, in which shared and local memory appear in two windows
// that cvta converts to and from. Every access is bounds- and
// alignment-checked; a fault is an *Error naming kernel, block, thread,
// instruction, PTX line and the Go file:line from .loc.
//
// # Numerics
//
// Float results are exactly rounded as PTX specifies for the .rn/.rz/.rm/
// .rp modes, including f32 fma (round.go explains why float32(math.FMA(..))
// is not enough). NaN results are the canonical NaN. Approximate
// instructions (ex2.approx, sin.approx, rsqrt.approx, ...) are computed in
// float64 and rounded once: within the ISA's stated error bounds, but a
// GPU may differ in the last bits. mma accumulates in float64 and rounds
// once; a tensor core's internal order and precision are unspecified.
//
// Comments cite the PTX ISA by section number and instruction name; the
// numbers follow the 8.x documents and drift between versions, the names
// do not.
//
// # Tools
//
// An Observer (observe.go) sees every warp-instruction and memory access
// with its lane mask and addresses; without one the execution path pays a
// nil check. Profile (profile.go) is an Observer that counts shared-memory
// bank conflicts and global-memory sector efficiency per instruction.
// Options.Memcheck, Racecheck and Synccheck turn on sanitizers
// (sanitize.go) that report out-of-bounds, misaligned and uninitialized
// accesses, shared-memory races between warps, divergent aligned barriers
// and shuffles from non-executing lanes as a *Report, instead of stopping
// at the first fault.
package emu
