package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/gokern/kern/internal/mmap"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// DefaultAlignment is the data alignment when general.alignment is absent.
const DefaultAlignment = 32

// File is an open GGUF file. Tensor data stays mapped until Close.
type File struct {
	Path      string
	Version   uint32
	Alignment int
	// Meta holds every metadata value by key: uint8…int64, float32,
	// float64, bool, string, or a typed slice for arrays ([]string,
	// []int32, []float32, …; []any for arrays of arrays).
	Meta    map[string]any
	Keys    []string // metadata keys in file order
	Tensors []*Tensor
	byName  map[string]*Tensor
	data    []byte // the whole mapping
	unmap   func() error
}

// Tensor is one tensor's info and its bytes in the mapping.
type Tensor struct {
	Name string
	// Dims are innermost first, as GGUF stores them: an [out, in] matrix
	// has Dims [in, out].
	Dims   []int
	Type   Type
	Offset int64 // from the start of the data section
	file   *File
	raw    []byte
}

// Elems is the number of elements.
func (t *Tensor) Elems() int {
	n := 1
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Bytes is the tensor's encoded data.
func (t *Tensor) Bytes() []byte { return t.raw }

// Open maps and parses path. Every length, count and offset is checked
// against the file's size, so a truncated or corrupt file gives an error
// naming the file and the field or tensor, never a panic.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	data, unmap, err := mmap.File(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("gguf: mapping %s: %w", path, err)
	}
	g, err := parse(path, data)
	if err != nil {
		unmap()
		return nil, err
	}
	g.unmap = unmap
	return g, nil
}

// Parse reads a GGUF image already in memory (tests, embedded files).
func Parse(name string, data []byte) (*File, error) { return parse(name, data) }

// Close unmaps the file; tensors' bytes must not be used after.
func (g *File) Close() error {
	if g.unmap == nil {
		return nil
	}
	err := g.unmap()
	g.unmap = nil
	g.data = nil
	return err
}

// Tensor returns the named tensor.
func (g *File) Tensor(name string) (*Tensor, error) {
	if t, ok := g.byName[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("gguf: %s: no tensor %q", g.Path, name)
}

// Has reports whether the file has the named tensor.
func (g *File) Has(name string) bool { _, ok := g.byName[name]; return ok }

// reader decodes little-endian values from b, failing (not panicking)
// past its end.
type reader struct {
	b   []byte
	pos int
}

var errShort = errors.New("unexpected end of file")

func (r *reader) take(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.pos) {
		return nil, fmt.Errorf("%w at byte %d (want %d more bytes, have %d)", errShort, r.pos, n, len(r.b)-r.pos)
	}
	s := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return s, nil
}

