// Package errpkg is compiled with Compile (go/packages), which allows any
// import; a kernel still cannot call outside the kernel subset.
package errpkg

import (
	"fmt"

	"github.com/gokern/kern/gpu"
)

//kern:kernel
func Print(t gpu.Thread, x []float32) {
	fmt.Println(x[0]) // ERROR UnsupportedCall "cannot call fmt.Println"
}
