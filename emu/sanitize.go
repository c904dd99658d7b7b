package emu

// Sanitizers: memcheck and initcheck (Options.Memcheck), racecheck
// (Options.Racecheck) and synccheck (Options.Synccheck), modelled on NVIDIA compute-sanitizer's tools. They
// hook the one function every memory access goes through, so they cost
// nothing when off beyond a nil check.

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Finding is one problem a sanitizer found, with the first thread (lowest
// block, then thread) that hit it.
type Finding struct {
	Tool    string // "memcheck", "initcheck", "racecheck" or "synccheck"
	What    string // e.g. "invalid global read of 4 bytes"
	Kernel  string
	Block   [3]int
	Thread  [3]int
	PTXLine int
	Instr   string
	File    string // Go source from .loc, "" when absent
	Line    int
	Addr    uint64 // device address, or shared offset for racecheck
	Detail  string
	Count   int // occurrences at this instruction
}

func (f *Finding) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s by thread (%d,%d,%d) in block (%d,%d,%d) of %s at %s (PTX line %d",
		f.Tool, f.What, f.Thread[0], f.Thread[1], f.Thread[2], f.Block[0], f.Block[1], f.Block[2], f.Kernel, f.Instr, f.PTXLine)
	if f.File != "" {
		fmt.Fprintf(&b, ", %s:%d", f.File, f.Line)
	}
	b.WriteString(")")
	if f.Detail != "" {
		b.WriteString(": " + f.Detail)
	}
	if f.Count > 1 {
		fmt.Fprintf(&b, " [%d times]", f.Count)
	}
	return b.String()
}

// Report is what the sanitizers found in one launch; Launch returns it as
// its error when it is not empty.
type Report struct {
	Findings []Finding
}

func (r *Report) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "emu: sanitizer found %d problem", len(r.Findings))
	if len(r.Findings) != 1 {
		b.WriteString("s")
	}
	for i := range r.Findings {
		b.WriteString("\n\t")
		b.WriteString(r.Findings[i].String())
	}
	return b.String()
}

// maxFindings caps the distinct findings one launch records.
const maxFindings = 100

type findingKey struct {
	tool, what string
	pc         int32
}

// sanitizer is a launch's sanitizer state.
type sanitizer struct {
	memcheck, race, sync bool
	dev                  *Device
	pdl                  *pdlLaunch // Options.PDLcheck's state (pdlcheck.go)
	mu                   sync.Mutex
	found                map[findingKey]*findingAt
	order                []findingKey
}

type findingAt struct {
	f          Finding
	block, thr int // linear indices, to keep the first occurrence
}

// record adds a finding for lane l of w's current instruction.
func (s *sanitizer) record(w *warp, l int, tool, what string, addr uint64, detail string) {
	in := w.cur
	key := findingKey{tool, what, in.pc}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.found == nil {
		s.found = map[findingKey]*findingAt{}
	}
	thr := w.id*32 + l
	if fa, ok := s.found[key]; ok {
		fa.f.Count++
		if w.b.lin < fa.block || w.b.lin == fa.block && thr < fa.thr {
			fa.f.Block, fa.f.Thread, fa.f.Addr, fa.f.Detail = w.b.idx, w.thread(l), addr, detail
			fa.block, fa.thr = w.b.lin, thr
		}
		return
	}
	if len(s.found) >= maxFindings {
		return
	}
	f := Finding{Tool: tool, What: what, Kernel: w.k.info.Name, Block: w.b.idx, Thread: w.thread(l),
		PTXLine: int(in.line), Instr: in.text, Addr: addr, Detail: detail, Count: 1}
	if in.loc.file != 0 {
		f.File, f.Line = w.k.files[in.loc.file], in.loc.line
	}
	s.found[key] = &findingAt{f: f, block: w.b.lin, thr: thr}
	s.order = append(s.order, key)
}

// report returns the findings as a *Report, or nil.
func (s *sanitizer) report() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.found) == 0 {
		return nil
	}
	r := &Report{}
	for _, k := range s.order {
		r.Findings = append(r.Findings, s.found[k].f)
	}
	sort.SliceStable(r.Findings, func(i, j int) bool { return r.Findings[i].PTXLine < r.Findings[j].PTXLine })
	return r
}

