package kern_test

import (
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/cuda"
)

// CUDAPointer and CUDAStream hand a library the raw pointer and stream:
// on the stub driver, reading the pointer through the driver gives the
// buffer's contents, and a Stream's handle is the driver's.
func TestCUDAInteropOnTheStubDriver(t *testing.T) {
	dev := openStubCUDA(t)
	defer dev.Close()
	b, err := kern.Upload(dev, []float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	p, ctx, err := kern.CUDAPointer(b)
	if err != nil || p == 0 || ctx == 0 {
		t.Fatalf("CUDAPointer = %#x, %#x, %v", p, ctx, err)
	}
	got := make([]float32, 3)
	if err := ctx.Do(func() error { return cuda.CopyDtoH(got, p) }); err != nil || got[2] != 3 {
		t.Fatalf("reading the pointer: %v, %v", got, err)
	}
	if s, c2, err := kern.CUDAStream(dev); s != 0 || c2 != ctx || err != nil {
		t.Errorf("CUDAStream(device) = %#x, %#x, %v; want the default stream of %#x", s, c2, err, ctx)
	}
	st, err := dev.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s, _, err := kern.CUDAStream(st); s == 0 || err != nil {
		t.Errorf("CUDAStream(stream) = %#x, %v", s, err)
	}
	b.Free()
	if _, _, err := kern.CUDAPointer(b); err == nil {
		t.Error("CUDAPointer of a freed buffer")
	}
}

func TestCUDAInteropRefusesOtherDevices(t *testing.T) {
	dev := kern.OpenNative()
	b, _ := kern.Alloc[float32](dev, 1)
	if _, _, err := kern.CUDAPointer(b); err == nil || !strings.Contains(err.Error(), "not a CUDA device") {
		t.Errorf("CUDAPointer on native: %v", err)
	}
	if _, _, err := kern.CUDAStream(dev); err == nil || !strings.Contains(err.Error(), "not a CUDA device") {
		t.Errorf("CUDAStream on native: %v", err)
	}
}
