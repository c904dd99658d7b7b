package qwen3

// Loading a checkpoint's tensors onto the device, each checked against
// the shape config.json implies.

import (
	"fmt"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/llm/safetensors"
)

// Weight is a linear layer's weight matrix [Out, In] on the device, in
// the type the checkpoint stores (exactly one buffer is set).
type Weight struct {
	Name    string
	Out, In int
	DType   safetensors.DType
	f32     *kern.Buffer[float32]
	f16     *kern.Buffer[gpu.Half]
	bf16    *kern.Buffer[gpu.BFloat16]
}

// Bytes is the weight's size on the device.
func (w *Weight) Bytes() int64 {
	size := 4
	if w.f32 == nil {
		size = 2
	}
	return int64(w.Out) * int64(w.In) * int64(size)
}

func (w *Weight) free() {
	switch {
	case w.bf16 != nil:
		w.bf16.Free()
	case w.f16 != nil:
		w.f16.Free()
	case w.f32 != nil:
		w.f32.Free()
	}
}

// source is where Load's weights come from: a checkpoint (loader) or a
// seeded random generator (random.go).
type source interface {
	matrix(name string, out, in int) (*Weight, error)
	vector(name string, n int) (*kern.Buffer[float32], error)
	has(name string) bool
	where() string // for messages
}

func (l *loader) has(name string) bool { return l.set.Has(name) }
func (l *loader) where() string        { return l.set.Dir }

// loader uploads tensors from a Set, reporting progress in bytes.
type loader struct {
	dev      *kern.Device
	set      *safetensors.Set
	done     int64
	progress func(done, total int64)
	total    int64
}

func (l *loader) tensor(name string, shape ...int) (*safetensors.Tensor, error) {
	t, err := l.set.Tensor(name)
	if err != nil {
		return nil, err
	}
	if !t.DType.IsFloat() {
		return nil, fmt.Errorf("safetensors: %s: tensor %q: dtype %s, want F32, F16 or BF16", t.File, name, t.DType)
	}
	if err := t.CheckShape(shape...); err != nil {
		return nil, err
	}
	return t, nil
}

func (l *loader) advance(t *safetensors.Tensor) {
	l.done += int64(len(t.Bytes()))
	if l.progress != nil {
		l.progress(l.done, l.total)
	}
}

// matrix uploads a [out, in] weight in its own type (F64 becomes F32).
func (l *loader) matrix(name string, out, in int) (*Weight, error) {
	t, err := l.tensor(name, out, in)
	if err != nil {
		return nil, err
	}
	w := &Weight{Name: name, Out: out, In: in, DType: t.DType}
	switch t.DType {
	case safetensors.BF16:
		var xs []gpu.BFloat16
		if xs, err = t.BFloat16(); err == nil {
			w.bf16, err = kern.Upload(l.dev, xs)
		}
	case safetensors.F16:
		var xs []gpu.Half
		if xs, err = t.Half(); err == nil {
			w.f16, err = kern.Upload(l.dev, xs)
		}
	default:
		var xs []float32
		if xs, err = t.Float32(); err == nil {
			w.f32, err = kern.Upload(l.dev, xs)
		}
		w.DType = safetensors.F32
	}
	if err != nil {
		return nil, fmt.Errorf("qwen3: uploading %s: %w", name, err)
	}
	l.advance(t)
	return w, nil
}

// vector uploads a [n] weight (a norm's scale) as float32.
func (l *loader) vector(name string, n int) (*kern.Buffer[float32], error) {
	t, err := l.tensor(name, n)
	if err != nil {
		return nil, err
	}
	xs, err := t.Float32()
	if err != nil {
		return nil, err
	}
	b, err := kern.Upload(l.dev, xs)
	if err != nil {
		return nil, fmt.Errorf("qwen3: uploading %s: %w", name, err)
	}
	l.advance(t)
	return b, nil
}
