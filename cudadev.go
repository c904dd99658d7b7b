package kern

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
)

// OpenCUDA opens GPU number ordinal through the NVIDIA driver (libcuda,
// loaded at run time; no cgo, no toolkit). Kernels are JIT-compiled from
// their PTX by the driver the first time a package's module is used on the
// device.
func OpenCUDA(ordinal int) (*Device, error) {
	if err := cuda.Init(); err != nil {
		return nil, fmt.Errorf("%w (%v): on a machine without an NVIDIA GPU, set KERN_DEVICE=emu to run on kern's PTX emulator, or KERN_DEVICE=native to run kernels as Go", ErrNoDriver, err)
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return nil, fmt.Errorf("kern: %w", err)
	}
	if ordinal < 0 || ordinal >= n {
		if n == 0 {
			return nil, fmt.Errorf("%w: the driver sees no GPU; set KERN_DEVICE=emu to use the emulator", ErrNoDriver)
		}
		return nil, fmt.Errorf("kern: no GPU %d (the driver sees %d)", ordinal, n)
	}
	dev, err := cuda.DeviceGet(ordinal)
	if err != nil {
		return nil, fmt.Errorf("kern: %w", err)
	}
	info, err := dev.Info()
	if err != nil {
		return nil, fmt.Errorf("kern: %w", err)
	}
	ctx, err := cuda.PrimaryCtxRetain(dev)
	if err != nil {
		return nil, fmt.Errorf("kern: %w", err)
	}
	lim := Limits{
		MaxThreadsPerBlock: info.MaxThreadsPerBlock,
		MaxBlockDim:        gpu.Dim3{X: info.MaxBlockDim[0], Y: info.MaxBlockDim[1], Z: info.MaxBlockDim[2]},
		MaxGridDim:         gpu.Dim3{X: info.MaxGridDim[0], Y: info.MaxGridDim[1], Z: info.MaxGridDim[2]},
		MaxSharedPerBlock:  max(info.SharedPerBlockOptin, info.SharedPerBlock),
		MaxAlloc:           uint64(info.TotalMem),
	}
	name := fmt.Sprintf("%s (sm_%d%d, %d SMs, %.1f GiB)", info.Name, info.Major, info.Minor, info.Multiprocessors, float64(info.TotalMem)/(1<<30))
	b := &cudaBackend{dev: dev, ctx: ctx, info: info, pdl: pdlAvailable(info.Major)}
	return newDevice("cuda", name, b, lim), nil
}

// argsPool holds the parameter buffers of launches: a cuda.Args is
// 896 bytes, a heap allocation per launch otherwise.
var argsPool = sync.Pool{New: func() any { return new(cuda.Args) }}

type cudaBackend struct {
	dev  cuda.Device
	ctx  cuda.Context
	info cuda.DeviceInfo
	mu   sync.Mutex
	mods []*cudaModule
	// pdl is set when kernels may be launched with programmatic
	// dependent launch (pdl.go); pdlOff once the driver refused it,
	// pdlCoopOff once it refused it with the cooperative attribute.
	pdl        bool
	pdlOff     atomic.Bool
	pdlCoopOff atomic.Bool
	// slots is page-locked memory the modules' error slots are read into,
	// errorSlotBytes a module (checkSlots); slotMu guards it.
	slotMu sync.Mutex
	slots  []byte
}

type cudaModule struct {
	m     *Module
	mod   cuda.Module
	slot  cuda.DevicePtr
	funcs map[string]cuda.Function
	// optin records the dynamic shared memory each function was allowed.
	optin map[string]int
	// pdl is set when the loaded PTX has its griddepcontrol instructions
	// (pdl.go): its PDL kernels launch with programmatic serialization.
	pdl bool
}

func (c *cudaBackend) do(fn func() error) error { return c.ctx.Do(fn) }

func (c *cudaBackend) alloc(bytes int) (uint64, error) {
	var p cuda.DevicePtr
	err := c.do(func() (err error) { p, err = cuda.MemAlloc(uint64(bytes)); return })
	return uint64(p), err
}

func (c *cudaBackend) free(addr uint64) error {
	return c.do(func() error { return cuda.MemFree(cuda.DevicePtr(addr)) })
}

