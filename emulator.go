package kern

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/internal/ptxpatch"
)

// OpenEmulator opens the PTX emulator: it runs the exact PTX kern gen
// wrote, warp by warp, on the CPU. Use it where there is no GPU.
//
// Options add the sanitizers (emu.Options{Memcheck, Racecheck}: a launch
// then returns an *emu.Report naming kernel, thread, PTX line and Go line
// of each problem) and the profiler (emu.Options{Observer:
// emu.NewProfile()}: bank conflicts and global sector efficiency per
// instruction). The environment adds to the options:
//
//	KERN_EMU_CHECK=all | memcheck | racecheck | synccheck | pdlcheck (comma-separated, any case)
//	KERN_EMU_PROFILE=file   write the profile report to file at Close
//	KERN_EMU_LATENCY=file   write the latency model's report (emu.Latency, an H100's figures) to file at Close
//
// An unknown check name is not ignored: the device is opened broken and
// every operation on it returns the error. When any check is on, the
// device's name says which, and the first such device of the process
// says so on stderr.
func OpenEmulator(opts ...emu.Options) *Device {
	b := &emuBackend{}
	var o emu.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	env, envErr := emu.ParseChecks(os.Getenv("KERN_EMU_CHECK"))
	o.Memcheck = o.Memcheck || env.Memcheck
	o.Racecheck = o.Racecheck || env.Racecheck
	o.Synccheck = o.Synccheck || env.Synccheck
	o.PDLcheck = o.PDLcheck || env.PDLcheck
	var obs teeObserver
	if o.Observer != nil {
		obs = append(obs, o.Observer)
	}
	if path := os.Getenv("KERN_EMU_PROFILE"); path != "" {
		b.profile, b.profilePath = emu.NewProfile(), path
		obs = append(obs, b.profile)
	}
	if path := os.Getenv("KERN_EMU_LATENCY"); path != "" {
		b.latency, b.latencyPath = emu.NewLatency(emu.H100), path
		obs = append(obs, b.latency)
	}
	if len(obs) > 1 {
		o.Observer = obs
	} else if len(obs) == 1 {
		o.Observer = obs[0]
	}
	b.d = emu.NewDevice(o)
	b.pdl = o.PDLcheck
	name := "kern PTX emulator"
	if checks := o.Checks(); len(checks) > 0 {
		name += " with " + strings.Join(checks, ", ")
		announceChecks.Do(func() {
			fmt.Fprintf(os.Stderr, "kern: emulator checks on: %s\n", strings.Join(checks, ", "))
		})
	}
	lim := hostLimits()
	if o.MaxSharedPerBlock > 0 {
		lim.MaxSharedPerBlock = min(o.MaxSharedPerBlock, emu.MaxSharedPerBlockSM90)
	}
	d := newDevice("emu", name, b, lim)
	if envErr != nil {
		d.breakDevice(fmt.Errorf("kern: KERN_EMU_CHECK: %w", envErr))
	}
	return d
}

// announceChecks prints, once per process, which emulator checks are on.
var announceChecks sync.Once

// teeObserver shows every event to several observers: the caller's and
// those the environment asks for (KERN_EMU_PROFILE, KERN_EMU_LATENCY).
type teeObserver []emu.Observer

func (t teeObserver) Step(s *emu.Step) {
	for _, o := range t {
		o.Step(s)
	}
}

func (t teeObserver) Access(a *emu.Access) {
	for _, o := range t {
		o.Access(a)
	}
}

func (t teeObserver) Launch(kernel string, grid, block [3]int) {
	for _, o := range t {
		if lo, ok := o.(emu.LaunchObserver); ok {
			lo.Launch(kernel, grid, block)
		}
	}
}

func (t teeObserver) Prefetch(a *emu.Access) {
	for _, o := range t {
		if po, ok := o.(emu.PrefetchObserver); ok {
			po.Prefetch(a)
		}
	}
}

type emuBackend struct {
	hostStreams
	goHostMemory
	d           *emu.Device
	profile     *emu.Profile
	profilePath string
	latency     *emu.Latency
	latencyPath string
	loaded      []*Module // for the profile's PTX file
	// pdl is set under pdlcheck: modules are run as a compute capability
	// 9.0 GPU loads them, griddepcontrol on (internal/ptxpatch), so the
	// check sees where each thread waits.
	pdl bool
}

func (e *emuBackend) alloc(bytes int) (uint64, error)   { return e.d.Alloc(bytes) }
func (e *emuBackend) free(addr uint64) error            { return e.d.Free(addr) }
func (e *emuBackend) write(addr uint64, b []byte) error { return e.d.Write(addr, b) }
func (e *emuBackend) read(addr uint64, b []byte) error  { return e.d.Read(addr, b) }
func (e *emuBackend) memset(addr uint64, n int) error   { return e.d.Memset(addr, 0, n) }
func (e *emuBackend) hostView(uint64) []byte            { return nil }

