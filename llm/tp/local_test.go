package tp

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// onRanks runs fn on every rank of a fresh n-rank Local clique, each in
// its own goroutine with its own device, and returns each rank's error.
func onRanks(n int, open func() *kern.Device, fn func(c *Local, dev *kern.Device) error) []error {
	comms, _ := NewLocal(n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = fn(comms[r], open())
		}()
	}
	wg.Wait()
	return errs
}

func TestLocalCollectives(t *testing.T) {
	const n = 3
	errs := onRanks(n, func() *kern.Device { return kern.OpenEmulator() }, func(c *Local, dev *kern.Device) error {
		r := c.Rank()
		x, err := kern.Upload(dev, []float32{float32(r), 1, -2 * float32(r)})
		if err != nil {
			return err
		}
		if err := c.AllReduceSumF32(dev, x); err != nil {
			return err
		}
		if got, _ := x.Download(); fmt.Sprint(got) != "[3 3 -6]" {
			return fmt.Errorf("f32 sum = %v", got)
		}
		b, _ := kern.Upload(dev, []gpu.BFloat16{gpu.ToBFloat16(0.25 * float32(r+1))})
		if err := c.AllReduceSumBF16(dev, b); err != nil {
			return err
		}
		if got, _ := b.Download(); got[0].Float32() != 1.5 {
			return fmt.Errorf("bf16 sum = %v", got[0].Float32())
		}
		in, _ := kern.Upload(dev, []float32{float32(10 * r), float32(10*r + 1)})
		out, _ := kern.Alloc[float32](dev, 2*n)
		if err := c.AllGatherF32(dev, out, in); err != nil {
			return err
		}
		if got, _ := out.Download(); fmt.Sprint(got) != "[0 1 10 11 20 21]" {
			return fmt.Errorf("all-gather = %v", got)
		}
		ids, _ := kern.Upload(dev, []int32{int32(r), int32(r)})
		if err := c.BroadcastInt32(dev, ids, 1); err != nil {
			return err
		}
		if got, _ := ids.Download(); fmt.Sprint(got) != "[1 1]" {
			return fmt.Errorf("broadcast from 1 = %v", got)
		}
		if err := c.BroadcastF32(dev, x, n); err == nil || !strings.Contains(err.Error(), "root 3 of 3") {
			return fmt.Errorf("broadcast from a root past the clique: %v", err)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		if err := c.Close(); err != nil {
			return err
		}
		if err := c.Barrier(); err == nil || !strings.Contains(err.Error(), "closed") {
			return fmt.Errorf("barrier after Close: %v", err)
		}
		return nil
	})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// A rank that fails between collectives aborts the clique; the ranks
// waiting for it get ErrAborted naming it, not a hang.
func TestLocalAbortReleasesWaiters(t *testing.T) {
	cause := errors.New("out of memory")
	errs := onRanks(3, func() *kern.Device { return kern.OpenNative() }, func(c *Local, dev *kern.Device) error {
		if c.Rank() == 2 {
			c.Abort(cause)
			return nil
		}
		x, _ := kern.Upload(dev, []float32{1})
		return c.AllReduceSumF32(dev, x)
	})
	for r := range 2 {
		if !errors.Is(errs[r], ErrAborted) || !strings.Contains(errs[r].Error(), "rank 2: out of memory") {
			t.Errorf("rank %d: %v", r, errs[r])
		}
	}
}

func TestLocalMismatchedLengths(t *testing.T) {
	errs := onRanks(2, func() *kern.Device { return kern.OpenNative() }, func(c *Local, dev *kern.Device) error {
		x, _ := kern.Alloc[float32](dev, 2+c.Rank())
		return c.AllReduceSumF32(dev, x)
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "elements") {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}
