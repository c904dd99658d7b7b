package ops

// Matrix multiply on the tensor cores, with the epilogue fused into the
// store:
//
//	C[i,j] = act(Σ_k A[i,k]·B[k,j] + bias[j]) + residual[i,j]
//	SwiGLU: C[i,j] = silu(G[i,j])·U[i,j] + residual[i,j], where G and U are
//	        columns 2j and 2j+1 of A·B (gate and up in one GEMM)
//
// Shapes and layout (row-major; In ∈ {float16, bfloat16}, O ∈ {float32,
// float16, bfloat16}):
//
//	a         [M, K] In
//	b         [N, K] In  (WeightNK: a linear layer's weight W, C = A·Wᵀ)
//	          [K, N] In  (RowMajorKN)
//	c         [M, N] O   ([M, N/2] with ActSwiGLU)
//	bias      [N] O, optional (before the activation; interleaved like b's
//	          columns for SwiGLU)
//	residual  like c, optional
//
// For SwiGLU, b's columns interleave the gate and up projections: column
// 2j is gate row j, column 2j+1 up row j (InterleaveGateUp builds it from
// the two [I, K] weights). A fused QKV projection needs nothing special:
// stack the three weights' rows ([Wq; Wk; Wv], N = Nq+Nk+Nv) and c's
// columns hold q, k and v side by side.
//
// Products are exact in float32 and summed in float32 by the tensor cores
// (in an order of their own); bias, activation and residual are float32;
// the result is rounded once to O.
//
// Versions:
//
// The kernels live in ops/internal/mm (their PTX is too large for this
// package's generated file); the in → out types they exist for are
// float16 → float32 or float16, bfloat16 → float32 or bfloat16.
//
//	v1 simple (internal/mm/simple.go): a warp per 16×8 tile, fragments loaded
//	   element-wise from global memory; any shape. Used when K, or N for
//	   RowMajorKN, is not a multiple of 8.
//	v2 pipelined (internal/mm/tc.go): 3-stage cp.async, swizzled shared memory,
//	   ldmatrix, a 64×32 warp tile; the block tile is a config from
//	   matmulConfigs, chosen by shape.
//	gemv (internal/gemvtc): M ≤ 16 with WeightNK (any M with KernelGEMV,
//	   16 rows per block), a weight-streaming kernel on the tensor cores
//	   (v2; W straight into registers, split over K in the block). With
//	   KernelAuto, its first version (internal/gemv: cp.async stages, FMAs,
//	   a pass over W per 4 rows of x) runs instead while GEMVv1 is set, its
//	   v3 (internal/gemv3: v2 split over K to fit the SMs) while GEMVv3 is.
//	v3 hopper (internal/mmh, matmul_hopper.go): TMA, wgmma, an mbarrier
//	   pipeline and warp specialisation, sm_90a; v2's shapes, either layout
//	   (B[K,N] as an MN-major wgmma operand), on compute capability 9.0.

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/epilogue"
	"github.com/gokern/kern/ops/internal/gemv"
	"github.com/gokern/kern/ops/internal/gemvtc"
	"github.com/gokern/kern/ops/internal/mm"
)

// Half16 is the input types of the tensor-core ops.
type Half16 interface{ gpu.Half | gpu.BFloat16 }

// BLayout is how Matmul's b is stored.
type BLayout int

const (
	// WeightNK: b is W[N,K] row-major and C = A·Wᵀ, a linear layer (the
	// zero value).
	WeightNK BLayout = iota
	// RowMajorKN: b is B[K,N] row-major and C = A·B.
	RowMajorKN
)

// Activation is the activation a Matmul epilogue applies.
type Activation int

const (
	ActNone   Activation = epilogue.None
	ActSiLU   Activation = epilogue.SiLU
	ActGELU   Activation = epilogue.GELU   // exact (erf) GELU
	ActSwiGLU Activation = epilogue.SwiGLU // silu(column 2j)·column 2j+1 → column j
)

// MatmulOpts are Matmul's options; the zero value is C = A·Wᵀ.
type MatmulOpts[O Float] struct {
	Layout   BLayout
	Bias     *kern.Buffer[O] // [N], or nil
	Residual *kern.Buffer[O] // the shape of c, or nil
	Act      Activation
	Kernel   MatmulKernel
	// StaticWeights says that b is not written by any kernel that may
	// still be running when this Matmul starts (a model's weights,
	// uploaded once). On a GPU with programmatic dependent launch
	// (compute capability 9.0+, kern.Device.PDL) the decode GEMV then
	// starts reading b before the kernels queued before it complete, and
	// a, the bias and the residual after. Set it only for buffers that
	// no queued kernel writes: a b written by the kernel just before
	// would be read too early.
	StaticWeights bool
	// RMSNorm, if set, makes a the RMSNorm of RMSNorm.X rounded to In
	// (matmul_norm.go): a is then scratch [m, k], which the decode GEMV
	// (M ≤ FuseNormMaxRows, MatmulFusesNorm) leaves untouched, normalising the rows
	// itself, and every other path writes the normalised rows into
	// before multiplying. The product is the same bits either way.
	RMSNorm *MatmulRMSNorm
}

