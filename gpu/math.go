package gpu

import "math"

// Math functions, generic over float32 and float64. In native mode they are
// Go's math package, rounded once to T. On the device float32 uses the
// hardware's approximate units after an exact range reduction; the error
// bounds stated per function are checked by the compiler's tests against
// float64 references and are the bounds the emulator is held to as well.
// float64 versions are software routines with errors of at most 2 ulp.
// NaN and infinities propagate as in Go's math package.

// Exp returns e**x. float32: at most 2 ulp. float64: at most 1 ulp.
func Exp[T Float](x T) T { return T(math.Exp(float64(x))) }

// Exp2 returns 2**x. float32: at most 2 ulp (ex2.approx.f32). float64: at
// most 1 ulp, exact for integer x.
func Exp2[T Float](x T) T { return T(math.Exp2(float64(x))) }

// Log returns the natural logarithm of x. float32: at most 2 ulp or 2^-21
// absolute error near 1. float64: at most 1 ulp.
func Log[T Float](x T) T { return T(math.Log(float64(x))) }

// Log2 returns the base-2 logarithm of x. float32: at most 2 ulp or 2^-22
// absolute error near 1 (lg2.approx.f32). float64: at most 1 ulp.
func Log2[T Float](x T) T { return T(math.Log2(float64(x))) }

// Sqrt returns the square root of x, correctly rounded (sqrt.rn).
func Sqrt[T Float](x T) T { return T(math.Sqrt(float64(x))) }

// Rsqrt returns 1/Sqrt(x). float32: at most 2 ulp (rsqrt.approx.f32).
func Rsqrt[T Float](x T) T { return T(1 / math.Sqrt(float64(x))) }

// Sin returns the sine of x radians. float32: absolute error at most 2^-20
// for |x| < 1e5 after reduction to [-π, π]. float64: at most 1 ulp for
// |x| < 1.5·2^20, absolute error at most 2^-50 for |x| < 2^52, and a value
// in [-1, 1] without accuracy beyond.
func Sin[T Float](x T) T { return T(math.Sin(float64(x))) }

// Cos returns the cosine of x radians, with Sin's error bounds.
func Cos[T Float](x T) T { return T(math.Cos(float64(x))) }

// Tanh returns the hyperbolic tangent of x. float32: at most 2 ulp.
// float64: at most 1 ulp.
func Tanh[T Float](x T) T { return T(math.Tanh(float64(x))) }

// Erf returns the error function of x. float32: at most 2 ulp. float64: at
// most 1 ulp.
func Erf[T Float](x T) T { return T(math.Erf(float64(x))) }

// Abs returns |x| (exact).
func Abs[T Float](x T) T { return T(math.Abs(float64(x))) }

// Min returns the smaller of x and y; if either is NaN the other is
// returned (min.f32 semantics, unlike Go's builtin min).
func Min[T Float](x, y T) T {
	switch {
	case x != x:
		return y
	case y != y:
		return x
	case x < y || x == y && math.Signbit(float64(x)):
		return x
	}
	return y
}

// Max returns the larger of x and y; if either is NaN the other is
// returned (max.f32 semantics).
func Max[T Float](x, y T) T {
	switch {
	case x != x:
		return y
	case y != y:
		return x
	case x > y || x == y && !math.Signbit(float64(x)):
		return x
	}
	return y
}

// FMA returns x*y+z rounded once (fma.rn).
func FMA[T Float](x, y, z T) T {
	if _, ok := any(x).(float32); ok {
		return T(fma32(float32(x), float32(y), float32(z)))
	}
	return T(math.FMA(float64(x), float64(y), float64(z)))
}

// Floor returns the greatest integer value ≤ x (cvt.rmi).
func Floor[T Float](x T) T { return T(math.Floor(float64(x))) }

// Ceil returns the least integer value ≥ x (cvt.rpi).
func Ceil[T Float](x T) T { return T(math.Ceil(float64(x))) }
