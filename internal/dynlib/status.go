package dynlib

import (
	"strconv"
	"strings"
	"unsafe"
)

// CodeInfo is the built-in name and description of a library's status
// code (CUresult, cublasStatus_t, ...).
type CodeInfo struct{ Name, Text string }

// Codes is a library's built-in status table: what an error says when the
// library cannot name a code itself (it is not loaded, or it is a version
// without the name function, or it does not know the code).
type Codes[T ~int32] map[T]CodeInfo

// Name returns code's name, or "typeName(N)" for a code the table lacks.
func (c Codes[T]) Name(code T, typeName string) string {
	if info, ok := c[code]; ok {
		return info.Name
	}
	return typeName + "(" + strconv.Itoa(int(code)) + ")"
}

// Text returns code's description, or "".
func (c Codes[T]) Text(code T) string { return c[code].Text }

// GoString copies the NUL-terminated C string at p (a library's static
// data, such as the result of cuGetErrorName) into Go memory.
func GoString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return strings.Clone(unsafe.String(p, n))
}