// MatmulKernel chooses between Matmul's kernel families.
//
// KernelAuto picks by shape: the decode GEMV for M ≤ 16, the tensor-core
// tiles above. A row of c then sums in an order that depends on M, so
// the same row can round differently when batched with others. The two
// fixed families are batch-invariant: each row of c is computed by the
// same instructions in the same order whatever M is and whatever rows
// share the call, so it is bit-identical to the row multiplied alone.
// A server that batches requests and promises each one the output it
// would get alone runs its decode steps with KernelGEMV and its prefills
// with KernelTiles.
type MatmulKernel int

const (
	KernelAuto MatmulKernel = iota
	// KernelGEMV is the decode GEMV for any M (a pass over W per 16 rows
	// of a), with WeightNK; RowMajorKN runs the tiles.
	KernelGEMV
	// KernelTiles is the tensor-core tiles for any M, their size chosen by
	// N alone.
	KernelTiles
)

// tcConfig is one block tile of v2: warpsM×warpsN warps of 64×32.
type tcConfig struct {
	name           string
	warpsM, warpsN int
}

func (c tcConfig) bm() int      { return c.warpsM * mm.WarpM }
func (c tcConfig) bn() int      { return c.warpsN * mm.WarpN }
func (c tcConfig) threads() int { return c.warpsM * c.warpsN * 32 }

// matmulConfigs are v2's block tiles. 128×128 (8 warps) reuses each
// loaded element 128 times per stage and is the large-shape tile; 64×64
// (2 warps) makes four times the blocks, so a shape too small to give
// every SM of a large GPU a 128×128 tile still spreads over it.
var matmulConfigs = [...]tcConfig{
	{"128x128x32", 2, 4},
	{"64x64x32", 1, 2},
}

// bigTileBlocks is the number of 128×128 tiles from which the large tile
// is used: about the SM count of the GPUs kern targets (108 on an A100,
// 132 on an H100), so that each SM has at least one block.
const bigTileBlocks = 108

