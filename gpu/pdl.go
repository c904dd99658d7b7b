package gpu

// Programmatic dependent launch (PDL, compute capability 9.0+): a kernel
// launched with it may start while the kernel before it on the stream is
// still running, so its launch, block scheduling and any work that does
// not read the earlier kernel's output overlap that kernel's tail. A
// decode step is dozens of small kernels in a row, each a few µs; PDL
// removes most of the gap between them.
//
// The contract, per thread: before WaitPriorGrids returns, read only
// memory that no kernel still in flight writes (weights, constants), and
// write nothing. //kern:kernel pdl places both calls at the kernel's
// entry, which is always safe; call them yourself to start loading
// weights before the wait. On an older GPU, on the emulator and in native
// mode, kernels run one after another and both calls do nothing.

// WaitPriorGrids blocks the thread until every kernel this one depends on
// (the kernels before it on its stream) has completed and its memory
// writes are visible (griddepcontrol.wait, PTX ISA 7.8, sm_90: one of the
// parallel synchronization instructions). It returns at once when the
// kernel was not launched with PDL.
func WaitPriorGrids(t Thread) {}

// LaunchDependents lets the kernel after this one on the stream start
// launching once every block of this kernel has called it or exited
// (griddepcontrol.launch_dependents; PTX ISA 7.8, sm_90). It only
// allows an early start: the dependent still waits for this kernel to
// complete in its WaitPriorGrids.
func LaunchDependents(t Thread) {}
