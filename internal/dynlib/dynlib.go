// Package dynlib loads NVIDIA's shared libraries at run time without cgo:
// it opens a library (dlopen through purego on Linux, LoadLibrary on
// Windows), resolves a table of entry points in it, and reports what was
// tried and what is missing. Package cuda (libcuda), package cublas
// (libcublas) and package nccl (libnccl) use it, and so will cuBLASLt;
// each keeps its own library names, entry-point table, error type and
// status codes, which differ, and shares the mechanism, which does not.
package dynlib

import (
	"fmt"
	"strings"
)

// Proc is one entry point: the name it was found under and its address,
// or 0 when the library does not export it (an optional one, or before
// loading). Callers keep Procs in a struct and call them with
// purego.SyscallN(p.Addr, ...).
type Proc struct {
	Name string
	Addr uintptr
}

// Symbol says how one Proc is found: the exported names to try, in order
// (a versioned _v2 name before an older ABI's), and whether loading fails
// without it.
type Symbol struct {
	P        *Proc
	Names    []string
	Optional bool
}

// Req and Opt build the rows of a symbol table.
func Req(p *Proc, names ...string) Symbol { return Symbol{P: p, Names: names} }
func Opt(p *Proc, names ...string) Symbol { return Symbol{P: p, Names: names, Optional: true} }

// Resolve looks every symbol up through lookup (0 for a missing name) and
// returns the required ones that are missing, by their preferred name.
// A missing optional Proc keeps Addr 0 and its preferred Name.
func Resolve(table []Symbol, lookup func(name string) uintptr) (missing []string) {
	for _, s := range table {
		s.P.Name, s.P.Addr = s.Names[0], 0
		for _, n := range s.Names {
			if a := lookup(n); a != 0 {
				s.P.Name, s.P.Addr = n, a
				break
			}
		}
		if s.P.Addr == 0 && !s.Optional {
			missing = append(missing, s.Names[0])
		}
	}
	return missing
}

// Result is what Load found.
type Result struct {
	// Library is the candidate that opened and resolved, or (with
	// Missing) the one that opened but lacks required entry points; ""
	// when none opened.
	Library string
	// Tried holds, per candidate that failed to open, the loader's
	// reason, naming the candidate.
	Tried []error
	// Missing lists the required entry points Library lacks.
	Missing []string
}

// OK reports whether a library loaded with every required entry point.
func (r Result) OK() bool { return r.Library != "" && len(r.Missing) == 0 }

// Load opens the first of names that opens and resolves it: resolve gets
// the library's symbol lookup and returns the required entry points it
// lacks. prepare, if not nil, runs before each candidate is opened (to
// load a dependency from beside it). A library that opens but lacks a
// required entry point ends the search: later candidates would hide what
// is wrong with it.
func Load(names []string, prepare func(name string), resolve func(lookup func(string) uintptr) (missing []string)) Result {
	var r Result
	for _, name := range names {
		if prepare != nil {
			prepare(name)
		}
		h, err := Open(name)
		if err != nil {
			if !strings.Contains(err.Error(), name) {
				err = fmt.Errorf("%s: %w", name, err)
			}
			r.Tried = append(r.Tried, err)
			continue
		}
		r.Library = name
		r.Missing = resolve(func(sym string) uintptr { return h.Lookup(sym) })
		return r
	}
	return r
}