// pickConfig returns the config for an m×n output.
func pickConfig(m, n int) tcConfig {
	big := matmulConfigs[0]
	if ceilDiv(m, big.bm())*ceilDiv(n, big.bn()) >= bigTileBlocks {
		return big
	}
	return matmulConfigs[1]
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Kernel tables, indexed [input: f16, bf16][output: f32, the input type].
var (
	mmaTCK = [2][2]*kern.Kernel{
		{mm.TCF16F32Kernel.Kernel(), mm.TCF16F16Kernel.Kernel()},
		{mm.TCBF16F32Kernel.Kernel(), mm.TCBF16BF16Kernel.Kernel()},
	}
	mmaSimpleK = [2][2]*kern.Kernel{
		{mm.SimpleF16F32Kernel.Kernel(), mm.SimpleF16F16Kernel.Kernel()},
		{mm.SimpleBF16F32Kernel.Kernel(), mm.SimpleBF16BF16Kernel.Kernel()},
	}
)

// inIndex is 0 for float16 and 1 for bfloat16.
func inIndex[In Half16]() int {
	var z In
	if _, ok := any(z).(gpu.BFloat16); ok {
		return 1
	}
	return 0
}

// Matmul computes c = act(a·b + bias) + residual (see the file header for
// shapes, layouts and SwiGLU). Any m, n, k ≥ 0 work; the fast path needs k
// (and n, for RowMajorKN) to be a multiple of 8 and otherwise a slower
// kernel runs.
func Matmul[In Half16, O Float](q kern.Queue, c *kern.Buffer[O], a, b *kern.Buffer[In], m, n, k int, o MatmulOpts[O]) error {
	s := newShape("ops.Matmul")
	v, err := matmulCheck(s, c, a, b, m, n, k, o)
	if err != nil || m == 0 || n == 0 {
		return err
	}
	if o.RMSNorm != nil {
		if fusesNorm(v, m, k) {
			return matmulNormFused(s, q, c, b, m, n, k, o)
		}
		if err := matmulNormCast(s, q, a, o.RMSNorm, m, k); err != nil {
			return err
		}
		o.RMSNorm = nil
	}
	tm := m // the rows the tiles are chosen for
	if o.Kernel == KernelTiles {
		// Chosen by N alone, as for many rows: the 128×128 and 64×64
		// tiles sum a row alike (a warp's 64×32 tile, k16 steps in order)
		// but the Hopper kernels may not sum as the sm_80 ones do.
		tm = 1 << 20
	}
	v = hopperPick(v, queueDevice(q), o.Layout, tm, n) // matmul_hopper.go
	err = matmulRun(s, v, pickConfig(m, n), q, c, a, b, m, n, k, o)
	if (v == mmHopper || v == mmHopperWide) && errors.Is(err, kern.ErrNoTensorMaps) {
		// A driver without tensor maps: the sm_80 kernel needs none.
		err = matmulRun(s, mmV2, pickConfig(m, n), q, c, a, b, m, n, k, o)
	}
	return err
}

// matmul versions, as matmulCheck picks them.
const (
	mmV1     = 1
	mmV2     = 2
	mmGEMV   = 3 // the decode GEMV's v2 (mmGEMVv1 while GEMVv1 is set)
	mmGEMVv1 = 6 // mmHopper and mmHopperWide are 4 and 5
	mmGEMVv3 = 7 // while GEMVv3 is set (matmul_gemv3.go)
)

// GEMVv1, when set, makes Matmul (and MatmulVersion) take the decode
// GEMV's first version (internal/gemv) in place of v2 (internal/gemvtc),
// so that kern bench can time the two side by side on a GPU. Set it only
// while no Matmul runs on another goroutine.
var GEMVv1 bool

// gemvVersion is the decode GEMV that runs: mmGEMV, mmGEMVv1 while
// GEMVv1 is set, or mmGEMVv3 while GEMVv3 is (and GEMVv1 is not).
func gemvVersion() int {
	switch {
	case GEMVv1:
		return mmGEMVv1
	case GEMVv3:
		return mmGEMVv3
	}
	return mmGEMV
}

// matmulCheck checks Matmul's arguments and returns the version to run.
func matmulCheck[In Half16, O Float](s *shape, c *kern.Buffer[O], a, b *kern.Buffer[In], m, n, k int, o MatmulOpts[O]) (int, error) {
	s.atLeast("m", m, 0)
	s.atLeast("n", n, 0)
	s.atLeast("k", k, 0)
	for _, d := range [][3]any{{"a", m, k}, {"b", n, k}, {"c", m, n}} {
		if r, c := d[1].(int), d[2].(int); r > 0 && c > math.MaxInt32/r {
			s.fail("%s is %d×%d: more than 2³¹-1 elements (the kernels' offsets are 32-bit)", d[0], r, c)
		}
	}
	cn := n
	switch o.Act {
	case ActNone, ActSiLU, ActGELU:
	case ActSwiGLU:
		if n%2 != 0 {
			s.fail("n = %d with ActSwiGLU, want an even n (interleaved gate and up columns)", n)
		}
		cn = n / 2
	default:
		s.fail("unknown activation %d", o.Act)
	}
	if o.Layout != WeightNK && o.Layout != RowMajorKN {
		s.fail("unknown layout %d", o.Layout)
	}
	if o.Kernel < KernelAuto || o.Kernel > KernelTiles {
		s.fail("unknown kernel family %d", o.Kernel)
	}
	buf(s, "a", a, s.mul(m, k), fmt.Sprintf("m×k = %d×%d", m, k))
	bshape := "n×k"
	if o.Layout == RowMajorKN {
		bshape = "k×n"
	}
	buf(s, "b", b, s.mul(n, k), fmt.Sprintf("%s = %d×%d", bshape, n, k))
	buf(s, "c", c, s.mul(m, cn), fmt.Sprintf("m×%d = %d×%d", cn, m, cn))
	if o.Bias != nil {
		buf(s, "bias", o.Bias, n, "n")
	}
	if o.Residual != nil {
		buf(s, "residual", o.Residual, s.mul(m, cn), "the size of c")
	}
	if o.RMSNorm != nil {
		normCheck(s, o.RMSNorm, m, k)
	}
	if oi := dtypeIndex[O](); oi != 0 && oi != 1+inIndex[In]() {
		s.fail("%s inputs with %s output: the output must be float32 or %s", dtypeName[In](), dtypeName[O](), dtypeName[In]())
	}
	if s.err != nil {
		return 0, s.err
	}
	switch {
	case k%8 != 0 || (o.Layout == RowMajorKN && n%8 != 0):
		return mmV1, nil
	case o.Kernel == KernelGEMV && o.Layout == WeightNK:
		return mmGEMV, nil
	case o.Kernel == KernelAuto && m <= gemvtc.MaxM && o.Layout == WeightNK:
		return gemvVersion(), nil
	}
	return mmV2, nil
}

// matmulRun launches version v (with config cfg, for v2) on checked
// arguments.
func matmulRun[In Half16, O Float](s *shape, v int, cfg tcConfig, q kern.Queue, c *kern.Buffer[O], a, b *kern.Buffer[In], m, n, k int, o MatmulOpts[O]) error {
	if v == mmHopper || v == mmHopperWide {
		return matmulHopperRun(s, v, q, c, a, b, m, n, k, o)
	}
	ii, oi := inIndex[In](), min(dtypeIndex[O](), 1)
	bias, res, err := optionalBufs(s, q, o.Bias, o.Residual)
	if err != nil {
		return err
	}
	args := []kern.Arg{bufArg(c), bufArg(a), bufArg(b), bias, res, intArg(m), intArg(n), intArg(k)}
	switch v {
	case mmGEMV:
		args = append(args, intArg(int(o.Act)), kern.ScalarArg(o.StaticWeights))
		grid := kern.Blocks(gpu.Dim3{X: ceilDiv(n, gemvtc.Rows), Y: ceilDiv(m, gemvtc.MaxM), Z: 1},
			gpu.Dim3{X: gemvtc.Threads, Y: 1, Z: 1}).WithShared(gemvtc.Shared)
		ks := &gemvtc.Kernels
		if m <= 8 {
			ks = &gemvtc.Narrow // one tile of x: three blocks per SM
		}
		return s.launch(ks[ii][oi], q, grid, args...)
	case mmGEMVv3:
		return matmulGEMV3Run(s, q, c, a, b, m, n, k, o, bias, res)
	case mmGEMVv1:
		args = append(args, intArg(int(o.Act)))
		grid := blocks1(ceilDiv(n, gemv.RowsPerBlock), gemv.Warps*32).WithShared(gemv.Shared)
		return s.launch(gemv.Kernels[ii][oi], q, grid, args...)
	}
	if v == mmV1 {
		sbk, sbn := 1, k
		if o.Layout == RowMajorKN {
			sbk, sbn = n, 1
		}
		tiles := ceilDiv(m, 16) * ceilDiv(n, 8)
		args = append(args, intArg(sbk), intArg(sbn), intArg(int(o.Act)))
		return s.launch(mmaSimpleK[ii][oi], q, blocks1(ceilDiv(tiles, mm.SimpleWarps), mm.SimpleWarps*32), args...)
	}
	args = append(args, intArg(int(o.Layout)), intArg(int(o.Act)), intArg(cfg.warpsN))
	grid := kern.Blocks(gpu.Dim3{X: ceilDiv(n, cfg.bn()), Y: ceilDiv(m, cfg.bm()), Z: 1}, gpu.Dim3{X: cfg.threads(), Y: 1, Z: 1}).WithShared(mm.Shared)
	return s.launch(mmaTCK[ii][oi], q, grid, args...)
}

// InterleaveGateUp returns the [2I, K] weight whose row 2j is gate row j
// and row 2j+1 up row j, the b of a Matmul with ActSwiGLU, from the gate
// and up projections' [I, K] weights (host slices, row-major).
func InterleaveGateUp[T any](gate, up []T, i, k int) ([]T, error) {
	if len(gate) != i*k || len(up) != i*k {
		return nil, fmt.Errorf("ops.InterleaveGateUp: gate has %d and up %d elements, want i×k = %d×%d", len(gate), len(up), i, k)
	}
	out := make([]T, 2*i*k)
	for j := range i {
		copy(out[2*j*k:], gate[j*k:(j+1)*k])
		copy(out[(2*j+1)*k:], up[j*k:(j+1)*k])
	}
	return out, nil
}

// optionalBufs returns the arguments of optional buffers: the buffer, or
// where it is nil an empty buffer of the queue's device (a kernel
// parameter needs a live buffer; the kernels test len() == 0).
func optionalBufs[O Float](s *shape, q kern.Queue, bufs ...*kern.Buffer[O]) (kern.Arg, kern.Arg, error) {
	var args [2]kern.Arg
	for i, b := range bufs {
		if b != nil {
			args[i] = b
			continue
		}
		e, err := emptyBuf[O](q)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", s.op, err)
		}
		args[i] = e
	}
	return args[0], args[1], nil
}

// empties caches one empty buffer per (device, element type): the
// stand-in for an absent optional argument, allocated once.
var empties sync.Map // emptyKey → kern.Arg

type emptyKey struct {
	dev *kern.Device
	t   int
}

// emptyBuf returns the cached empty buffer of T on q's device.
func emptyBuf[T Float](q kern.Queue) (kern.Arg, error) {
	var dev *kern.Device
	switch v := q.(type) {
	case *kern.Device:
		dev = v
	case *kern.Stream:
		dev = v.Device()
	}
	if dev == nil {
		return nil, fmt.Errorf("nil queue")
	}
	key := emptyKey{dev, dtypeIndex[T]()}
	if a, ok := empties.Load(key); ok {
		return a.(kern.Arg), nil
	}
	b, err := kern.Alloc[T](dev, 0)
	if err != nil {
		return nil, err
	}
	a, _ := empties.LoadOrStore(key, kern.Arg(b))
	return a.(kern.Arg), nil
}
