package nccl

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/gokern/kern/cuda"
)

// UniqueID is an ncclUniqueId: the 128 opaque bytes that name a clique.
// Rank 0 makes it and sends it to every other rank; it is plain data.
type UniqueID [128]byte

// DataType is an ncclDataType_t.
type DataType int32

// Element types from nccl.h.
const (
	Int8     DataType = 0
	Uint8    DataType = 1
	Int32    DataType = 2
	Uint32   DataType = 3
	Int64    DataType = 4
	Uint64   DataType = 5
	Float16  DataType = 6
	Float32  DataType = 7
	Float64  DataType = 8
	BFloat16 DataType = 9
)

// Size is the element's size in bytes.
func (t DataType) Size() int {
	switch t {
	case Int8, Uint8:
		return 1
	case Float16, BFloat16:
		return 2
	case Int32, Uint32, Float32:
		return 4
	}
	return 8
}

// RedOp is an ncclRedOp_t.
type RedOp int32

// Reductions from nccl.h.
const (
	Sum  RedOp = 0
	Prod RedOp = 1
	Max  RedOp = 2
	Min  RedOp = 3
	Avg  RedOp = 4
)

// GetUniqueID makes the id of a new clique (ncclGetUniqueId). Only one
// rank calls it; NCCL's bootstrap listens on a socket the id names.
func GetUniqueID() (UniqueID, error) {
	var id UniqueID
	l, err := current()
	if err != nil {
		return id, err
	}
	p := new(UniqueID)
	err = l.call(&l.ncclGetUniqueId, uintptr(unsafe.Pointer(p)))
	return *p, err
}

// Comm is one rank's communicator (ncclComm_t).
type Comm struct {
	lib          *library
	c            uintptr // 0 once destroyed
	rank, nranks int
	aborted      atomic.Bool
}

// CommInitRank joins rank of nranks to the clique id names
// (ncclCommInitRank). It blocks until every rank has joined, so ranks of
// one process call it from separate goroutines (or inside GroupStart/End
// from one). It must run with the rank's CUDA context current.
func CommInitRank(nranks int, id UniqueID, rank int) (*Comm, error) {
	l, err := current()
	if err != nil {
		return nil, err
	}
	if nranks < 1 || rank < 0 || rank >= nranks || nranks > 1<<20 {
		return nil, &Error{Call: "ncclCommInitRank", Result: InvalidArgument,
			Detail: fmt.Sprintf("rank %d of %d ranks", rank, nranks)}
	}
	var raw uintptr
	if err := l.initRank(&raw, nranks, rank, &id); err != nil {
		return nil, err
	}
	return &Comm{lib: l, c: raw, rank: rank, nranks: nranks}, nil
}

// Rank is this communicator's rank; Size the clique's.
func (c *Comm) Rank() int { return c.rank }
func (c *Comm) Size() int { return c.nranks }

// Count asks NCCL for the clique's size (ncclCommCount).
func (c *Comm) Count() (int, error) {
	var n int32
	err := c.callLive(&c.lib.ncclCommCount, uintptr(unsafe.Pointer(&n)))
	return int(n), err
}

// UserRank asks NCCL for this communicator's rank (ncclCommUserRank).
func (c *Comm) UserRank() (int, error) {
	var n int32
	err := c.callLive(&c.lib.ncclCommUserRank, uintptr(unsafe.Pointer(&n)))
	return int(n), err
}

//go:uintptrescapes
func (c *Comm) callLive(p *proc, args ...uintptr) error {
	if c.c == 0 {
		return &Error{Call: p.Name, Result: InvalidUsage, Detail: "the Comm was destroyed"}
	}
	return c.lib.call(p, append([]uintptr{c.c}, args...)...)
}