// sanitize runs the enabled checks on one lane's access. buf and err are
// what the unchecked access returned.
func (w *warp) sanitize(sp space, addr uint64, n, l int, kind AccessKind, buf []byte, err error) ([]byte, error) {
	s := w.san
	rs, a := resolve(sp, addr)
	if s.pdl != nil && rs == spGlobal && err == nil {
		w.pdlAccess(l, a, n, kind)
	}
	if err != nil {
		if !s.memcheck || !(errors.Is(err, ErrOutOfBounds) || errors.Is(err, ErrMisaligned)) {
			return buf, err
		}
		var le *laneError
		detail := err.Error()
		if errors.As(err, &le) {
			detail = le.err.Error()
		}
		what := fmt.Sprintf("invalid %s %s of %d bytes", rs, kind, n)
		if errors.Is(err, ErrMisaligned) {
			what = fmt.Sprintf("misaligned %s %s of %d bytes", rs, kind, n)
		}
		s.record(w, l, "memcheck", what, addr, detail)
		// Carry on: loads read zeros, stores go nowhere.
		clear(w.scratch[:])
		return w.scratch[:n:n], nil
	}
	switch {
	case rs == spGlobal && s.memcheck:
		al := find(w.l.allocs, a, n)
		if al == nil || al.init == nil {
			break
		}
		off := a - al.base
		sh := al.init[off : off+uint64(n)]
		if kind == AccessLoad || kind == AccessAtomic {
			for _, b := range sh {
				if b == 0 {
					s.record(w, l, "initcheck", fmt.Sprintf("uninitialized global %s of %d bytes", kind, n), addr,
						fmt.Sprintf("byte %d of allocation [%#x, %#x) was never written", off, al.base, al.end()))
					break
				}
			}
		}
		if kind != AccessLoad {
			for i := range sh {
				sh[i] = 1
			}
		}
	case rs == spShared && w.b.race != nil && kind != AccessAtomic && kind != AccessAsync:
		// A store of the value memory already holds changes nothing
		// another warp can see: like compute-sanitizer, which reports
		// such hazards as warnings only, emu does not report it.
		same := kind == AccessStore && w.pending != nil && string(buf) == string(w.pending)
		w.b.race.access(w, l, a, n, kind == AccessStore, same)
	}
	return buf, nil
}

// raceShadow remembers, per shared-memory byte, the last write and the
// reads since, with the barrier generation (epoch) they happened in.
// Accesses in different epochs are ordered by a barrier; accesses by the
// same warp are not checked (lanes of a warp are not compared).
type raceShadow struct {
	wWarp  []int16 // last writer warp, -1 for none
	wEpoch []uint32
	wPC    []int32
	rWarp  []int16 // reader warp this epoch; -2 for several
	rEpoch []uint32
	rPC    []int32
	// hb tracks happens-before through mbarriers and TMA copies
	// (race_mbarrier.go) for kernels that use mbarriers; nil otherwise.
	hb *hbState
}

func newRaceShadow(n int) *raceShadow {
	return &raceShadow{
		wWarp: make([]int16, n), wEpoch: make([]uint32, n), wPC: make([]int32, n),
		rWarp: make([]int16, n), rEpoch: make([]uint32, n), rPC: make([]int32, n),
	}
}

func (r *raceShadow) reset() {
	clear(r.wEpoch)
	clear(r.rEpoch)
	if r.hb != nil {
		r.hb.reset()
	}
}

func (r *raceShadow) access(w *warp, l int, off uint64, n int, write, same bool) {
	if r.hb != nil {
		r.accessHB(w, l, off, n, write, same)
		return
	}
	ep := w.b.epoch
	me := int16(w.id)
	pc := w.cur.pc
	for i := off; i < off+uint64(n) && !same; i++ {
		if r.wEpoch[i] == ep && r.wWarp[i] != me {
			what := "read-after-write hazard"
			if write {
				what = "write-after-write hazard"
			}
			w.san.record(w, l, "racecheck", what, i, w.hazardDetail(int(r.wWarp[i]), r.wPC[i], "wrote", i))
			break
		}
		if write && r.rEpoch[i] == ep && r.rWarp[i] != me {
			w.san.record(w, l, "racecheck", "write-after-read hazard", i, w.hazardDetail(int(r.rWarp[i]), r.rPC[i], "read", i))
			break
		}
	}
	for i := off; i < off+uint64(n); i++ {
		if write {
			r.wWarp[i], r.wEpoch[i], r.wPC[i] = me, ep, pc
			continue
		}
		switch {
		case r.rEpoch[i] != ep:
			r.rWarp[i], r.rEpoch[i], r.rPC[i] = me, ep, pc
		case r.rWarp[i] != me:
			r.rWarp[i] = -2
		}
	}
}

func (w *warp) hazardDetail(other int, pc int32, did string, off uint64) string {
	who := fmt.Sprintf("warp %d", other)
	if other < 0 {
		who = "other warps"
	}
	in := &w.code[pc]
	src := ""
	if in.loc.file != 0 {
		src = fmt.Sprintf(", %s:%d", w.k.files[in.loc.file], in.loc.line)
	}
	return fmt.Sprintf("warp %d accessed shared offset %#x, which %s %s at %s (PTX line %d%s), with no barrier in between",
		w.id, off, who, did, in.text, in.line, src)
}
