package cuda

import (
	"errors"
	"testing"
	"unsafe"
)

// The structs cuLaunchKernelEx reads, laid out as cuda.h has them.
func TestLaunchConfigLayout(t *testing.T) {
	var c launchConfig
	var a launchAttr
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof(CUlaunchConfig)", unsafe.Sizeof(c), 56},
		{"offsetof(hStream)", unsafe.Offsetof(c.stream), 32},
		{"offsetof(attrs)", unsafe.Offsetof(c.attrs), 40},
		{"offsetof(numAttrs)", unsafe.Offsetof(c.numAttrs), 48},
		{"sizeof(CUlaunchAttribute)", unsafe.Sizeof(a), 72},
		{"offsetof(value)", unsafe.Offsetof(a.value), 8},
	} {
		if f.got != f.want {
			t.Errorf("%s = %d, want %d", f.name, f.got, f.want)
		}
	}
}

// TestLaunchExProgrammatic launches through cuLaunchKernelEx on the stub's
// two devices: device 1 (sm_90) takes programmatic serialization and
// receives the same parameters as Launch gives; device 0 (sm_80) refuses
// it, as the driver does.
func TestLaunchExProgrammatic(t *testing.T) {
	useStub(t)
	if !CanLaunchEx() {
		t.Fatal("the stub exports cuLaunchKernelEx, CanLaunchEx says no")
	}
	setParamSizes(t, "abi", 8, 8, 4)
	for _, dev := range []Device{1, 0} {
		ctx, err := PrimaryCtxRetain(dev)
		if err != nil {
			t.Fatal(err)
		}
		err = ctx.Do(func() error {
			m := loadPTX(t, stubPTX)
			defer m.Unload()
			fn, err := m.Function("abi")
			if err != nil {
				return err
			}
			args := new(Args).Slice(0x7f0000003000, 5).Uint32(42)
			err = LaunchEx(fn, [3]uint32{4, 1, 1}, [3]uint32{64, 1, 1}, 0, 0, args, LaunchOptions{ProgrammaticSerialization: true})
			if dev == 0 {
				if !errors.Is(err, ErrorNotSupported) {
					t.Errorf("sm_80: programmatic serialization gave %v, want CUDA_ERROR_NOT_SUPPORTED", err)
				}
				return nil
			}
			if err != nil {
				return err
			}
			got := lastLaunch()
			if got.name != "abi" || got.dims != [7]uint32{4, 1, 1, 64, 1, 1, 0} || stub.lastPDL() != 1 {
				t.Errorf("sm_90: launch %q %v pdl=%d", got.name, got.dims, stub.lastPDL())
			}
			if len(got.params) != 3 || got.params[2][0] != 42 || got.params[1][0] != 5 {
				t.Errorf("sm_90: params % x", got.params)
			}
			// Without the option LaunchEx is Launch.
			if err := LaunchEx(fn, [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, 0, args, LaunchOptions{}); err != nil {
				return err
			}
			if stub.lastPDL() != 0 || stub.calls("cuLaunchKernel") == 0 {
				t.Errorf("LaunchEx without options: pdl=%d, cuLaunchKernel calls %d", stub.lastPDL(), stub.calls("cuLaunchKernel"))
			}
			return nil
		})
		if rerr := ctx.Release(); rerr != nil {
			t.Error(rerr)
		}
		if err != nil {
			t.Fatalf("device %d: %v", dev, err)
		}
	}
}
