package ops

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/topk"
)

// refTopK is the first k indices of each row in llm/sample's order:
// larger first, ties to the lower index, NaN as -Inf.
func refTopK(x []float64, rows, cols, k int) [][]int32 {
	out := make([][]int32, rows)
	for r := range rows {
		row := x[r*cols : (r+1)*cols]
		v := func(j int32) float64 {
			if math.IsNaN(row[j]) {
				return math.Inf(-1)
			}
			return row[j]
		}
		idx := make([]int32, cols)
		for j := range idx {
			idx[j] = int32(j)
		}
		sort.SliceStable(idx, func(a, b int) bool { return v(idx[a]) > v(idx[b]) })
		out[r] = idx[:k]
	}
	return out
}

// refLSE is log Σ e^x over the row's values other than NaN, in float64,
// as llm/engine's logprobs takes it (NaN where +Inf meets +Inf).
func refLSE(row []float64) float64 {
	m := math.Inf(-1)
	for _, v := range row {
		if !math.IsNaN(v) {
			m = math.Max(m, v)
		}
	}
	s := 0.0
	for _, v := range row {
		if !math.IsNaN(v) && !math.IsInf(v, -1) {
			s += math.Exp(v - m)
		}
	}
	return m + math.Log(s)
}

func TestTopK(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testTopK[float32](t, dev) },
			func(t *testing.T) { testTopK[gpu.Half](t, dev) },
			func(t *testing.T) { testTopK[gpu.BFloat16](t, dev) })
	})
}

func testTopK[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(41, 42))
	for c, sh := range []struct{ rows, cols, k int }{
		{1, 1, 1},
		{3, 7, 7},
		{2, 130, 128},
		{2, topk.Chunk, 20},
		{3, topk.Chunk + 1, 64},     // a second chunk of one element
		{2, 3*topk.Chunk + 77, 128}, // 4 chunks, merged in one
		{1, 40 * topk.Chunk, 128},   // 40 chunks: 5120 keys, merged twice
		{4, 20000, 1},               // greedy's candidate
	} {
		xv := randn(rng, sh.rows*sh.cols, 3)
		for r := range sh.rows {
			row := xv[r*sh.cols : (r+1)*sh.cols]
			switch (r + c) % 4 {
			case 0: // ties across chunks: the lower index first
				for j := range row {
					row[j] = float64(rng.IntN(8))
				}
			case 1: // NaN (as -Inf), ±Inf and a maximum in the last chunk
				row[len(row)/3] = math.NaN()
				row[len(row)/2] = math.Inf(-1)
				row[len(row)-1] = math.Inf(1)
			case 2: // every value equal
				for j := range row {
					row[j] = -2
				}
			}
		}
		x, xs := upload[T](t, dev, xv)
		vals, ids := alloc[float32](t, dev, sh.rows*sh.k), alloc[int32](t, dev, sh.rows*sh.k)
		if err := TopK(dev, vals, ids, x, sh.rows, sh.cols, sh.k); err != nil {
			t.Fatal(err)
		}
		gotV, _ := vals.Download()
		gotI, _ := ids.Download()
		keys := alloc[uint64](t, dev, sh.rows*sh.k)
		if err := TopKPacked(dev, keys, x, sh.rows, sh.cols, sh.k); err != nil {
			t.Fatal(err)
		}
		packed, _ := keys.Download()
		if pv, pid := TopKPairs(packed); len(pv) != len(packed) || len(pid) != len(packed) {
			t.Fatalf("TopKPairs of %d keys: %d values, %d ids", len(packed), len(pv), len(pid))
		} else {
			for i, key := range packed {
				if v, id := TopKPair(key); pv[i] != v || pid[i] != id {
					t.Fatalf("TopKPairs[%d] = (%v, %d), TopKPair gives (%v, %d)", i, pv[i], pid[i], v, id)
				}
			}
		}
		var withLSE []uint64
		if TopKPackedLSEFits(sh.cols, sh.k) {
			lk := alloc[uint64](t, dev, sh.rows*(sh.k+1))
			if err := TopKPackedLSE(dev, lk, x, sh.rows, sh.cols, sh.k); err != nil {
				t.Fatal(err)
			}
			withLSE, _ = lk.Download()
		} else if err := TopKPackedLSE(dev, alloc[uint64](t, dev, sh.rows*(sh.k+1)), x, sh.rows, sh.cols, sh.k); err == nil || !strings.Contains(err.Error(), "do not fit one merge") {
			t.Errorf("%d×%d k=%d: TopKPackedLSE where the keys do not fit one merge: %v", sh.rows, sh.cols, sh.k, err)
		}
		want := refTopK(xs, sh.rows, sh.cols, sh.k)
		for r := range sh.rows {
			for i := range sh.k {
				j := want[r][i]
				wv := float32(xs[r*sh.cols+int(j)])
				if math.IsNaN(float64(wv)) {
					wv = float32(math.Inf(-1))
				}
				if g := gotI[r*sh.k+i]; g != j || gotV[r*sh.k+i] != wv {
					t.Fatalf("%d×%d k=%d: row %d rank %d = (%d, %v), want (%d, %v)", sh.rows, sh.cols, sh.k, r, i, g, gotV[r*sh.k+i], j, wv)
				}
				if v, g := TopKPair(packed[r*sh.k+i]); g != j || v != wv {
					t.Fatalf("%d×%d k=%d, packed: row %d rank %d = (%d, %v), want (%d, %v)", sh.rows, sh.cols, sh.k, r, i, g, v, j, wv)
				}
				if withLSE != nil && withLSE[r*(sh.k+1)+i] != packed[r*sh.k+i] {
					t.Fatalf("%d×%d k=%d, with the log-sum-exp: row %d rank %d differs from TopKPacked's", sh.rows, sh.cols, sh.k, r, i)
				}
			}
			if withLSE != nil {
				got, want := math.Float64frombits(withLSE[r*(sh.k+1)+sh.k]), refLSE(xs[r*sh.cols:(r+1)*sh.cols])
				if !(got == want || math.IsNaN(got) && math.IsNaN(want) || math.Abs(got-want) <= 1e-13*math.Abs(want)) {
					t.Errorf("%d×%d k=%d: row %d log-sum-exp %v, want %v", sh.rows, sh.cols, sh.k, r, got, want)
				}
			}
		}
	}
}

