// Package nccl binds NVIDIA's collective communications library, libnccl,
// at run time through purego: no cgo, and a binary that runs where NCCL
// is absent (Load reports why).
//
// NCCL is what every multi-GPU inference engine uses for tensor
// parallelism: a communicator is a clique of ranks (one per GPU), created
// by every rank calling CommInitRank with the same UniqueID, which rank 0
// makes with GetUniqueID and hands to the others out of band (package
// llm/tp does that over a local socket). Collectives (AllReduce,
// AllGather, Broadcast) take device pointers and a CUDA stream and return
// once the work is queued on it, like a kernel launch.
//
// The binding is deliberately thin: pointers are cuda.DevicePtr, streams
// cuda.Stream, and every call must be made with the rank's CUDA context
// current (cuda.Context.Do), as NCCL reads the current device; Comm.Abort
// (ncclCommAbort) is the exception, meant to run while another goroutine
// waits in the communicator's work for a rank that is gone. Package
// llm/tp wraps it behind a communicator interface over kern buffers.
//
// One call needs care: ncclCommInitRank takes the 128-byte ncclUniqueId
// by value. A struct that large is passed in memory: on amd64 (System V)
// it is copied onto the stack after the register arguments, on arm64
// (AAPCS64) the caller passes a pointer to a copy (call_*.go).
//
// Only Linux has NCCL; elsewhere Load fails with a LoadError. The tests
// run against a stub libnccl built from C (testdata/stub), which
// implements the collectives on the host for ranks that are threads of
// one process.
package nccl
