//go:build gpu

package cuda

// Tests against the real driver: go test -tags gpu ./cuda. They skip when
// no driver or device is present, unless KERN_REQUIRE_GPU=1, which makes
// that a failure (for CI machines that are supposed to have a GPU).

import (
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// addOnePTX is a hand-written kernel: data[i] += 1 for i < n, one thread
// per element. Its parameters are (u32 *data, s64 n), a kern slice.
const addOnePTX = `.version 7.0
.target sm_52
.address_size 64

.visible .entry add_one(
	.param .u64 add_one_data,
	.param .u64 add_one_n
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<7>;

	ld.param.u64 	%rd1, [add_one_data];
	ld.param.u64 	%rd2, [add_one_n];
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mad.lo.s32 	%r4, %r1, %r2, %r3;
	cvt.u64.u32 	%rd3, %r4;
	setp.ge.s64 	%p1, %rd3, %rd2;
	@%p1 bra 	DONE;
	cvta.to.global.u64 	%rd4, %rd1;
	shl.b64 	%rd5, %rd3, 2;
	add.s64 	%rd6, %rd4, %rd5;
	ld.global.u32 	%r5, [%rd6];
	add.s32 	%r5, %r5, 1;
	st.global.u32 	[%rd6], %r5;
DONE:
	ret;
}
`

// gpuContext initializes the real driver and retains device 0's primary
// context, or skips.
func gpuContext(t testing.TB) (Device, Context) {
	t.Helper()
	if err := Init(); err != nil {
		gpuUnavailable(t, "no CUDA driver: %v", err)
	}
	if strings.Contains(Library(), "stub") {
		t.Fatalf("Init loaded %s; unset %s to test the real driver", Library(), LibraryEnv)
	}
	n, err := DeviceCount()
	if err != nil || n == 0 {
		gpuUnavailable(t, "no CUDA device (count %d, %v)", n, err)
	}
	dev, err := DeviceGet(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := PrimaryCtxRetain(dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ctx.Release() })
	return dev, ctx
}

func gpuUnavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("KERN_REQUIRE_GPU") == "1" {
		t.Fatalf("KERN_REQUIRE_GPU=1 but "+format, args...)
	}
	t.Skipf(format, args...)
}

func TestGPUDevice(t *testing.T) {
	dev, _ := gpuContext(t)
	v, err := DriverVersion()
	if err != nil || v < 11000 {
		t.Errorf("DriverVersion() = %d, %v", v, err)
	}
	info, err := dev.Info()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: sm_%d%d, %d SMs, %d MiB, driver %d, %s", info.Name, info.Major, info.Minor,
		info.Multiprocessors, info.TotalMem>>20, v, Library())
	if info.Name == "" || info.Major < 5 || info.WarpSize != 32 || info.MaxThreadsPerBlock != 1024 ||
		info.MaxBlockDim != [3]int{1024, 1024, 64} || info.MaxGridDim[0] != 1<<31-1 ||
		info.SharedPerBlock != 48<<10 || info.SharedPerBlockOptin < info.SharedPerBlock || info.TotalMem == 0 {
		t.Errorf("implausible DeviceInfo: %+v", info)
	}
}

