// Package devmath holds the device implementations of the gpu math
// functions that have no short PTX instruction sequence: float32 Tanh and
// Erf, and the float64 transcendental functions.
//
// Each routine is ordinary Go in the kernel subset. The compiler inlines
// devmath.<Name>32 or devmath.<Name>64 where a kernel calls gpu.<Name>;
// native mode never runs them (it uses package math), so the tests in this
// package run each routine as plain Go to hold it to the error bound
// documented on it and on the gpu function. Users call package gpu, not
// this package.
//
// Files: exp.go (Exp64, Exp264, and the float32 exp32 behind Tanh32),
// log.go (Log64, Log264), trig.go (Sin64, Cos64), tanh.go, erf.go. Each
// opens with its method: range reduction, the polynomial and the interval
// it is fitted on, and how the last additions are kept exact.
//
// Rules for code here, since every routine is inlined at each call site:
//   - Only arithmetic, comparisons, conversions, if/else, loops, locals,
//     calls to other funcs of this package (no recursion), the math bit
//     conversions and math.Copysign. Use gpu.FMA, gpu.Floor and gpu.Abs
//     rather than math.FMA, math.Floor and math.Abs: the compiler lowers
//     those math functions only through package gpu today.
//   - No package-level variables or tables; constants and local arrays
//     only. Build ±Inf and NaN from bits (math.Float64frombits).
//   - float32 routines use float32 arithmetic only and no hardware
//     approximations (gpu.Exp etc. on float32), so their native results
//     are exactly what the device computes: Go rounds every float32 and
//     float64 operation, and the compiler emits .rn arithmetic that ptxas
//     does not contract into fma.
//
// Coefficients: internal/gen/remez.py fits every polynomial (a Remez
// exchange in mpmath at 80 digits, weighted for relative or absolute
// error) and internal/gen/consts.py splits the reduction constants (ln 2,
// π/2) into parts whose products with the reduction integer are exact.
// Both print Go literals that are pasted into the sources.
//
// Tests: accuracy_test.go checks every float64 routine against math/big
// references (ref_test.go: Taylor series after exact reduction, π from
// Machin's formula at 1600 bits) over log-uniform and uniform samples and
// listed boundaries; accuracy32_test.go checks the float32 ones against
// float64 math on every 251st float32 (every one with -exhaustive);
// special_test.go checks NaN, ±Inf, ±0 and saturation; compile_test.go
// compiles a kernel per gpu function and type and assembles it with ptxas.
package devmath
