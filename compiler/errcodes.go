package compiler

// Code classifies a diagnostic. Each code names what was rejected; the
// message says what to write instead. docs/language.md lists every code
// with a minimal rejected kernel.
type Code string

const (
	// BadKernelSignature: a //kern:kernel func whose first parameter is not
	// gpu.Thread, that has results, type parameters or a receiver, or a
	// parameter of a type kernels cannot receive.
	//
	//	//kern:kernel
	//	func K(x []float32) // want: func K(t gpu.Thread, x []float32)
	BadKernelSignature Code = "BadKernelSignature"

	// BadDirective: an unknown or malformed //kern: directive option, an
	// option given twice, a misspelt directive (//kern:kernal), one
	// written as a comment (// kern:kernel), or //kern:kernel anywhere but
	// directly above a func.
	BadDirective Code = "BadDirective"

	// UnsupportedClosure: a func literal. Write a named helper func in the
	// same package and call it.
	UnsupportedClosure Code = "UnsupportedClosure"

	// UnsupportedInterface: an interface value, type switch or assertion.
	// Kernels are monomorphic: use a concrete type or a type parameter.
	UnsupportedInterface Code = "UnsupportedInterface"

	// UnsupportedMap: a map. Use a slice indexed by a small integer key.
	UnsupportedMap Code = "UnsupportedMap"

	// UnsupportedString: a string value. Pass bytes as []uint8.
	UnsupportedString Code = "UnsupportedString"

	// UnsupportedGoroutine: a go statement. Every GPU thread already runs
	// the kernel; use more threads.
	UnsupportedGoroutine Code = "UnsupportedGoroutine"

	// UnsupportedChannel: a channel, send, receive or select. Threads
	// communicate through shared memory with t.Sync() or warp shuffles.
	UnsupportedChannel Code = "UnsupportedChannel"

	// UnsupportedDefer: a defer statement, or recover.
	UnsupportedDefer Code = "UnsupportedDefer"

	// UnsupportedRecursion: a helper that calls itself, directly or not.
	// Helpers are inlined; rewrite recursion as a loop.
	UnsupportedRecursion Code = "UnsupportedRecursion"

	// HeapAllocation: make, new, append, a composite literal or a variable
	// whose address escapes. Use gpu.Shared, a local array, or a buffer
	// passed as a parameter.
	HeapAllocation Code = "HeapAllocation"

	// UnsupportedCall: a call to a function outside the kernel subset (not
	// a helper in the same package, not package gpu, math or math/bits
	// functions the compiler knows).
	UnsupportedCall Code = "UnsupportedCall"

	// UnsupportedType: a value of a type kernels cannot hold (complex,
	// pointer-to-pointer, struct with unsupported fields, uintptr, ...).
	UnsupportedType Code = "UnsupportedType"

	// UnsupportedConstruct: any other Go construct outside the subset
	// (unsafe, goto, range over a string or func, three-index slices, ...).
	// (panic is allowed: the host gets the position and, for a constant
	// string, the message; other values are not carried.)
	UnsupportedConstruct Code = "UnsupportedConstruct"

	// DivergentBarrier: t.Sync(), a block reduction or a warp collective
	// reached under control flow that depends on the thread (its index, a
	// value loaded from a thread-dependent address, a shuffle or atomic
	// result). All threads of the block (or warp)
	// must reach it together: move it out of the branch or loop, or make
	// the condition uniform.
	DivergentBarrier Code = "DivergentBarrier"

	// NonConstantShared: gpu.Shared with a length that is not a constant.
	// Use gpu.DynShared and size it at launch.
	NonConstantShared Code = "NonConstantShared"

	// SharedTooLarge: static shared memory over the 48 KiB every target
	// allows without opt-in. Use gpu.DynShared.
	SharedTooLarge Code = "SharedTooLarge"

	// BadIntrinsicArg: an argument to a gpu intrinsic that must be a
	// constant (shuffle width, cp.async size, wait count) is not, or is out
	// of range.
	BadIntrinsicArg Code = "BadIntrinsicArg"

	// UnsupportedTarget: an intrinsic the selected -arch lacks (tensor
	// cores and cp.async need sm_80).
	UnsupportedTarget Code = "UnsupportedTarget"

	// BadUnroll: //kern:unroll above a loop whose trip count is not a
	// small constant, or //kern:unroll N (partial unrolling,
	// unroll_partial.go) with N outside 2..16 or above a loop that is not
	// `for i := a; i < n; i += c` with n unchanged in the loop.
	BadUnroll Code = "BadUnroll"

	// KernelTooLarge: a kernel that grows past maxKernelRegs registers
	// once its helpers are inlined and its loops unrolled, e.g. helpers
	// that each call the next one twice, 20 deep. Call fewer helpers per
	// helper, or drop a //kern:unroll.
	KernelTooLarge Code = "KernelTooLarge"

	// WriteOutsidePartition: a tile kernel partitions an output slice with
	// tile.Rows or tile.Tiles and also reaches the slice another way (a
	// direct store, a re-slice, passing it on), which could write another
	// block's rows or tiles. Write only through the partition, a tile.Part
	// or tile.PartMat (compiler/partition.go).
	//
	//	out := tile.Rows[tile.F32](t, y, cols)
	//	y[0] = 1 // want: tile.Store(t, out, r)
	WriteOutsidePartition Code = "WriteOutsidePartition"

	// WriteToInput: a slice viewed as a read-only input (tile.Input) is
	// also written or partitioned as an output, or a tile.In is written.
	// Give the kernel separate input and output slices.
	WriteToInput Code = "WriteToInput"

	// TileBlockShape: a kernel with a 2-D or 3-D block= uses a tile
	// operation (tile.Load, tile.Store, a reduction), which maps the
	// tile onto ThreadIdx().X alone. Give the kernel a 1-D block
	// (compiler/tileblock.go).
	//
	//	//kern:kernel block=16x16 // want: block=256
	TileBlockShape Code = "TileBlockShape"
)