func TestTopKShapeErrors(t *testing.T) {
	dev := kern.OpenNative()
	x := alloc[float32](t, dev, 12)
	vals, ids := alloc[float32](t, dev, 6), alloc[int32](t, dev, 6)
	wantErr(t, "k0", TopK(dev, vals, ids, x, 3, 4, 0), "ops.TopK", "k = 0, want 1 ≤ k ≤ 128")
	wantErr(t, "kbig", TopK(dev, vals, ids, x, 3, 4, 129), "ops.TopK", "k = 129")
	wantErr(t, "ids", TopK(dev, vals, alloc[int32](t, dev, 5), x, 2, 6, 3), "ops.TopK", "ids has 5 elements, want rows×k = 6")
	wantErr(t, "kcols", TopK(dev, vals, ids, x, 3, 1, 2), "ops.TopK", "k = 2, want at most cols = 1")
	wantErr(t, "vals", TopK(dev, vals, ids, x, 3, 4, 3), "ops.TopK", "vals has 6 elements, want rows×k = 9")
	wantErr(t, "x", TopK(dev, vals, ids, x, 3, 5, 2), "ops.TopK", "x has 12 elements, want rows×cols = 15")
	keys := alloc[uint64](t, dev, 5)
	wantErr(t, "keys", TopKPacked(dev, keys, x, 3, 4, 2), "ops.TopKPacked", "keys has 5 elements, want rows×k = 6")
	wantErr(t, "packed k", TopKPacked(dev, keys, x, 1, 12, 129), "ops.TopKPacked", "k = 129")
}
