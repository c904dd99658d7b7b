package main

// kern emu's buffers: element types, initial patterns, and what happens
// to a buffer after the run (print, write, compare).

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// emuBuffer is one buffer argument of kern emu run.
type emuBuffer struct {
	spec, param string
	elem        elemType
	n           int
	data        []byte
	addr        uint64
	print       bool
	out, expect string
}

// elemType is a buffer's element type: its size, and conversions from and
// to float64 (integers exactly up to 2^53).
type elemType struct {
	name  string
	size  int
	float bool
	enc   func(b []byte, v float64)
	dec   func(b []byte) float64
}

var elemTypes = map[string]elemType{
	"f32": {"f32", 4, true, func(b []byte, v float64) { binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v))) }, func(b []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))) }},
	"f64": {"f64", 8, true, func(b []byte, v float64) { binary.LittleEndian.PutUint64(b, math.Float64bits(v)) }, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }},
	"f16": {"f16", 2, true, func(b []byte, v float64) { binary.LittleEndian.PutUint16(b, halfFromFloat(v)) }, func(b []byte) float64 { return halfToFloat(binary.LittleEndian.Uint16(b)) }},
	"bf16": {"bf16", 2, true, func(b []byte, v float64) { binary.LittleEndian.PutUint16(b, bf16FromFloat(v)) }, func(b []byte) float64 {
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16))
	}},
	"i8":  {"i8", 1, false, func(b []byte, v float64) { b[0] = byte(int8(v)) }, func(b []byte) float64 { return float64(int8(b[0])) }},
	"u8":  {"u8", 1, false, func(b []byte, v float64) { b[0] = byte(v) }, func(b []byte) float64 { return float64(b[0]) }},
	"i32": {"i32", 4, false, func(b []byte, v float64) { binary.LittleEndian.PutUint32(b, uint32(int32(v))) }, func(b []byte) float64 { return float64(int32(binary.LittleEndian.Uint32(b))) }},
	"u32": {"u32", 4, false, func(b []byte, v float64) { binary.LittleEndian.PutUint32(b, uint32(v)) }, func(b []byte) float64 { return float64(binary.LittleEndian.Uint32(b)) }},
	"i64": {"i64", 8, false, func(b []byte, v float64) { binary.LittleEndian.PutUint64(b, uint64(int64(v))) }, func(b []byte) float64 { return float64(int64(binary.LittleEndian.Uint64(b))) }},
	"u64": {"u64", 8, false, func(b []byte, v float64) { binary.LittleEndian.PutUint64(b, uint64(v)) }, func(b []byte) float64 { return float64(binary.LittleEndian.Uint64(b)) }},
}

// parseBuffer reads TYPE[N]:INIT[:ACTION]... and makes the buffer's
// initial bytes.
func parseBuffer(spec string, rng *rand.Rand) (*emuBuffer, error) {
	parts := strings.Split(spec, ":")
	head := parts[0]
	open, close := strings.Index(head, "["), strings.LastIndex(head, "]")
	if open < 0 || close != len(head)-1 {
		return nil, fmt.Errorf("%q: want TYPE[N]:INIT", spec)
	}
	et, ok := elemTypes[head[:open]]
	if !ok {
		return nil, fmt.Errorf("%q: unknown element type %q", spec, head[:open])
	}
	n, err := strconv.Atoi(head[open+1 : close])
	if err != nil || n <= 0 {
		return nil, fmt.Errorf("%q: want a positive element count", spec)
	}
	if len(parts) < 2 {
		return nil, fmt.Errorf("%q: want an initial value: zeros, iota, rand, fill=V or file=PATH", spec)
	}
	b := &emuBuffer{spec: spec, elem: et, n: n, data: make([]byte, n*et.size)}
	set := func(f func(i int) float64) {
		for i := 0; i < n; i++ {
			et.enc(b.data[i*et.size:], f(i))
		}
	}
	init, arg, _ := strings.Cut(parts[1], "=")
	switch init {
	case "zeros":
	case "iota":
		set(func(i int) float64 { return float64(i) })
	case "rand":
		if et.float {
			set(func(int) float64 { return 2*rng.Float64() - 1 })
		} else {
			set(func(int) float64 { return float64(rng.IntN(1000)) })
		}
	case "fill":
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: fill=%q is not a number", spec, arg)
		}
		set(func(int) float64 { return v })
	case "file":
		raw, err := os.ReadFile(arg)
		if err != nil {
			return nil, err
		}
		if len(raw) != len(b.data) {
			return nil, fmt.Errorf("%q: %s has %d bytes, the buffer %d", spec, arg, len(raw), len(b.data))
		}
		copy(b.data, raw)
	default:
		return nil, fmt.Errorf("%q: unknown initial value %q (zeros, iota, rand, fill=V, file=PATH)", spec, parts[1])
	}
	for _, a := range parts[2:] {
		k, v, _ := strings.Cut(a, "=")
		switch {
		case k == "print":
			b.print = true
		case k == "out" && v != "":
			b.out = v
		case k == "expect" && v != "":
			b.expect = v
		default:
			return nil, fmt.Errorf("%q: unknown action %q (print, out=PATH, expect=PATH)", spec, a)
		}
	}
	return b, nil
}

