package kern

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/gokern/kern/gpu"
)

// OpenNative opens native mode: kernels run as their Go functions, one
// goroutine per GPU thread (gpu.RunNative), so fmt.Println and a debugger
// work inside them. Buffers are host memory. Results follow Go's
// semantics exactly and are the reference emu and GPU results are compared
// against. Index errors are Go panics, reported as launch errors.
func OpenNative() *Device {
	return newDevice("native", "Go runtime (native mode)", &nativeBackend{mem: map[uint64][]byte{}, next: 1 << 20}, hostLimits())
}

type nativeBackend struct {
	hostStreams
	goHostMemory
	mu  sync.Mutex
	mem map[uint64][]byte
	// bases are mem's keys in increasing order (addresses only grow), to
	// find the allocation an address inside it (a view's) belongs to.
	bases []uint64
	next  uint64
}

func (n *nativeBackend) alloc(bytes int) (uint64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	// 16-byte aligned backing store: allocate as uint64s.
	words := make([]uint64, (bytes+7)/8)
	b := unsafeBytes(words, bytes)
	addr := n.next
	n.next += uint64((bytes + 255) &^ 255)
	n.mem[addr] = b
	n.bases = append(n.bases, addr)
	return addr, nil
}

// get is the memory from addr to the end of the allocation holding it.
func (n *nativeBackend) get(addr uint64) ([]byte, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	i, _ := slices.BinarySearch(n.bases, addr+1) // the first base past addr
	if i > 0 {
		base := n.bases[i-1]
		if b := n.mem[base]; addr-base <= uint64(len(b)) {
			return b[addr-base:], nil
		}
	}
	return nil, fmt.Errorf("no allocation at %#x", addr)
}

func (n *nativeBackend) free(addr uint64) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	i, ok := slices.BinarySearch(n.bases, addr)
	if !ok {
		return fmt.Errorf("free of unknown allocation %#x", addr)
	}
	delete(n.mem, addr)
	n.bases = slices.Delete(n.bases, i, i+1)
	return nil
}

func (n *nativeBackend) write(addr uint64, src []byte) error {
	b, err := n.get(addr)
	if err != nil {
		return err
	}
	copy(b, src)
	return nil
}

func (n *nativeBackend) read(addr uint64, dst []byte) error {
	b, err := n.get(addr)
	if err != nil {
		return err
	}
	copy(dst, b)
	return nil
}

func (n *nativeBackend) memset(addr uint64, bytes int) error {
	b, err := n.get(addr)
	if err != nil {
		return err
	}
	clear(b[:bytes])
	return nil
}

// copyAsync copies at once, as native mode's launches complete when made.
func (n *nativeBackend) copyAsync(toDevice bool, addr uint64, host []byte, _ any) error {
	if toDevice {
		return n.write(addr, host)
	}
	return n.read(addr, host)
}

func (n *nativeBackend) hostView(addr uint64) []byte {
	b, _ := n.get(addr)
	return b
}

func (n *nativeBackend) load(m *Module) (any, error) { return nil, nil }

func (n *nativeBackend) launch(l *launch) error {
	spec := &l.k.spec
	if spec.Native == nil {
		return fmt.Errorf("no native body was generated")
	}
	args := make([]any, len(l.args))
	for i, a := range l.args {
		if a.live != nil {
			args[i] = a.buf.(interface{ nativeValue() any }).nativeValue()
		} else {
			args[i] = a.native()
		}
	}
	ctx := l.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	run := gpu.RunNativeContext
	if spec.Cooperative {
		run = gpu.RunNativeCooperative
	}
	err := run(ctx, l.blocks, l.threads, l.shared, func(t gpu.Thread) { spec.Native(t, args) })
	if err != nil {
		return nativeFault(l.k, err)
	}
	return nil
}

func (n *nativeBackend) sync() error  { return nil }
func (n *nativeBackend) close() error { return nil }
