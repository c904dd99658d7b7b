package main

// kern bench gemm: cuBLAS matrix-multiply throughput, the yardstick for
// kern's own GEMM kernels.
//
// C = A·B for square N×N matrices (column-major, no transposes, alpha 1,
// beta 0), one case per element type:
//
//	Sgemm f32    cublasSgemm_v2 in the default math mode: full float32
//	GemmEx tf32  float32 data, CUBLAS_COMPUTE_32F_FAST_TF32: TF32 tensor cores
//	GemmEx f16   half A, B and C, CUBLAS_COMPUTE_32F: tensor cores, float32 accumulation
//	GemmEx bf16  the same with bfloat16
//
// GFLOP/s is 2·N³ / median time / 10⁹. The inputs are filled with 2⁻⁷,
// exact in every type, so no case runs into denormals or overflow. No % of
// peak is given: the driver does not report tensor-core throughput.
//
// kern has no importable GEMM to run beside cuBLAS yet: the tiled matmul
// of examples/tiled_matmul_f32 is a main package, and package ops has none.

import (
	"fmt"
	"math"
	"time"

	"github.com/gokern/kern/cublas"
	"github.com/gokern/kern/cuda"
)

const kernMatmulNote = "gemm: no kern matmul beside cuBLAS: examples/tiled_matmul_f32 is a main package (not importable) and package ops has no matmul yet; `go run ./examples/tiled_matmul_f32` prints its GFLOP/s"

func benchGemm(env *benchEnv) error {
	if !env.isCUDA() {
		env.notef("gemm: needs a CUDA GPU and cuBLAS; skipped on %s", env.dev.Kind())
		env.notef("%s", kernMatmulNote)
		return nil
	}
	if err := cublas.Load(); err != nil {
		env.notef("gemm: skipped: %v", err)
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
		env.notef("gemm: cuBLAS %d.%d.%d from %s", v/10000, v/100%100, v%100, h.Library())
	}
	env.notef("%s", kernMatmulNote)
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
		env.notef("gemm: %s %s skipped: needs %s, %s free", gt.name, size, fmtBytes(int(3*bytes)), fmtBytes(int(free)))
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
	env.add(benchRow{bench: "gemm", name: gt.name, size: size, time: sec,
		value: 2 * math.Pow(float64(n), 3) / sec / 1e9, unit: "GFLOP/s", peak: math.NaN()})
	return nil
}
