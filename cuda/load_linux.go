package cuda

import "errors"

// Linux: the driver is libcuda.so.1, installed by the NVIDIA driver package
// (never by the toolkit). libcuda.so is tried second because some container
// images only carry the unversioned name; it is the same library.
var defaultLibraries = []string{"libcuda.so.1", "libcuda.so"}

var errUnsupportedOS = errors.New("no driver library name to try")
