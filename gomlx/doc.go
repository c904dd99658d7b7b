// Package gomlx is the GoMLX backend "kern": GoMLX graphs run as kern
// kernels on any kern device (a GPU through CUDA, the PTX emulator, or
// native Go), so GoMLX's autodiff gives training on top of kernels written
// in kern's own language.
//
// Importing the package registers the backend; select it with
// GOMLX_BACKEND="kern" (the first GPU), "kern:emu", "kern:native" or
// "kern:cuda:N". It lives in its own Go module so that kern's core does
// not inherit GoMLX's dependencies.
//
// The backend follows GoMLX's pure-Go simplego backend: Builder methods
// record a graph of nodes (shapes come from GoMLX's shapeinference), and
// Compile turns the nodes the outputs need into an execution plan in
// recording order, with the step after which each intermediate buffer is
// freed. Every tensor is a kern.Buffer of the dtype's storage type on the
// device; executing the plan launches kernels only, so a chain of
// executions moves no data between host and device until the user asks
// for a value (transfer.go counts every transfer, and the tests hold the
// count at zero). Small per-node constants (strides for copies, index
// maps) are uploaded when a node is recorded, not when it runs.
//
// The kernels (kernels_*.go) are //kern:kernel functions compiled by
// `kern gen` into gomlx_kern.go. Element-wise kernels take an op code,
// a uniform branch, so one kernel per dtype serves every unary or binary
// op: fewer kernels to generate and load, at the cost of one compare per
// thread. Float16 and bfloat16 compute in float32 and round once.
//
// Files: backend.go (registration, devices), buffer.go and transfer.go
// (DataInterface), pool.go (buffer reuse), builder.go (graph recording),
// exec.go (plan and Execute), fusion.go (patterns run as one kern ops kernel), ops_*.go
// (one file per op family), dispatch.go (dtype → kernel tables), ops.go
// (the op lists), kernels_*.go (the kernels).
package gomlx

//go:generate go run github.com/gokern/kern/cmd/kern gen
