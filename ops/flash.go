package ops

// FlashAttention prefill on the tensor cores (FlashAttention-2's forward
// pass, written in kern's kernel language):
//
//	for each sequence b, query head h, query token i of b:
//	  s_j  = scale · q_i·k_j                 over the keys j of b
//	         (keys j > i + lk - lq masked when causal: bottom-right
//	          aligned, as FlashAttention ≥ 2.1 does for lq ≠ lk)
//	  o_i  = Σ_j softmax(s)_j · v_j
//	  lse_i = ln Σ_j exp(s_j)                (optional output)
//
// Shapes (varlen, FlashAttention's flash_attn_varlen_func layout), all
// row-major, T ∈ {float16, bfloat16}:
//
//	q, out  [totalQ, heads, headDim]     the batch's sequences concatenated
//	k, v    [totalK, kvHeads, headDim]   heads a multiple of kvHeads (GQA/MQA);
//	                                     query head h reads KV head h/(heads/kvHeads)
//	cuSeqQ  [batch+1] int32              sequence b's queries are tokens
//	                                     cuSeqQ[b] ≤ i < cuSeqQ[b+1] (cuSeqK the same for keys)
//	lse     [heads, totalQ] float32      natural log; -Inf for a query with no key
//
// headDim is 64, 128 or 256. A query with no unmasked key (lk = 0, or causal
// with lq > lk) gets out = 0 and lse = -Inf.
//
// The algorithm (Dao 2023, "FlashAttention-2", Algorithm 1): a block of
// 4 warps owns 64 queries of one head; each warp owns 16 of them and keeps
// their rows of O (16×headDim, f32), the running maximum m and the
// running sum ℓ in registers. Key/value tiles of 64 tokens stream through
// shared memory; per tile each warp computes S = Q·Kᵀ (16×64) with
// mma.sync m16n8k16, takes the new row maximum (a quad of lanes shares a
// row: two xor-shuffles), rescales O and ℓ by 2^(c·(m_old - m_new)), and
// adds P·V, with P = 2^(c·S - c·m_new) rounded to T (c = scale·log2 e,
// one FFMA and one ex2 per score; the scale must be positive for the
// maximum of S to give that of c·S).
// P never leaves registers: the C fragment of two adjacent n-tiles of S is
// exactly the A fragment of one k-step of P·V (gpu/mma.go's layouts), so
// converting is packing pairs. ℓ is kept per lane and reduced across the
// quad once, at the end.
//
// Memory: shared memory holds the Q tile and two K and two V tiles
// (double buffering): while a tile is multiplied the next one is copied
// with cp.async (PTX ISA §9.7.9.25), rows past the sequence zero-filled,
// so a ragged last tile needs no special path (zero rows are masked, and
// zeros times a masked P of 0 add nothing). Rows are padded from headDim
// to headDim+8 elements: a row is then 16 bytes past a multiple of 128,
// so the 8 row addresses of one ldmatrix 8×8 matrix fall in 8 different
// 16-byte bank groups, and the 16-byte cp.async stores of a quarter warp
// are contiguous: no bank conflicts either way (flash_test.go checks on
// the emulator's profiler). At head dim 128 Q's fragments are loaded once
// into registers; at 64 they are re-read each tile (see attnk/flash.go). K is read with ldmatrix
// (each 8×8 matrix is 8 keys × 8 dims, which is B's column-major layout),
// V with ldmatrix.trans (8 keys × 8 dims, transposed into pairs along
// keys). Shared memory: 5·64·(headDim+8)·2 bytes, 45 KiB at 64 and 85 KiB
// at 128 (dynamic, opted in above 48 KiB).
//
// Head dim 256 (ops/internal/attn256) streams keys in tiles of 32, not
// 64, and always re-reads Q's fragments from shared memory: O alone is
// 128 registers per lane there. Its shared memory is 64·264·2 + 4·32·264·2
// bytes = 99 KiB.
//
// Grid: (ceil(maxSeqQ/64), heads, batch); a block past its sequence's
// end returns at once. Causal blocks stop at their last unmasked tile,
// and only tiles crossing the diagonal or the sequence end are masked.
//
// Bounds: the kernels are nobounds, so the main loops carry no check
// branches. Every index is in range by construction once the host has
// checked the buffer shapes and the kernel has checked, on entry, that
// its sequence's offsets are ordered, within the tokens, and no longer
// than the grid allows (else it panics, reported as a *kern.DeviceError).
//
// Versions: v1 only (one query head per block; GQA re-reads a KV head per
// query head, from L2). The kernels are in ops/internal/attnk (flash.go)
// and, at head dim 256, ops/internal/attn256; on compute capability 9.0
// the sm_90a kernels of ops/internal/attnh (TMA, mbarriers, wgmma) run
// instead at head dims 64 and 128 (flash_hopper.go).

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/attn256"
	"github.com/gokern/kern/ops/internal/attnk"
)

