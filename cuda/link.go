package cuda

import (
	"runtime"
	"unsafe"
)

// Linker links several PTX (or cubin) inputs into one cubin with the
// driver's JIT linker (cuLinkCreate_v2 and friends), for kernels split
// across modules that reference each other's .extern symbols. Use it from
// one goroutine, inside Context.Do.
type Linker struct {
	state uintptr
	jit   *jitArgs
}

// JITInputType is a CUjitInputType.
type JITInputType uint32

const (
	JITInputCubin     JITInputType = 0
	JITInputPTX       JITInputType = 1
	JITInputFatbinary JITInputType = 2
	JITInputObject    JITInputType = 3
	JITInputLibrary   JITInputType = 4
)

// NewLinker starts a link with the given JIT options.
func NewLinker(o JITOptions) (*Linker, error) {
	d := current()
	l := &Linker{jit: newJITArgs(o)}
	var state uintptr
	err := d.call(&d.cuLinkCreate, uintptr(l.jit.n), uintptr(unsafe.Pointer(&l.jit.opts[0])),
		uintptr(unsafe.Pointer(&l.jit.vals[0])), uintptr(unsafe.Pointer(&state)))
	if err != nil {
		return nil, l.withLog(err)
	}
	l.state = state
	return l, nil
}

// AddData adds one input; name appears in the linker's messages.
func (l *Linker) AddData(typ JITInputType, data []byte, name string) error {
	d := current()
	img := data
	if typ == JITInputPTX {
		img = nulTerminated(data)
	}
	if len(img) == 0 {
		return &Error{Call: d.cuLinkAddData.Name, Code: ErrorInvalidValue, Name: builtinName(ErrorInvalidValue),
			Text: builtinText(ErrorInvalidValue), Log: "empty input " + name}
	}
	n := cstr(name)
	err := d.call(&d.cuLinkAddData, l.state, uintptr(typ), uintptr(unsafe.Pointer(&img[0])), uintptr(len(img)),
		uintptr(unsafe.Pointer(&n[0])), 0, 0, 0)
	return l.withLog(err)
}

// AddPTX adds PTX text.
func (l *Linker) AddPTX(name string, ptx []byte) error { return l.AddData(JITInputPTX, ptx, name) }

// Complete finishes the link and returns a copy of the linked image, ready
// for LoadModuleData. The Linker still has to be destroyed.
func (l *Linker) Complete() ([]byte, error) {
	d := current()
	var out struct {
		image unsafe.Pointer
		size  uint64
	}
	if err := d.call(&d.cuLinkComplete, l.state, uintptr(unsafe.Pointer(&out.image)), uintptr(unsafe.Pointer(&out.size))); err != nil {
		return nil, l.withLog(err)
	}
	// The image belongs to the link state and dies with it.
	return append([]byte(nil), unsafe.Slice((*byte)(out.image), out.size)...), nil
}

// InfoLog returns what the linker has written to its info log so far.
func (l *Linker) InfoLog() string {
	info, _ := l.jit.logs()
	return info
}

// Destroy frees the link state and the image Complete returned a copy of.
func (l *Linker) Destroy() error {
	d := current()
	err := d.call(&d.cuLinkDestroy, l.state)
	runtime.KeepAlive(l.jit)
	return err
}

// withLog attaches the link error log to a failed call's error.
func (l *Linker) withLog(err error) error {
	if e, ok := err.(*Error); ok {
		_, e.Log = l.jit.logs()
	}
	return err
}
