package tp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// socketRanks runs fn on every rank of a fresh n-rank Socket clique over
// a Unix socket, each rank a goroutine with its own emu device.
func socketRanks(t *testing.T, n int, fn func(c *Socket, dev *kern.Device) error) []error {
	t.Helper()
	addr := filepath.Join(t.TempDir(), "comm.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := DialSocket(ctx, "unix", addr, r, n)
			if err != nil {
				errs[r] = err
				return
			}
			defer c.Close()
			errs[r] = fn(c, kern.OpenEmulator())
		}()
	}
	wg.Wait()
	return errs
}

// TestSocketCollectives: the Socket communicator's collectives give what
// Local's do (the sums in rank order, so bitwise), broadcast from rank 0
// and from another rank included.
func TestSocketCollectives(t *testing.T) {
	const n = 3
	errs := socketRanks(t, n, func(c *Socket, dev *kern.Device) error {
		r := c.Rank()
		x, _ := kern.Upload(dev, []float32{float32(r), 1, -2 * float32(r), 0.1 * float32(r+1)})
		if err := c.AllReduceSumF32(dev, x); err != nil {
			return err
		}
		want := float32(0.1*1) + float32(0.1*2) + float32(0.1*3) // rank order
		if got, _ := x.Download(); fmt.Sprint(got[:3]) != "[3 3 -6]" || got[3] != want {
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
		for _, root := range []int{0, 2} {
			ids, _ := kern.Upload(dev, []int32{int32(r), int32(r) + 5})
			if err := c.BroadcastInt32(dev, ids, root); err != nil {
				return err
			}
			if got, _ := ids.Download(); fmt.Sprint(got) != fmt.Sprint([]int32{int32(root), int32(root) + 5}) {
				return fmt.Errorf("broadcast from %d = %v", root, got)
			}
		}
		if err := c.BroadcastF32(dev, x, n); err == nil || !strings.Contains(err.Error(), "root 3 of 3") {
			return fmt.Errorf("broadcast from a root past the clique: %v", err)
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		c.Close()
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

// A rank that calls another collective, or leaves, makes the others fail
// instead of waiting or misreading its data.
func TestSocketMismatchAndDeparture(t *testing.T) {
	errs := socketRanks(t, 3, func(c *Socket, dev *kern.Device) error {
		x, _ := kern.Upload(dev, []float32{1, 2})
		switch c.Rank() {
		case 1:
			return c.Barrier() // the others all-reduce
		case 2:
			c.Close() // leaves
			return nil
		}
		return c.AllReduceSumF32(dev, x)
	})
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "different collectives") {
		t.Errorf("rank 0: %v, want a mismatch of collectives", errs[0])
	}
	if errs[1] == nil {
		t.Error("rank 1 (barrier against an all-reduce): no error")
	}
}