func (c *cudaBackend) write(addr uint64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return c.do(func() error {
		return cuda.MemcpyHtoD(cuda.DevicePtr(addr), unsafe.Pointer(&src[0]), uint64(len(src)))
	})
}

// read copies device memory to the host. The synchronous copy waits for
// the launches before it; a failed device check is reported from here.
func (c *cudaBackend) read(addr uint64, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	err := c.do(func() error {
		return cuda.MemcpyDtoH(unsafe.Pointer(&dst[0]), cuda.DevicePtr(addr), uint64(len(dst)))
	})
	if err != nil {
		return err
	}
	return c.checkSlots(0, nil)
}

func (c *cudaBackend) memset(addr uint64, bytes int) error {
	return c.do(func() error { return cuda.MemsetD8(cuda.DevicePtr(addr), 0, uint64(bytes)) })
}

func (c *cudaBackend) hostView(uint64) []byte { return nil }

// allocHost is page-locked memory (cuMemAllocHost): a copy from or to it
// is a DMA queued on its stream, where Go memory is staged by the driver
// and the host waits.
func (c *cudaBackend) allocHost(bytes int) ([]byte, error) {
	var p unsafe.Pointer
	if err := c.do(func() (err error) { p, err = cuda.MemAllocHost(uint64(bytes)); return }); err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(p), bytes), nil
}

func (c *cudaBackend) freeHost(mem []byte) error {
	return c.do(func() error { return cuda.MemFreeHost(unsafe.Pointer(&mem[0])) })
}

func (c *cudaBackend) copyAsync(toDevice bool, addr uint64, host []byte, stream any) error {
	if len(host) == 0 {
		return nil
	}
	return c.do(func() error {
		if toDevice {
			return cuda.MemcpyHtoDAsync(cuda.DevicePtr(addr), unsafe.Pointer(&host[0]), uint64(len(host)), cudaStream(stream))
		}
		return cuda.MemcpyDtoHAsync(unsafe.Pointer(&host[0]), cuda.DevicePtr(addr), uint64(len(host)), cudaStream(stream))
	})
}

