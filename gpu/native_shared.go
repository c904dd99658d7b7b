package gpu

// Shared memory of native mode. Each Shared call site gets one array per
// block, found by the call's program counter, so a Shared call in a loop
// returns the same memory every time; DynShared views the block's one
// dynamic buffer. All of it is 16-byte aligned and zeroed at the start of
// every block (on a GPU its contents are undefined until written).
//
// A call site is a program counter: if a helper that calls Shared is
// inlined at two places, each inlined copy is its own call site (on a GPU
// the helper's array would be one).

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// sharedMem is one block's shared memory.
type sharedMem struct {
	mu     sync.RWMutex
	arrays []sharedArrayMem
	dyn    []byte // dynamic shared memory, fixed for the launch
}

// sharedArrayMem is the memory of one Shared call site.
type sharedArrayMem struct {
	pc       uintptr
	elemSize uintptr
	n        int
	mem      []byte
}

func sharedArray[T Elem](th *thread, n int) []T {
	var pcs [1]uintptr
	// Skip runtime.Callers, sharedArray and Shared: the pc is the
	// kernel's call of Shared.
	runtime.Callers(3, pcs[:])
	var zero T
	mem, err := th.blk.shared.array(pcs[0], unsafe.Sizeof(zero), n)
	if err != nil {
		panic(err)
	}
	return castSlice[T](mem, n)
}

func dynShared[T Elem](th *thread) []T {
	var zero T
	dyn := th.blk.shared.dyn
	return castSlice[T](dyn, len(dyn)/int(unsafe.Sizeof(zero)))
}

// array returns the memory of the call site pc, allocating it on first use.
func (s *sharedMem) array(pc, elemSize uintptr, n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("gpu.Shared: negative length %d", n)
	}
	s.mu.RLock()
	a, ok := s.find(pc)
	s.mu.RUnlock()
	if !ok {
		s.mu.Lock()
		if a, ok = s.find(pc); !ok {
			a = sharedArrayMem{pc: pc, elemSize: elemSize, n: n, mem: alloc16(int(elemSize) * n)}
			s.arrays = append(s.arrays, a)
		}
		s.mu.Unlock()
	}
	if a.n != n || a.elemSize != elemSize {
		return nil, fmt.Errorf("gpu.Shared: this call site asked for %d elements of %d bytes, earlier for %d of %d: the length must be a constant",
			n, elemSize, a.n, a.elemSize)
	}
	return a.mem, nil
}

func (s *sharedMem) find(pc uintptr) (sharedArrayMem, bool) {
	for _, a := range s.arrays {
		if a.pc == pc {
			return a, true
		}
	}
	return sharedArrayMem{}, false
}

// zero clears all shared memory for the next block.
func (s *sharedMem) zero() {
	s.mu.Lock()
	for _, a := range s.arrays {
		clear(a.mem)
	}
	clear(s.dyn)
	s.mu.Unlock()
}

// contains reports whether the n bytes at p lie inside one of the block's
// shared arrays or its dynamic shared memory.
func (s *sharedMem) contains(p unsafe.Pointer, n int) bool {
	in := func(mem []byte) bool {
		if len(mem) == 0 {
			return false
		}
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
		return uintptr(p) >= lo && uintptr(p)-lo+uintptr(n) <= uintptr(len(mem))
	}
	if in(s.dyn) {
		return true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, a := range s.arrays {
		if in(a.mem) {
			return true
		}
	}
	return false
}

// alloc16 returns n zeroed bytes whose first byte is 16-byte aligned.
func alloc16(n int) []byte {
	buf := make([]byte, n+15)
	off := -int(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))) & 15
	return buf[off : off+n : off+n]
}

// castSlice views the first n elements' worth of mem as []T. T holds no
// pointers (it is an Elem), so the garbage collector needs no type
// information for the memory.
func castSlice[T Elem](mem []byte, n int) []T {
	if n == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(mem))), n)
}
