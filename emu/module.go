package emu

// Loading a module: parse, lay out symbols, decode every entry once.

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
)

// Module is loaded PTX: every entry decoded and ready to launch. A Module
// is immutable and may be launched on several Devices at once.
type Module struct {
	id      uint64
	files   map[int]string
	globals []*globalVar
	gindex  map[string]int
	kernels map[string]*kernel
	names   []string // entry names in source order
	// bad holds the entries that did not decode, with their errors: a
	// launch of one returns them, the module's other entries still run.
	bad map[string]ErrorList
}

// globalVar is a module-scope .global or .const variable, placed in device
// memory once per (Device, Module).
type globalVar struct {
	name  string
	size  int
	align int
	init  []byte
}

// Param describes one kernel parameter as laid out in LaunchConfig.Params.
type Param struct {
	Name   string
	Type   string // PTX type without the dot: "u64", "f32", "b8"
	Size   int    // bytes
	Align  int
	Offset int // byte offset in the packed parameter buffer
}

// EntryInfo describes a kernel entry.
type EntryInfo struct {
	Name    string
	Params  []Param
	MaxNTid [3]int // .maxntid, zero when absent
	ReqNTid [3]int // .reqntid, zero when absent
	// StaticShared is the bytes of shared memory the entry declares;
	// dynamic shared memory starts at DynamicOffset.
	StaticShared  int
	DynamicOffset int
	LocalBytes    int // per thread
}

var moduleIDs atomic.Uint64

// Load parses and decodes PTX text. Problems in module-scope directives,
// or in every entry, fail the load: all of them are returned together as
// an ErrorList, each naming its PTX line. An entry that does not decode
// while others do leaves the module loadable; its errors come back when
// it is launched (and from EntryErr), as a compiler's module with one
// kernel emu cannot run should still run the rest.
func Load(ptx []byte) (*Module, error) {
	ast, err := parse(ptx)
	if ast == nil {
		return nil, err
	}
	var errs ErrorList
	if err != nil {
		errs = append(errs, err.(ErrorList)...)
	}
	m := &Module{
		id:      moduleIDs.Add(1),
		files:   ast.files,
		gindex:  map[string]int{},
		kernels: map[string]*kernel{},
		bad:     map[string]ErrorList{},
	}
	for _, v := range ast.vars {
		if v.space != "global" && v.space != "const" {
			continue
		}
		if v.count < 0 {
			errs = append(errs, &SyntaxError{v.line, fmt.Sprintf("%s: unsized .%s array", v.name, v.space)})
			continue
		}
		g := &globalVar{name: v.name, size: v.size(), align: v.alignment()}
		if v.init != nil {
			g.init = make([]byte, g.size)
			es := v.typ.size()
			for i, x := range v.init {
				for b := 0; b < es && i*es+b < g.size; b++ {
					g.init[i*es+b] = byte(x >> (8 * b))
				}
			}
		}
		m.gindex[v.name] = len(m.globals)
		m.globals = append(m.globals, g)
	}
	funcs := map[string]*astFunc{}
	for _, f := range ast.funcs {
		if !f.proto {
			funcs[f.name] = f
		}
	}
	var entryErrs ErrorList
	for _, f := range ast.funcs {
		if !f.entry || f.proto {
			continue
		}
		k, kerrs := decodeKernel(m, ast, f, funcs)
		kerrs = append(append(ErrorList(nil), f.errs...), kerrs...)
		if len(kerrs) > 0 {
			kerrs = sortErrors(kerrs)
			m.bad[f.name] = kerrs
			entryErrs = append(entryErrs, kerrs...)
			continue
		}
		m.kernels[f.name] = k
		m.names = append(m.names, f.name)
	}
	if len(errs) > 0 || len(m.kernels) == 0 && len(entryErrs) > 0 {
		errs = append(errs, entryErrs...)
		return nil, sortErrors(errs)
	}
	return m, nil
}

// sortErrors orders errors by line and drops repeats (a .func's errors
// come once per call site that expands it).
func sortErrors(errs ErrorList) ErrorList {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	var out ErrorList
	for _, e := range errs {
		if n := len(out); n > 0 && e.Line == out[n-1].Line && e.Msg == out[n-1].Msg {
			continue
		}
		out = append(out, e)
	}
	return out
}

// BadEntries lists the entries that did not load, sorted by name.
func (m *Module) BadEntries() []string {
	var out []string
	for n := range m.bad {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// EntryErr returns why the named entry did not load, or nil if it did
// (or the module has no such entry).
func (m *Module) EntryErr(name string) error {
	if errs, ok := m.bad[name]; ok {
		return &EntryError{Kernel: name, Errs: errs}
	}
	return nil
}

// EntryError is the load error of one entry of a module whose other
// entries loaded.
type EntryError struct {
	Kernel string
	Errs   ErrorList
}

func (e *EntryError) Error() string {
	return fmt.Sprintf("emu: kernel %s did not load: %s", e.Kernel, strings.TrimPrefix(e.Errs.Error(), "emu: "))
}

func (e *EntryError) Unwrap() error { return e.Errs }

// Entries lists the module's kernel entries in source order.
func (m *Module) Entries() []EntryInfo {
	out := make([]EntryInfo, 0, len(m.names))
	for _, n := range m.names {
		out = append(out, m.kernels[n].info)
	}
	return out
}

// Entry describes the named kernel entry.
func (m *Module) Entry(name string) (EntryInfo, bool) {
	k, ok := m.kernels[name]
	if !ok {
		return EntryInfo{}, false
	}
	return k.info, true
}