// ---------------------------------------------------------------------------
// Go API

// flashK is the prefill kernel per element type (f16, bf16) and head
// dimension (64, 128, 256).
var flashK = [2][3]*kern.Kernel{
	{attnk.FlashF16D64Kernel.Kernel(), attnk.FlashF16D128Kernel.Kernel(), attn256.FlashF16D256Kernel.Kernel()},
	{attnk.FlashBF16D64Kernel.Kernel(), attnk.FlashBF16D128Kernel.Kernel(), attn256.FlashBF16D256Kernel.Kernel()},
}

// Tile sizes of the prefill kernels.
const (
	flashM    = attnk.FlashM // attn256.FlashM is the same: one grid for all head dims
	flashWarp = attnk.FlashWarp
	flashPad  = attnk.FlashPad
)

// Attention is the shape and options of an attention call.
type Attention struct {
	Heads, KVHeads int // query heads and key/value heads; Heads % KVHeads == 0
	HeadDim        int // 64, 128 or 256
	// Scale multiplies q·k before the softmax; 0 means 1/√HeadDim.
	Scale  float32
	Causal bool
	// MaxSeqQ is at least the longest query sequence (the grid is sized
	// by it; the kernel reports a longer one as an error).
	// FlashAttentionBackward takes 0 to mean totalQ.
	MaxSeqQ int
	// MaxSeqK, used only by FlashAttentionBackward, is at least the
	// longest key sequence; 0 means totalK (correct, but a batch of many
	// sequences then launches blocks that find no keys and return).
	MaxSeqK int
}

// SeqOffsets returns the cumulative offsets [0, n0, n0+n1, ...] of
// sequences of the given lengths, the cuSeqQ/cuSeqK form.
func SeqOffsets(lengths ...int) []int32 {
	cu := make([]int32, len(lengths)+1)
	for i, n := range lengths {
		cu[i+1] = cu[i] + int32(n)
	}
	return cu
}

