package gomlx

// Registration, the device a backend runs on, and what it can do.

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"

	"github.com/gokern/kern"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// BackendName is the name GOMLX_BACKEND selects this backend by.
const BackendName = "kern"

func init() {
	backends.Register(BackendName, New)
}

// Backend runs GoMLX graphs on one kern device. It implements
// backends.Backend.
type Backend struct {
	dev       *kern.Device
	finalized bool
	transfers Transfers
	pool      pool
	fusions   fusionCounts
	// noFusion turns fusion.go off (config suffix ",nofusion"), to compare.
	noFusion bool
}

var _ backends.Backend = (*Backend)(nil)

// New opens the kern device that config names: "" (the first GPU, or
// $KERN_DEVICE when set), "cuda", "cuda:N", "emu" or "native"; a
// ",nofusion" suffix turns off fusion.go's patterns. It is the
// constructor registered with backends.Register.
func New(config string) (backends.Backend, error) {
	config, noFusion := strings.CutSuffix(config, ",nofusion")
	dev, err := openDevice(config)
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", BackendName, err)
	}
	return &Backend{dev: dev, noFusion: noFusion}, nil
}

// fusionCounts counts, per pattern, the fused kernels compiled.
type fusionCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (f *fusionCounts) Add(pattern string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[string]int{}
	}
	f.n[pattern]++
}

// Fusions returns how many times each pattern of fusion.go was fused in
// the graphs compiled so far.
func (b *Backend) Fusions() map[string]int {
	b.fusions.mu.Lock()
	defer b.fusions.mu.Unlock()
	return maps.Clone(b.fusions.n)
}

func openDevice(config string) (*kern.Device, error) {
	config = strings.TrimSpace(config)
	switch {
	case config == "":
		return kern.Open()
	case config == "emu":
		return kern.OpenEmulator(), nil
	case config == "native":
		return kern.OpenNative(), nil
	case config == "cuda":
		return kern.OpenCUDA(0)
	case strings.HasPrefix(config, "cuda:"):
		n, err := strconv.Atoi(strings.TrimPrefix(config, "cuda:"))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("config %q: want cuda:N with N a device ordinal", config)
		}
		return kern.OpenCUDA(n)
	}
	return nil, fmt.Errorf("config %q: want emu, native, cuda or cuda:N", config)
}

// Device is the kern device the backend runs on.
func (b *Backend) Device() *kern.Device { return b.dev }

// Name implements backends.Backend.
func (b *Backend) Name() string { return BackendName }

// String implements backends.Backend.
func (b *Backend) String() string { return BackendName }

// Description implements backends.Backend.
func (b *Backend) Description() string {
	return fmt.Sprintf("kern GoMLX backend on %s", b.dev)
}

// NumDevices implements backends.Backend: one kern device per backend.
func (b *Backend) NumDevices() int { return 1 }

// DeviceDescription implements backends.Backend.
func (b *Backend) DeviceDescription(deviceNum backends.DeviceNum) string {
	return fmt.Sprintf("device %d: %s", deviceNum, b.dev)
}

// Capabilities implements backends.Backend: the ops of supportedOps and
// the stored dtypes.
func (b *Backend) Capabilities() backends.Capabilities {
	c := backends.Capabilities{Operations: map[backends.OpType]bool{}, DTypes: map[dtypes.DType]bool{}}
	for _, op := range supportedOps {
		c.Operations[op] = true
	}
	for _, dt := range storedDTypes {
		c.DTypes[dt] = true
	}
	return c
}

// Finalize implements backends.Backend: it closes the device, which frees
// every buffer on it.
func (b *Backend) Finalize() {
	if b.finalized {
		return
	}
	b.pool.drain()
	b.finalized = true
	b.dev.Close()
}

// IsFinalized implements backends.Backend.
func (b *Backend) IsFinalized() bool { return b.finalized }
