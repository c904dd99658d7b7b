package emu

// Per-kernel totals of a Profile: what the report's per-instruction rows
// add up to, plus the number of launches, for a caller that wants one
// line per kernel without filtering and summing Stats itself.

import "sort"

// LaunchObserver is an Observer that also wants to know of each launch:
// Launch is called once per launch that runs, before its first block.
type LaunchObserver interface {
	Observer
	Launch(kernel string, grid, block [3]int)
}

// KernelStats are a kernel's totals over every launch a Profile saw.
type KernelStats struct {
	Kernel   string
	Launches int64
	// Instructions are warp-instructions executed; ThreadInstructions
	// the lanes that passed their guard, summed over them.
	Instructions, ThreadInstructions int64

	SharedRequests, SharedWavefronts, SharedIdeal int64
	GlobalRequests, GlobalSectors, GlobalBytes    int64
}

// BankConflicts are the shared-memory wavefronts beyond the conflict-free
// number, over all the kernel's shared accesses.
func (k *KernelStats) BankConflicts() int64 { return k.SharedWavefronts - k.SharedIdeal }

// SectorEfficiency is the fraction of the fetched global sectors' bytes
// that the kernel asked for (1 when it did no global access).
func (k *KernelStats) SectorEfficiency() float64 {
	if k.GlobalSectors == 0 {
		return 1
	}
	return float64(k.GlobalBytes) / float64(32*k.GlobalSectors)
}

// Launch implements LaunchObserver.
func (p *Profile) Launch(kernel string, grid, block [3]int) {
	p.mu.Lock()
	if p.launches == nil {
		p.launches = map[string]int64{}
	}
	p.launches[kernel]++
	p.mu.Unlock()
}

// Kernels returns the totals of every kernel the profile saw, by name.
func (p *Profile) Kernels() []KernelStats {
	by := map[string]*KernelStats{}
	get := func(name string) *KernelStats {
		k := by[name]
		if k == nil {
			k = &KernelStats{Kernel: name}
			by[name] = k
		}
		return k
	}
	for _, s := range p.Stats() {
		k := get(s.Kernel)
		k.Instructions += s.Executions
		k.ThreadInstructions += s.ExecLanes
		k.SharedRequests += s.SharedRequests
		k.SharedWavefronts += s.SharedWavefronts
		k.SharedIdeal += s.SharedIdeal
		k.GlobalRequests += s.GlobalRequests
		k.GlobalSectors += s.GlobalSectors
		k.GlobalBytes += s.GlobalBytes
	}
	p.mu.Lock()
	for name, n := range p.launches {
		get(name).Launches = n
	}
	p.mu.Unlock()
	out := make([]KernelStats, 0, len(by))
	for _, k := range by {
		out = append(out, *k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kernel < out[j].Kernel })
	return out
}
