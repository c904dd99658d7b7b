package emu

// Device-side printf. CUDA's printf compiles to a call of the external
// function vprintf(format, args): format is a generic pointer to the
// NUL-terminated format string, args a pointer to a buffer holding the
// arguments, each at its own alignment, with float promoted to double and
// integers narrower than int to int. emu formats it on the spot and
// writes one line per call, whole, to the Device's printf writer
// (SetPrintf; os.Stdout by default). Calls of one warp come in lane
// order; different blocks run in parallel, so their order is not fixed
// (on a GPU neither is it).

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"strings"
	"sync"
)

// printfState is a Device's printf destination.
type printfState struct {
	mu  sync.Mutex
	out io.Writer
}

// SetPrintf sends the output of device-side printf to w (os.Stdout when
// never set; io.Discard drops it).
func (d *Device) SetPrintf(w io.Writer) {
	d.print.mu.Lock()
	d.print.out = w
	d.print.mu.Unlock()
}

// vprintfCall decodes call (ret), vprintf, (format, args).
func (d *decoder) vprintfCall(s *astStmt, rets, args []astArg) {
	if len(args) != 2 || len(rets) > 1 {
		d.errorf("call vprintf: want (ret), vprintf, (format, args)")
		return
	}
	site := callSite{callee: -1}
	for _, a := range args {
		site.args = append(site.args, d.siteArg(a, tB64, false))
	}
	for _, a := range rets {
		site.rets = append(site.rets, d.siteArg(a, tB32, true))
	}
	in := inst{guard: -1, line: int32(s.line), loc: s.loc, text: "call vprintf", target: -1, aux: uint32(len(d.k.sites)), fn: execVprintf}
	if s.guard != "" {
		r, ok := d.reg(s.guard)
		if !ok {
			d.errorf("unknown guard predicate %s", s.guard)
		}
		in.guard, in.gneg = r.slot*32, s.guardNeg
	}
	d.k.sites = append(d.k.sites, site)
	d.emit(in)
}

func execVprintf(w *warp, in *inst, m uint32) error {
	site := &w.k.sites[in.aux]
	p := &w.l.dev.print
	for mm := m; mm != 0; mm &= mm - 1 {
		l := bits.TrailingZeros32(mm)
		lmem := w.laneLocal(l)
		fmtAddr := leUint(w.siteValue(site.args[0], lmem, l, 8))
		argAddr := leUint(w.siteValue(site.args[1], lmem, l, 8))
		format, err := w.cString(fmtAddr, l)
		if err != nil {
			return err
		}
		text, n, err := w.formatPrintf(format, argAddr, l)
		if err != nil {
			return err
		}
		p.mu.Lock()
		out := p.out
		if out == nil {
			out = os.Stdout
		}
		io.WriteString(out, text)
		p.mu.Unlock()
		if len(site.rets) == 1 {
			r := site.rets[0]
			if r.local {
				copy(lmem[r.off:r.off+min(4, r.size)], []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)})
			} else {
				w.regs[int(r.o.r)+l] = uint64(n)
			}
		}
	}
	return nil
}

// cString reads a NUL-terminated string at a generic address.
func (w *warp) cString(addr uint64, l int) (string, error) {
	var b strings.Builder
	for i := 0; i < 1<<16; i++ {
		c, err := w.access(spGeneric, addr+uint64(i), 1, 1, l, AccessLoad)
		if err != nil {
			return "", err
		}
		if c[0] == 0 {
			return b.String(), nil
		}
		b.WriteByte(c[0])
	}
	return b.String(), nil
}

// formatPrintf expands a C format string with the arguments at argAddr;
// n is the number of arguments read (vprintf's result).
func (w *warp) formatPrintf(format string, argAddr uint64, l int) (string, int, error) {
	var out strings.Builder
	off := uint64(0)
	n := 0
	next := func(size int) (uint64, error) {
		off = (off + uint64(size) - 1) / uint64(size) * uint64(size)
		b, err := w.access(spGeneric, argAddr+off, size, size, l, AccessLoad)
		if err != nil {
			return 0, err
		}
		off += uint64(size)
		n++
		return leUint(b), nil
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			out.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0123456789.*", format[j]) >= 0 {
			j++
		}
		spec := format[i+1 : j]
		long := 0
		for j < len(format) && strings.IndexByte("hlLqjzt", format[j]) >= 0 {
			if format[j] == 'l' || format[j] == 'L' || format[j] == 'q' || format[j] == 'j' || format[j] == 'z' || format[j] == 't' {
				long++
			}
			j++
		}
		if j >= len(format) {
			out.WriteString(format[i:])
			break
		}
		conv := format[j]
		i = j
		if strings.Contains(spec, "*") {
			return "", 0, fmt.Errorf("printf: %q: '*' widths are not supported", format)
		}
		size := 4
		if long > 0 {
			size = 8
		}
		switch conv {
		case '%':
			out.WriteByte('%')
		case 'd', 'i':
			v, err := next(size)
			if err != nil {
				return "", 0, err
			}
			x := int64(v)
			if size == 4 {
				x = int64(int32(v))
			}
			fmt.Fprintf(&out, "%"+spec+"d", x)
		case 'u', 'x', 'X', 'o':
			v, err := next(size)
			if err != nil {
				return "", 0, err
			}
			if size == 4 {
				v = uint64(uint32(v))
			}
			verb := string(conv)
			if conv == 'u' {
				verb = "d"
			}
			fmt.Fprintf(&out, "%"+spec+verb, v)
		case 'c':
			v, err := next(4)
			if err != nil {
				return "", 0, err
			}
			fmt.Fprintf(&out, "%"+spec+"c", rune(byte(v)))
		case 'f', 'F', 'e', 'E', 'g', 'G', 'a', 'A':
			v, err := next(8)
			if err != nil {
				return "", 0, err
			}
			verb := string(conv)
			switch conv {
			case 'F':
				verb = "f"
			case 'a':
				verb = "x"
			case 'A':
				verb = "X"
			}
			fmt.Fprintf(&out, "%"+spec+verb, math.Float64frombits(v))
		case 's':
			v, err := next(8)
			if err != nil {
				return "", 0, err
			}
			str, err := w.cString(v, l)
			if err != nil {
				return "", 0, err
			}
			fmt.Fprintf(&out, "%"+spec+"s", str)
		case 'p':
			v, err := next(8)
			if err != nil {
				return "", 0, err
			}
			fmt.Fprintf(&out, "%#x", v)
		default:
			return "", 0, fmt.Errorf("printf: %q: conversion %%%c is not supported", format, conv)
		}
	}
	return out.String(), n, nil
}
