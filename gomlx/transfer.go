package gomlx

// Host ↔ device transfers. Every copy between Go memory and the device
// goes through upload or download here and is counted, so tests can show
// that executing a graph moves no data: buffers stay on the device
// between executions until BufferToFlatData asks for one.

import (
	"sync/atomic"
	"unsafe"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// Transfers counts host ↔ device copies, and device allocations.
type Transfers struct {
	// Uploads and Downloads count copies of tensor data asked for through
	// the DataInterface (BufferFromFlatData, BufferToFlatData).
	Uploads, Downloads atomic.Int64
	// Meta counts uploads the builder makes when it records a node:
	// constants, strides and index maps, once per graph.
	Meta atomic.Int64
	// Allocs counts device allocations for tensors (pool.go reuses
	// buffers, so a steady loop makes none).
	Allocs atomic.Int64
	// Runs counts executed nodes (one or a few kernel launches each), so
	// tests can see fusion drop the nodes of a pattern.
	Runs atomic.Int64
}

// TransferCounts returns the backend's counters.
func (b *Backend) TransferCounts() *Transfers { return &b.transfers }

// upload copies xs to a new device buffer, counting it in c.
func upload[T gpu.Elem](dev *kern.Device, c *atomic.Int64, xs []T) (*kern.Buffer[T], error) {
	c.Add(1)
	return kern.Upload(dev, xs)
}

// download copies a device buffer into dst.
func download[T gpu.Elem](c *atomic.Int64, b *kern.Buffer[T], dst []T) error {
	c.Add(1)
	return b.CopyTo(dst)
}

// reinterpret views a slice of one 16-bit type as another (GoMLX's
// float16.Float16 and bfloat16.BFloat16 have gpu.Half's and
// gpu.BFloat16's bits).
func reinterpret[D, S any](s []S) []D {
	if len(s) == 0 {
		return []D{}
	}
	return unsafe.Slice((*D)(unsafe.Pointer(&s[0])), len(s))
}
