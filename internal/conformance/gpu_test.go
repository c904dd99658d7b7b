//go:build gpu

package conformance

import (
	"fmt"
	"os"

	"github.com/gokern/kern"
)

// gpuDevices opens the first GPU for -tags gpu runs. Without one the GPU
// leg is skipped with a message, unless KERN_REQUIRE_GPU=1 demands it.
func gpuDevices() []*kern.Device {
	dev, err := kern.OpenCUDA(0)
	if err != nil {
		if os.Getenv("KERN_REQUIRE_GPU") == "1" {
			panic(fmt.Sprintf("KERN_REQUIRE_GPU=1 but no GPU: %v", err))
		}
		fmt.Fprintf(os.Stderr, "conformance: -tags gpu without a GPU, testing emu and native only: %v\n", err)
		return nil
	}
	return []*kern.Device{dev}
}
