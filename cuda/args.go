package cuda

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unsafe"
)

// Kernel arguments.
//
// cuLaunchKernel takes void **kernelParams: one pointer per kernel
// parameter, each pointing at that parameter's value; the driver copies as
// many bytes from each as the kernel's signature says. Args packs the
// values into 8-byte words, one or more per parameter, and builds the
// pointer array at launch time, so the only memory involved is Args itself.
// The driver copies each value by the size the kernel declares, so the
// host-side layout is Args's own business.
//
// The storage is inline for up to inlineParams parameters and inlineWords
// words of values; beyond that Args grows a heap store once and keeps it
// across Reset. Launch forces every Args it sees onto the Go heap, which
// never moves objects, so the pointers handed to the driver stay valid for
// the call. Reusing one Args per launch site (Reset, then append) makes a
// launch allocation-free.
//
// The order of appends is the order of the kernel's parameters. For a kern
// kernel, a slice parameter is two parameters: Slice appends both (.u64
// pointer, then .s64 length).

const (
	inlineParams = 24
	inlineWords  = 48
)

// Args is a reusable kernel argument list. The zero value is empty and
// ready to use. An Args must not be copied once used, nor used by two
// goroutines at once.
type Args struct {
	n, nw int // parameters and value words in use
	inl   struct {
		words [inlineWords]uint64
		off   [inlineParams]uint32 // word offset of each parameter
		size  [inlineParams]uint32 // byte size of each parameter
		ptrs  [inlineParams]uintptr
	}
	spill *argStore // set once the inline storage overflowed
}

type argStore struct {
	words     []uint64
	off, size []uint32
	ptrs      []uintptr
}

