package kern_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/cuda"
	tk "github.com/gokern/kern/internal/testkernels"
)

// TestSliceLaunchesOnItsElements: a kernel launched on views reads and
// writes the allocation's elements lo…hi−1 and nothing else, its len(y)
// is the view's (a grid past it writes nothing), and views of views
// start where their elements are.
func TestSliceLaunchesOnItsElements(t *testing.T) {
	const n, lo, hi = 1000, 256, 768
	xs, ys := randFloats(n, 3), randFloats(n, 4)
	for _, dev := range devices() {
		x, _ := kern.Upload(dev, xs)
		y, _ := kern.Upload(dev, ys)
		xv, err := x.Slice(lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		yv, err := y.Slice(lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		if yv.Len() != hi-lo {
			t.Errorf("%s: Len %d, want %d", dev.Kind(), yv.Len(), hi-lo)
		}
		if err := tk.AxpyKernel.Launch(dev, kern.Cover(n), 1.5, xv, yv); err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		got, err := y.Download()
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			want := ys[i]
			if i >= lo && i < hi {
				want = float32(1.5)*xs[i] + ys[i]
			}
			if got[i] != want {
				t.Fatalf("%s: y[%d] = %v, want %v (the view is [%d, %d))", dev.Kind(), i, got[i], want, lo, hi)
			}
		}
		// A view of a view, read and written from the host.
		vv, err := yv.Slice(64, 128)
		if err != nil {
			t.Fatal(err)
		}
		if s := vv.String(); !strings.Contains(s, "of 64 at 320 of 1000") {
			t.Errorf("%s: String() = %q, want it to say where the view starts", dev.Kind(), s)
		}
		part, err := vv.Download()
		if err != nil || len(part) != 64 || part[0] != got[lo+64] || part[63] != got[lo+127] {
			t.Fatalf("%s: Download of y[320:384]: %d elements, %v", dev.Kind(), len(part), err)
		}
		if err := vv.CopyFrom(make([]float32, 64)); err != nil {
			t.Fatal(err)
		}
		after, _ := y.Download()
		for i := range after {
			zero := i >= lo+64 && i < lo+128
			if zero && after[i] != 0 || !zero && after[i] != got[i] {
				t.Fatalf("%s: after CopyFrom into y[320:384], y[%d] = %v", dev.Kind(), i, after[i])
			}
		}
	}
}

// TestSliceBoundsAreTheViews: an index past the view is a device bounds
// error naming the view's length, though the allocation has memory there.
func TestSliceBoundsAreTheViews(t *testing.T) {
	for _, dev := range devices() {
		x, _ := kern.Upload(dev, randFloats(256, 5))
		xv, _ := x.Slice(64, 128)
		idx, _ := kern.Upload(dev, []int32{0, 63, 64, 1})
		out, _ := kern.Alloc[float32](dev, 4)
		err := tk.GatherKernel.Launch(dev, kern.Cover(4), xv, idx, out)
		var de *kern.DeviceError
		if !errors.As(err, &de) || de.Index != 64 || de.Length != 64 {
			t.Errorf("%s: gather of index 64 from a view of 64: %v, want a DeviceError index 64 length 64", dev.Kind(), err)
		}
	}
}

// TestSliceAliasing: a kernel may write one view of an allocation while
// it reads another that does not overlap it, never one that does.
func TestSliceAliasing(t *testing.T) {
	for _, dev := range devices() {
		ys := randFloats(512, 6)
		y, _ := kern.Upload(dev, ys)
		lo, _ := y.Slice(0, 128)
		hi, _ := y.Slice(128, 256)
		if err := tk.AxpyKernel.Launch(dev, kern.Cover(128), 2, lo, hi); err != nil {
			t.Fatalf("%s: disjoint views: %v", dev.Kind(), err)
		}
		got, _ := y.Download()
		for i := 128; i < 256; i++ {
			if want := 2*ys[i-128] + ys[i]; got[i] != want {
				t.Fatalf("%s: y[%d] = %v, want %v", dev.Kind(), i, got[i], want)
			}
		}
		mid, _ := y.Slice(64, 192)
		err := tk.AxpyKernel.Launch(dev, kern.Cover(128), 2, lo, mid)
		if err == nil || !strings.Contains(err.Error(), "parameter y is written by the kernel and overlaps parameter x") {
			t.Errorf("%s: overlapping views: %v", dev.Kind(), err)
		}
	}
}

func TestSliceMisuse(t *testing.T) {
	dev := kern.OpenEmulator()
	defer dev.Close()
	y, _ := kern.Alloc[float32](dev, 1000)
	v, _ := y.Slice(64, 128)
	for _, c := range []struct {
		lo, hi int
		want   string
	}{
		{-1, 2, "Slice(-1, 2) of Buffer[float32] of 1000 on emu device"},
		{64, 32, "want 0 ≤ lo ≤ hi ≤ 1000"},
		{0, 1001, "want 0 ≤ lo ≤ hi ≤ 1000"},
		{1, 5, "start 4 bytes in, not a multiple of 256 (kernels assume every buffer is 256-byte aligned); start it at a multiple of 64 elements"},
	} {
		if _, err := y.Slice(c.lo, c.hi); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Slice(%d, %d): %v, want %q", c.lo, c.hi, err, c.want)
		}
	}
	if _, err := v.Slice(0, 65); err == nil || !strings.Contains(err.Error(), "of 64 at 64 of 1000") {
		t.Errorf("Slice past a view's end: %v", err)
	}
	if err := v.Free(); err == nil || !strings.Contains(err.Error(), "a view: free the buffer it views") {
		t.Errorf("Free of a view: %v", err)
	}
	var empty *kern.Buffer[float32]
	if _, err := empty.Slice(0, 0); err == nil {
		t.Error("Slice of a nil buffer succeeded")
	}
	if z, err := y.Slice(1000, 1000); err != nil || z.Len() != 0 {
		t.Errorf("an empty view at the end: %v, %v", z, err)
	}
	if err := y.Free(); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Download(); err == nil || !strings.Contains(err.Error(), "freed") {
		t.Errorf("Download of a view of a freed buffer: %v", err)
	}
	x, _ := kern.Alloc[float32](dev, 64)
	if err := tk.AxpyKernel.Launch(dev, kern.Cover(64), 1, x, v); err == nil || !strings.Contains(err.Error(), "parameter y: buffer was freed") {
		t.Errorf("launch on a view of a freed buffer: %v", err)
	}
	if _, err := v.Slice(0, 1); err == nil || !strings.Contains(err.Error(), "freed") {
		t.Errorf("Slice of a view of a freed buffer: %v", err)
	}
}

