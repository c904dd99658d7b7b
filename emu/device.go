package emu

// Device memory: allocations, host copies and module globals.

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

// Address layout. Global allocations look like real device pointers; the
// shared, local and param windows are where generic addresses of those
// spaces live (cvta.shared / cvta.local / cvta.param add the window base,
// PTX ISA §9.7.9.18; a kernel parameter's generic address is read-only,
// §5.1.6.1, and is how a __grid_constant__ tensor map reaches TMA).
const (
	globalBase   = 0x7f00_0000_0000
	sharedWindow = 0x7e00_0000_0000
	localWindow  = 0x7e80_0000_0000
	paramWindow  = 0x7d80_0000_0000
	windowSize   = 1 << 32

	allocAlign = 256 // cudaMalloc alignment
	// allocGap is unmapped space after every allocation, so that running a
	// little past the end of one is an error rather than a silent access to
	// the next.
	allocGap = 4096
)

// Options configure a Device.
type Options struct {
	// Workers is how many blocks run at once; 0 means GOMAXPROCS.
	Workers int
	// Observer, if set, sees every instruction step and memory access.
	// Its methods are called from several goroutines at once.
	Observer Observer
	// Memcheck reports every invalid memory access (out of bounds,
	// misaligned, freed) and every read of global memory that neither the
	// host nor the kernel wrote, instead of stopping at the first fault:
	// faulting loads read zeros, faulting stores are dropped, and Launch
	// returns a *Report. Like compute-sanitizer's memcheck and initcheck.
	Memcheck bool
	// Racecheck reports shared-memory accesses by different warps of a
	// block, at least one a write, with no barrier between them (atomics
	// excepted), as a *Report from Launch.
	Racecheck bool
	// Synccheck reports aligned barriers (bar.sync) reached by only part
	// of a warp's live lanes, and shuffles that read a lane not executing
	// the shuffle, as a *Report from Launch.
	Synccheck bool
	// PDLcheck checks the contract of programmatic dependent launch
	// (gpu.WaitPriorGrids) for launches made with LaunchConfig.PDL: before
	// a thread's griddepcontrol.wait, it may not write global memory nor
	// read what the launches it may overlap on a GPU wrote (the launches
	// since, and including, the last one without PDL). Findings come as a
	// *Report from Launch, naming the kernel that wrote the bytes.
	PDLcheck bool
	// MaxSteps bounds the warp-instructions one block may execute before
	// the launch fails (a guard against kernels that never finish); 0
	// means 1<<30.
	MaxSteps uint64
	// MaxSharedPerBlock is the shared memory per block, in bytes, that a
	// kern Device opened on this emulator reports and admits (kern's
	// OpenEmulator); 0 means 99 KiB, what every sm_80+ GPU allows. The
	// emulator itself runs blocks of up to 227 KiB (an H100's opt-in
	// limit), so a larger value changes nothing. Tests of sm_90a kernels
	// whose tiles need an H100's shared memory open an emulator with
	// 227 KiB (MaxSharedPerBlockSM90).
	MaxSharedPerBlock int
}

// MaxSharedPerBlockSM90 is an H100's opt-in shared memory per block,
// the most the emulator runs (static and dynamic together).
const MaxSharedPerBlockSM90 = maxSharedPerBlock

// Device is an emulated GPU: device memory plus launches. Its methods are
// safe for concurrent use; a Launch sees the allocations that existed when
// it started.
type Device struct {
	opts Options
	// pdl is what PDLcheck knows of the launches before the next one.
	pdl pdlWindow

	mu      sync.Mutex
	allocs  []*alloc // live allocations, sorted by base
	freed   []*alloc // freed allocations, for diagnostics
	next    uint64
	globals map[uint64][]uint64 // Module.id -> address of each module global

	atomMu [64]sync.Mutex // atomics on global memory, striped by address

	steps atomic.Uint64 // warp-instructions executed by all launches

	print printfState // device-side printf's destination (printf.go)
}

// alloc is one device allocation.
type alloc struct {
	base uint64
	data []byte
	name string // module global name, "" for Alloc
	// init marks the bytes written so far (Memcheck only): one byte per
	// byte, so that blocks writing neighbouring bytes do not race.
	init []byte
}

func (a *alloc) end() uint64 { return a.base + uint64(len(a.data)) }

// NewDevice makes an emulated device.
func NewDevice(o Options) *Device {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = 1 << 30
	}
	return &Device{opts: o, next: globalBase, globals: map[uint64][]uint64{}}
}

