package ops

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/gpu"
)

func TestEmbedding(t *testing.T) {
	eachDevice(t, func(t *testing.T, dev *kern.Device) {
		eachType(t,
			func(t *testing.T) { testEmbedding[float32](t, dev) },
			func(t *testing.T) { testEmbedding[gpu.Half](t, dev) },
			func(t *testing.T) { testEmbedding[gpu.BFloat16](t, dev) })
	})
}

func testEmbedding[T Float](t *testing.T, dev *kern.Device) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, c := range []struct{ vocab, dim, n int }{{1, 1, 1}, {50, 7, 9}, {1000, 64, 33}, {300, 1000, 3}} {
		table, ts := upload[T](t, dev, randn(rng, c.vocab*c.dim, 1))
		ids := make([]int32, c.n)
		for j := range ids {
			ids[j] = int32(rng.IntN(c.vocab))
		}
		ids[0] = int32(c.vocab - 1) // the last row
		idBuf, err := kern.Upload(dev, ids)
		if err != nil {
			t.Fatal(err)
		}
		out := alloc[T](t, dev, c.n*c.dim)
		if err := Embedding(dev, out, table, idBuf, c.vocab, c.dim); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, 0, c.n*c.dim)
		for _, id := range ids {
			want = append(want, ts[int(id)*c.dim:(int(id)+1)*c.dim]...)
		}
		compare(t, fmt.Sprintf("%+v out", c), download(t, out), want, tol{}, nil)
	}
}

// TestEmbeddingBadID checks that an id outside [0, vocab) fails the launch
// with an error giving the id and the vocabulary size.
func TestEmbeddingBadID(t *testing.T) {
	const vocab, dim = 10, 4
	for _, bad := range []int32{vocab, 1 << 20, -1} {
		eachDevice(t, func(t *testing.T, dev *kern.Device) {
			table := alloc[float32](t, dev, vocab*dim)
			ids, err := kern.Upload(dev, []int32{3, bad, 2})
			if err != nil {
				t.Fatal(err)
			}
			out := alloc[float32](t, dev, 3*dim)
			err = Embedding(dev, out, table, ids, vocab, dim)
			if err == nil {
				err = dev.Sync() // a GPU reports device errors at the next Sync
			}
			var de *kern.DeviceError
			switch {
			case err == nil:
				t.Fatalf("id %d: no error", bad)
			case errors.As(err, &de):
				// Native mode cannot know the length of a negative index
				// (Go's panic omits it) and says -1.
				unknown := dev.Kind() == "native" && bad < 0 && de.Length == -1
				if de.Index != int64(bad) || (de.Length != vocab && !unknown) {
					t.Errorf("id %d: device error for index %d length %d, want %d and %d: %v", bad, de.Index, de.Length, bad, vocab, err)
				}
			case dev.Kind() == "native":
				wantErr(t, "native", err, "ops.Embedding", "embed.go", fmt.Sprintf("index out of range [%d]", bad))
			default:
				t.Errorf("id %d: %v, want a *kern.DeviceError", bad, err)
			}
		})
	}
}

func TestEmbeddingShapeErrors(t *testing.T) {
	dev := kern.OpenNative()
	table, out := alloc[gpu.Half](t, dev, 40), alloc[gpu.Half](t, dev, 8)
	ids := alloc[int32](t, dev, 2)
	wantErr(t, "table", Embedding(dev, out, table, ids, 11, 4), "ops.Embedding", "table has 40 elements, want vocab×dim = 44")
	wantErr(t, "out", Embedding(dev, out, table, ids, 8, 5), "ops.Embedding", "out has 8 elements, want ids.Len()×dim = 10")
	wantErr(t, "ids", Embedding(dev, out, table, nil, 10, 4), "ops.Embedding", "ids is nil")
	wantErr(t, "dim", Embedding(dev, out, table, ids, 10, 0), "ops.Embedding", "dim = 0")
}
