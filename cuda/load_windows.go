package cuda

import "errors"

// Windows: the driver is nvcuda.dll in System32, installed with the display
// driver. It exports the same _v2 names as libcuda.
var defaultLibraries = []string{"nvcuda.dll"}

var errUnsupportedOS = errors.New("no driver library name to try")
