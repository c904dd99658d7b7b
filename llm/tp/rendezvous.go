package tp

// One process per GPU: NCCL's ranks must agree on a unique id before
// ncclCommInitRank, and rank 0 makes it. ServeID and FetchID hand it from
// rank 0 to the others over a local socket (a Unix socket, or loopback
// TCP), the part torch.distributed's TCPStore plays for PyTorch engines.
//
// The exchange, per connection: the rank sends magic "kern-tp1", its
// rank and the clique size (uint32 big-endian each); rank 0 answers one
// status byte, then 0 and the 128-byte id, or 1, a uint16 length and a
// message saying why it refused (wrong size, a rank out of range or
// seen twice), which FetchID returns as its error.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/nccl"
)

const rendezvousMagic = "kern-tp1"

// ServeID serves id to ranks 1 … size-1 on ln and returns once each has
// received it, or with ctx's error. A connection that sends a bad
// greeting is answered with the reason and does not count.
func ServeID(ctx context.Context, ln net.Listener, id nccl.UniqueID, size int) error {
	if size < 1 {
		return fmt.Errorf("tp: ServeID for %d ranks", size)
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	served := make([]bool, size)
	for left := size - 1; left > 0; {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("tp: ServeID: %d of %d ranks still to come: %w", left, size-1, ctx.Err())
			}
			return fmt.Errorf("tp: ServeID: %w", err)
		}
		ok := serveOne(ctx, conn, id, size, served)
		conn.Close()
		if ok {
			left--
		}
	}
	return nil
}

// serveOne answers one connection; it reports whether a rank got the id.
func serveOne(ctx context.Context, conn net.Conn, id nccl.UniqueID, size int, served []bool) bool {
	deadline := time.Now().Add(10 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	conn.SetDeadline(deadline)
	var hello [len(rendezvousMagic) + 8]byte
	if _, err := io.ReadFull(conn, hello[:]); err != nil {
		return false
	}
	rank := int(binary.BigEndian.Uint32(hello[8:]))
	n := int(binary.BigEndian.Uint32(hello[12:]))
	var why string
	switch {
	case string(hello[:8]) != rendezvousMagic:
		why = "not a kern tensor-parallel rank (bad greeting)"
	case n != size:
		why = fmt.Sprintf("rank %d expects %d ranks; rank 0 has %d", rank, n, size)
	case rank < 1 || rank >= size:
		why = fmt.Sprintf("rank %d is outside 1…%d", rank, size-1)
	case served[rank]:
		why = fmt.Sprintf("rank %d has already joined", rank)
	}
	if why != "" {
		msg := []byte(why)
		reply := append([]byte{1, byte(len(msg) >> 8), byte(len(msg))}, msg...)
		conn.Write(reply)
		return false
	}
	if _, err := conn.Write(append([]byte{0}, id[:]...)); err != nil {
		return false
	}
	served[rank] = true
	return true
}

// FetchID connects to rank 0 at network/addr ("unix" and a socket path,
// or "tcp" and host:port), retrying until it listens or ctx ends, and
// returns the clique's id.
func FetchID(ctx context.Context, network, addr string, rank, size int) (nccl.UniqueID, error) {
	var id nccl.UniqueID
	var d net.Dialer
	var conn net.Conn
	for {
		var err error
		if conn, err = d.DialContext(ctx, network, addr); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return id, fmt.Errorf("tp: rank %d: rank 0 at %s %s: %w (last: %v)", rank, network, addr, ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	hello := []byte(rendezvousMagic)
	hello = binary.BigEndian.AppendUint32(hello, uint32(rank))
	hello = binary.BigEndian.AppendUint32(hello, uint32(size))
	if _, err := conn.Write(hello); err != nil {
		return id, fmt.Errorf("tp: rank %d: %w", rank, err)
	}
	var status [1]byte
	if _, err := io.ReadFull(conn, status[:]); err != nil {
		return id, fmt.Errorf("tp: rank %d: reading rank 0's answer: %w", rank, err)
	}
	if status[0] == 0 {
		if _, err := io.ReadFull(conn, id[:]); err != nil {
			return id, fmt.Errorf("tp: rank %d: reading the id: %w", rank, err)
		}
		return id, nil
	}
	var n [2]byte
	if _, err := io.ReadFull(conn, n[:]); err != nil {
		return id, fmt.Errorf("tp: rank %d: rank 0 refused: %w", rank, err)
	}
	msg := make([]byte, int(n[0])<<8|int(n[1]))
	if _, err := io.ReadFull(conn, msg); err != nil {
		return id, fmt.Errorf("tp: rank %d: rank 0 refused: %w", rank, err)
	}
	return id, fmt.Errorf("tp: rank %d: rank 0 refused: %w", rank, errors.New(string(msg)))
}

// JoinNCCL is one process's start in the one-process-per-GPU layout:
// rank 0 makes the id, listens on network/addr and serves it to the
// others; every other rank fetches it; then all join the NCCL clique on
// dev. Every rank calls it with the same network, addr and size.
func JoinNCCL(ctx context.Context, dev *kern.Device, network, addr string, rank, size int) (*NCCL, error) {
	var id nccl.UniqueID
	var err error
	if rank == 0 {
		if id, err = nccl.GetUniqueID(); err != nil {
			return nil, fmt.Errorf("tp: rank 0: %w", err)
		}
		ln, err := net.Listen(network, addr)
		if err != nil {
			return nil, fmt.Errorf("tp: rank 0: %w", err)
		}
		err = ServeID(ctx, ln, id, size)
		ln.Close()
		if err != nil {
			return nil, err
		}
	} else if id, err = FetchID(ctx, network, addr, rank, size); err != nil {
		return nil, err
	}
	return NewNCCL(dev, id, rank, size)
}
