// Command streams processes a long vector in chunks on two streams: each
// chunk is copied from a page-locked host buffer into its part of a
// device buffer (a view, Buffer.Slice), run through a kernel, and copied
// back into another host buffer, all queued on the chunk's stream. On a
// GPU one stream's copies overlap the other's kernel and the host fills
// the next chunk meanwhile; on the emulator and in native mode the same
// code runs in order. The result is checked against the same arithmetic
// on the host, bit for bit.
package main

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/gokern/kern"
)

func main() {
	if err := run(1<<22, 1<<18); err != nil {
		fmt.Fprintln(os.Stderr, "streams:", err)
		os.Exit(1)
	}
}

// run processes n elements in chunks of chunk (a multiple of 64: a view
// starts 256-byte aligned).
func run(n, chunk int) error {
	dev, err := kern.Open()
	if err != nil {
		return err
	}
	defer dev.Close()
	fmt.Println("device:", dev)

	rng := rand.New(rand.NewPCG(3, 4))
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(rng.NormFloat64() * 8)
	}
	ys := make([]float32, n)

	x, err := kern.Alloc[float32](dev, n)
	if err != nil {
		return err
	}
	defer x.Free()
	y, err := kern.Alloc[float32](dev, n)
	if err != nil {
		return err
	}
	defer y.Free()

	// Two lanes, each a stream with its own host buffers: while one
	// lane's chunk is on the GPU, the host refills the other's.
	type lane struct {
		s       *kern.Stream
		in, out *kern.HostBuffer[float32]
		lo, hi  int // the chunk in flight; hi = lo when none
	}
	lanes := make([]*lane, 2)
	for i := range lanes {
		s, err := dev.NewStream()
		if err != nil {
			return err
		}
		defer s.Close()
		in, err := kern.AllocHost[float32](dev, chunk)
		if err != nil {
			return err
		}
		defer in.Free()
		out, err := kern.AllocHost[float32](dev, chunk)
		if err != nil {
			return err
		}
		defer out.Free()
		lanes[i] = &lane{s: s, in: in, out: out}
	}
	// drain waits for a lane's chunk and keeps its result.
	drain := func(l *lane) error {
		if l.hi == l.lo {
			return nil
		}
		if err := l.s.Sync(); err != nil {
			return err
		}
		copy(ys[l.lo:l.hi], l.out.Data()[:l.hi-l.lo])
		l.lo = l.hi
		return nil
	}
	for c, lo := 0, 0; lo < n; c, lo = c+1, lo+chunk {
		l := lanes[c%2]
		if err := drain(l); err != nil { // its host buffers are free again
			return err
		}
		hi := min(lo+chunk, n)
		in, out := l.in, l.out
		if hi-lo < chunk { // the last, shorter chunk: buffers of its length
			if in, err = kern.AllocHost[float32](dev, hi-lo); err != nil {
				return err
			}
			defer in.Free()
			if out, err = kern.AllocHost[float32](dev, hi-lo); err != nil {
				return err
			}
			defer out.Free()
			l.out = out
		}
		copy(in.Data(), xs[lo:hi])
		xv, err := x.Slice(lo, hi)
		if err != nil {
			return err
		}
		yv, err := y.Slice(lo, hi)
		if err != nil {
			return err
		}
		if err := xv.CopyFromHost(l.s, in); err != nil {
			return err
		}
		if err := PolyKernel.Launch(l.s, kern.Cover(hi-lo), xv, yv); err != nil {
			return err
		}
		if err := yv.CopyToHost(l.s, out); err != nil {
			return err
		}
		l.lo, l.hi = lo, hi
	}
	for _, l := range lanes {
		if err := drain(l); err != nil {
			return err
		}
	}

	for i, v := range xs {
		if want := v * (v/2 + 1); ys[i] != want {
			return fmt.Errorf("y[%d] = %v, want %v", i, ys[i], want)
		}
	}
	fmt.Printf("%d elements in %d chunks of %d on 2 streams match the host's arithmetic bit for bit\n", n, (n+chunk-1)/chunk, chunk)
	return nil
}
