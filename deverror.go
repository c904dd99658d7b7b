package kern

// Kernel faults: one error type, DeviceError, for every device. The GPU
// and the emulator report bounds checks, divisions by zero and panics
// through the module's error slot (compiler.ErrorSlot); the emulator adds
// faults of its own (an access outside any allocation in a nobounds
// kernel, a deadlock, the step limit); native mode recovers Go panics.
// Each becomes a *DeviceError naming the kernel, the Go position and the
// 3-D block and thread, wrapping the device's own error where it has one.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
)

// errorSlotBytes is compiler.ErrorSlotBytes (package kern does not import
// the compiler), the layout decodeSlot reads: see compiler.ErrorSlot.
const errorSlotBytes = 48

// DeviceError is a fault inside a kernel: a failed bounds check, an
// integer division by zero, a panic, or on the emulator and in native
// mode any other fault of a thread or block (errors.As finds it for every
// kernel fault on every device). Sanitizer findings are not faults: they
// come back as an *emu.Report.
type DeviceError struct {
	Kernel string // Go name of the kernel
	// Site is the Go position, "file.go:line:col". Native mode knows the
	// line from the stack, and the column when the compiler recorded one
	// check of that kind on the line; otherwise Site is "file.go:line".
	// Empty when no position is known (a deadlock, which Message
	// describes).
	Site string
	// Index and Length are those of a failed bounds check (Panic false
	// and Message "index out of range"). Length is -1 where it is not
	// known: in native mode for a negative index, which Go's panic
	// reports without the length. On the GPU and the emulator a failed
	// slice expression is Panic false with Go's Message, "slice bounds
	// out of range [:hi] with capacity cap" (Index hi, Length cap) or
	// "[lo:hi]" (Index lo, Length hi).
	Index, Length int64
	// Panic is set for a panic: an explicit panic, whose value is
	// Message, or a run-time one such as "integer divide by zero".
	Panic   bool
	Message string
	// Block and Thread are the block and thread index of the first
	// failing thread. Thread is (-1,-1,-1) for a fault of a whole block.
	Block, Thread gpu.Dim3
	// Err is the device's own report, when it has one: *emu.Error on the
	// emulator (errors.Is(err, emu.ErrStepLimit) works through it),
	// *gpu.PanicError or *gpu.BarrierError in native mode; nil on a GPU.
	Err error
}

func (e *DeviceError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kern: kernel %s", e.Kernel)
	switch {
	case e.Panic:
		b.WriteString(" panicked")
		if e.Site != "" {
			b.WriteString(" at " + e.Site)
		}
		b.WriteString(": " + e.Message)
	case e.Message == "index out of range":
		fmt.Fprintf(&b, ": index out of range [%d]", e.Index)
		if e.Length >= 0 {
			fmt.Fprintf(&b, " with length %d", e.Length)
		}
		if e.Site != "" {
			b.WriteString(" at " + e.Site)
		}
	default:
		b.WriteString(": ")
		if e.Site != "" {
			b.WriteString(e.Site + ": ")
		}
		b.WriteString(e.Message)
	}
	fmt.Fprintf(&b, " (block %s", dimTuple(e.Block))
	if e.Thread.X >= 0 {
		fmt.Fprintf(&b, ", thread %s", dimTuple(e.Thread))
	}
	b.WriteString(")")
	return b.String()
}

// Unwrap returns the device's own report (Err).
func (e *DeviceError) Unwrap() error { return e.Err }

func dimTuple(d gpu.Dim3) string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }

var blockWide = gpu.Dim3{X: -1, Y: -1, Z: -1}

// slotRecord is the error slot's content (compiler.ErrorSlot's layout).
type slotRecord struct {
	// code is the kernel index + 1 << 16 | the site index + 1; 0 when no
	// check failed.
	code          uint32
	index, length uint64
	thread, block [3]uint32
}

