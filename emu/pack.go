package emu

// Typed kernel arguments: packing Go values into an entry's parameter
// buffer by the entry's own declaration, so that a test or tool can launch
// foreign PTX by name without laying out bytes by hand.

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
)

// LoadFile reads and loads a PTX file; errors name the file.
func LoadFile(path string) (*Module, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := Load(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Pack lays out args as e's LaunchConfig.Params: one argument per
// parameter, in order, each converted to its parameter's PTX type and
// placed at its offset. Integers (including device addresses, which are
// uint64) fit integer parameters of their size or larger, or must fit the
// parameter's range; floats go to .f32/.f64 parameters (float32 to f64
// widens exactly; float64 to f32 rounds); bool to .pred or integers; a
// []byte of exactly the parameter's size fills an array or struct
// parameter (.param .align 8 .b8 p[16]).
func (e EntryInfo) Pack(args ...any) ([]byte, error) {
	if len(args) != len(e.Params) {
		return nil, fmt.Errorf("emu: kernel %s takes %d parameters, got %d arguments", e.Name, len(e.Params), len(args))
	}
	size := 0
	for _, p := range e.Params {
		size = max(size, p.Offset+p.Size)
	}
	buf := make([]byte, size)
	for i, p := range e.Params {
		if err := packOne(buf[p.Offset:p.Offset+p.Size], p, args[i]); err != nil {
			return nil, fmt.Errorf("emu: kernel %s, parameter %d (%s .%s): %w", e.Name, i, p.Name, p.Type, err)
		}
	}
	return buf, nil
}

func packOne(dst []byte, p Param, a any) error {
	t, ok := typeByName[p.Type]
	if !ok {
		return fmt.Errorf("unknown type")
	}
	if b, ok := a.([]byte); ok {
		if len(b) != len(dst) {
			return fmt.Errorf("%d bytes given for a %d-byte parameter", len(b), len(dst))
		}
		copy(dst, b)
		return nil
	}
	if len(dst) != t.size() && !(t == tPred && len(dst) == 1) {
		return fmt.Errorf("an array parameter takes a []byte of %d bytes, got %T", len(dst), a)
	}
	var bits uint64
	switch v := a.(type) {
	case float32, float64:
		f := toFloat64(v)
		switch t {
		case tF32:
			bits = uint64(math.Float32bits(float32(f)))
		case tF64:
			bits = math.Float64bits(f)
		default:
			return fmt.Errorf("a %T for a non-float parameter", a)
		}
	case bool:
		if t.isFloat() {
			return fmt.Errorf("a bool for a float parameter")
		}
		bits = b2u(v)
	default:
		n, signed, ok := toInt(a)
		if !ok {
			return fmt.Errorf("unsupported argument type %T", a)
		}
		if t.isFloat() {
			return fmt.Errorf("an integer (%T) for a float parameter: pass a float32 or float64", a)
		}
		if w := t.bits(); w < 64 {
			// Accept the union of the signed and unsigned ranges: -1 and
			// 0xffffffff both fill a .b32.
			lo, hi := -(int64(1) << (w - 1)), int64(1)<<w-1
			if x := int64(n); (signed && (x < lo || x > hi)) || (!signed && n > uint64(hi)) {
				return fmt.Errorf("%v does not fit in %d bits", a, w)
			}
		}
		bits = n
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], bits)
	copy(dst, b[:len(dst)])
	return nil
}

func toFloat64(v any) float64 {
	if f, ok := v.(float32); ok {
		return float64(f)
	}
	return v.(float64)
}

// toInt returns an integer argument's bits and whether its Go type is
// signed.
func toInt(a any) (uint64, bool, bool) {
	switch v := a.(type) {
	case int:
		return uint64(v), true, true
	case int8:
		return uint64(v), true, true
	case int16:
		return uint64(v), true, true
	case int32:
		return uint64(v), true, true
	case int64:
		return uint64(v), true, true
	case uint:
		return uint64(v), false, true
	case uint8:
		return uint64(v), false, true
	case uint16:
		return uint64(v), false, true
	case uint32:
		return uint64(v), false, true
	case uint64:
		return v, false, true
	case uintptr:
		return uint64(v), false, true
	}
	return 0, false, false
}
