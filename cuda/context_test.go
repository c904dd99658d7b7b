package cuda

import (
	"errors"
	"runtime"
	"testing"
)

// lockThreadForever locks the calling goroutine to its thread and never
// unlocks, so the thread exits with the goroutine and no other goroutine
// inherits its current context.
func lockThreadForever() { runtime.LockOSThread() }

func TestPrimaryContextLifecycle(t *testing.T) {
	useStub(t)
	dev, err := DeviceGet(1)
	if err != nil {
		t.Fatal(err)
	}
	before := stub.primaryRefs(1)
	c1, err := PrimaryCtxRetain(dev)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := PrimaryCtxRetain(dev)
	if err != nil {
		t.Fatal(err)
	}
	if c1 != c2 || c1 == 0 {
		t.Errorf("primary context handles differ: %#x, %#x", c1, c2)
	}
	if got := stub.primaryRefs(1); got != before+2 {
		t.Errorf("refs = %d, want %d", got, before+2)
	}
	if d, err := c1.Device(); err != nil || d != dev {
		t.Errorf("Device() = %d, %v; want %d", d, err, dev)
	}
	if err := c1.Release(); err != nil {
		t.Fatal(err)
	}
	if err := c2.Release(); err != nil {
		t.Fatal(err)
	}
	if got := stub.primaryRefs(1); got != before {
		t.Errorf("refs after two releases = %d, want %d", got, before)
	}
	if before == 0 {
		// The context is destroyed now; work in it fails.
		err := c1.Do(func() error { _, err := MemAlloc(8); return err })
		if !errors.Is(err, ErrorContextIsDestroyed) {
			t.Errorf("MemAlloc in a released context: %v", err)
		}
	}
	if err := PrimaryCtxSetFlags(dev, CtxSchedBlockingSync); err != nil {
		t.Error(err)
	}
	if err := PrimaryCtxSetFlags(dev, ContextFlags(0x400)); !errors.Is(err, ErrorInvalidValue) {
		t.Errorf("bad flags: %v", err)
	}
}

func TestDoSetsAndRestoresCurrent(t *testing.T) {
	c0 := stubContext(t)
	c1, err := PrimaryCtxRetain(1)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Release()
	do(t, c0, func() error {
		if cur, _ := CtxGetCurrent(); cur != c0 {
			t.Errorf("inside c0.Do current = %#x, want %#x", cur, c0)
		}
		do(t, c1, func() error {
			if cur, _ := CtxGetCurrent(); cur != c1 {
				t.Errorf("inside nested c1.Do current = %#x, want %#x", cur, c1)
			}
			dev, err := c1.Device()
			if err != nil || dev != 1 {
				t.Errorf("c1.Device() = %d, %v", dev, err)
			}
			return nil
		})
		if cur, _ := CtxGetCurrent(); cur != c0 {
			t.Errorf("after nested Do current = %#x, want c0 %#x restored", cur, c0)
		}
		return nil
	})
	want := errors.New("from fn")
	if err := c0.Do(func() error { return want }); err != want {
		t.Errorf("Do returned %v, want fn's error", err)
	}
}

func TestCtxCreateLeavesThreadAlone(t *testing.T) {
	useStub(t)
	errc := make(chan error)
	go func() {
		lockThreadForever()
		if err := CtxSetCurrent(0); err != nil {
			errc <- err
			return
		}
		c, err := CtxCreate(0, CtxSchedAuto)
		if err != nil {
			errc <- err
			return
		}
		if cur, _ := CtxGetCurrent(); cur != 0 {
			t.Errorf("CtxCreate left %#x current", cur)
		}
		if err := c.Do(func() error { _, _, err := MemGetInfo(); return err }); err != nil {
			errc <- err
			return
		}
		if err := c.Destroy(); err != nil {
			errc <- err
			return
		}
		errc <- c.Destroy() // second destroy must fail
	}()
	if err := <-errc; !errors.Is(err, ErrorInvalidContext) {
		t.Errorf("double Destroy: %v, want CUDA_ERROR_INVALID_CONTEXT", err)
	}
}

func TestDoAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	ctx := stubContext(t)
	fn := func() error { return nil }
	allocs := testing.AllocsPerRun(200, func() {
		if err := ctx.Do(fn); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Context.Do allocates %.1f times per call, want 0", allocs)
	}
}
