//go:build !kerngen

package main

// kern bench matmul (also "gemm", its old name): cuBLAS matrix-multiply
// throughput, the yardstick for kern's own GEMM kernels, and kern's
// ops.Matmul beside it. The decode rows of the same benchmark are in
// bench_decode.go.
//
// C = A·B for square N×N matrices (column-major, no transposes, alpha 1,
// beta 0), one case per element type:
//
//	Sgemm f32    cublasSgemm_v2 in the default math mode: full float32
//	GemmEx tf32  float32 data, CUBLAS_COMPUTE_32F_FAST_TF32: TF32 tensor cores
//	GemmEx f16   half A, B and C, CUBLAS_COMPUTE_32F: tensor cores, float32 accumulation
//	GemmEx bf16  the same with bfloat16
//
// and beside the f16 and bf16 cases kern's own ops.Matmul (row-major
// C = A·Wᵀ, the linear-layer layout, same FLOPs and element types, output
// in the input type), timed between two kern events on a kern Stream. Its
// "% of cuBLAS" column is its TFLOP/s over the cuBLAS case of the same
// size and type, and its note names the kernel ops picked
// (ops.MatmulVersion). On compute capability 9.0 there is a row per v3
// kernel ("kern Matmul bf16" the default, whose note names the tile it
// chose, then "kern Matmul bf16 128x256", "… 128x256 rowmajor" and
// "… 128x128" for those it did not). Without cuBLAS the kern rows still
// run, with no ratio.
//
// TFLOP/s is 2·N³ / median time / 10¹². The inputs are filled with 2⁻⁷,
// exact in every type, so no case runs into denormals or overflow. No % of
// peak is given: the driver does not report tensor-core throughput.

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/cublas"
	"github.com/gokern/kern/cuda"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops"
)

func benchMatmul(env *benchEnv) error {
	if !env.isCUDA() {
		env.notef("matmul: the square rows need a CUDA GPU and cuBLAS; skipped on %s (ops.Matmul's tests check it on the emulator)", env.dev.Kind())
		return benchDecode(env)
	}
	if err := benchCublas(env); err != nil {
		return err
	}
	if err := benchKernMatmul(env); err != nil {
		return err
	}
	return benchDecode(env)
}

