package ops

// Sampling the next token from logits, with temperature, top-k and top-p
// (nucleus) filtering, reproducibly from a caller's seed.
//
// Shapes: logits [rows, cols] row-major (one row per sequence, cols the
// vocabulary), T ∈ {float32, float16, bfloat16}; out [rows] int32.
//
// The distribution of row r is HF transformers' with temperature, then
// top-k, then top-p:
//
//	p_j ∝ exp((x_j - max x)/temperature) over the kept tokens, where the
//	kept tokens are those with x_j ≥ the k-th largest logit (ties at the
//	k-th value all kept), and then, of those, the fewest largest whose
//	probability mass reaches topP (tokens with equal logits kept or
//	dropped together).
//
// Algorithm, one block of up to 256 threads per row, every step a sweep of
// the row with the threads striding over it and meeting in a block
// reduction:
//
//  1. m = the row's maximum logit.
//  2. top-k: the k-th largest logit as a threshold on order-preserving
//     32-bit keys of the float32 logits (key(x) < key(y) iff x < y), found
//     bit by bit from the top: 32 sweeps, each counting the keys ≥ a
//     candidate with an integer gpu.BlockSum. A threshold on the value
//     instead of sorting needs no memory beyond registers.
//  3. Z = Σ exp((x - m)/temperature) over the keys ≥ the threshold.
//  4. top-p: the same 32-step search on the largest threshold whose kept
//     mass is still ≥ topP·Z.
//  5. Gumbel-max: the sample is argmax over kept j of (x_j - m)/temperature
//     + g_j with g_j = -log(-log u_j), which is distributed exactly as p
//     (the Gumbel-max trick), using the same block arg-reduction as Argmax.
//     No cumulative sum is needed, so nothing depends on the order of a
//     scan.
//
// u_j is a counter-based random number: the splitmix64 finalizer of the
// counter (row, j), xor the seed, finalized again; its top 24 bits give u
// in (0, 1). So a sample depends only on (seed, row, logits, parameters):
// the same seed gives the same tokens on every run, and rows are
// independent streams. Pass a new seed per decoding step (e.g. seed+step).
// Sums use fixed-order block reductions (no atomics), so the thresholds
// are deterministic too. The emulator and a GPU share the PTX and agree;
// native mode's exp and log are Go's, so a sample there can differ from
// the device's when two candidates' scores are within float32 rounding.
//
// Temperature 0 is greedy decoding: Sample calls Argmax (where, unlike
// here, a NaN logit wins). Otherwise NaN logits count as -Inf (never
// sampled). Cost: 3 sweeps with temperature only, 35 with top-k or
// top-p, 67 with both — a logits row of 150k floats is 600 KB, so even 67
// sweeps from L2 take tens of microseconds on a GPU; a sort-free exact
// top-p is worth that in a first version.
//
// Versions: v1 only.

