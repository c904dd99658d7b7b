// Package errpkg is compiled with Compile (go/packages), which allows any
// import; a kernel still cannot call outside the kernel subset.
package errpkg

import (
	"fmt"

	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/internal/testkernels/devlib"
)

//kern:kernel
func Print(t gpu.Thread, x []float32) {
	fmt.Println(x[0]) // ERROR UnsupportedCall "cannot call fmt.Println"
}

// A kernel may call a kernel library's functions (devlib is marked
// //kern:library), not those of any other package.
//
//kern:kernel
func Libraries(t gpu.Thread, x []float32) {
	x[0] = devlib.Saxpy(2, x[1], x[2])
	if cuda.CanLaunchEx() { // ERROR UnsupportedCall "cannot call cuda.CanLaunchEx from a kernel: kernels may call helper funcs of the same package, of kernel libraries \\(packages marked //kern:library\\)"
		x[3] = 1
	}
}