// finish prints, writes and compares the buffer after the run; ok is
// false when expect= found a mismatch.
func (b *emuBuffer) finish(w io.Writer, tol float64) (ok bool, err error) {
	if b.print {
		fmt.Fprintf(w, "%s (%s[%d]):", b.param, b.elem.name, b.n)
		for i := 0; i < b.n && i < 16; i++ {
			fmt.Fprintf(w, " %.7g", b.value(i))
		}
		if b.n > 16 {
			fmt.Fprintf(w, " … (%d more)", b.n-16)
		}
		fmt.Fprintln(w)
	}
	if b.out != "" {
		if err := os.WriteFile(b.out, b.data, 0o644); err != nil {
			return false, err
		}
		fmt.Fprintf(w, "%s: wrote %d bytes to %s\n", b.param, len(b.data), b.out)
	}
	if b.expect == "" {
		return true, nil
	}
	want, err := os.ReadFile(b.expect)
	if err != nil {
		return false, err
	}
	if len(want) != len(b.data) {
		return false, fmt.Errorf("%s: %s has %d bytes, the buffer %d", b.param, b.expect, len(want), len(b.data))
	}
	bad, maxErr := 0, 0.0
	for i := 0; i < b.n; i++ {
		g, x := b.value(i), b.elem.dec(want[i*b.elem.size:])
		d := math.Abs(g - x)
		if !b.elem.float {
			d = 0
			if b.data[i*b.elem.size] != want[i*b.elem.size] || g != x {
				d = math.Inf(1)
			}
		} else if math.IsNaN(g) && math.IsNaN(x) {
			d = 0
		}
		maxErr = math.Max(maxErr, d)
		limit := 0.0
		if b.elem.float {
			limit = tol * math.Max(1, math.Abs(x))
		}
		if !(d <= limit) {
			if bad < 10 {
				fmt.Fprintf(w, "%s[%d] = %v, want %v\n", b.param, i, g, x)
			}
			bad++
		}
	}
	if bad > 0 {
		fmt.Fprintf(w, "%s: %d of %d elements differ from %s\n", b.param, bad, b.n, b.expect)
		return false, nil
	}
	fmt.Fprintf(w, "%s: matches %s (max error %.3g)\n", b.param, b.expect, maxErr)
	return true, nil
}

func (b *emuBuffer) value(i int) float64 { return b.elem.dec(b.data[i*b.elem.size:]) }

// halfFromFloat rounds to the nearest IEEE binary16, ties to even.
func halfFromFloat(f float64) uint16 {
	var s uint16
	if math.Signbit(f) {
		s, f = 0x8000, -f
	}
	switch {
	case math.IsNaN(f):
		return 0x7e00
	case f >= 65520: // rounds to infinity
		return s | 0x7c00
	case f < 0x1p-14: // subnormal: a multiple of 2^-24 (1024 of them is the smallest normal)
		return s | uint16(math.RoundToEven(f*0x1p24))
	}
	fr, e := math.Frexp(f) // f = fr·2^e, fr in [0.5, 1)
	m := math.RoundToEven(fr * 2048)
	if m == 2048 {
		m, e = 1024, e+1
	}
	return s | uint16(e+14)<<10 | uint16(m-1024)
}

func halfToFloat(h uint16) float64 {
	e, m := int(h>>10&0x1f), float64(h&0x3ff)
	var v float64
	switch e {
	case 0:
		v = math.Ldexp(m, -24)
	case 31:
		v = math.Inf(1)
		if m != 0 {
			v = math.NaN()
		}
	default:
		v = math.Ldexp(1024+m, e-25)
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return v
}

// bf16FromFloat rounds a float32 to bfloat16, ties to even.
func bf16FromFloat(f float64) uint16 {
	b := math.Float32bits(float32(f))
	if math.IsNaN(float64(float32(f))) {
		return 0x7fc0
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}