func (r *reader) u32() (uint32, error) {
	b, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *reader) u64() (uint64, error) {
	b, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (r *reader) str() (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	b, err := r.take(n)
	if err != nil {
		return "", fmt.Errorf("string of %d bytes: %w", n, err)
	}
	return string(b), nil
}

func parse(path string, data []byte) (*File, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("gguf: %s: "+format, append([]any{path}, args...)...)
	}
	r := &reader{b: data}
	magic, err := r.take(4)
	if err != nil || string(magic) != Magic {
		return nil, fail("not a GGUF file (magic %q, want %q)", magic, Magic)
	}
	g := &File{Path: path, Meta: map[string]any{}, byName: map[string]*Tensor{}, data: data}
	if g.Version, err = r.u32(); err != nil {
		return nil, fail("version: %v", err)
	}
	if g.Version != 2 && g.Version != 3 {
		return nil, fail("version %d: this reader supports GGUF v2 and v3", g.Version)
	}
	nTensors, err := r.u64()
	if err != nil {
		return nil, fail("tensor count: %v", err)
	}
	nMeta, err := r.u64()
	if err != nil {
		return nil, fail("metadata count: %v", err)
	}
	// Each entry takes at least 8+4 bytes (metadata) or 8+4+4+8 (tensor):
	// bounding the counts by the file size keeps a corrupt count from
	// allocating without limit.
	if nMeta > uint64(len(data))/12 {
		return nil, fail("metadata count %d is impossible in a %d-byte file", nMeta, len(data))
	}
	if nTensors > uint64(len(data))/24 {
		return nil, fail("tensor count %d is impossible in a %d-byte file", nTensors, len(data))
	}
	for i := uint64(0); i < nMeta; i++ {
		key, err := r.str()
		if err != nil {
			return nil, fail("metadata entry %d: key: %v", i, err)
		}
		vt, err := r.u32()
		if err != nil {
			return nil, fail("metadata %q: type: %v", key, err)
		}
		v, err := r.value(ValueType(vt), 0)
		if err != nil {
			return nil, fail("metadata %q: %v", key, err)
		}
		if _, dup := g.Meta[key]; dup {
			return nil, fail("metadata %q appears twice", key)
		}
		g.Meta[key] = v
		g.Keys = append(g.Keys, key)
	}
	g.Alignment = DefaultAlignment
	if _, ok := g.Meta["general.alignment"]; ok {
		a, err := g.Uint("general.alignment")
		if err != nil {
			return nil, fail("%v", err)
		}
		if a == 0 || a&(a-1) != 0 || a > 1<<20 {
			return nil, fail("general.alignment = %d, want a power of two", a)
		}
		g.Alignment = int(a)
	}
	for i := uint64(0); i < nTensors; i++ {
		t, err := r.tensorInfo()
		if err != nil {
			return nil, fail("tensor info %d: %v", i, err)
		}
		if _, dup := g.byName[t.Name]; dup {
			return nil, fail("tensor %q appears twice", t.Name)
		}
		t.file = g
		g.Tensors = append(g.Tensors, t)
		g.byName[t.Name] = t
	}
	start := (r.pos + g.Alignment - 1) / g.Alignment * g.Alignment
	if len(g.Tensors) > 0 && start > len(data) {
		return nil, fail("tensor data would start at byte %d, past the end (%d bytes)", start, len(data))
	}
	for _, t := range g.Tensors {
		l, ok := layouts[t.Type]
		if !ok {
			return nil, fail("tensor %q: unknown ggml type %d", t.Name, uint32(t.Type))
		}
		n := t.Elems()
		if n%l.block != 0 || t.Dims[0]%l.block != 0 {
			return nil, fail("tensor %q: dims %v are not whole %s blocks of %d", t.Name, t.Dims, t.Type, l.block)
		}
		size := int64(n/l.block) * int64(l.bytes)
		if t.Offset%int64(g.Alignment) != 0 {
			return nil, fail("tensor %q: offset %d is not a multiple of the alignment %d", t.Name, t.Offset, g.Alignment)
		}
		end := int64(start) + t.Offset + size
		if t.Offset < 0 || end > int64(len(data)) || end < 0 {
			return nil, fail("tensor %q: data [%d, %d) runs past the end of the file (%d bytes): truncated?", t.Name, int64(start)+t.Offset, end, len(data))
		}
		t.raw = data[int64(start)+t.Offset : end]
	}
	return g, nil
}

func (r *reader) tensorInfo() (*Tensor, error) {
	name, err := r.str()
	if err != nil {
		return nil, fmt.Errorf("name: %v", err)
	}
	nd, err := r.u32()
	if err != nil {
		return nil, fmt.Errorf("%q: n_dims: %v", name, err)
	}
	if nd == 0 || nd > 4 {
		return nil, fmt.Errorf("%q: n_dims = %d, want 1…4", name, nd)
	}
	t := &Tensor{Name: name}
	n := uint64(1)
	for i := uint32(0); i < nd; i++ {
		d, err := r.u64()
		if err != nil {
			return nil, fmt.Errorf("%q: dim %d: %v", name, i, err)
		}
		if d == 0 || d > math.MaxInt32 {
			return nil, fmt.Errorf("%q: dim %d = %d", name, i, d)
		}
		n *= d
		if n > 1<<40 {
			return nil, fmt.Errorf("%q: %d+ elements is not a plausible tensor", name, n)
		}
		t.Dims = append(t.Dims, int(d))
	}
	ty, err := r.u32()
	if err != nil {
		return nil, fmt.Errorf("%q: type: %v", name, err)
	}
	t.Type = Type(ty)
	off, err := r.u64()
	if err != nil {
		return nil, fmt.Errorf("%q: offset: %v", name, err)
	}
	if off > math.MaxInt64/2 {
		return nil, fmt.Errorf("%q: offset %d", name, off)
	}
	t.Offset = int64(off)
	return t, nil
}

