package emu

// A profiler built on the Observer hook: per instruction, how often it ran
// and with how many lanes, shared-memory bank conflicts, and how well
// global accesses use the 32-byte sectors they touch.
//
// The models are those Nsight Compute reports for sm_80:
//   - Shared memory has 32 banks of 4 bytes. A warp's request is served
//     in phases: one for accesses of up to 4 bytes per lane, two
//     half-warps for 8 bytes, four quarter-warps for 16. Within a phase,
//     lanes reading the same 4-byte word share it (broadcast); lanes that
//     touch different words of one bank serialize. A phase takes as many
//     wavefronts as the largest number of distinct words in any bank; the
//     excess over one per phase is bank conflicts.
//   - Global memory moves 32-byte sectors. A request costs the number of
//     distinct sectors its active lanes touch; efficiency is bytes asked
//     for over bytes moved.

import (
	"fmt"
	"io"
	"math/bits"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
)

// InstrStats are one instruction's counters.
type InstrStats struct {
	Kernel string
	PC     int
	Line   int // PTX line
	File   string
	GoLine int
	Instr  string

	Executions  int64 // warp-instructions
	ActiveLanes int64 // lanes at the instruction, summed over executions
	ExecLanes   int64 // lanes that passed the guard, summed

	SharedRequests   int64 // warp-wide shared-memory accesses
	SharedWavefronts int64 // wavefronts they took
	SharedIdeal      int64 // wavefronts without bank conflicts

	GlobalRequests int64 // warp-wide global-memory accesses
	GlobalSectors  int64 // 32-byte sectors they touched
	GlobalBytes    int64 // bytes the lanes asked for
}

// BankConflicts is the number of extra shared-memory wavefronts.
func (s *InstrStats) BankConflicts() int64 { return s.SharedWavefronts - s.SharedIdeal }

// SectorEfficiency is the share of the moved global bytes the lanes used
// (1 when every byte of every sector touched was asked for).
func (s *InstrStats) SectorEfficiency() float64 {
	if s.GlobalSectors == 0 {
		return 1
	}
	return float64(s.GlobalBytes) / float64(32*s.GlobalSectors)
}

type profKey struct {
	kernel string
	pc     int
}

// Profile is an Observer that aggregates InstrStats. Install it with
// Options{Observer: p}; it is safe for the concurrent calls a launch makes.
type Profile struct {
	mu       sync.Mutex
	stats    map[profKey]*InstrStats
	launches map[string]int64 // by kernel, see Launch
}

// NewProfile returns an empty profile.
func NewProfile() *Profile { return &Profile{stats: map[profKey]*InstrStats{}} }

func (p *Profile) entry(kernel string, pc int) *InstrStats {
	k := profKey{kernel, pc}
	s := p.stats[k]
	if s == nil {
		s = &InstrStats{Kernel: kernel, PC: pc}
		p.stats[k] = s
	}
	return s
}

// Step implements Observer.
func (p *Profile) Step(st *Step) {
	p.mu.Lock()
	s := p.entry(st.Kernel, st.PC)
	s.Line, s.Instr = st.Line, st.Instr
	s.Executions++
	s.ActiveLanes += int64(bits.OnesCount32(st.Active))
	s.ExecLanes += int64(bits.OnesCount32(st.Exec))
	p.mu.Unlock()
}

// Access implements Observer.
func (p *Profile) Access(a *Access) {
	var wave, ideal, sectors int64
	switch a.Space {
	case Shared:
		wave, ideal = SharedWavefronts(a.Mask, &a.Addr, a.Size)
	case Global:
		sectors = GlobalSectors(a.Mask, &a.Addr, a.Size)
	default:
		return
	}
	p.mu.Lock()
	s := p.entry(a.Kernel, a.PC)
	s.File, s.GoLine = a.File, a.GoLine
	if a.Space == Shared {
		s.SharedRequests++
		s.SharedWavefronts += wave
		s.SharedIdeal += ideal
	} else {
		s.GlobalRequests++
		s.GlobalSectors += sectors
		s.GlobalBytes += int64(bits.OnesCount32(a.Mask) * a.Size)
	}
	p.mu.Unlock()
}

