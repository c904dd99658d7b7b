package kern

import (
	"fmt"
	"reflect"

	"github.com/gokern/kern/gpu"
)

// elemName is T's name as kern gen writes a parameter's element type
// (Param.Elem): "float32", "gpu.Half", or for a named type of the
// kernel's own package its bare name. The common types are found by a
// type switch on a nil pointer, which neither allocates nor calls
// reflect, because launches call this once per argument.
func elemName[T gpu.Elem]() string {
	switch any((*T)(nil)).(type) {
	case *float32:
		return "float32"
	case *float64:
		return "float64"
	case *int32:
		return "int32"
	case *uint32:
		return "uint32"
	case *int:
		return "int"
	case *int64:
		return "int64"
	case *uint64:
		return "uint64"
	case *gpu.Half:
		return "gpu.Half"
	case *gpu.BFloat16:
		return "gpu.BFloat16"
	case *bool:
		return "bool"
	case *int8:
		return "int8"
	case *uint8:
		return "uint8"
	case *int16:
		return "int16"
	case *uint16:
		return "uint16"
	case *uint:
		return "uint"
	}
	return reflect.TypeFor[T]().String()
}

// sameElem reports whether an argument's element type (elemName) is the
// parameter's (Param.Elem). kern gen writes a type of the kernel's own
// package without its package name, which reflect includes.
func sameElem(arg, param string) bool {
	if arg == param {
		return true
	}
	n := len(arg) - len(param)
	return n > 1 && arg[n-1] == '.' && arg[n:] == param
}

// byteSize formats a byte count for messages: "4.0 EiB", "512 B".
func byteSize(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