// benchCublas adds a row per -gemm-sizes and -gemm-types case.
func benchCublas(env *benchEnv) error {
	if err := cublas.Load(); err != nil {
		env.notef("matmul: no cuBLAS rows: %v", err)
		return nil
	}
	ctx, err := cuda.PrimaryCtxRetain(env.cudaDev)
	if err != nil {
		return err
	}
	defer ctx.Release()
	h, err := cublas.Create(ctx)
	if err != nil {
		return err
	}
	defer h.Destroy()
	err = ctx.Do(func() error {
		s, err := cuda.StreamCreate(cuda.StreamNonBlocking)
		if err != nil {
			return err
		}
		defer s.Destroy()
		if err := h.SetStream(s); err != nil {
			return err
		}
		t, err := newEventTimer(s)
		if err != nil {
			return err
		}
		defer t.destroy()
		for _, n := range env.cfg.gemmSizes {
			for _, typ := range env.cfg.gemmTypes {
				if err := gemmCase(env, h, t, n, typ); err != nil {
					return fmt.Errorf("%s %d: %w", typ, n, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if v, err := h.Version(); err == nil {
		env.notef("matmul: cuBLAS %d.%d.%d from %s", v/10000, v/100%100, v%100, h.Library())
	}
	return nil
}

// benchKernMatmul adds a row of ops.Matmul for every f16 and bf16 case.
func benchKernMatmul(env *benchEnv) error {
	s, err := env.dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	for _, n := range env.cfg.gemmSizes {
		for _, typ := range env.cfg.gemmTypes {
			var err error
			switch typ {
			case "f16":
				err = kernMatmulCase[gpu.Half](env, s, n, typ, gpu.ToHalf(0x1p-7))
			case "bf16":
				err = kernMatmulCase[gpu.BFloat16](env, s, n, typ, gpu.ToBFloat16(0x1p-7))
			}
			if err != nil {
				return fmt.Errorf("kern Matmul %s %d: %w", typ, n, err)
			}
		}
	}
	return nil
}

// kernMatmulCase times ops.Matmul on n×n×n with every input 2⁻⁷. Where
// Matmul runs v3 (the sm_90a GEMM, compute capability 9.0) it also times
// every ops.HopperTiles entry that runs another kernel than the default:
// the default's row is "kern Matmul <type>" as elsewhere (its note names
// the tile it chose), each other's "kern Matmul <type> <tile>", so one
// run compares v3's tiles with each other and with cuBLAS.
func kernMatmulCase[T ops.Half16](env *benchEnv, s *kern.Stream, n int, typ string, fill T) error {
	size := fmt.Sprintf("%d³", n)
	if free, _, err := cuda.MemGetInfo(); err == nil && uint64(3*n*n*2) > free {
		env.notef("matmul: kern Matmul %s %s skipped: needs %s", typ, size, fmtBytes(3*n*n*2))
		return nil
	}
	xs := make([]T, n*n)
	for i := range xs {
		xs[i] = fill
	}
	var bufs [3]*kern.Buffer[T]
	for i := range bufs {
		b, err := kern.Upload(env.dev, xs)
		if err != nil {
			return err
		}
		defer b.Free()
		bufs[i] = b
	}
	a, w, c := bufs[0], bufs[1], bufs[2]
	// The default first, then each other v3 tile that runs another kernel.
	auto := ops.MatmulHopperTile
	tiles := []ops.HopperTile{auto}
	if ver := ops.MatmulVersion(env.dev, n, n, n, ops.WeightNK); strings.HasPrefix(ver, "v3 ") {
		for _, t := range ops.HopperTiles {
			ops.MatmulHopperTile = t
			if ops.MatmulVersion(env.dev, n, n, n, ops.WeightNK) != ver {
				tiles = append(tiles, t)
			}
		}
	}
	defer func() { ops.MatmulHopperTile = auto }()
	for i, tile := range tiles {
		ops.MatmulHopperTile = tile
		sec, err := timeRuns(env.cfg, func() (time.Duration, error) {
			return timeOnStream(s, func() error { return ops.Matmul(s, c, a, w, n, n, n, ops.MatmulOpts[T]{}) })
		})
		if err != nil {
			return err
		}
		tflops := 2 * math.Pow(float64(n), 3) / sec / 1e12
		name := "kern Matmul " + typ
		if i > 0 {
			name += " " + tile.String()
		}
		// Which kernel ran: on compute capability 9.0 the sm_90a GEMM and
		// its tile.
		row := benchRow{bench: "matmul", name: name, size: size, time: sec, value: tflops, unit: "TFLOP/s",
			peak: math.NaN(), note: ops.MatmulVersion(env.dev, n, n, n, ops.WeightNK)}
		for _, r := range env.rows {
			if r.bench == "matmul" && r.name == gemmTypes[typ].name && r.size == size && r.value > 0 {
				row.ref = 100 * tflops / r.value
			}
		}
		env.add(row)
	}
	return nil
}

// gemmType describes one -gemm-types case.
type gemmType struct {
	name    string
	elem    cublas.DataType
	compute cublas.ComputeType
	fill    uint32 // two 16-bit or one 32-bit 2⁻⁷
}

var gemmTypes = map[string]gemmType{
	"f32":  {"Sgemm f32", cublas.Float32, cublas.Compute32F, 0x3c000000},
	"tf32": {"GemmEx tf32", cublas.Float32, cublas.Compute32FFastTF32, 0x3c000000},
	"f16":  {"GemmEx f16", cublas.Float16, cublas.Compute32F, 0x20002000},
	"bf16": {"GemmEx bf16", cublas.BFloat16, cublas.Compute32F, 0x3c003c00},
}

// gemmCase times one size and type. It runs inside the context's Do.
func gemmCase(env *benchEnv, h *cublas.Handle, t *eventTimer, n int, typ string) error {
	gt := gemmTypes[typ]
	bytes := uint64(n) * uint64(n) * uint64(gt.elem.Size())
	size := fmt.Sprintf("%d³", n)
	if free, _, err := cuda.MemGetInfo(); err == nil && 3*bytes > free {
		env.notef("matmul: %s %s skipped: needs %s, %s free", gt.name, size, fmtBytes(int(3*bytes)), fmtBytes(int(free)))
		return nil
	}
	var bufs [3]cuda.DevicePtr
	for i := range bufs {
		p, err := cuda.MemAlloc(bytes)
		if err != nil {
			return err
		}
		defer cuda.MemFree(p)
		if err := cuda.MemsetD32(p, gt.fill, bytes/4); err != nil {
			return err
		}
		bufs[i] = p
	}
	a, b, c := bufs[0], bufs[1], bufs[2]
	run := func(cuda.Stream) error {
		if typ == "f32" {
			return h.Sgemm(cublas.OpN, cublas.OpN, n, n, n, 1, a, n, b, n, 0, c, n)
		}
		return h.GemmEx(cublas.OpN, cublas.OpN, n, n, n, 1, a, gt.elem, n, b, gt.elem, n, 0, c, gt.elem, n,
			gt.compute, cublas.GemmDefaultTensorOp)
	}
	sec, err := timeRuns(env.cfg, func() (time.Duration, error) { return t.time(run) })
	if err != nil {
		return err
	}
	env.add(benchRow{bench: "matmul", name: gt.name, size: size, time: sec,
		value: 2 * math.Pow(float64(n), 3) / sec / 1e12, unit: "TFLOP/s", peak: math.NaN()})
	return nil
}
