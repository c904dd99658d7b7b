package cuda

import "testing"

// BenchmarkLaunch measures the host cost of one launch with six parameters
// (two slices, a float, an int) against the stub, whose cuLaunchKernel
// copies the parameters out and returns: the number is this package's
// overhead plus a purego call, not GPU time.
func BenchmarkLaunch(b *testing.B) {
	ctx, fn := benchSetup(b)
	args := new(Args)
	err := ctx.Do(func() error {
		b.ReportAllocs()
		for b.Loop() {
			args.Reset().Slice(0x1000, 1024).Slice(0x2000, 1024).Float32(0.5).Uint32(7)
			if err := Launch(fn, [3]uint32{8, 1, 1}, [3]uint32{128, 1, 1}, 0, 0, args); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLaunchDo adds a Context.Do around every launch, as a caller that
// does not batch launches on one locked thread pays.
func BenchmarkLaunchDo(b *testing.B) {
	ctx, fn := benchSetup(b)
	args := new(Args)
	launch := func() error {
		args.Reset().Slice(0x1000, 1024).Slice(0x2000, 1024).Float32(0.5).Uint32(7)
		return Launch(fn, [3]uint32{8, 1, 1}, [3]uint32{128, 1, 1}, 0, 0, args)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := ctx.Do(launch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLaunchFreshArgs builds a new Args for every launch (one allocation).
func BenchmarkLaunchFreshArgs(b *testing.B) {
	ctx, fn := benchSetup(b)
	err := ctx.Do(func() error {
		b.ReportAllocs()
		for b.Loop() {
			args := new(Args).Slice(0x1000, 1024).Slice(0x2000, 1024).Float32(0.5).Uint32(7)
			if err := Launch(fn, [3]uint32{8, 1, 1}, [3]uint32{128, 1, 1}, 0, 0, args); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMemcpyHtoD is a small synchronous copy through the generic
// call path (variadic arguments, one allocation).
func BenchmarkMemcpyHtoD(b *testing.B) {
	ctx, _ := benchSetup(b)
	host := make([]float32, 256)
	err := ctx.Do(func() error {
		p, err := MemAlloc(4 * 256)
		if err != nil {
			return err
		}
		defer MemFree(p)
		b.ReportAllocs()
		for b.Loop() {
			if err := CopyHtoD(p, host); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func benchSetup(b *testing.B) (Context, Function) {
	ctx := stubContext(b)
	setParamSizes(b, "abi", 8, 8, 8, 8, 4, 4)
	var fn Function
	if err := ctx.Do(func() error {
		m, err := LoadModuleData([]byte(stubPTX))
		if err != nil {
			return err
		}
		fn, err = m.Function("abi")
		return err
	}); err != nil {
		b.Fatal(err)
	}
	return ctx, fn
}
