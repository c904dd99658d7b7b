package tp

// Socket is a Comm for ranks that are separate processes without NCCL
// (emu or native devices, or a test of the one-process-per-rank layout on
// a machine without GPUs): collectives go through host memory and a star
// of local socket connections centred on rank 0, which reduces in rank
// order 0, 1, …, Size-1 (as Local does, so the results are bitwise
// Local's). It is the gloo of this package: correct and slow.
//
// The wire, per connection (rank r to rank 0): a greeting "kern-tc1",
// r and the size (uint32 big-endian each); then per collective, in the
// order the ranks call them, frames of one op byte, a uint32 byte count
// and the elements in the host's byte order (both ends are one machine).

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

const socketMagic = "kern-tc1"

// Socket is one rank's end of a socket clique (DialSocket).
type Socket struct {
	rank, size int
	peers      []net.Conn // rank 0: by rank (peers[0] nil); others: [rank 0]
	closed     atomic.Bool
	closeOnce  sync.Once
}

// DialSocket joins the clique at network/addr: rank 0 listens there and
// waits for ranks 1 … size-1, which dial (retrying until rank 0 listens
// or ctx ends). Every rank calls it with the same address and size.
func DialSocket(ctx context.Context, network, addr string, rank, size int) (*Socket, error) {
	if size < 1 || rank < 0 || rank >= size {
		return nil, fmt.Errorf("tp: socket rank %d of %d", rank, size)
	}
	s := &Socket{rank: rank, size: size}
	if rank == 0 {
		ln, err := net.Listen(network, addr)
		if err != nil {
			return nil, fmt.Errorf("tp: socket rank 0: %w", err)
		}
		defer ln.Close()
		stop := context.AfterFunc(ctx, func() { ln.Close() })
		defer stop()
		s.peers = make([]net.Conn, size)
		for left := size - 1; left > 0; {
			c, err := ln.Accept()
			if err != nil {
				s.Close()
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				return nil, fmt.Errorf("tp: socket rank 0: %d of %d ranks still to come: %w", left, size-1, err)
			}
			var hello [len(socketMagic) + 8]byte
			c.SetDeadline(time.Now().Add(10 * time.Second))
			_, err = io.ReadFull(c, hello[:])
			c.SetDeadline(time.Time{})
			r := int(binary.BigEndian.Uint32(hello[8:]))
			if err != nil || string(hello[:8]) != socketMagic || int(binary.BigEndian.Uint32(hello[12:])) != size || r < 1 || r >= size || s.peers[r] != nil {
				c.Close() // not one of ours, or a rank twice: it gets EOF
				continue
			}
			s.peers[r] = c
			left--
		}
		return s, nil
	}
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			hello := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte(socketMagic), uint32(rank)), uint32(size))
			if _, err := c.Write(hello); err != nil {
				c.Close()
				return nil, fmt.Errorf("tp: socket rank %d: %w", rank, err)
			}
			s.peers = []net.Conn{c}
			return s, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("tp: socket rank %d: rank 0 at %s %s: %w (last: %v)", rank, network, addr, ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (s *Socket) Rank() int { return s.rank }
func (s *Socket) Size() int { return s.size }

// ops tag frames, so ranks that call different collectives fail rather
// than misread each other's data.
const (
	opReduceF32 byte = iota + 1
	opReduceBF16
	opGather
	opBroadcastF32
	opBroadcastI32
	opBarrier
)

func (s *Socket) send(c net.Conn, op byte, b []byte) error {
	var h [5]byte
	h[0] = op
	binary.BigEndian.PutUint32(h[1:], uint32(len(b)))
	bufs := net.Buffers{h[:], b}
	_, err := bufs.WriteTo(c)
	return err
}

// recv reads a frame of op of want bytes (want < 0: any length).
func (s *Socket) recv(c net.Conn, op byte, want int) ([]byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(h[1:]))
	if h[0] != op || (want >= 0 && n != want) {
		return nil, fmt.Errorf("the peer sent op %d of %d bytes; this rank expects op %d of %d (ranks called different collectives)", h[0], n, op, want)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(c, b)
	return b, err
}

func asBytes[T any](xs []T) []byte {
	if len(xs) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&xs[0])), len(xs)*int(unsafe.Sizeof(xs[0])))
}

func fromBytes[T any](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	out := make([]T, n)
	copy(asBytes(out), b)
	return out
}

func (s *Socket) fail(op string, err error) error {
	return fmt.Errorf("tp: %s on socket rank %d: %w", op, s.rank, err)
}

func (s *Socket) check(op string) error {
	if s.closed.Load() {
		return s.fail(op, fmt.Errorf("the communicator is closed"))
	}
	return nil
}

// gatherScatter is every collective's shape: each rank sends mine to
// rank 0 (if send), rank 0 makes the answer from all of them (by rank)
// and sends it to every rank (if scatter); it returns the answer.
func (s *Socket) gatherScatter(op byte, mine []byte, send func(rank int) bool, combine func(all [][]byte) ([]byte, error), scatter func(rank int) bool) ([]byte, error) {
	if s.rank != 0 {
		if send(s.rank) {
			if err := s.send(s.peers[0], op, mine); err != nil {
				return nil, err
			}
		}
		if !scatter(s.rank) {
			return nil, nil
		}
		return s.recv(s.peers[0], op, -1)
	}
	all := make([][]byte, s.size)
	all[0] = mine
	for r := 1; r < s.size; r++ {
		if !send(r) {
			continue
		}
		b, err := s.recv(s.peers[r], op, len(mine))
		if err != nil {
			return nil, fmt.Errorf("from rank %d: %w", r, err)
		}
		all[r] = b
	}
	out, err := combine(all)
	if err != nil {
		return nil, err
	}
	for r := 1; r < s.size; r++ {
		if !scatter(r) {
			continue
		}
		if err := s.send(s.peers[r], op, out); err != nil {
			return nil, fmt.Errorf("to rank %d: %w", r, err)
		}
	}
	return out, nil
}