// NewArgs returns an Args holding vals, appended with Add.
func NewArgs(vals ...any) (*Args, error) {
	a := new(Args)
	for _, v := range vals {
		if err := a.Add(v); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Reset empties a for reuse, keeping any storage it grew.
func (a *Args) Reset() *Args {
	words, _, _, _ := a.views()
	clear(words[:a.nw])
	a.n, a.nw = 0, 0
	return a
}

// Len returns the number of parameters appended.
func (a *Args) Len() int { return a.n }

// views returns the active storage; slices are full length, a.n and a.nw
// say how much is used.
func (a *Args) views() (words []uint64, off, size []uint32, ptrs []uintptr) {
	if s := a.spill; s != nil {
		return s.words, s.off, s.size, s.ptrs
	}
	return a.inl.words[:], a.inl.off[:], a.inl.size[:], a.inl.ptrs[:]
}

// put reserves size bytes, starting on a fresh 8-byte word, for the next
// parameter and returns a pointer to them, zeroed.
func (a *Args) put(size int) unsafe.Pointer {
	w := a.nw
	need := (size + 7) / 8
	if need == 0 {
		need = 1
	}
	a.grow(a.n+1, w+need)
	words, off, sz, _ := a.views()
	off[a.n], sz[a.n] = uint32(w), uint32(size)
	a.n++
	a.nw = w + need
	return unsafe.Pointer(&words[w])
}

// grow makes room for params parameters and nw words, moving to (or
// enlarging) the heap store when the current one is too small.
func (a *Args) grow(params, nw int) {
	words, off, size, _ := a.views()
	if params <= len(off) && nw <= len(words) {
		return
	}
	s := &argStore{
		words: make([]uint64, max(nw, 2*len(words))),
		off:   make([]uint32, max(params, 2*len(off))),
		size:  make([]uint32, max(params, 2*len(off))),
	}
	s.ptrs = make([]uintptr, len(s.off))
	copy(s.words, words[:a.nw])
	copy(s.off, off[:a.n])
	copy(s.size, size[:a.n])
	a.spill = s
}

// Uint8 appends a .u8/.b8 parameter.
func (a *Args) Uint8(v uint8) *Args { *(*uint8)(a.put(1)) = v; return a }

// Int8 appends a .s8 parameter.
func (a *Args) Int8(v int8) *Args { *(*int8)(a.put(1)) = v; return a }

// Uint16 appends a .u16/.b16 parameter.
func (a *Args) Uint16(v uint16) *Args { *(*uint16)(a.put(2)) = v; return a }

// Int16 appends a .s16 parameter.
func (a *Args) Int16(v int16) *Args { *(*int16)(a.put(2)) = v; return a }

// Uint32 appends a .u32/.b32 parameter.
func (a *Args) Uint32(v uint32) *Args { *(*uint32)(a.put(4)) = v; return a }

// Int32 appends a .s32 parameter.
func (a *Args) Int32(v int32) *Args { *(*int32)(a.put(4)) = v; return a }

// Uint64 appends a .u64/.b64 parameter.
func (a *Args) Uint64(v uint64) *Args { *(*uint64)(a.put(8)) = v; return a }

// Int64 appends a .s64 parameter.
func (a *Args) Int64(v int64) *Args { *(*int64)(a.put(8)) = v; return a }

// Float32 appends a .f32 parameter.
func (a *Args) Float32(v float32) *Args { *(*float32)(a.put(4)) = v; return a }

// Float64 appends a .f64 parameter.
func (a *Args) Float64(v float64) *Args { *(*float64)(a.put(8)) = v; return a }

// Half appends an IEEE binary16 parameter given by its bits (.f16/.b16).
func (a *Args) Half(bits uint16) *Args { return a.Uint16(bits) }

// BFloat16 appends a bfloat16 parameter given by its bits (.bf16/.b16).
func (a *Args) BFloat16(bits uint16) *Args { return a.Uint16(bits) }

// Bool appends a bool as one byte, 0 or 1 (PTX has no bool parameters).
func (a *Args) Bool(v bool) *Args {
	if v {
		return a.Uint8(1)
	}
	return a.Uint8(0)
}

// Ptr appends a device pointer (.u64).
func (a *Args) Ptr(p DevicePtr) *Args { return a.Uint64(uint64(p)) }

// Slice appends a kern slice parameter: the pointer, then the length as .s64.
func (a *Args) Slice(p DevicePtr, n int) *Args { return a.Ptr(p).Int64(int64(n)) }

// Bytes appends b as one by-value parameter: a struct or vector type laid
// out as the kernel declares it (.param .align N .b8 name[len(b)]).
func (a *Args) Bytes(b []byte) *Args {
	p := a.put(len(b))
	copy(unsafe.Slice((*byte)(p), len(b)), b)
	return a
}

// Add appends v by its Go type: the sized integer and float types, int and
// uint (as 64-bit), bool, DevicePtr, and named types of those kinds (a
// gpu.Half is its uint16 bits). It is the convenience path; the typed
// methods do not allocate.
func (a *Args) Add(v any) error {
	switch x := v.(type) {
	case DevicePtr:
		a.Ptr(x)
	case bool:
		a.Bool(x)
	case int8:
		a.Int8(x)
	case uint8:
		a.Uint8(x)
	case int16:
		a.Int16(x)
	case uint16:
		a.Uint16(x)
	case int32:
		a.Int32(x)
	case uint32:
		a.Uint32(x)
	case int64:
		a.Int64(x)
	case uint64:
		a.Uint64(x)
	case int:
		a.Int64(int64(x))
	case uint:
		a.Uint64(uint64(x))
	case uintptr:
		a.Uint64(uint64(x))
	case float32:
		a.Float32(x)
	case float64:
		a.Float64(x)
	default:
		return a.addKind(v)
	}
	return nil
}

// addKind handles named types by their underlying kind.
func (a *Args) addKind(v any) error {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		a.Bool(rv.Bool())
	case reflect.Int8:
		a.Int8(int8(rv.Int()))
	case reflect.Int16:
		a.Int16(int16(rv.Int()))
	case reflect.Int32:
		a.Int32(int32(rv.Int()))
	case reflect.Int64, reflect.Int:
		a.Int64(rv.Int())
	case reflect.Uint8:
		a.Uint8(uint8(rv.Uint()))
	case reflect.Uint16:
		a.Uint16(uint16(rv.Uint()))
	case reflect.Uint32:
		a.Uint32(uint32(rv.Uint()))
	case reflect.Uint64, reflect.Uint, reflect.Uintptr:
		a.Uint64(rv.Uint())
	case reflect.Float32:
		a.Float32(float32(rv.Float()))
	case reflect.Float64:
		a.Float64(rv.Float())
	default:
		return fmt.Errorf("cuda: kernel argument %d: unsupported type %T", a.n, v)
	}
	return nil
}

// Value returns a copy of the bytes of parameter i.
func (a *Args) Value(i int) []byte {
	if i < 0 || i >= a.n {
		return nil
	}
	words, off, size, _ := a.views()
	p := unsafe.Pointer(&words[off[i]])
	return append([]byte(nil), unsafe.Slice((*byte)(p), size[i])...)
}

// String lists the parameters as size:hex, for logs.
func (a *Args) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range a.n {
		if i > 0 {
			b.WriteString(", ")
		}
		v := a.Value(i)
		b.WriteString(strconv.Itoa(len(v)))
		b.WriteString("B:0x")
		for j := len(v) - 1; j >= 0; j-- { // little-endian: most significant byte last
			b.WriteString(strconv.FormatUint(uint64(v[j])|0x100, 16)[1:])
		}
	}
	b.WriteByte(']')
	return b.String()
}

// pointers fills the pointer array (one entry per parameter, pointing at
// its value) and returns its address for kernelParams. a must be on the
// heap (Launch ensures it) and stay reachable until the driver returns.
func (a *Args) pointers() uintptr {
	words, off, _, ptrs := a.views()
	base := uintptr(unsafe.Pointer(&words[0]))
	for i := range a.n {
		ptrs[i] = base + uintptr(off[i])*8
	}
	return uintptr(unsafe.Pointer(&ptrs[0]))
}
