package kern_test

import (
	"strings"
	"testing"

	"github.com/gokern/kern"
	tk "github.com/gokern/kern/internal/testkernels"
)

// hostDevices are the devices the host-buffer tests run on: native, the
// emulator, and the CUDA device on the stub driver (whose copies are
// page-locked and queued), or with -tags gpu the GPU.
func hostDevices(t *testing.T) []*kern.Device {
	devs := devices()
	if !gpuTag {
		return append(devs, openStubCUDA(t))
	}
	dev, err := kern.OpenCUDA(0) // -tags gpu: the GPU
	if err != nil {
		t.Fatal(err)
	}
	return append(devs, dev)
}

// TestHostBufferCopies: queued copies from and to host buffers, around a
// launch on the same queue (the device's, and a stream), into a view too.
func TestHostBufferCopies(t *testing.T) {
	const n = 256
	xs, ys := randFloats(n, 11), randFloats(n, 12)
	for _, dev := range hostDevices(t) {
		s, err := dev.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []kern.Queue{dev, s} {
			hx, err := kern.AllocHost[float32](dev, n)
			if err != nil {
				t.Fatal(err)
			}
			hy, _ := kern.AllocHost[float32](dev, n)
			if got := hx.Data(); len(got) != n || got[0] != 0 || got[n-1] != 0 {
				t.Fatalf("%s: a new host buffer: %d elements, not zeroed", dev.Kind(), len(got))
			}
			copy(hx.Data(), xs)
			copy(hy.Data(), ys)
			x, _ := kern.Alloc[float32](dev, n)
			y, _ := kern.Alloc[float32](dev, 2*n)
			yv, _ := y.Slice(n, 2*n)
			if err := x.CopyFromHost(q, hx); err != nil {
				t.Fatalf("%s: %v", dev.Kind(), err)
			}
			if err := yv.CopyFromHost(q, hy); err != nil {
				t.Fatal(err)
			}
			if err := tk.AxpyKernel.Launch(q, kern.Cover(n), 2, x, yv); err != nil {
				t.Fatal(err)
			}
			if err := yv.CopyToHost(q, hy); err != nil {
				t.Fatal(err)
			}
			if err := dev.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			stub := dev.Kind() == "cuda" && !gpuTag // its kernels do nothing
			for i, v := range hy.Data() {
				if want := 2*xs[i] + ys[i]; stub && v != ys[i] || !stub && v != want {
					t.Fatalf("%s: y[%d] = %v, want %v (stub driver: %v)", dev.Kind(), i, v, want, stub)
				}
			}
			hx.Free()
			hy.Free()
		}
		s.Close()
	}
}

// TestHostBufferCopiesInCapture: copies made inside Stream.Capture are
// part of the graph, and each replay copies what the host buffer holds
// then: on the emulator and natively (graphs kern records itself) and on
// the stub driver (a driver graph).
func TestHostBufferCopiesInCapture(t *testing.T) {
	const n = 64
	for _, dev := range hostDevices(t) {
		s, err := dev.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		hin, _ := kern.AllocHost[int32](dev, n)
		hout, _ := kern.AllocHost[int32](dev, n)
		buf, _ := kern.Alloc[int32](dev, n)
		g, err := s.Capture(func(s *kern.Stream) error {
			if err := buf.CopyFromHost(s, hin); err != nil {
				return err
			}
			return buf.CopyToHost(s, hout)
		})
		if err != nil {
			t.Fatalf("%s: %v", dev.Kind(), err)
		}
		if hout.Data()[0] != 0 {
			t.Errorf("%s: a captured copy ran at capture", dev.Kind())
		}
		for r := int32(1); r <= 3; r++ {
			for i := range hin.Data() {
				hin.Data()[i] = r*100 + int32(i)
			}
			if err := g.Launch(s); err != nil {
				t.Fatal(err)
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			if got := hout.Data(); got[0] != r*100 || got[n-1] != r*100+n-1 {
				t.Fatalf("%s: replay %d copied %d…%d, want %d…%d", dev.Kind(), r, got[0], got[n-1], r*100, r*100+n-1)
			}
		}
		g.Close()
		s.Close()
	}
}

func TestHostBufferMisuse(t *testing.T) {
	dev, other := kern.OpenEmulator(), kern.OpenNative()
	defer dev.Close()
	defer other.Close()
	h, _ := kern.AllocHost[float32](dev, 4)
	b, _ := kern.Alloc[float32](dev, 5)
	ob, _ := kern.Alloc[float32](other, 4)
	four, _ := kern.Alloc[float32](dev, 4)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"length", b.CopyFromHost(dev, h), "kern: CopyFromHost: Buffer[float32] of 5 on emu device"},
		{"device", ob.CopyToHost(other, h), "are not one device"},
		{"queue", four.CopyFromHost(other, h), "are not one device"},
		{"nil queue", four.CopyFromHost(nil, h), "nil queue"},
		{"nil host", four.CopyFromHost(dev, nil), "CopyFromHost on a nil host buffer"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
	}
	if _, err := kern.AllocHost[float32](dev, -1); err == nil {
		t.Error("AllocHost(-1) succeeded")
	}
	if err := h.Free(); err != nil {
		t.Fatal(err)
	}
	if h.Data() != nil {
		t.Error("Data of a freed host buffer is not nil")
	}
	if err := h.Free(); err == nil || !strings.Contains(err.Error(), "freed host buffer") {
		t.Errorf("Free twice: %v", err)
	}
	if err := four.CopyFromHost(dev, h); err == nil || !strings.Contains(err.Error(), "CopyFromHost on a freed host buffer") {
		t.Errorf("a copy from a freed host buffer: %v", err)
	}
	four.Free()
	h2, _ := kern.AllocHost[float32](dev, 4)
	if err := four.CopyToHost(dev, h2); err == nil || !strings.Contains(err.Error(), "freed buffer") {
		t.Errorf("a copy from a freed device buffer: %v", err)
	}
	if s := h2.String(); !strings.Contains(s, "HostBuffer[float32] of 4 for emu device") {
		t.Errorf("String() = %q", s)
	}
}

// TestSyncInsideCapture: a capture records work, so waiting for it there
// is an error (on a GPU it would also queue the error slots' reads into
// the graph).
func TestSyncInsideCapture(t *testing.T) {
	for _, dev := range hostDevices(t) {
		s, err := dev.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Capture(func(s *kern.Stream) error { return s.Sync() })
		if err == nil || !strings.Contains(err.Error(), "Sync inside Capture") {
			t.Errorf("%s: Sync inside Capture: %v", dev.Kind(), err)
		}
		if err := s.Sync(); err != nil {
			t.Errorf("%s: Sync after the capture: %v", dev.Kind(), err)
		}
		s.Close()
	}
}
