package ops

// Which kernel the quantised matmuls run, by shape: one function per op
// that both the op's dispatch and its *Version function call, so that
// what kern bench prints beside a timing is what ran.

import (
	"github.com/gokern/kern/ops/internal/i8"
	"github.com/gokern/kern/ops/internal/i8gemv"
	"github.com/gokern/kern/ops/internal/w4"
)

// int4Pick is the version MatmulInt4 runs for m rows of x and depth k.
func int4Pick(m, k int) int {
	switch {
	case m > int4GEMVMaxM:
		return w4GEMM
	case ceilDiv(k, w4.Group) <= w4.TCMaxGroups:
		return w4GEMVTC
	}
	return w4GEMV
}

// int8Pick is the version MatmulInt8 runs for m rows of a and depth k.
func int8Pick(m, k int) int {
	switch {
	case k%i8.TCKAlign == 0 && m > int8V1MaxM:
		return i8V2
	case k%i8gemv.KAlign == 0 && m <= i8gemv.MaxM:
		return i8GEMV
	}
	return i8V1
}

// MatmulInt4Version names the kernel MatmulInt4 runs for an m×n×k
// product: "gemv v1", "gemv v2 mma" (internal/w4) or "gemm 64x128"
// (internal/w4mm). kern bench prints it beside its timings.
func MatmulInt4Version(m, n, k int) string {
	switch int4Pick(m, k) {
	case w4GEMM:
		return "gemm 64x128"
	case w4GEMVTC:
		return "gemv v2 mma"
	}
	return "gemv v1"
}

// MatmulInt8Version names the kernel MatmulInt8 runs for an m×n×k
// product: "v1" (a warp per 16×8 tile), "v2 128x128" (internal/i8) or
// "gemv" (internal/i8gemv).
func MatmulInt8Version(m, n, k int) string {
	switch int8Pick(m, k) {
	case i8V2:
		return "v2 128x128"
	case i8GEMV:
		return "gemv"
	}
	return "v1"
}