// AllReduce reduces count elements of send over every rank with op and
// writes the result to recv on every rank (ncclAllReduce). send may equal
// recv. It returns once the work is queued on stream.
func (c *Comm) AllReduce(send, recv cuda.DevicePtr, count int, t DataType, op RedOp, stream cuda.Stream) error {
	l := c.lib
	if err := c.live(&l.ncclAllReduce, count); err != nil {
		return err
	}
	return l.call(&l.ncclAllReduce, uintptr(send), uintptr(recv), uintptr(count), uintptr(uint32(t)),
		uintptr(uint32(op)), c.c, uintptr(stream))
}

// AllGather concatenates every rank's sendCount elements in rank order
// into recv (Size()*sendCount elements) on every rank (ncclAllGather).
func (c *Comm) AllGather(send, recv cuda.DevicePtr, sendCount int, t DataType, stream cuda.Stream) error {
	l := c.lib
	if err := c.live(&l.ncclAllGather, sendCount); err != nil {
		return err
	}
	return l.call(&l.ncclAllGather, uintptr(send), uintptr(recv), uintptr(sendCount), uintptr(uint32(t)),
		c.c, uintptr(stream))
}

// Broadcast copies count elements of root's send into every rank's recv
// (ncclBroadcast); send is read on root only.
func (c *Comm) Broadcast(send, recv cuda.DevicePtr, count int, t DataType, root int, stream cuda.Stream) error {
	l := c.lib
	if err := c.live(&l.ncclBroadcast, count); err != nil {
		return err
	}
	if root < 0 || root >= c.nranks {
		return &Error{Call: l.ncclBroadcast.Name, Result: InvalidArgument,
			Detail: fmt.Sprintf("root %d of %d ranks", root, c.nranks)}
	}
	return l.call(&l.ncclBroadcast, uintptr(send), uintptr(recv), uintptr(count), uintptr(uint32(t)),
		uintptr(int64(int32(root))), c.c, uintptr(stream))
}

func (c *Comm) live(p *proc, count int) error {
	switch {
	case c.aborted.Load():
		return &Error{Call: p.Name, Result: InvalidUsage, Detail: "the Comm was aborted"}
	case c.c == 0:
		return &Error{Call: p.Name, Result: InvalidUsage, Detail: "the Comm was destroyed"}
	case count < 0:
		return &Error{Call: p.Name, Result: InvalidArgument, Detail: fmt.Sprintf("negative count %d", count)}
	}
	return nil
}

// Destroy frees the communicator (ncclCommDestroy) after its queued work.
func (c *Comm) Destroy() error {
	l := c.lib
	if err := c.live(&l.ncclCommDestroy, 0); err != nil {
		return err
	}
	if err := l.call(&l.ncclCommDestroy, c.c); err != nil {
		return err
	}
	c.c = 0
	return nil
}

// Abort ends the communicator at once (ncclCommAbort, NCCL 2.4 and
// later): collectives of it that are in flight, queued or blocked in
// another goroutine's call, fail with RemoteError instead of waiting for
// a rank that is gone. It is the one call that may overlap others on c;
// none may start after it, and the Comm is then unusable (Destroy
// reports it aborted). A library without ncclCommAbort is an error.
func (c *Comm) Abort() error {
	l := c.lib
	if l.ncclCommAbort.Addr == 0 {
		return &Error{Call: "ncclCommAbort", Result: InvalidUsage, Detail: "this libnccl does not export it (NCCL before 2.4)"}
	}
	if err := c.live(&l.ncclCommAbort, 0); err != nil {
		return err
	}
	c.aborted.Store(true)
	return l.call(&l.ncclCommAbort, c.c)
}

// Aborted reports whether Abort was called.
func (c *Comm) Aborted() bool { return c.aborted.Load() }

// GroupStart and GroupEnd bracket calls NCCL fuses into one launch
// (ncclGroupStart/End): collectives on several communicators from one
// thread, or CommInitRank for several ranks from one thread.
func GroupStart() error {
	l, err := current()
	if err != nil {
		return err
	}
	return l.call(&l.ncclGroupStart)
}

// GroupEnd: see GroupStart.
func GroupEnd() error {
	l, err := current()
	if err != nil {
		return err
	}
	return l.call(&l.ncclGroupEnd)
}
