package cuda

import (
	"bytes"
	"runtime"
	"unsafe"
)

// Loading PTX and cubin. The driver JIT-compiles PTX for the current
// context's device at load time; when that fails, the compiler's messages
// are only available through the log buffers handed to cuModuleLoadDataEx,
// so every load passes them and a failure's *Error carries the log.

// jitOption is a CUjit_option.
type jitOption uint32

const (
	jitMaxRegisters       jitOption = 0
	jitInfoLogBuffer      jitOption = 3
	jitInfoLogBufferSize  jitOption = 4
	jitErrorLogBuffer     jitOption = 5
	jitErrorLogBufferSize jitOption = 6
	jitOptimizationLevel  jitOption = 7
	jitGenerateDebugInfo  jitOption = 11
	jitLogVerbose         jitOption = 12
	jitGenerateLineInfo   jitOption = 13
	jitLogBufferBytes               = 64 << 10
	maxJITOptions                   = 10
)

// JITOptions tunes PTX compilation. The zero value is the driver's default.
type JITOptions struct {
	MaxRegisters int  // per thread; 0 = no limit
	OptLevel     *int // 0..4; nil = default (4)
	Verbose      bool // info log gets register and memory usage per kernel
	LineInfo     bool // -lineinfo, for profilers
	DebugInfo    bool // -G
}

// jitOptions builds the option and value arrays for cuModuleLoadDataEx and
// cuLinkCreate. Values are void*; integer options pass the integer itself.
// The log buffers are Go memory kept alive by the returned struct.
type jitArgs struct {
	opts    [maxJITOptions]uint32
	vals    [maxJITOptions]uintptr
	n       int
	infoLog []byte
	errLog  []byte
}

func newJITArgs(o JITOptions) *jitArgs {
	j := &jitArgs{infoLog: make([]byte, jitLogBufferBytes), errLog: make([]byte, jitLogBufferBytes)}
	add := func(opt jitOption, v uintptr) {
		j.opts[j.n], j.vals[j.n] = uint32(opt), v
		j.n++
	}
	add(jitInfoLogBuffer, uintptr(unsafe.Pointer(&j.infoLog[0])))
	add(jitInfoLogBufferSize, uintptr(len(j.infoLog)))
	add(jitErrorLogBuffer, uintptr(unsafe.Pointer(&j.errLog[0])))
	add(jitErrorLogBufferSize, uintptr(len(j.errLog)))
	add(jitLogVerbose, boolArg(o.Verbose))
	if o.MaxRegisters > 0 {
		add(jitMaxRegisters, uintptr(o.MaxRegisters))
	}
	if o.OptLevel != nil {
		add(jitOptimizationLevel, uintptr(*o.OptLevel))
	}
	if o.LineInfo {
		add(jitGenerateLineInfo, 1)
	}
	if o.DebugInfo {
		add(jitGenerateDebugInfo, 1)
	}
	return j
}

func boolArg(b bool) uintptr {
	if b {
		return 1
	}
	return 0
}

// logs returns the info and error logs. The driver rewrites the size
// options' values with the number of bytes it wrote.
func (j *jitArgs) logs() (info, errs string) {
	return cString(j.infoLog, j.vals[1]), cString(j.errLog, j.vals[3])
}

func cString(buf []byte, n uintptr) string {
	if n < uintptr(len(buf)) {
		buf = buf[:n]
	}
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	return string(buf)
}

// LoadModuleData loads a PTX (text) or cubin/fatbin (binary) image into the
// current context. A JIT failure's *Error has the compiler's log in Log.
func LoadModuleData(image []byte) (Module, error) {
	m, _, err := LoadModuleDataEx(image, JITOptions{})
	return m, err
}

// LoadModuleDataEx is LoadModuleData with JIT options; it also returns the
// JIT info log (per-kernel resource usage when o.Verbose is set).
func LoadModuleDataEx(image []byte, o JITOptions) (Module, string, error) {
	d := current()
	img := nulTerminated(image)
	j := newJITArgs(o)
	var m Module
	err := d.call(&d.cuModuleLoadDataEx, uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&img[0])),
		uintptr(j.n), uintptr(unsafe.Pointer(&j.opts[0])), uintptr(unsafe.Pointer(&j.vals[0])))
	runtime.KeepAlive(j)
	info, errLog := j.logs()
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Log = errLog
		}
		return 0, info, err
	}
	return m, info, nil
}

// nulTerminated returns image with a trailing NUL, which the driver needs to
// find the end of PTX text (a binary image carries its own size).
func nulTerminated(image []byte) []byte {
	if len(image) > 0 && image[len(image)-1] == 0 {
		return image
	}
	img := make([]byte, len(image)+1)
	copy(img, image)
	return img
}

// cstr returns s as a NUL-terminated byte slice for a const char* argument.
func cstr(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// Unload unloads the module; its functions and globals become invalid.
func (m Module) Unload() error {
	d := current()
	return d.call(&d.cuModuleUnload, uintptr(m))
}

// Function returns the kernel entry named name (the PTX .entry symbol).
func (m Module) Function(name string) (Function, error) {
	d := current()
	n := cstr(name)
	var f Function
	if err := d.call(&d.cuModuleGetFunction, uintptr(unsafe.Pointer(&f)), uintptr(m), uintptr(unsafe.Pointer(&n[0]))); err != nil {
		if e, ok := err.(*Error); ok {
			e.Log = "kernel " + name
		}
		return 0, err
	}
	return f, nil
}

// Global returns the address and size in bytes of a module-scope
// .global or .const variable.
func (m Module) Global(name string) (DevicePtr, uint64, error) {
	d := current()
	n := cstr(name)
	var out [2]uint64
	if err := d.call(&d.cuModuleGetGlobal, uintptr(unsafe.Pointer(&out[0])), uintptr(unsafe.Pointer(&out[1])),
		uintptr(m), uintptr(unsafe.Pointer(&n[0]))); err != nil {
		if e, ok := err.(*Error); ok {
			e.Log = "global " + name
		}
		return 0, 0, err
	}
	return DevicePtr(out[0]), out[1], nil
}
