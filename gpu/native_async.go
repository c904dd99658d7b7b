package gpu

// cp.async in native mode: the copy happens immediately, inside CpAsync, so
// CpAsyncCommit and CpAsyncWait have nothing to wait for and do nothing. A
// kernel that reads the destination before CpAsyncWait (and Sync, for other
// threads' copies) is wrong on a GPU yet works here; the emulator's
// synccheck is the tool that catches it.

import (
	"fmt"
	"unsafe"
)

// cpAsync copies srcSize bytes from src to dst and zeroes the rest of the
// size bytes at dst. With srcSize 0, src is not read (it may be nil). dst
// must be size-aligned and lie in the block's shared memory, as on a GPU;
// src is global memory the runtime cannot bounds-check: it is read as raw
// bytes, so the kernel must keep the srcSize bytes inside its slice.
func cpAsync[T Elem](th *thread, dst, src *T, size, srcSize int) {
	if size != 4 && size != 8 && size != 16 {
		panic(fmt.Sprintf("gpu.CpAsync: size %d is not 4, 8 or 16", size))
	}
	if srcSize < 0 || srcSize > size {
		panic(fmt.Sprintf("gpu.CpAsyncZFill: source size %d is not in 0..%d", srcSize, size))
	}
	d := unsafe.Pointer(dst)
	if d == nil || uintptr(d)%uintptr(size) != 0 {
		panic(fmt.Sprintf("gpu.CpAsync: destination %p is not %d-byte aligned", d, size))
	}
	if !th.blk.shared.contains(d, size) {
		panic(fmt.Sprintf("gpu.CpAsync: the %d bytes at destination %p are not in this block's shared memory", size, d))
	}
	out := unsafe.Slice((*byte)(d), size)
	if srcSize > 0 {
		if src == nil {
			panic("gpu.CpAsync: nil source")
		}
		copy(out, unsafe.Slice((*byte)(unsafe.Pointer(src)), srcSize))
	}
	clear(out[srcSize:])
}

// cpAsyncCommit does nothing: every copy is already complete.
func cpAsyncCommit(th *thread) {}

// cpAsyncWait does nothing: every copy is already complete.
func cpAsyncWait(th *thread, n int) {}
