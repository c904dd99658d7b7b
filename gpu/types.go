package gpu

// Dim3 is a three-dimensional index or extent, as CUDA's dim3, with int
// fields so that indexing needs no conversions.
type Dim3 struct{ X, Y, Z int }

// Elem is every scalar type a kernel parameter, slice element, local or
// shared-memory cell may have.
type Elem interface {
	~bool | ~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 |
		~float32 | ~float64
}

// Float is the floating-point types the math functions accept.
type Float interface{ ~float32 | ~float64 }

// Number is the types warp and block reductions accept.
type Number interface {
	~int | ~int32 | ~int64 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Word is the types a warp shuffle moves: 32-bit values move in one
// shfl.sync, 64-bit values in two.
type Word interface {
	~int | ~int32 | ~int64 | ~uint32 | ~uint64 | ~float32 | ~float64
}
