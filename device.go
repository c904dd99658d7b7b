package kern

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gokern/kern/gpu"
)

// Device is one place kernels run: a CUDA GPU, the PTX emulator, or
// native mode. A Device is safe for concurrent use.
type Device struct {
	kind  string // "cuda", "emu" or "native"
	name  string
	id    int // process-wide number, to tell two devices of a kind apart
	b     backend
	mu    sync.Mutex
	mods  map[*Module]any // loaded modules, by the backend
	limit Limits
	// bufs tracks live allocations by base address, for launch checks.
	bufs map[uint64]int
	// closed is set once by Close; every later operation returns
	// ErrClosed. It is atomic because launches read it without d.mu.
	closed atomic.Bool
	// broken, when set, is returned by every operation: a device whose
	// configuration was invalid, or whose memory abandoned native threads
	// may still use, fails closed rather than running on.
	broken atomic.Pointer[error]
	// grid hands out cooperative launches' barrier slots (cooperative.go).
	grid gridSlots
}

// deviceIDs numbers devices in the order they are opened.
var deviceIDs atomic.Int64

// Limits are the launch limits of a device.
type Limits struct {
	MaxThreadsPerBlock int
	MaxBlockDim        gpu.Dim3
	MaxGridDim         gpu.Dim3
	MaxSharedPerBlock  int // bytes, including opt-in dynamic shared memory
	// MaxAlloc is the most bytes one Alloc may ask for: the GPU's memory,
	// or on the emulator and in native mode the host's (0: unknown, no
	// limit beyond the byte count fitting an int).
	MaxAlloc uint64
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
	// allocHost and freeHost are HostBuffer's memory (page-locked on a
	// GPU); copyAsync queues a copy between it and addr on stream (nil:
	// the device's default queue), to the device if toDevice.
	allocHost(bytes int) ([]byte, error)
	freeHost(mem []byte) error
	copyAsync(toDevice bool, addr uint64, host []byte, stream any) error
	load(m *Module) (any, error)
	launch(l *launch) error
	sync() error
	close() error
	streams
}

// ErrNoDriver is returned (wrapped) by Open when no CUDA driver can be
// loaded.
var ErrNoDriver = errors.New("kern: no CUDA driver")

// ErrClosed is returned (wrapped) by every operation on a closed device
// or on a buffer, stream or graph of one, on every kind of device.
var ErrClosed = errors.New("kern: device is closed")

// Open opens the device named by $KERN_DEVICE:
//
//	unset or "auto"  the first GPU; without an NVIDIA driver or GPU, the PTX
//	                 emulator, saying so once per process on stderr
//	"cuda", "cuda:N" that GPU, or an error wrapping ErrNoDriver that says
//	                 how to run on the emulator instead
//	"emu", "native"  the emulator or native mode
//
// So a program written with Open runs everywhere by default, and
// KERN_DEVICE=cuda makes a missing GPU an error.
func Open() (*Device, error) {
	spec := strings.TrimSpace(os.Getenv("KERN_DEVICE"))
	switch {
	case spec == "" || spec == "auto":
		d, err := OpenCUDA(0)
		if !errors.Is(err, ErrNoDriver) {
			return d, err
		}
		fallbackBanner.Do(func() {
			fmt.Fprintln(os.Stderr, "kern: no GPU found: running on the kern PTX emulator (set KERN_DEVICE=cuda to require a GPU, KERN_DEVICE=emu to say this is intended)")
		})
		return openEmulatorChecked()
	case spec == "cuda":
		return OpenCUDA(0)
	case strings.HasPrefix(spec, "cuda:"):
		n, err := strconv.Atoi(strings.TrimPrefix(spec, "cuda:"))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("kern: KERN_DEVICE=%q: want cuda:N with N a device ordinal", spec)
		}
		return OpenCUDA(n)
	case spec == "emu":
		return openEmulatorChecked()
	case spec == "native":
		return OpenNative(), nil
	}
	return nil, fmt.Errorf("kern: KERN_DEVICE=%q: want auto, cuda, cuda:N, emu or native", spec)
}

// fallbackBanner prints, once per process, that Open chose the emulator.
var fallbackBanner sync.Once

// openEmulatorChecked opens the emulator and returns its configuration
// error (an unknown KERN_EMU_CHECK name) rather than a broken device.
func openEmulatorChecked() (*Device, error) {
	d := OpenEmulator()
	if err := d.usable(); err != nil {
		return nil, err
	}
	return d, nil
}

func newDevice(kind, name string, b backend, lim Limits) *Device {
	return &Device{kind: kind, name: name, id: int(deviceIDs.Add(1)), b: b, mods: map[*Module]any{}, bufs: map[uint64]int{}, limit: lim}
}

// usable returns nil, or why no operation may run on d: it was closed
// (ErrClosed) or opened with an invalid configuration.
func (d *Device) usable() error {
	if d.closed.Load() {
		return closedError{d.label()}
	}
	if p := d.broken.Load(); p != nil {
		return *p
	}
	return nil
}

// closedError says which device is closed, and is ErrClosed.
type closedError struct{ dev string }

func (e closedError) Error() string        { return e.dev + " is closed" }
func (e closedError) Is(target error) bool { return target == ErrClosed }

// breakDevice makes every later operation on d return err.
func (d *Device) breakDevice(err error) { d.broken.CompareAndSwap(nil, &err) }

// memoryName says whose memory MaxAlloc is, for Alloc's error.
func (d *Device) memoryName() string {
	if d.kind == "cuda" {
		return "memory of " + d.label()
	}
	return "host memory (" + d.label() + " keeps buffers in host memory)"
}

// label names d in errors so that two devices of one kind differ:
// "emu device #2".
func (d *Device) label() string { return fmt.Sprintf("%s device #%d", d.kind, d.id) }

// Kind is "cuda", "emu" or "native".
func (d *Device) Kind() string { return d.kind }

// Name describes the device, e.g. "NVIDIA H100 80GB HBM3 (sm_90)" or
// "kern PTX emulator".
func (d *Device) Name() string { return d.name }

// Limits returns the device's launch limits.
func (d *Device) Limits() Limits { return d.limit }

// ID is a number unique to the device in this process, in the order
// devices were opened; errors name a device by kind and ID
// ("emu device #2") so that two devices of one kind can be told apart.
func (d *Device) ID() int { return d.id }

func (d *Device) String() string { return d.kind + ": " + d.name }

// Sync waits for all work queued on the device to finish and reports the
// first asynchronous error.
func (d *Device) Sync() error {
	if err := d.usable(); err != nil {
		return fmt.Errorf("kern: Sync: %w", err)
	}
	return d.b.sync()
}

// Close releases the device. Buffers, streams and graphs made on it
// become invalid: every later operation on them, and on the device,
// returns an error wrapping ErrClosed. Closing twice does nothing.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Swap(true) {
		return nil
	}
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