func every(int) bool { return true }

// AllReduceSumF32 implements Comm.
func (s *Socket) AllReduceSumF32(q kern.Queue, b *kern.Buffer[float32]) error {
	return socketReduce(s, "AllReduceSumF32", opReduceF32, b, func(x float32) float32 { return x }, func(x float32) float32 { return x })
}

// AllReduceSumBF16 implements Comm: summed in float32, rounded once.
func (s *Socket) AllReduceSumBF16(q kern.Queue, b *kern.Buffer[gpu.BFloat16]) error {
	return socketReduce(s, "AllReduceSumBF16", opReduceBF16, b, gpu.BFloat16.Float32, gpu.ToBFloat16)
}

func socketReduce[T gpu.Elem](s *Socket, name string, op byte, b *kern.Buffer[T], toF func(T) float32, fromF func(float32) T) error {
	if err := s.check(name); err != nil {
		return err
	}
	mine, err := b.Download()
	if err != nil {
		return s.fail(name, err)
	}
	out, err := s.gatherScatter(op, asBytes(mine), every, func(all [][]byte) ([]byte, error) {
		sum := make([]T, len(mine))
		parts := make([][]T, len(all))
		for r, a := range all {
			parts[r] = fromBytes[T](a)
		}
		for i := range sum {
			var acc float32
			for _, p := range parts {
				acc += toF(p[i])
			}
			sum[i] = fromF(acc)
		}
		return asBytes(sum), nil
	}, every)
	if err != nil {
		return s.fail(name, err)
	}
	return b.CopyFrom(fromBytes[T](out))
}

// AllGatherF32 implements Comm.
func (s *Socket) AllGatherF32(q kern.Queue, out, in *kern.Buffer[float32]) error {
	const name = "AllGatherF32"
	if err := s.check(name); err != nil {
		return err
	}
	if out.Len() != s.size*in.Len() {
		return s.fail(name, fmt.Errorf("out has %d elements, want %d ranks × %d", out.Len(), s.size, in.Len()))
	}
	mine, err := in.Download()
	if err != nil {
		return s.fail(name, err)
	}
	cat, err := s.gatherScatter(opGather, asBytes(mine), every, func(all [][]byte) ([]byte, error) {
		var c []byte
		for _, a := range all {
			c = append(c, a...)
		}
		return c, nil
	}, every)
	if err != nil {
		return s.fail(name, err)
	}
	return out.CopyFrom(fromBytes[float32](cat))
}

// BroadcastF32 implements Comm.
func (s *Socket) BroadcastF32(q kern.Queue, b *kern.Buffer[float32], root int) error {
	return socketBroadcast(s, "BroadcastF32", opBroadcastF32, b, root)
}

// BroadcastInt32 implements Comm.
func (s *Socket) BroadcastInt32(q kern.Queue, b *kern.Buffer[int32], root int) error {
	return socketBroadcast(s, "BroadcastInt32", opBroadcastI32, b, root)
}

// socketBroadcast: root's buffer reaches rank 0 (unless root is 0), which
// sends it to every rank but root.
func socketBroadcast[T gpu.Elem](s *Socket, name string, op byte, b *kern.Buffer[T], root int) error {
	if err := s.check(name); err != nil {
		return err
	}
	if root < 0 || root >= s.size {
		return s.fail(name, fmt.Errorf("root %d of %d ranks", root, s.size))
	}
	var mine []byte
	if s.rank == root || s.rank == 0 {
		xs, err := b.Download()
		if err != nil {
			return s.fail(name, err)
		}
		mine = asBytes(xs)
	}
	out, err := s.gatherScatter(op, mine, func(r int) bool { return r == root },
		func(all [][]byte) ([]byte, error) { return all[root], nil },
		func(r int) bool { return r != root })
	if err != nil {
		return s.fail(name, err)
	}
	if s.rank == root {
		return nil
	}
	if len(out) != b.Len()*int(unsafe.Sizeof(*new(T))) {
		return s.fail(name, fmt.Errorf("root %d sent %d bytes into a buffer of %d elements", root, len(out), b.Len()))
	}
	return b.CopyFrom(fromBytes[T](out))
}

// Barrier implements Comm.
func (s *Socket) Barrier() error {
	if err := s.check("Barrier"); err != nil {
		return err
	}
	_, err := s.gatherScatter(opBarrier, nil, every, func([][]byte) ([]byte, error) { return nil, nil }, every)
	if err != nil {
		return s.fail("Barrier", err)
	}
	return nil
}

// Close implements Comm: it closes the connections, so a peer blocked in
// a collective with this rank fails instead of waiting.
func (s *Socket) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		for _, c := range s.peers {
			if c != nil {
				c.Close()
			}
		}
	})
	return nil
}

var _ Comm = (*Socket)(nil)
