package safetensors

// One safetensors file: open, map, parse and check the header.

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/gokern/kern/internal/mmap"
)

// maxHeader bounds the JSON header (the format's reference implementation
// uses 100 MB); a larger length is a corrupt or foreign file.
const maxHeader = 100 << 20

// File is an open safetensors file. Its tensors' data aliases the
// mapping, so they are valid until Close.
type File struct {
	Path     string
	Metadata map[string]string
	tensors  map[string]*Tensor
	names    []string // sorted
	data     []byte
	unmap    func() error
}

// Tensor is one tensor's header entry and its raw little-endian bytes.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	File  string // the path of the file holding it, for messages
	raw   []byte
}

// Elems is the number of elements (the product of Shape; 1 for a scalar).
func (t *Tensor) Elems() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Bytes is the tensor's raw data (little-endian, row-major). It aliases
// the file's mapping: do not modify it, and do not keep it past Close.
func (t *Tensor) Bytes() []byte { return t.raw }

// errorf wraps a message with the tensor's file and name.
func (t *Tensor) errorf(format string, a ...any) error {
	return fmt.Errorf("safetensors: %s: tensor %q: %s", t.File, t.Name, fmt.Sprintf(format, a...))
}

// Open maps path and checks its header.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	data, unmap, err := mmap.File(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("safetensors: %s: mapping %d bytes: %w", path, st.Size(), err)
	}
	file, err := parse(path, data)
	if err != nil {
		unmap()
		return nil, err
	}
	file.unmap = unmap
	return file, nil
}

// Parse checks an in-memory safetensors image; name is used in messages.
// The returned File aliases data.
func Parse(name string, data []byte) (*File, error) {
	f, err := parse(name, data)
	if err != nil {
		return nil, err
	}
	f.unmap = func() error { return nil }
	return f, nil
}

// headerEntry is one value of the JSON header.
type headerEntry struct {
	DType       string  `json:"dtype"`
	Shape       []int64 `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

func parse(path string, data []byte) (*File, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("safetensors: %s: %s", path, fmt.Sprintf(format, a...))
	}
	if len(data) < 8 {
		return nil, bad("%d bytes: too short for the 8-byte header length (truncated?)", len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > maxHeader {
		return nil, bad("header length %d is over the %d-byte limit (not a safetensors file?)", n, maxHeader)
	}
	if n > uint64(len(data)-8) {
		return nil, bad("header length %d but only %d bytes follow (truncated?)", n, len(data)-8)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+n], &raw); err != nil {
		return nil, bad("bad JSON header: %v", err)
	}
	body := data[8+n:]
	f := &File{Path: path, tensors: map[string]*Tensor{}, data: data}
	type span struct {
		begin, end int64
		name       string
	}
	var spans []span
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.Metadata); err != nil {
				return nil, bad("__metadata__: want a map of strings: %v", err)
			}
			continue
		}
		t := &Tensor{Name: name, File: path}
		var e headerEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, t.errorf("bad header entry: %v", err)
		}
		dt, ok := parseDType(e.DType)
		if !ok {
			return nil, t.errorf("unknown dtype %q", e.DType)
		}
		t.DType = dt
		elems := int64(1)
		for _, d := range e.Shape {
			if d < 0 {
				return nil, t.errorf("negative dimension in shape %v", e.Shape)
			}
			if d != 0 && elems > math.MaxInt64/8/d {
				return nil, t.errorf("shape %v overflows", e.Shape)
			}
			elems *= d
			t.Shape = append(t.Shape, int(d))
		}
		if len(e.DataOffsets) != 2 {
			return nil, t.errorf("data_offsets %v: want [begin, end]", e.DataOffsets)
		}
		b, end := e.DataOffsets[0], e.DataOffsets[1]
		if b < 0 || end < b {
			return nil, t.errorf("data_offsets [%d, %d] are not an interval", b, end)
		}
		if want := elems * int64(dt.Size()); end-b != want {
			return nil, t.errorf("%d data bytes, but shape %v of %s needs %d", end-b, e.Shape, dt, want)
		}
		if end > int64(len(body)) {
			return nil, t.errorf("data [%d, %d) runs past the %d data bytes of the file (truncated?)", b, end, len(body))
		}
		t.raw = body[b:end:end]
		f.tensors[name] = t
		f.names = append(f.names, name)
		spans = append(spans, span{b, end, name})
	}
	sort.Strings(f.names)
	sort.Slice(spans, func(i, j int) bool { return spans[i].begin < spans[j].begin })
	for i := 1; i < len(spans); i++ {
		if spans[i].begin < spans[i-1].end {
			return nil, bad("tensors %q and %q overlap", spans[i-1].name, spans[i].name)
		}
	}
	return f, nil
}

// Names lists the tensors, sorted.
func (f *File) Names() []string { return f.names }

// Tensor returns the named tensor, or nil.
func (f *File) Tensor(name string) *Tensor { return f.tensors[name] }

// Close unmaps the file; its tensors' bytes become invalid.
func (f *File) Close() error {
	if f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap = nil
	return err
}