// copyAsync copies at once: the emulator's launches complete when made,
// so every copy before this one in any queue's order has run.
func (e *emuBackend) copyAsync(toDevice bool, addr uint64, host []byte, _ any) error {
	if toDevice {
		return e.d.Write(addr, host)
	}
	return e.d.Read(addr, host)
}
func (e *emuBackend) sync() error { return nil }
func (e *emuBackend) load(m *Module) (any, error) {
	e.loaded = append(e.loaded, m)
	ptx := m.PTX
	if e.pdl {
		ptx, _ = ptxpatch.EnableSM90(ptx)
	}
	return emu.Load([]byte(ptx))
}

func (e *emuBackend) launch(l *launch) error {
	m := l.mod.(*emu.Module)
	slot, size, err := e.d.Global(m, "kern_error")
	if err != nil {
		return err
	}
	if size != errorSlotBytes {
		return fmt.Errorf("the PTX of package %s has a %d-byte error slot, this version of kern reads %d: re-run go generate", l.k.spec.Module.Pkg, size, errorSlotBytes)
	}
	var raw [errorSlotBytes]byte
	if err := e.d.Write(slot, raw[:]); err != nil {
		return err
	}
	if l.gridClearBytes > 0 { // a cooperative launch's barrier (cooperative.go)
		if err := e.d.Memset(l.gridClear, 0, l.gridClearBytes); err != nil {
			return err
		}
	}
	ctx := l.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	err = e.d.LaunchContext(ctx, m, l.entry, emu.LaunchConfig{
		Grid:          [3]int{l.blocks.X, l.blocks.Y, l.blocks.Z},
		Block:         [3]int{l.threads.X, l.threads.Y, l.threads.Z},
		DynamicShared: l.shared,
		Params:        l.params,
		PDL:           l.k.spec.PDL,
		Cooperative:   l.k.spec.Cooperative,
	})
	if err != nil {
		var f *emu.Error
		if errors.As(err, &f) {
			// A fault may come with the sanitizers' report of what led to
			// it (a skipped mbarrier wait ending in a deadlock): keep both.
			var rep *emu.Report
			if errors.As(err, &rep) {
				return errors.Join(emuFault(l.k, f), rep)
			}
			return emuFault(l.k, f)
		}
		return err
	}
	if err := e.d.Read(slot, raw[:]); err != nil {
		return fmt.Errorf("reading the error slot: %w", err)
	}
	return l.k.spec.Module.slotError(decodeSlot(raw[:]))
}

// close writes the profile report to KERN_EMU_PROFILE and the PTX of
// every module the device loaded to the same path + ".ptx" (so kern prof
// can ask ptxas for the kernels' registers and occupancy), and the
// latency model's report to KERN_EMU_LATENCY.
func (e *emuBackend) close() error {
	return errors.Join(e.writeLatency(), e.writeProfile())
}

// writeLatency writes the latency model's report to KERN_EMU_LATENCY.
func (e *emuBackend) writeLatency() error {
	if e.latency == nil {
		return nil
	}
	var report bytes.Buffer
	err := e.latency.WriteReport(&report)
	if err == nil {
		err = os.WriteFile(e.latencyPath, report.Bytes(), 0o644)
	}
	if err != nil {
		return fmt.Errorf("kern: writing the latency model's report: %w", err)
	}
	return nil
}

// writeProfile writes the profile report and the loaded modules' PTX.
func (e *emuBackend) writeProfile() error {
	if e.profile == nil {
		return nil
	}
	var report, ptx bytes.Buffer
	if err := e.profile.WriteReport(&report); err != nil {
		return fmt.Errorf("kern: writing the emulator profile: %w", err)
	}
	for _, m := range e.loaded {
		fmt.Fprintf(&ptx, "%s %s %s\n%s\n", ptxModuleMarker, m.Pkg, m.Arch, m.PTX)
	}
	if err := os.WriteFile(e.profilePath, report.Bytes(), 0o644); err != nil {
		return fmt.Errorf("kern: writing the emulator profile: %w", err)
	}
	if err := os.WriteFile(e.profilePath+".ptx", ptx.Bytes(), 0o644); err != nil {
		return fmt.Errorf("kern: writing the emulator profile: %w", err)
	}
	return nil
}

// ptxModuleMarker starts each module in the profile's PTX file, followed
// by the package path and the target.
const ptxModuleMarker = "//kern:module"
