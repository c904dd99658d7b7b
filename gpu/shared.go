package gpu

// Shared returns a block-shared array of n elements (PTX .shared). n must
// be a constant; each call site is one allocation per block, so calling
// Shared twice at the same site in one thread yields the same memory.
// Contents are undefined until written.
func Shared[T Elem](t Thread, n int) []T { return sharedArray[T](t.th, n) }

// DynShared returns the block's dynamic shared memory (extern .shared)
// viewed as []T; its length is the byte size given at launch divided by the
// size of T. All DynShared calls in a kernel alias the same memory.
func DynShared[T Elem](t Thread) []T { return dynShared[T](t.th) }
