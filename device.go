package kern

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/gokern/kern/gpu"
)

// Device is one place kernels run: a CUDA GPU, the PTX emulator, or
// native mode. A Device is safe for concurrent use.
type Device struct {
	kind  string // "cuda", "emu" or "native"
	name  string
	b     backend
	mu    sync.Mutex
	mods  map[*Module]any // loaded modules, by the backend
	limit Limits
	// bufs tracks live allocations by base address, for launch checks.
	bufs   map[uint64]int
	closed bool
}

// Limits are the launch limits of a device.
type Limits struct {
	MaxThreadsPerBlock int
	MaxBlockDim        gpu.Dim3
	MaxGridDim         gpu.Dim3
	MaxSharedPerBlock  int // bytes, including opt-in dynamic shared memory
}

// defaultLimits are those of every sm_80+ GPU, the emulator's and native
// mode's: shared memory is the opt-in limit of the smallest (sm_86 and
// sm_89 allow 99 KiB per block; sm_80 163 KiB, sm_90 227 KiB), so a
// kernel that launches there launches on any of them.
var defaultLimits = Limits{
	MaxThreadsPerBlock: 1024,
	MaxBlockDim:        gpu.Dim3{X: 1024, Y: 1024, Z: 64},
	MaxGridDim:         gpu.Dim3{X: 1<<31 - 1, Y: 65535, Z: 65535},
	MaxSharedPerBlock:  99 * 1024,
}

// backend is what a device kind implements. Addresses are device
// addresses (the emulator's and the GPU's) or, in native mode, keys of
// host allocations.
type backend interface {
	alloc(bytes int) (uint64, error)
	free(addr uint64) error
	write(addr uint64, src []byte) error
	read(addr uint64, dst []byte) error
	memset(addr uint64, bytes int) error
	// hostView returns the allocation as host memory (native mode only).
	hostView(addr uint64) []byte
	load(m *Module) (any, error)
	launch(l *launch) error
	sync() error
	close() error
	streams
}

// ErrNoDriver is returned (wrapped) by Open when no CUDA driver can be
// loaded.
var ErrNoDriver = errors.New("kern: no CUDA driver")

// Open opens the device named by $KERN_DEVICE: "cuda" (the first GPU),
// "cuda:N", "emu" or "native". Unset, it opens the first GPU. Without a
// GPU it returns an error wrapping ErrNoDriver that says how to run on
// the emulator instead; it never falls back silently.
func Open() (*Device, error) {
	spec := strings.TrimSpace(os.Getenv("KERN_DEVICE"))
	switch {
	case spec == "" || spec == "cuda":
		return OpenCUDA(0)
	case strings.HasPrefix(spec, "cuda:"):
		n, err := strconv.Atoi(strings.TrimPrefix(spec, "cuda:"))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("kern: KERN_DEVICE=%q: want cuda:N with N a device ordinal", spec)
		}
		return OpenCUDA(n)
	case spec == "emu":
		return OpenEmulator(), nil
	case spec == "native":
		return OpenNative(), nil
	}
	return nil, fmt.Errorf("kern: KERN_DEVICE=%q: want cuda, cuda:N, emu or native", spec)
}

func newDevice(kind, name string, b backend, lim Limits) *Device {
	return &Device{kind: kind, name: name, b: b, mods: map[*Module]any{}, bufs: map[uint64]int{}, limit: lim}
}

// Kind is "cuda", "emu" or "native".
func (d *Device) Kind() string { return d.kind }

// Name describes the device, e.g. "NVIDIA H100 80GB HBM3 (sm_90)" or
// "kern PTX emulator".
func (d *Device) Name() string { return d.name }

// Limits returns the device's launch limits.
func (d *Device) Limits() Limits { return d.limit }

func (d *Device) String() string { return d.kind + ": " + d.name }

// Sync waits for all work queued on the device to finish and reports the
// first asynchronous error.
func (d *Device) Sync() error { return d.b.sync() }

// Close releases the device. Buffers allocated on it become invalid.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	return d.b.close()
}

func (d *Device) module(m *Module) (any, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if h, ok := d.mods[m]; ok {
		return h, nil
	}
	h, err := d.b.load(m)
	if err != nil {
		return nil, fmt.Errorf("kern: loading the PTX of package %s on %s: %w", m.Pkg, d.kind, err)
	}
	d.mods[m] = h
	return h, nil
}