func (c *cudaBackend) load(m *Module) (any, error) {
	cm := &cudaModule{m: m, funcs: map[string]cuda.Function{}, optin: map[string]int{}}
	if m.Arch != "" {
		if err := archFits(m.Arch, c.info.Major, c.info.Minor); err != nil {
			return nil, fmt.Errorf("package %s: %w", m.Pkg, err)
		}
	}
	var ptx string
	ptx, cm.pdl = c.modulePDL(m)
	err := c.do(func() error {
		mod, log, err := cuda.LoadModuleDataEx([]byte(ptx), cuda.JITOptions{})
		if err != nil {
			if log != "" {
				return fmt.Errorf("%w\n%s", err, log)
			}
			return err
		}
		cm.mod = mod
		slot, size, err := mod.Global("kern_error")
		if err != nil {
			return err
		}
		if size != errorSlotBytes {
			return fmt.Errorf("the PTX has a %d-byte error slot, this version of kern reads %d: re-run go generate", size, errorSlotBytes)
		}
		// Globals without an initialiser start zeroed (PTX ISA §5.4.4).
		cm.slot = slot
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.mods = append(c.mods, cm)
	c.mu.Unlock()
	return cm, nil
}

func (c *cudaBackend) launch(l *launch) error {
	cm := l.mod.(*cudaModule)
	spec := &l.k.spec
	return c.do(func() error {
		fn, err := cm.function(l)
		if err != nil {
			return err
		}
		// The driver copies the parameters out during cuLaunchKernel (also
		// under stream capture), so the Args can be reused at once.
		args := argsPool.Get().(*cuda.Args)
		defer argsPool.Put(args)
		args.Reset()
		for i, p := range spec.Params {
			a := l.args[i]
			if p.Kind == SliceParam {
				args.Slice(cuda.DevicePtr(a.addr), a.n)
				continue
			}
			switch p.Size {
			case 1:
				args.Uint8(uint8(a.bits))
			case 2:
				args.Uint16(uint16(a.bits))
			case 4:
				args.Uint32(uint32(a.bits))
			default:
				args.Uint64(a.bits)
			}
		}
		grid := [3]uint32{uint32(l.blocks.X), uint32(l.blocks.Y), uint32(l.blocks.Z)}
		block := [3]uint32{uint32(l.threads.X), uint32(l.threads.Y), uint32(l.threads.Z)}
		if spec.Cooperative {
			// The grid barrier, cleared on the queue ahead of the kernel
			// or of its capture's region (cooperative.go), is the hidden
			// last parameter.
			args.Uint64(l.gridSlot)
			if l.gridClearBytes > 0 {
				if err := cuda.MemsetD32Async(cuda.DevicePtr(l.gridClear), 0, uint64(l.gridClearBytes/4), cudaStream(l.stream)); err != nil {
					return err
				}
			}
		}
		pdl := spec.PDL && cm.pdl && !c.pdlOff.Load() && !(spec.Cooperative && c.pdlCoopOff.Load())
		err = cuda.LaunchEx(fn, grid, block, uint32(l.shared), cudaStream(l.stream), args,
			cuda.LaunchOptions{ProgrammaticSerialization: pdl, Cooperative: spec.Cooperative})
		if pdl && pdlRefused(err) {
			// A driver that turns the attribute down: launch as every
			// kernel did before PDL (the kernel's waits return at once),
			// and stop asking, for cooperative launches only where it
			// was one (the pair of attributes may be what it refuses).
			if spec.Cooperative {
				c.pdlCoopOff.Store(true)
				return cuda.LaunchEx(fn, grid, block, uint32(l.shared), cudaStream(l.stream), args,
					cuda.LaunchOptions{Cooperative: true})
			}
			c.pdlOff.Store(true)
			err = cuda.Launch(fn, grid, block, uint32(l.shared), cudaStream(l.stream), args)
		}
		return err
	})
}

// function returns l's entry, looked up once per module, with the
// per-function opt-in that shared memory past 48 KiB needs set for l's
// dynamic shared memory. Called inside the context (cudaBackend.do).
func (cm *cudaModule) function(l *launch) (cuda.Function, error) {
	fn, ok := cm.funcs[l.entry]
	if !ok {
		var err error
		if fn, err = cm.mod.Function(l.entry); err != nil {
			return fn, err
		}
		cm.funcs[l.entry] = fn
	}
	if total := l.shared + l.k.spec.SharedBytes; total > 48*1024 && cm.optin[l.entry] < l.shared {
		if err := fn.SetAttribute(cuda.FuncAttrMaxDynamicSharedSizeBytes, l.shared); err != nil {
			return fn, err
		}
		cm.optin[l.entry] = l.shared
	}
	return fn, nil
}

// cooperativeBlocks is the occupancy calculator's blocks per SM for l's
// function, block and dynamic shared memory, times the SMs.
func (c *cudaBackend) cooperativeBlocks(l *launch) (int, error) {
	if !cuda.CanLaunchEx() {
		return 0, fmt.Errorf("a cooperative launch needs cuLaunchKernelEx (CUDA 11.8 or newer driver)")
	}
	cm := l.mod.(*cudaModule)
	var n int
	err := c.do(func() error {
		fn, err := cm.function(l)
		if err != nil {
			return err
		}
		per, err := cuda.OccupancyMaxActiveBlocksPerMultiprocessor(fn, l.threads.X*l.threads.Y*l.threads.Z, uint64(l.shared))
		n = per * c.info.Multiprocessors
		return err
	})
	return n, err
}

// checkSlots reads every loaded module's error slot (a device global the
// failure path of a kernel writes) and reports what failed, clearing the
// slots that were set. The reads are queued together on stream (0: the
// legacy stream) into page-locked memory, after the work a sync waits
// for, and wait (nil: a sync of stream) waits for them with that work: a
// Sync is one round trip to the GPU, where a synchronous read a module (a
// Qwen3 decode step loads about eight) made it nine.
func (c *cudaBackend) checkSlots(stream cuda.Stream, wait func() error) error {
	c.mu.Lock()
	mods := append([]*cudaModule(nil), c.mods...)
	c.mu.Unlock()
	if wait == nil {
		wait = stream.Synchronize
	}
	if len(mods) == 0 {
		return c.do(wait)
	}
	c.slotMu.Lock()
	defer c.slotMu.Unlock()
	var errs []error
	err := c.do(func() error {
		if need := len(mods) * errorSlotBytes; len(c.slots) < need {
			if c.slots != nil {
				if err := cuda.MemFreeHost(unsafe.Pointer(&c.slots[0])); err != nil {
					return err
				}
				c.slots = nil
			}
			n := max(need, 16*errorSlotBytes)
			p, err := cuda.MemAllocHost(uint64(n))
			if err != nil {
				return err
			}
			c.slots = unsafe.Slice((*byte)(p), n)
		}
		for i, cm := range mods {
			if err := cuda.MemcpyDtoHAsync(unsafe.Pointer(&c.slots[i*errorSlotBytes]), cm.slot, errorSlotBytes, stream); err != nil {
				return err
			}
		}
		if err := wait(); err != nil {
			return err
		}
		var zero [errorSlotBytes]byte
		for i, cm := range mods {
			raw := c.slots[i*errorSlotBytes : (i+1)*errorSlotBytes]
			if [errorSlotBytes]byte(raw) == zero {
				continue
			}
			if err := cuda.MemsetD8(cm.slot, 0, errorSlotBytes); err != nil {
				return err
			}
			if err := cm.m.slotError(decodeSlot(raw)); err != nil {
				errs = append(errs, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}

func (c *cudaBackend) sync() error {
	return c.checkSlots(0, cuda.CtxSynchronize)
}

func (c *cudaBackend) close() error {
	c.slotMu.Lock()
	if c.slots != nil {
		c.do(func() error { return cuda.MemFreeHost(unsafe.Pointer(&c.slots[0])) })
		c.slots = nil
	}
	c.slotMu.Unlock()
	return c.ctx.Release()
}

func cudaStream(s any) cuda.Stream {
	if s == nil {
		return 0
	}
	return s.(cuda.Stream)
}

func (c *cudaBackend) newStream() (any, error) {
	var s cuda.Stream
	err := c.do(func() (err error) { s, err = cuda.StreamCreate(cuda.StreamDefault); return })
	return s, err
}

func (c *cudaBackend) destroyStream(s any) error {
	return c.do(func() error { return cudaStream(s).Destroy() })
}

func (c *cudaBackend) syncStream(s any) error {
	return c.checkSlots(cudaStream(s), nil)
}

func (c *cudaBackend) record(s any) (any, error) {
	var e cuda.Event
	err := c.do(func() (err error) {
		if e, err = cuda.EventCreate(cuda.EventDefault); err != nil {
			return err
		}
		return e.Record(cudaStream(s))
	})
	return e, err
}

func (c *cudaBackend) elapsed(a, b any) (time.Duration, error) {
	var ms float32
	err := c.do(func() (err error) {
		if err = b.(cuda.Event).Synchronize(); err != nil {
			return err
		}
		ms, err = cuda.EventElapsedTime(a.(cuda.Event), b.(cuda.Event))
		return err
	})
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}

func (c *cudaBackend) beginCapture(s any) error {
	if s == nil {
		return fmt.Errorf("capture needs a stream from NewStream, not the default stream")
	}
	return c.do(func() error { return cuda.StreamBeginCapture(cudaStream(s), cuda.CaptureModeRelaxed) })
}

func (c *cudaBackend) endCapture(s any) (any, error) {
	var x cuda.GraphExec
	err := c.do(func() error {
		g, err := cuda.StreamEndCapture(cudaStream(s))
		if err != nil {
			return err
		}
		defer g.Destroy()
		x, err = cuda.GraphInstantiate(g, 0)
		return err
	})
	return x, err
}

func (c *cudaBackend) launchGraph(g, s any) error {
	return c.do(func() error { return cuda.GraphLaunch(g.(cuda.GraphExec), cudaStream(s)) })
}

func (c *cudaBackend) destroyGraph(g any) error {
	return c.do(func() error { return g.(cuda.GraphExec).Destroy() })
}

func (c *cudaBackend) destroyEvent(e any) error {
	return c.do(func() error { return e.(cuda.Event).Destroy() })
}
