package kern

import "github.com/gokern/kern/gpu"

// KernelSpec describes one compiled kernel. kern gen writes one per
// //kern:kernel function into the package's generated file; users do not
// write them by hand.
type KernelSpec struct {
	Name  string // Go name of the kernel function, e.g. "FusedSiluGate"
	Pkg   string // import path of the kernel's package
	Entry string // PTX .entry symbol
	// Entry32 is the .entry of the kernel's 32-bit variant (//kern:kernel
	// ... idx32), which a launch runs when its arguments and grid fit
	// 32-bit index arithmetic (index32.go); "" when there is none.
	Entry32 string
	// Facts32 are the launch facts the 32-bit entry's proofs rest on
	// (internal/launchfact): a launch runs Entry32 only when each holds.
	Facts32 []string
	Module  *Module
	Params  []Param
	// Block is the default block shape from the directive (block=256),
	// used by Cover.
	Block gpu.Dim3
	// SharedBytes is the static shared memory the kernel declares.
	SharedBytes int
	// Bounds reports whether the PTX carries device bounds checks that
	// write the error slot (see ErrorSlot).
	Bounds bool
	// PDL reports whether the kernel waits for the kernels before it
	// itself (gpu.WaitPriorGrids, //kern:kernel pdl), so that on compute
	// capability 9.0+ it is launched with programmatic dependent launch
	// and may start while they finish (gpu/pdl.go).
	PDL bool
	// Cooperative reports whether the kernel calls gpu.GridSync: it is
	// launched with every block resident at once, with its grid barrier
	// as a hidden last parameter (cooperative.go).
	Cooperative bool
	// Sites maps a bounds-check site number (written to the error slot)
	// to the Go position it guards, "file.go:12:7".
	Sites []string
	// Native runs the Go function for one thread in native mode; args are
	// the kernel's arguments after t, slices as []T.
	Native func(t gpu.Thread, args []any)
	// Source lists the functions the kernel was compiled from
	// ("file.go:Name"), and SourceHash a hash of their text: the first
	// launch compares them with the source files (stale.go).
	Source     []string
	SourceHash string
}

// Module is the PTX of one Go package: every kernel of the package is an
// entry of the same module, so it is loaded once per device.
type Module struct {
	Pkg  string
	Arch string // the .target it was compiled for, e.g. "sm_80"
	PTX  string
	// kernels are the module's kernels in .entry order, registered by
	// NewKernel; the error slot names a kernel by this index.
	kernels []*Kernel
}

// ParamKind says how a kernel parameter is passed.
type ParamKind uint8

const (
	ScalarParam ParamKind = iota // passed by value in .param space
	SliceParam                   // device pointer (.u64) then length (.s64)
)

// Param describes one kernel parameter after the gpu.Thread.
type Param struct {
	Name string
	Kind ParamKind
	Elem string // element or scalar Go type: "float32", "gpu.Half", ...
	Size int    // bytes of one element or of the scalar
	// Writes is true when the kernel may store to the slice (or its
	// elements are the target of an atomic); such a buffer must not
	// overlap any other argument at launch.
	Writes bool
}