import (
	"fmt"
	"math"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

// ---------------------------------------------------------------------------
// kernels

//kern:kernel block=256
func sampleF32(t gpu.Thread, out []int32, logits []float32, cols, topK int, topP, invTemp float32, seed uint64) {
	sampleRow(f32c{}, t, out, logits, cols, topK, topP, invTemp, seed)
}

//kern:kernel block=256
func sampleF16(t gpu.Thread, out []int32, logits []gpu.Half, cols, topK int, topP, invTemp float32, seed uint64) {
	sampleRow(f16c{}, t, out, logits, cols, topK, topP, invTemp, seed)
}

//kern:kernel block=256
func sampleBF16(t gpu.Thread, out []int32, logits []gpu.BFloat16, cols, topK int, topP, invTemp float32, seed uint64) {
	sampleRow(bf16c{}, t, out, logits, cols, topK, topP, invTemp, seed)
}

// sampleRow samples row BlockIdx.X (steps 1-5 of the header). topK ≤ 0
// or ≥ cols and topP ≥ 1 disable their filters.
func sampleRow[T any, C codec[T]](c C, t gpu.Thread, out []int32, x []T, cols, topK int, topP, invTemp float32, seed uint64) {
	row := t.BlockIdx().X
	base := row * cols
	tid, nt := t.ThreadIdx().X, t.BlockDim().X

	m := negInf()
	for j := tid; j < cols; j += nt {
		m = gpu.Max(m, logitAt(c, x, base+j))
	}
	m = gpu.BlockMax(t, m)

	thr := uint32(0) // keep keys ≥ thr
	if topK > 0 && topK < cols {
		for bit := 31; bit >= 0; bit-- {
			cand := thr | uint32(1)<<bit
			n := int32(0)
			for j := tid; j < cols; j += nt {
				if orderKey(logitAt(c, x, base+j)) >= cand {
					n++
				}
			}
			if gpu.BlockSum(t, n) >= int32(topK) {
				thr = cand
			}
		}
	}

	if topP < 1 {
		target := topP * keptMass(c, t, x, base, cols, thr, m, invTemp)
		p := uint32(0)
		for bit := 31; bit >= 0; bit-- {
			cand := p | uint32(1)<<bit
			if keptMass(c, t, x, base, cols, max(cand, thr), m, invTemp) >= target {
				p = cand
			}
		}
		thr = max(thr, p)
	}

	best, bi := negInf(), int32(math.MaxInt32)
	for j := tid; j < cols; j += nt {
		v := logitAt(c, x, base+j)
		if orderKey(v) >= thr {
			s := (v-m)*invTemp + gumbel(seed, row, j)
			if argBetter(s, int32(j), best, bi) {
				best, bi = s, int32(j)
			}
		}
	}
	_, bi = blockArgMax(t, best, bi)
	if tid == 0 {
		out[row] = bi
	}
}

// keptMass is Σ exp((x - m)·invTemp) over the row's keys ≥ thr, to every
// thread. The order of the additions depends only on the block shape, so
// the same set always gives the same float32 sum.
func keptMass[T any, C codec[T]](c C, t gpu.Thread, x []T, base, cols int, thr uint32, m, invTemp float32) float32 {
	s := float32(0)
	for j := t.ThreadIdx().X; j < cols; j += t.BlockDim().X {
		if v := logitAt(c, x, base+j); orderKey(v) >= thr {
			s += gpu.Exp((v - m) * invTemp)
		}
	}
	return gpu.BlockSum(t, s)
}

// logitAt loads x[i] as float32 with NaN replaced by -Inf.
func logitAt[T any, C codec[T]](c C, x []T, i int) float32 {
	v := c.load(x[i])
	if v != v {
		return negInf()
	}
	return v
}

// orderKey maps float32 to uint32 preserving order: negative values have
// all bits flipped, the others their sign bit set.
func orderKey(v float32) uint32 {
	b := math.Float32bits(v)
	if b&0x80000000 != 0 {
		return ^b
	}
	return b | 0x80000000
}

// uniform returns u in (0, 1) from the counter (row, j) and seed: 24
// random bits from two rounds of the splitmix64 finalizer.
func uniform(seed uint64, row, j int) float32 {
	h := mix64(mix64(uint64(row)<<32|uint64(uint32(j))) ^ seed)
	return (float32(h>>40) + 0.5) * 0x1p-24
}

// mix64 is splitmix64's finalizer (a bijection of uint64 with full
// avalanche).
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// gumbel is a standard Gumbel variate for (seed, row, j).
func gumbel(seed uint64, row, j int) float32 {
	return -gpu.Log(-gpu.Log(uniform(seed, row, j)))
}

// ---------------------------------------------------------------------------
// Go API

var sampleK = kset{sampleF32Kernel.Kernel(), sampleF16Kernel.Kernel(), sampleBF16Kernel.Kernel()}

// Sampling are the parameters of Sample. The zero value of TopK and TopP
// disables them; Temperature 0 is greedy decoding.
type Sampling struct {
	Temperature float32 // > 0 divides the logits; 0 takes the argmax
	TopK        int     // keep the TopK largest logits (ties kept); 0 or ≥ cols: all
	TopP        float32 // keep the fewest tokens with mass ≥ TopP; 0 or ≥ 1: all
	Seed        uint64  // the random stream; the same seed gives the same tokens
}

// Sample draws one token per row of logits ([rows, cols]) into out
// ([rows]) from softmax(logits/Temperature) restricted by TopK and TopP.
// See sample.go's header for the algorithm and its guarantees.
func Sample[T Float](q kern.Queue, out *kern.Buffer[int32], logits *kern.Buffer[T], rows, cols int, p Sampling) error {
	s := newShape("ops.Sample")
	n := rowsCols(s, rows, cols)
	if cols > math.MaxInt32 {
		s.fail("cols = %d, want at most 2^31-1 (int32 token ids)", cols)
	}
	buf(s, "logits", logits, n, "rows×cols")
	buf(s, "out", out, rows, "rows")
	switch {
	case !(p.Temperature >= 0) || math.IsInf(float64(p.Temperature), 0):
		s.fail("Temperature = %g, want a finite value ≥ 0", p.Temperature)
	case p.TopK < 0:
		s.fail("TopK = %d, want ≥ 0", p.TopK)
	case !(p.TopP >= 0):
		s.fail("TopP = %g, want a value in [0, 1]", p.TopP)
	}
	if s.err != nil || rows == 0 {
		return s.err
	}
	if p.Temperature == 0 {
		if err := Argmax(q, out, logits, rows, cols); err != nil {
			return fmt.Errorf("ops.Sample (greedy): %w", err)
		}
		return nil
	}
	topP := p.TopP
	if topP == 0 {
		topP = 1
	}
	return s.launch(pick[T](sampleK), q, blocks1(rows, rowThreads(cols)),
		bufArg(out), bufArg(logits), intArg(cols), intArg(p.TopK), f32Arg(topP), f32Arg(1/p.Temperature), kern.ScalarArg(p.Seed))
}
