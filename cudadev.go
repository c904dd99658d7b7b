package kern

import (
	"fmt"
)

// OpenCUDA opens GPU number ordinal through the NVIDIA driver.
func OpenCUDA(ordinal int) (*Device, error) {
	return nil, fmt.Errorf("%w: the CUDA device is not wired into package kern yet; set KERN_DEVICE=emu to run on the PTX emulator, or KERN_DEVICE=native for native mode", ErrNoDriver)
}
