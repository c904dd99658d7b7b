package cuda

import (
	"errors"
	"slices"
	"testing"
	"unsafe"
)

func TestMemoryRoundTrip(t *testing.T) {
	ctx := stubContext(t)
	base := stub.allocated()
	do(t, ctx, func() error {
		const n = 1000
		src := make([]uint32, n)
		for i := range src {
			src[i] = uint32(i*2654435761) ^ 0xdeadbeef
		}
		a, err := MemAlloc(4 * n)
		if err != nil {
			return err
		}
		b, err := MemAlloc(4 * n)
		if err != nil {
			return err
		}
		if got := stub.allocated() - base; got != 8*n {
			t.Errorf("stub holds %d bytes after two allocations, want %d", got, 8*n)
		}
		free, total, err := MemGetInfo()
		if err != nil || total != 40<<30 || total-free != uint64(stub.allocated()) {
			t.Errorf("MemGetInfo() = %d, %d, %v", free, total, err)
		}

		if err := MemcpyHtoD(a, unsafe.Pointer(&src[0]), 4*n); err != nil {
			return err
		}
		if err := MemcpyDtoD(b, a, 4*n); err != nil {
			return err
		}
		got := make([]uint32, n)
		if err := MemcpyDtoH(unsafe.Pointer(&got[0]), b, 4*n); err != nil {
			return err
		}
		if !slices.Equal(got, src) {
			t.Errorf("H2D, D2D, D2H round trip changed the data")
		}

		// Offsets into an allocation are plain addition.
		if err := MemsetD32(b+4*10, 0x01020304, 5); err != nil {
			return err
		}
		if err := MemsetD8(b+4*20, 0xff, 3); err != nil {
			return err
		}
		if err := CopyDtoH(got, b); err != nil {
			return err
		}
		want := slices.Clone(src)
		for i := 10; i < 15; i++ {
			want[i] = 0x01020304
		}
		want[20] = want[20] | 0x00ffffff
		if !slices.Equal(got, want) {
			t.Errorf("memset: got[9:21] = %x, want %x", got[9:21], want[9:21])
		}

		// Copies past the end of an allocation are rejected by the stub,
		// which proves sizes reach it unchanged.
		if err := MemcpyDtoH(unsafe.Pointer(&got[0]), b+4, 4*n); !errors.Is(err, ErrorInvalidValue) {
			t.Errorf("out-of-range copy: %v, want CUDA_ERROR_INVALID_VALUE", err)
		}
		if err := MemsetD32(b+2, 0, 1); !errors.Is(err, ErrorInvalidValue) {
			t.Errorf("misaligned MemsetD32: %v", err)
		}

		if err := MemFree(a); err != nil {
			return err
		}
		if err := MemFree(a); !errors.Is(err, ErrorInvalidValue) {
			t.Errorf("double free: %v", err)
		}
		return MemFree(b)
	})
	if got := stub.allocated(); got != base {
		t.Errorf("stub holds %d bytes after freeing, want %d", got, base)
	}
	for _, name := range []string{"cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2",
		"cuMemcpyDtoD_v2", "cuMemsetD8_v2", "cuMemsetD32_v2", "cuMemGetInfo_v2"} {
		if stub.calls(name) == 0 {
			t.Errorf("%s was never called", name)
		}
	}
}

func TestMemoryAsyncAndPinned(t *testing.T) {
	ctx := stubContext(t)
	base := stub.allocated()
	do(t, ctx, func() error {
		s, err := StreamCreate(StreamNonBlocking)
		if err != nil {
			return err
		}
		defer s.Destroy()
		const n = 64
		host, err := MemAllocHost(8 * n)
		if err != nil {
			return err
		}
		pinned := unsafe.Slice((*uint64)(host), n)
		for i := range pinned {
			pinned[i] = uint64(i) << 33
		}
		p, err := MemAllocAsync(8*n, s)
		if err != nil {
			return err
		}
		if err := MemcpyHtoDAsync(p, host, 8*n, s); err != nil {
			return err
		}
		q, err := MemAlloc(8 * n)
		if err != nil {
			return err
		}
		if err := MemcpyDtoDAsync(q, p, 8*n, s); err != nil {
			return err
		}
		if err := MemsetD32Async(q, 7, 2, s); err != nil { // first u64 = 7 | 7<<32
			return err
		}
		if err := MemsetD8Async(q+8, 1, 1, s); err != nil {
			return err
		}
		out := make([]uint64, n)
		if err := MemcpyDtoHAsync(unsafe.Pointer(&out[0]), q, 8*n, s); err != nil {
			return err
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
		want := slices.Clone(pinned)
		want[0] = 7 | 7<<32
		want[1] |= 1
		if !slices.Equal(out, want) {
			t.Errorf("async round trip: got %x..., want %x...", out[:3], want[:3])
		}
		if err := MemFreeAsync(p, s); err != nil {
			return err
		}
		if err := MemFree(q); err != nil {
			return err
		}
		return MemFreeHost(host)
	})
	if got := stub.allocated(); got != base {
		t.Errorf("leak: stub holds %d bytes, want %d", got, base)
	}
}

func TestMemoryNeedsContext(t *testing.T) {
	useStub(t)
	// A goroutine on its own fresh thread with no context current: the
	// stub, like the driver, refuses. This is what Context.Do prevents.
	errc := make(chan error)
	go func() {
		lockThreadForever()
		if err := CtxSetCurrent(0); err != nil {
			errc <- err
			return
		}
		_, err := MemAlloc(16)
		errc <- err
	}()
	if err := <-errc; !errors.Is(err, ErrorInvalidContext) {
		t.Errorf("MemAlloc without a context: %v, want CUDA_ERROR_INVALID_CONTEXT", err)
	}
}