// TestSliceKeepsItsAllocation: a view alone keeps the allocation it views
// from being collected, and so freed under it.
func TestSliceKeepsItsAllocation(t *testing.T) {
	for _, dev := range devices() {
		v := func() *kern.Buffer[float32] {
			y, _ := kern.Upload(dev, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
				21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
				41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60,
				61, 62, 63, 64, 65, 66})
			v, err := y.Slice(64, 66)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}()
		for range 3 {
			runtime.GC()
		}
		got, err := v.Download()
		if err != nil || len(got) != 2 || got[0] != 65 || got[1] != 66 {
			t.Errorf("%s: a view whose allocation is otherwise unreachable: %v, %v", dev.Kind(), got, err)
		}
	}
}

// TestSliceCUDAPointer: on the CUDA device (the stub driver) a view is
// its allocation's pointer plus its offset, which a library such as
// cuBLAS reads through.
func TestSliceCUDAPointer(t *testing.T) {
	dev := openStubCUDA(t)
	defer dev.Close()
	ys := make([]float32, 512)
	for i := range ys {
		ys[i] = float32(i)
	}
	y, err := kern.Upload(dev, ys)
	if err != nil {
		t.Fatal(err)
	}
	v, err := y.Slice(128, 192)
	if err != nil {
		t.Fatal(err)
	}
	base, _, _ := kern.CUDAPointer(y)
	p, ctx, err := kern.CUDAPointer(v)
	if err != nil || p != base+128*4 {
		t.Fatalf("CUDAPointer of y[128:192] = %#x, %v; want %#x", p, err, base+128*4)
	}
	got := make([]float32, 64)
	if err := ctx.Do(func() error { return cuda.CopyDtoH(got, p) }); err != nil || got[0] != 128 || got[63] != 191 {
		t.Fatalf("reading the view's pointer: %v, %v", got[:2], err)
	}
	part, err := v.Download()
	if err != nil || part[0] != 128 || part[63] != 191 {
		t.Fatalf("Download of the view: %v, %v", part[:2], err)
	}
}
