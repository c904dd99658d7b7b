package kern

// Which devices can load a module: PTX for sm_XY runs on compute
// capability X.Y and newer (the driver JIT-compiles it forward), but the
// architecture-specific targets (sm_90a: wgmma, setmaxnreg) are not
// forward compatible and load only on exactly that capability. Checking
// before the driver does turns its bare CUDA_ERROR_NO_BINARY_FOR_GPU into
// an error naming the package and what to do.

import (
	"fmt"
	"strconv"
	"strings"
)

// archFits reports whether a module compiled for arch loads on a device
// of compute capability major.minor.
func archFits(arch string, major, minor int) error {
	s, specific := strings.CutSuffix(strings.TrimPrefix(arch, "sm_"), "a")
	v, err := strconv.Atoi(s)
	if err != nil || !strings.HasPrefix(arch, "sm_") {
		return fmt.Errorf("module target %q is not sm_XY", arch)
	}
	dev := 10*major + minor
	switch {
	case specific && dev != v:
		return fmt.Errorf("module is compiled for %s, which runs only on compute capability %d.%d; this device is sm_%d (regenerate the package for its architecture, or use the package's portable kernels)", arch, v/10, v%10, dev)
	case dev < v:
		return fmt.Errorf("module is compiled for %s; this device is sm_%d, older (kern gen -arch sm_%d)", arch, dev, dev)
	}
	return nil
}
