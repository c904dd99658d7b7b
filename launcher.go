package kern

// Launcher is embedded in every typed launcher kern gen writes
// (FooKernel): it holds the kernel, so that a generated launcher is a
// struct type and its one typed Launch method.
type Launcher struct{ k *Kernel }

// NewLauncher is called by generated code, once per kernel in the order
// of the module's entries; see NewKernel.
func NewLauncher(spec KernelSpec) Launcher { return Launcher{NewKernel(spec)} }

// Kernel returns the untyped kernel, for its Spec and for launching with
// Arg values.
func (l Launcher) Kernel() *Kernel { return l.k }