// value decodes one metadata value of type vt. depth bounds nested
// arrays.
func (r *reader) value(vt ValueType, depth int) (any, error) {
	switch vt {
	case TypeString:
		return r.str()
	case TypeArray:
		if depth > 4 {
			return nil, errors.New("arrays nested too deep")
		}
		et, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("array element type: %v", err)
		}
		n, err := r.u64()
		if err != nil {
			return nil, fmt.Errorf("array length: %v", err)
		}
		return r.array(ValueType(et), n, depth)
	}
	size := vt.scalarSize()
	if size <= 0 {
		return nil, fmt.Errorf("unknown value type %d", uint32(vt))
	}
	b, err := r.take(uint64(size))
	if err != nil {
		return nil, err
	}
	return scalar(vt, b), nil
}

func scalar(vt ValueType, b []byte) any {
	le := binary.LittleEndian
	switch vt {
	case TypeUint8:
		return b[0]
	case TypeInt8:
		return int8(b[0])
	case TypeBool:
		return b[0] != 0
	case TypeUint16:
		return le.Uint16(b)
	case TypeInt16:
		return int16(le.Uint16(b))
	case TypeUint32:
		return le.Uint32(b)
	case TypeInt32:
		return int32(le.Uint32(b))
	case TypeFloat32:
		return math.Float32frombits(le.Uint32(b))
	case TypeUint64:
		return le.Uint64(b)
	case TypeInt64:
		return int64(le.Uint64(b))
	case TypeFloat64:
		return math.Float64frombits(le.Uint64(b))
	}
	panic("gguf: scalar of non-scalar type") // unreachable: callers check scalarSize
}

// array decodes n elements of type et into a typed slice.
func (r *reader) array(et ValueType, n uint64, depth int) (any, error) {
	remaining := uint64(len(r.b) - r.pos)
	switch size := et.scalarSize(); {
	case size < 0:
		return nil, fmt.Errorf("array of unknown type %d", uint32(et))
	case size > 0:
		if n > remaining/uint64(size) {
			return nil, fmt.Errorf("array of %d %s: %w", n, et, errShort)
		}
		b, _ := r.take(n * uint64(size))
		return scalars(et, b, int(n)), nil
	case et == TypeString:
		if n > remaining/8 {
			return nil, fmt.Errorf("array of %d strings: %w", n, errShort)
		}
		out := make([]string, n)
		for i := range out {
			s, err := r.str()
			if err != nil {
				return nil, fmt.Errorf("string %d of %d: %v", i, n, err)
			}
			out[i] = s
		}
		return out, nil
	default: // arrays of arrays
		if n > remaining/12 {
			return nil, fmt.Errorf("array of %d arrays: %w", n, errShort)
		}
		out := make([]any, n)
		for i := range out {
			v, err := r.value(TypeArray, depth+1)
			if err != nil {
				return nil, fmt.Errorf("element %d: %v", i, err)
			}
			out[i] = v
		}
		return out, nil
	}
}

func scalars(et ValueType, b []byte, n int) any {
	size := et.scalarSize()
	at := func(i int) []byte { return b[i*size : (i+1)*size] }
	switch et {
	case TypeUint8:
		return append([]uint8(nil), b...)
	case TypeInt8:
		return fill[int8](n, func(i int) int8 { return int8(b[i]) })
	case TypeBool:
		return fill[bool](n, func(i int) bool { return b[i] != 0 })
	case TypeUint16:
		return fill[uint16](n, func(i int) uint16 { return binary.LittleEndian.Uint16(at(i)) })
	case TypeInt16:
		return fill[int16](n, func(i int) int16 { return int16(binary.LittleEndian.Uint16(at(i))) })
	case TypeUint32:
		return fill[uint32](n, func(i int) uint32 { return binary.LittleEndian.Uint32(at(i)) })
	case TypeInt32:
		return fill[int32](n, func(i int) int32 { return int32(binary.LittleEndian.Uint32(at(i))) })
	case TypeFloat32:
		return fill[float32](n, func(i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(at(i))) })
	case TypeUint64:
		return fill[uint64](n, func(i int) uint64 { return binary.LittleEndian.Uint64(at(i)) })
	case TypeInt64:
		return fill[int64](n, func(i int) int64 { return int64(binary.LittleEndian.Uint64(at(i))) })
	default: // TypeFloat64
		return fill[float64](n, func(i int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(at(i))) })
	}
}

func fill[T any](n int, f func(int) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}
