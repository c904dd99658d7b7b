// Command profiled launches one kernel on the device kern.Open picks; the
// kern prof test runs it on the emulator.
package main

import (
	"fmt"
	"os"

	"github.com/gokern/kern"
	tk "github.com/gokern/kern/internal/testkernels"
)

func main() {
	dev, err := kern.Open()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer dev.Close()
	x, _ := kern.Upload(dev, make([]float32, 4096))
	y, _ := kern.Alloc[float32](dev, 4096)
	if err := tk.AxpyKernel.Launch(dev, kern.Cover(4096), 2, x, y); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