func TestGPUMemoryRoundTrip(t *testing.T) {
	_, ctx := gpuContext(t)
	err := ctx.Do(func() error {
		const n = 1 << 16
		src := make([]uint32, n)
		for i := range src {
			src[i] = uint32(i) * 2654435761
		}
		free0, total, err := MemGetInfo()
		if err != nil || free0 == 0 || total < free0 {
			t.Errorf("MemGetInfo() = %d, %d, %v", free0, total, err)
		}
		a, err := MemAlloc(4 * n)
		if err != nil {
			return err
		}
		defer MemFree(a)
		b, err := MemAlloc(4 * n)
		if err != nil {
			return err
		}
		defer MemFree(b)
		if err := CopyHtoD(a, src); err != nil {
			return err
		}
		if err := MemcpyDtoD(b, a, 4*n); err != nil {
			return err
		}
		if err := MemsetD32(b, 0x01010101, 4); err != nil {
			return err
		}
		if err := MemsetD8(b+16, 0xff, 4); err != nil {
			return err
		}
		got := make([]uint32, n)
		if err := CopyDtoH(got, b); err != nil {
			return err
		}
		want := slices.Clone(src)
		want[0], want[1], want[2], want[3], want[4] = 0x01010101, 0x01010101, 0x01010101, 0x01010101, 0xffffffff
		if !slices.Equal(got, want) {
			t.Errorf("round trip mismatch: got %x..., want %x...", got[:6], want[:6])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGPULaunch(t *testing.T) {
	_, ctx := gpuContext(t)
	err := ctx.Do(func() error {
		m, info, err := LoadModuleDataEx([]byte(addOnePTX), JITOptions{Verbose: true})
		if err != nil {
			return err
		}
		defer m.Unload()
		t.Logf("JIT info log: %s", strings.TrimSpace(info))
		fn, err := m.Function("add_one")
		if err != nil {
			return err
		}
		if regs, err := fn.Attribute(FuncAttrNumRegs); err != nil || regs <= 0 {
			t.Errorf("NumRegs = %d, %v", regs, err)
		}
		if occ, err := OccupancyMaxActiveBlocksPerMultiprocessor(fn, 128, 0); err != nil || occ <= 0 {
			t.Errorf("occupancy = %d, %v", occ, err)
		}
		const n = 1000
		host := make([]uint32, n)
		for i := range host {
			host[i] = uint32(i)
		}
		p, err := MemAlloc(4 * n)
		if err != nil {
			return err
		}
		defer MemFree(p)
		if err := CopyHtoD(p, host); err != nil {
			return err
		}
		s, err := StreamCreate(StreamNonBlocking)
		if err != nil {
			return err
		}
		defer s.Destroy()
		start, _ := EventCreate(EventDefault)
		end, _ := EventCreate(EventDefault)
		defer start.Destroy()
		defer end.Destroy()
		args := new(Args).Slice(p, n)
		grid := [3]uint32{(n + 127) / 128, 1, 1}
		if err := start.Record(s); err != nil {
			return err
		}
		if err := Launch(fn, grid, [3]uint32{128, 1, 1}, 0, s, args); err != nil {
			return err
		}
		if err := end.Record(s); err != nil {
			return err
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
		if ms, err := EventElapsedTime(start, end); err != nil || ms < 0 {
			t.Errorf("EventElapsedTime = %v, %v", ms, err)
		}

		// The same launch captured into a graph and replayed twice.
		if err := StreamBeginCapture(s, CaptureModeThreadLocal); err != nil {
			return err
		}
		if err := Launch(fn, grid, [3]uint32{128, 1, 1}, 0, s, args); err != nil {
			return err
		}
		g, err := StreamEndCapture(s)
		if err != nil {
			return err
		}
		defer g.Destroy()
		x, err := GraphInstantiate(g, 0)
		if err != nil {
			return err
		}
		defer x.Destroy()
		for range 2 {
			if err := GraphLaunch(x, s); err != nil {
				return err
			}
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
		got := make([]uint32, n)
		if err := CopyDtoH(got, p); err != nil {
			return err
		}
		for i, v := range got {
			if v != uint32(i)+3 {
				t.Fatalf("element %d = %d, want %d (one launch + two graph launches)", i, v, i+3)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGPUJITError(t *testing.T) {
	_, ctx := gpuContext(t)
	bad := strings.Replace(addOnePTX, "add.s32", "add.bogus32", 1)
	err := ctx.Do(func() error {
		_, err := LoadModuleData([]byte(bad))
		return err
	})
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrorInvalidPTX {
		t.Fatalf("loading bad PTX: %v, want CUDA_ERROR_INVALID_PTX", err)
	}
	if !strings.Contains(e.Log, "bogus") && !strings.Contains(e.Log, "error") {
		t.Errorf("JIT error log does not describe the error: %q", e.Log)
	}
	t.Logf("%v", err)
}

func TestGPUConcurrentLaunches(t *testing.T) {
	_, ctx := gpuContext(t)
	var fn Function
	if err := ctx.Do(func() error {
		m, err := LoadModuleData([]byte(addOnePTX))
		if err != nil {
			return err
		}
		fn, err = m.Function("add_one")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- worker(ctx, fn, w, 25, 4099)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkGPULaunch measures queuing one small launch on the real driver;
// the stream is synchronized every 1024 launches to bound the queue.
func BenchmarkGPULaunch(b *testing.B) {
	_, ctx := gpuContext(b)
	err := ctx.Do(func() error {
		m, err := LoadModuleData([]byte(addOnePTX))
		if err != nil {
			return err
		}
		defer m.Unload()
		fn, err := m.Function("add_one")
		if err != nil {
			return err
		}
		p, err := MemAlloc(4 * 256)
		if err != nil {
			return err
		}
		defer MemFree(p)
		args := new(Args)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			args.Reset().Slice(p, 256)
			if err := Launch(fn, [3]uint32{2, 1, 1}, [3]uint32{128, 1, 1}, 0, 0, args); err != nil {
				return err
			}
			if i++; i%1024 == 0 {
				if err := CtxSynchronize(); err != nil {
					return err
				}
			}
		}
		return CtxSynchronize()
	})
	if err != nil {
		b.Fatal(err)
	}
}