// Alloc allocates n bytes of zeroed device memory, 256-byte aligned.
func (d *Device) Alloc(n int) (uint64, error) {
	if n < 0 {
		return 0, fmt.Errorf("emu: Alloc(%d): negative size", n)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.allocLocked(n, allocAlign, ""), nil
}

func (d *Device) allocLocked(n, align int, name string) uint64 {
	if align < allocAlign {
		align = allocAlign
	}
	base := (d.next + uint64(align) - 1) / uint64(align) * uint64(align)
	a := &alloc{base: base, data: make([]byte, n), name: name}
	if d.opts.Memcheck && name == "" {
		a.init = make([]byte, n)
	}
	d.allocs = append(d.allocs, a) // bases only grow, so the slice stays sorted
	d.next = base + uint64(n) + allocGap
	return base
}

// Free releases an allocation made by Alloc. Its addresses are never
// reused, so later accesses through stale pointers are reported.
func (d *Device) Free(addr uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := sort.Search(len(d.allocs), func(i int) bool { return d.allocs[i].base >= addr })
	if i == len(d.allocs) || d.allocs[i].base != addr {
		return fmt.Errorf("emu: Free(%#x): not the start of a live allocation", addr)
	}
	if d.allocs[i].name != "" {
		return fmt.Errorf("emu: Free(%#x): module global %s cannot be freed", addr, d.allocs[i].name)
	}
	d.freed = append(d.freed, d.allocs[i])
	d.allocs = append(d.allocs[:i:i], d.allocs[i+1:]...)
	return nil
}

// find returns the allocation holding [addr, addr+n) in allocs (sorted).
func find(allocs []*alloc, addr uint64, n int) *alloc {
	i := sort.Search(len(allocs), func(i int) bool { return allocs[i].end() > addr })
	if i < len(allocs) {
		a := allocs[i]
		if addr >= a.base && addr+uint64(n) <= a.end() {
			return a
		}
	}
	return nil
}

// span returns the device bytes [addr, addr+n) for a host copy; for
// Write and Memset it marks them initialized.
func (d *Device) span(op string, addr uint64, n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("emu: %s(%#x): negative size %d", op, addr, n)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if n == 0 {
		return nil, nil
	}
	a := find(d.allocs, addr, n)
	if a == nil {
		return nil, fmt.Errorf("emu: %s(%#x, %d bytes): %s", op, addr, n, d.describeLocked(addr, n))
	}
	off := addr - a.base
	if a.init != nil && op != "Read" {
		for i := off; i < off+uint64(n); i++ {
			a.init[i] = 1
		}
	}
	return a.data[off : off+uint64(n)], nil
}

// Write copies b to device memory at addr.
func (d *Device) Write(addr uint64, b []byte) error {
	s, err := d.span("Write", addr, len(b))
	if err != nil {
		return err
	}
	copy(s, b)
	return nil
}

// Read copies device memory at addr into b.
func (d *Device) Read(addr uint64, b []byte) error {
	s, err := d.span("Read", addr, len(b))
	if err != nil {
		return err
	}
	copy(b, s)
	return nil
}

// Memset sets n bytes at addr to v.
func (d *Device) Memset(addr uint64, v byte, n int) error {
	s, err := d.span("Memset", addr, n)
	if err != nil {
		return err
	}
	for i := range s {
		s[i] = v
	}
	return nil
}

// Global returns the device address and size of a module-scope .global or
// .const variable. Module globals are allocated (and initialized) on first
// use, once per Device and Module.
func (d *Device) Global(m *Module, name string) (uint64, int, error) {
	i, ok := m.gindex[name]
	if !ok {
		return 0, 0, fmt.Errorf("emu: module has no global %q", name)
	}
	addrs := d.moduleGlobals(m)
	return addrs[i], m.globals[i].size, nil
}

// moduleGlobals returns the addresses of m's globals on d.
func (d *Device) moduleGlobals(m *Module) []uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if a, ok := d.globals[m.id]; ok {
		return a
	}
	addrs := make([]uint64, len(m.globals))
	for i, g := range m.globals {
		addrs[i] = d.allocLocked(g.size, g.align, g.name)
		if g.init != nil {
			copy(d.allocs[len(d.allocs)-1].data, g.init)
		}
	}
	d.globals[m.id] = addrs
	return addrs
}

// snapshot returns the live allocations for a launch.
func (d *Device) snapshot() []*alloc {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*alloc(nil), d.allocs...)
}

// describe explains why [addr, addr+n) is not accessible.
func (d *Device) describe(addr uint64, n int) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.describeLocked(addr, n)
}

func (d *Device) describeLocked(addr uint64, n int) string {
	for _, a := range d.freed {
		if addr >= a.base && addr < a.end() {
			return fmt.Sprintf("address %#x is in a freed allocation [%#x, %#x)", addr, a.base, a.end())
		}
	}
	var near *alloc
	var dist uint64
	for _, a := range d.allocs {
		var dd uint64
		switch {
		case addr >= a.base && addr < a.end():
			return fmt.Sprintf("%d bytes at %#x run past the end of allocation %s[%#x, %#x) (%d bytes) by %d",
				n, addr, allocName(a), a.base, a.end(), len(a.data), addr+uint64(n)-a.end())
		case addr >= a.end():
			dd = addr - a.end()
		default:
			dd = a.base - addr
		}
		if near == nil || dd < dist {
			near, dist = a, dd
		}
	}
	if near != nil && dist < 1<<20 {
		if addr >= near.end() {
			return fmt.Sprintf("address %#x is outside any allocation (%d bytes past the end of %s[%#x, %#x))",
				addr, addr-near.end(), allocName(near), near.base, near.end())
		}
		return fmt.Sprintf("address %#x is outside any allocation (%d bytes before %s[%#x, %#x))",
			addr, near.base-addr, allocName(near), near.base, near.end())
	}
	return fmt.Sprintf("address %#x is outside any allocation", addr)
}

func allocName(a *alloc) string {
	if a.name != "" {
		return a.name + " "
	}
	return ""
}

// WarpInstructions is the number of warp-instructions (one instruction
// for the lanes of one warp that run it together) the device has executed
// in all launches so far.
func (d *Device) WarpInstructions() uint64 { return d.steps.Load() }