// decodeSlot reads the error slot's bytes (compiler.ErrorSlot's layout;
// a shorter raw reads as zeros past its end).
func decodeSlot(raw []byte) slotRecord {
	var b [errorSlotBytes]byte
	copy(b[:], raw)
	u32 := func(off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
	return slotRecord{
		code:   u32(0),
		index:  binary.LittleEndian.Uint64(b[16:]),
		length: binary.LittleEndian.Uint64(b[24:]),
		thread: [3]uint32{u32(32), u32(36), u32(40)},
		block:  [3]uint32{u32(8), u32(12) & 0xffff, u32(12) >> 16},
	}
}

// slotError decodes a module's error slot: the kernel index + 1 in the
// high half of the code, the site index + 1 in the low half. It returns
// nil for an empty slot.
func (m *Module) slotError(slot slotRecord) error {
	if slot.code == 0 {
		return nil
	}
	ki, site := int(slot.code>>16)-1, int(slot.code&0xffff)-1
	if ki < 0 || ki >= len(m.kernels) {
		return fmt.Errorf("kern: a kernel of package %s failed a device check (unknown kernel %d)", m.Pkg, ki)
	}
	k := m.kernels[ki]
	where := "unknown site"
	if site >= 0 && site < len(k.spec.Sites) {
		where = k.spec.Sites[site]
	}
	t, c := slot.thread, slot.block
	e := &DeviceError{
		Kernel: k.spec.Name,
		Thread: gpu.Dim3{X: int(t[0]), Y: int(t[1]), Z: int(t[2])},
		Block:  gpu.Dim3{X: int(c[0]), Y: int(c[1]), Z: int(c[2])},
	}
	if p, ok := strings.CutPrefix(where, "panic at "); ok {
		// "file.go:12:7: message"
		e.Panic, e.Site, e.Message = true, p, "panic"
		if i := strings.Index(p, ": "); i >= 0 {
			e.Site, e.Message = p[:i], p[i+2:]
		}
		return e
	}
	e.Index, e.Length = int64(slot.index), int64(slot.length)
	if p, ok := strings.CutPrefix(where, "slice at "); ok {
		// compiler.SliceSitePrefix: "file.go:12:7: [:x] with capacity y"
		// or "file.go:12:7: [x:y]", x the index and y the length.
		form := ""
		e.Site, form, _ = strings.Cut(p, ": ")
		e.Message = fmt.Sprintf("slice bounds out of range [%d:%d]", e.Index, e.Length)
		if form == "[:x] with capacity y" {
			e.Message = fmt.Sprintf("slice bounds out of range [:%d] with capacity %d", e.Index, e.Length)
		}
		return e
	}
	e.Site, e.Message = where, "index out of range"
	return e
}

// emuFault turns an emulator fault of kernel k into a DeviceError.
func emuFault(k *Kernel, f *emu.Error) *DeviceError {
	e := &DeviceError{
		Kernel: k.spec.Name,
		Block:  gpu.Dim3{X: f.Block[0], Y: f.Block[1], Z: f.Block[2]},
		Thread: gpu.Dim3{X: f.Thread[0], Y: f.Thread[1], Z: f.Thread[2]},
		Err:    f,
	}
	if f.Thread[0] < 0 {
		e.Thread = blockWide
	}
	if f.File != "" {
		e.Site = fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line)
		if f.Col > 0 {
			e.Site += fmt.Sprintf(":%d", f.Col)
		}
	}
	e.Message = f.Err.Error()
	if f.Instr != "" {
		e.Message += fmt.Sprintf(" (%s, PTX line %d)", f.Instr, f.PTXLine)
	}
	return e
}

// nativeFault turns a native-mode launch error of kernel k into a
// DeviceError; errors that are not faults of the kernel pass through.
func nativeFault(k *Kernel, err error) error {
	var pe *gpu.PanicError
	if errors.As(err, &pe) {
		e := &DeviceError{Kernel: k.spec.Name, Block: pe.Block, Thread: pe.Thread, Err: pe, Panic: true}
		msg := fmt.Sprint(pe.Value)
		if re, ok := pe.Value.(runtime.Error); ok {
			msg = strings.TrimPrefix(re.Error(), "runtime error: ")
			var idx, n int64
			if _, err := fmt.Sscanf(msg, "index out of range [%d] with length %d", &idx, &n); err == nil {
				e.Panic, e.Index, e.Length = false, idx, n
				msg = "index out of range"
			} else if strings.HasPrefix(msg, "slice bounds out of range") {
				// As the device reports it (slotError): the failing bound
				// and its limit, Panic false.
				if _, err := fmt.Sscanf(msg, "slice bounds out of range [:%d] with capacity %d", &idx, &n); err == nil {
					e.Panic, e.Index, e.Length = false, idx, n
				} else if _, err := fmt.Sscanf(msg, "slice bounds out of range [%d:%d]", &idx, &n); err == nil {
					e.Panic, e.Index, e.Length = false, idx, n
				}
			} else if _, err := fmt.Sscanf(msg, "index out of range [%d]", &idx); err == nil {
				// Go does not say the length when the index is negative.
				e.Panic, e.Index, e.Length = false, idx, -1
				msg = "index out of range"
			}
		}
		e.Message = msg
		if pe.File != "" {
			e.Site = k.nativeSite(filepath.Base(pe.File), pe.Line, e.Panic, msg)
		}
		return e
	}
	var be *gpu.BarrierError
	if errors.As(err, &be) {
		return &DeviceError{Kernel: k.spec.Name, Block: be.Block, Thread: blockWide, Message: be.Kind + ": " + be.Detail, Err: be}
	}
	return err
}

// nativeSite finds the column of a native-mode fault at file:line among
// the sites the compiler recorded for the kernel: the one bounds check,
// or the one panic with that message, on the line. With none or several
// it returns "file:line".
func (k *Kernel) nativeSite(file string, line int, panicked bool, msg string) string {
	prefix := fmt.Sprintf("%s:%d:", file, line)
	found := ""
	for _, s := range k.spec.Sites {
		p, isPanic := strings.CutPrefix(s, "panic at ")
		if !isPanic {
			p = strings.TrimPrefix(p, "slice at ")
		}
		if isPanic != panicked || !strings.HasPrefix(p, prefix) {
			continue
		}
		pos, m, _ := strings.Cut(p, ": ")
		if isPanic && m != msg {
			continue
		}
		if found != "" && found != pos {
			return prefix[:len(prefix)-1]
		}
		found = pos
	}
	if found == "" {
		return prefix[:len(prefix)-1]
	}
	return found
}