// FlashAttention computes attention over a variable-length batch (layout
// in the file header): out [totalQ, Heads, HeadDim] from q, k [totalK,
// KVHeads, HeadDim] and v; lse, if not nil, receives [Heads, totalQ] log
// sums. cuSeqQ and cuSeqK hold batch+1 offsets into the tokens.
func FlashAttention[T Half16](queue kern.Queue, out, q, k, v *kern.Buffer[T], lse *kern.Buffer[float32], cuSeqQ, cuSeqK *kern.Buffer[int32], a Attention) error {
	s := newShape("ops.FlashAttention")
	hd := a.checkHeads(s)
	notNil(s, "cuSeqQ", cuSeqQ)
	notNil(s, "cuSeqK", cuSeqK)
	notNil(s, "q", q)
	notNil(s, "k", k)
	s.atLeast("MaxSeqQ", a.MaxSeqQ, 0)
	if !(a.Scale >= 0) || math.IsInf(float64(a.Scale), 0) {
		s.fail("Scale = %g, want a finite value > 0 (or 0 for 1/√HeadDim)", a.Scale)
	}
	if s.err != nil {
		return s.err
	}
	batch := cuSeqQ.Len() - 1
	s.atLeast("cuSeqQ length", cuSeqQ.Len(), 1)
	if cuSeqK.Len() != cuSeqQ.Len() {
		s.fail("cuSeqK has %d offsets, cuSeqQ %d", cuSeqK.Len(), cuSeqQ.Len())
	}
	qRow, kRow := s.mul(a.Heads, a.HeadDim), s.mul(a.KVHeads, a.HeadDim)
	if s.err == nil && (q.Len()%qRow != 0 || k.Len()%kRow != 0) {
		s.fail("q has %d elements, k %d: want multiples of heads×headDim = %d and kvHeads×headDim = %d", q.Len(), k.Len(), qRow, kRow)
	}
	if s.err != nil {
		return s.err
	}
	totalQ := q.Len() / qRow
	buf(s, "out", out, q.Len(), "q's length")
	buf(s, "v", v, k.Len(), "k's length")
	if lse != nil {
		buf(s, "lse", lse, a.Heads*totalQ, "heads×totalQ")
	}
	if s.err == nil && totalQ > 0 && a.MaxSeqQ == 0 {
		s.fail("MaxSeqQ = 0 with %d query tokens: set it to the longest query sequence", totalQ)
	}
	if s.err != nil || batch == 0 || totalQ == 0 {
		return s.err
	}
	lseArg := lse
	if lse == nil {
		var err error
		if lseArg, err = unused(cuSeqQ.Device(), 0); err != nil {
			return fmt.Errorf("ops.FlashAttention: %w", err)
		}
	}
	if hd < 2 && hopperKernels(cuSeqQ.Device()) {
		err := flashHopper(queue, s, out, q, k, v, lse, lseArg, cuSeqQ, cuSeqK, a, hd, batch)
		if !errors.Is(err, kern.ErrNoTensorMaps) {
			return err
		}
		// A driver without tensor maps: the sm_80 kernels need none.
	}
	smem := 5 * flashM * (a.HeadDim + flashPad) * 2
	if hd == 2 {
		smem = attn256.SharedBytes // 32-key K/V tiles (attn256/flash.go)
	}
	grid := kern.Blocks(gpu.Dim3{X: (a.MaxSeqQ + flashM - 1) / flashM, Y: a.Heads, Z: batch}, gpu.Dim3{X: flashWarp * 32, Y: 1, Z: 1}).
		WithShared(smem)
	return s.launch(flashK[dtypeIndex[T]()-1][hd], queue, grid,
		bufArg(out), bufArg(q), bufArg(k), bufArg(v), bufArg(lseArg), bufArg(cuSeqQ), bufArg(cuSeqK),
		intArg(a.Heads), intArg(a.KVHeads), f32Arg(a.scale()*math.Log2E), kern.ScalarArg(a.Causal), kern.ScalarArg(lse != nil))
}

// checkHeads checks the head counts and dimension; it returns the head
// dimension's kernel index (0 for 64, 1 for 128, 2 for 256).
func (a Attention) checkHeads(s *shape) int {
	s.atLeast("KVHeads", a.KVHeads, 1)
	s.atLeast("Heads", a.Heads, 1)
	if s.err == nil && a.Heads%a.KVHeads != 0 {
		s.fail("Heads = %d is not a multiple of KVHeads = %d", a.Heads, a.KVHeads)
	}
	switch a.HeadDim {
	case 64:
		return 0
	case 128:
		return 1
	case 256:
		return 2
	}
	s.fail("HeadDim = %d, want 64, 128 or 256", a.HeadDim)
	return 0
}

func (a Attention) scale() float32 {
	if a.Scale != 0 {
		return a.Scale
	}
	return float32(1 / math.Sqrt(float64(a.HeadDim)))
}

// unusedBufs holds, per device and slot, one-element buffers passed for
// outputs a kernel is told not to write (a launch takes no nil buffer,
// and two written arguments must not alias, hence the slots).
var unusedBufs sync.Map // unusedKey → *kern.Buffer[float32] (slot -1: *kern.Buffer[uint32])

type unusedKey struct {
	dev  *kern.Device
	slot int
}

func unused(dev *kern.Device, slot int) (*kern.Buffer[float32], error) {
	return unusedBuf[float32](dev, slot)
}

// unusedCounter is the one-element uint32 buffer a kernel's counter
// parameter gets when nothing is counted (PagedAttention without splits).
func unusedCounter(dev *kern.Device) (*kern.Buffer[uint32], error) {
	return unusedBuf[uint32](dev, -1)
}

// unusedBuf returns the device's one-element buffer of slot, made once.
func unusedBuf[T gpu.Elem](dev *kern.Device, slot int) (*kern.Buffer[T], error) {
	key := unusedKey{dev, slot}
	if b, ok := unusedBufs.Load(key); ok {
		return b.(*kern.Buffer[T]), nil
	}
	b, err := kern.Alloc[T](dev, 1)
	if err != nil {
		return nil, err
	}
	if old, loaded := unusedBufs.LoadOrStore(key, b); loaded {
		b.Free()
		return old.(*kern.Buffer[T]), nil
	}
	return b, nil
}
