package gomlx

// The test harness: run one recorded graph on GoMLX's simplego backend
// (the reference) and on kern's emulator and native devices, and compare.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/dtypes/bfloat16"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/x448/float16"
)

// devices are the kern devices every op is tested on.
var devices = []string{"emu", "native"}

var (
	backendsMu sync.Mutex
	opened     = map[string]backends.Backend{}
)

// backendFor returns a shared backend for config ("go" is simplego).
func backendFor(t testing.TB, config string) backends.Backend {
	t.Helper()
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if b, ok := opened[config]; ok {
		return b
	}
	var b backends.Backend
	var err error
	switch config {
	case "go":
		b, err = simplego.New("")
	case "emu-checked": // the emulator with every sanitizer on
		b = &Backend{dev: kern.OpenEmulator(emu.Options{Memcheck: true, Racecheck: true, Synccheck: true})}
	default:
		b, err = New(config)
	}
	if err != nil {
		t.Fatalf("opening backend %q: %v", config, err)
	}
	opened[config] = b
	return b
}

// graphFn records a graph on b from its parameters.
type graphFn func(b backends.Builder, params []backends.Op) (backends.Op, error)

// run records fn on backend be with the inputs' shapes, compiles it,
// executes it on the inputs and returns the output's flat data.
func run(t testing.TB, be backends.Backend, fn graphFn, inputs ...input) (any, shapes.Shape, error) {
	t.Helper()
	bl := be.Builder(t.Name())
	params := make([]backends.Op, len(inputs))
	for i, in := range inputs {
		p, err := bl.Parameter(fmt.Sprintf("x%d", i), in.shape, nil)
		if err != nil {
			return nil, shapes.Invalid(), err
		}
		params[i] = p
	}
	out, err := fn(bl, params)
	if err != nil {
		return nil, shapes.Invalid(), err
	}
	exe, err := bl.Compile([]backends.Op{out}, nil)
	if err != nil {
		return nil, shapes.Invalid(), err
	}
	defer exe.Finalize()
	bufs := make([]backends.Buffer, len(inputs))
	for i, in := range inputs {
		if bufs[i], err = be.BufferFromFlatData(0, in.flat, in.shape); err != nil {
			return nil, shapes.Invalid(), err
		}
	}
	res, err := exe.Execute(bufs, nil, 0)
	if err != nil {
		return nil, shapes.Invalid(), err
	}
	for _, b := range bufs {
		be.BufferFinalize(b)
	}
	shape := exe.Outputs()[0]
	flat := reflect.MakeSlice(reflect.SliceOf(shape.DType.GoType()), shape.Size(), shape.Size()).Interface()
	if err := be.BufferToFlatData(res[0], flat); err != nil {
		return nil, shape, err
	}
	be.BufferFinalize(res[0])
	return flat, shape, nil
}

// input is one parameter's shape and flat data.
type input struct {
	shape shapes.Shape
	flat  any
}

// valueRange is how random inputs are drawn.
type valueRange int

const (
	anyValue valueRange = iota // [-2, 2] for floats, [-5, 5] for ints
	positive                   // [0.1, 3]
	nonZero                    // [-5, 5] without 0
	index                      // [0, limit)
)

// randInput draws an input of shape.
func randInput(r *rand.Rand, shape shapes.Shape, vr valueRange, limit int) input {
	n := shape.Size()
	f := func() float64 {
		switch vr {
		case positive:
			return 0.1 + 2.9*r.Float64()
		case nonZero:
			v := float64(r.IntN(10) - 5)
			if v >= 0 {
				v++
			}
			return v
		case index:
			return float64(r.IntN(limit))
		}
		if shape.DType.IsInt() {
			return float64(r.IntN(11) - 5)
		}
		return 4*r.Float64() - 2
	}
	var flat any
	switch shape.DType {
	case dtypes.Float32:
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(f())
		}
		flat = s
	case dtypes.Float64:
		s := make([]float64, n)
		for i := range s {
			s[i] = f()
		}
		flat = s
	case dtypes.Float16:
		s := make([]float16.Float16, n)
		for i := range s {
			s[i] = float16.Fromfloat32(float32(f()))
		}
		flat = s
	case dtypes.BFloat16:
		s := make([]bfloat16.BFloat16, n)
		for i := range s {
			s[i] = bfloat16.FromFloat32(float32(f()))
		}
		flat = s
	case dtypes.Int32:
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(f())
		}
		flat = s
	case dtypes.Int64:
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(f())
		}
		flat = s
	case dtypes.Bool:
		s := make([]bool, n)
		for i := range s {
			s[i] = r.IntN(2) == 1
		}
		flat = s
	default:
		panic("randInput: dtype " + shape.DType.String())
	}
	return input{shape: shape, flat: flat}
}

// toFloat64 widens flat data of any stored dtype.
func toFloat64(flat any) []float64 {
	v := reflect.ValueOf(flat)
	out := make([]float64, v.Len())
	for i := range out {
		switch x := v.Index(i).Interface().(type) {
		case float32:
			out[i] = float64(x)
		case float64:
			out[i] = x
		case float16.Float16:
			out[i] = float64(x.Float32())
		case bfloat16.BFloat16:
			out[i] = float64(x.Float32())
		case int32:
			out[i] = float64(x)
		case int64:
			out[i] = float64(x)
		case bool:
			if x {
				out[i] = 1
			}
		case uint32:
			out[i] = float64(x)
		case uint64:
			out[i] = float64(x) // rounded: compare uint64 exactly elsewhere
		}
	}
	return out
}

// tolerance is abs + |ref|·rel, by output dtype, scaled by scale (the
// number of terms a result sums, for dot and reductions).
func tolerance(dt dtypes.DType, scale float64) (abs, rel float64) {
	switch dt {
	case dtypes.Float32:
		return 1e-5 * scale, 2e-5
	case dtypes.Float64:
		return 1e-12 * scale, 1e-12
	case dtypes.Float16:
		return 2e-3 * scale, 2e-3
	case dtypes.BFloat16:
		return 1.6e-2 * scale, 1.6e-2
	}
	return 0, 0 // integers and bools are exact
}

// checkClose checks got against want elementwise, printing the first
// mismatches and the largest error as a share of the allowed error.
func checkClose(t testing.TB, what string, dt dtypes.DType, got, want []float64, scale float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	abs, rel := tolerance(dt, scale)
	bad, worst := 0, 0.0
	for i := range got {
		g, w := got[i], want[i]
		if math.IsNaN(w) && math.IsNaN(g) || g == w {
			continue
		}
		allowed := abs + rel*math.Abs(w)
		err := math.Abs(g - w)
		if allowed > 0 {
			worst = max(worst, err/allowed)
		}
		if !(err <= allowed) {
			bad++
			if bad <= 5 {
				t.Errorf("%s: [%d] = %v, want %v (error %.3g, allowed %.3g)", what, i, g, w, err, allowed)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ; worst error %.2f× the allowed", what, bad, len(got), worst)
	}
}

func tanh(x float64) float64 { return math.Tanh(x) }

// copyFlat copies one flat slice into another of the same type.
func copyFlat(dst, src any) { reflect.Copy(reflect.ValueOf(dst), reflect.ValueOf(src)) }