// SharedWavefronts returns the wavefronts a warp's shared-memory request
// takes (lanes in mask, each accessing size bytes at addr[lane]) and the
// number it would take without bank conflicts.
func SharedWavefronts(mask uint32, addr *[32]uint64, size int) (wave, ideal int64) {
	words := max(size/4, 1) // 4-byte words per lane
	group := 32 / words     // lanes per phase
	for g := 0; g < 32; g += group {
		phase := mask >> g & (1<<group - 1)
		if group == 32 {
			phase = mask
		}
		if phase == 0 {
			continue
		}
		ideal++
		var perBank [32][]uint64
		worst := 0
		for mm := phase; mm != 0; mm &= mm - 1 {
			l := g + bits.TrailingZeros32(mm)
			for w := 0; w < words; w++ {
				word := addr[l]/4 + uint64(w)
				b := word % 32
				if !containsU64(perBank[b], word) {
					perBank[b] = append(perBank[b], word)
					worst = max(worst, len(perBank[b]))
				}
			}
		}
		wave += int64(worst)
	}
	return wave, ideal
}

func containsU64(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// GlobalSectors returns the distinct 32-byte sectors a warp's request
// touches.
func GlobalSectors(mask uint32, addr *[32]uint64, size int) int64 {
	var seen [64]uint64
	n := 0
	for mm := mask; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		for s := addr[l] / 32; s <= (addr[l]+uint64(size)-1)/32; s++ {
			dup := false
			for _, x := range seen[:n] {
				if x == s {
					dup = true
					break
				}
			}
			if !dup && n < len(seen) {
				seen[n] = s
				n++
			}
		}
	}
	return int64(n)
}

// Stats returns the counters of every instruction that ran, by kernel and
// PC.
func (p *Profile) Stats() []InstrStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]InstrStats, 0, len(p.stats))
	for _, s := range p.stats {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kernel != out[j].Kernel {
			return out[i].Kernel < out[j].Kernel
		}
		return out[i].PC < out[j].PC
	})
	return out
}

// WriteReport writes the memory instructions with their bank conflicts
// and sector efficiency, worst first, one line each.
func (p *Profile) WriteReport(w io.Writer) error {
	stats := p.Stats()
	var mem []InstrStats
	for _, s := range stats {
		if s.SharedRequests > 0 || s.GlobalRequests > 0 {
			mem = append(mem, s)
		}
	}
	sort.SliceStable(mem, func(i, j int) bool {
		return waste(&mem[i]) > waste(&mem[j])
	})
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "kernel\tsource\tinstruction\trequests\tbank conflicts\twavefronts/req\tsectors/req\tsector eff.")
	for _, s := range mem {
		src := fmt.Sprintf("ptx:%d", s.Line)
		if s.File != "" {
			src = fmt.Sprintf("%s:%d", shortPath(s.File), s.GoLine)
		}
		req := s.SharedRequests + s.GlobalRequests
		conf, wpr, spr, eff := "-", "-", "-", "-"
		if s.SharedRequests > 0 {
			conf = fmt.Sprint(s.BankConflicts())
			wpr = fmt.Sprintf("%.2f", float64(s.SharedWavefronts)/float64(s.SharedRequests))
		}
		if s.GlobalRequests > 0 {
			spr = fmt.Sprintf("%.2f", float64(s.GlobalSectors)/float64(s.GlobalRequests))
			eff = fmt.Sprintf("%.0f%%", 100*s.SectorEfficiency())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", s.Kernel, src, s.Instr, req, conf, wpr, spr, eff)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := p.writeKernelTotals(w); err != nil {
		return err
	}
	_, err := io.WriteString(w, nsightLegend)
	return err
}

// writeKernelTotals writes Kernels, one line per kernel, after a blank
// line.
func (p *Profile) writeKernelTotals(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nkernel totals\tlaunches\twarp-instructions\tshared requests\tbank conflicts\tglobal requests\tsectors\tsector eff.")
	for _, k := range p.Kernels() {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f%%\n", k.Kernel, k.Launches, k.Instructions,
			k.SharedRequests, k.BankConflicts(), k.GlobalRequests, k.GlobalSectors, 100*k.SectorEfficiency())
	}
	return tw.Flush()
}

// nsightLegend names the Nsight Compute metric each column corresponds to,
// per instruction (Source view) rather than per kernel.
const nsightLegend = `
columns as Nsight Compute metrics (sm_80 memory model):
  bank conflicts   l1tex__data_bank_conflicts_pipe_lsu_mem_shared (wavefronts beyond one per phase)
  wavefronts/req   l1tex__data_pipe_lsu_wavefronts_mem_shared / shared requests
  sectors/req      l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st} / l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}
  sector eff.      bytes requested / (32 × sectors): smsp__sass_average_data_bytes_per_sector_mem_global_op_{ld,st} / 32
`

// waste ranks instructions: conflict wavefronts plus unused sector bytes.
func waste(s *InstrStats) float64 {
	return float64(s.BankConflicts()) + float64(32*s.GlobalSectors-s.GlobalBytes)/32
}

func shortPath(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		if j := strings.LastIndex(p[:i], "/"); j >= 0 {
			return p[j+1:]
		}
	}
	return p
}
