package qwen3

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
)

// TestPersistentDecodeMatchesReference runs the tiny models' greedy decode
// steps through the persistent layer (mega.go) on the emulator and in
// native mode, its grid capped at 3 blocks so that blocks take several
// projection units and attention items and the small projections split
// along k: logits against transformers' fp32 within the ops path's
// tolerance, and the same greedy tokens.
func TestPersistentDecodeMatchesReference(t *testing.T) {
	for _, v := range testVariants(t) {
		hf := loadHFReference(t, v.dir)
		for _, d := range testDevices {
			t.Run(v.name+"/"+d.name, func(t *testing.T) {
				m, err := Load(d.dev, v.dir, LoadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer m.Free()
				if err := m.UseOps(); err != nil {
					t.Fatal(err)
				}
				if err := m.UsePersistentDecode(true); err != nil {
					t.Fatal(err)
				}
				m.ops.persistentGrid = 3
				cache, err := m.NewCache(32)
				if err != nil {
					t.Fatal(err)
				}
				defer cache.Free()
				V := m.Config.VocabSize
				step := func(name string, ids []int32, want []float32) int32 {
					t.Helper()
					out, err := m.Forward(cache, ids, true)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					got, err := out.Download()
					if err != nil {
						t.Fatal(err)
					}
					if msg, _ := compareRows(got, f64(want), V, opsLogitsRel); msg != "" {
						t.Errorf("%s: logits vs transformers: %s", name, msg)
					}
					return argmax(got[len(got)-V:])
				}
				tok := step("prefill", hf.prompt, hf.prefill)
				S := len(hf.decode) / V
				for s := 0; s < S; s++ {
					if tok != hf.generated[s] {
						t.Fatalf("greedy token %d = %d, want %d", s, tok, hf.generated[s])
					}
					tok = step(fmt.Sprintf("decode %d", s), []int32{tok}, hf.decode[s*V:(s+1)*V])
				}
				if tok != hf.generated[S] {
					t.Errorf("greedy token %d = %d, want %d", S, tok, hf.generated[S])
				}
				if m.ops.persistentSteps != S {
					t.Errorf("%d decode steps ran the persistent layer, want %d", m.ops.persistentSteps, S)
				}
			})
		}
	}
}

// megaRel is the persistent layer's tolerance against the ops path (in
// compareRows' units, relative to |want| + the row's rms). Both round to
// bf16 at the same points and sum in different orders, and the attention
// weights stay float32 here where PagedAttention rounds them to bf16 for
// its P·V product; an element that lands on the other side of a bf16
// rounding boundary compounds through the random model's gains. Measured
// on the d128 model: 1.2e-2 at worst over the steps, and the ops path
// itself is as far (0.9–1.2e-2) from the float32 path, to which the
// persistent layer is closer (0.8–1.1e-2). An indexing or scaling error
// is O(1).
const megaRel = 2e-2

// TestPersistentDecodeLongContext decodes across attention splits and
// chunks: random weights at head dim 64 (the cache unpadded) and 128, 4
// query heads per KV head, a 118-token prompt and 15 decode steps from a
// graph (positions 118 to 133: with a 4-block grid, 2 splits of 64 keys,
// then of 128 from 129 on, the second's one chunk partial), the
// persistent layer against the ops path's six launches a layer. On a GPU
// (-tags gpu) the grid is the device's, captured in a CUDA graph.
func TestPersistentDecodeLongContext(t *testing.T) {
	for _, td := range testDevices {
		if td.name == "native" {
			continue // as the emulator, a grid of goroutines
		}
		// The third case: o_proj's k = 2048 at a 3-block grid takes 2
		// k-slices, two units a block at once (megaGEMV's pair with
		// slices), as Qwen3-4B's o_proj does on an H100.
		for _, c := range []struct{ hdim, heads, kvHeads, grid int }{{64, 8, 2, 4}, {128, 8, 2, 4}, {128, 16, 4, 3}} {
			t.Run(fmt.Sprintf("%s/d%d/h%d", td.name, c.hdim, c.heads), func(t *testing.T) {
				cfg := Presets["tiny"]
				cfg.HeadDim, cfg.NumAttentionHeads, cfg.NumKeyValueHeads = c.hdim, c.heads, c.kvHeads
				cfg.MaxPositionEmbeddings = 256
				if c.heads == 16 {
					if p := planMega(cfg, c.grid, megaMaxSeqs(cfg)); p.ks[1] != 2 || p.pairs&2 == 0 {
						t.Fatalf("o_proj's plan at grid %d: split %d, pairs %b; want 2 slices in pairs", c.grid, p.ks[1], p.pairs)
					}
				}
				dev := td.dev
				open := func(persistent bool) *Model {
					m := randomOps(t, dev, cfg, 11, true)
					if persistent {
						grid := 0 // on a GPU, the whole grid
						if td.name == "emu" {
							grid = c.grid
						}
						persist(t, m, grid)
					}
					return m
				}
				ref, got := open(false), open(true)
				rc, err := ref.NewCache(160)
				if err != nil {
					t.Fatal(err)
				}
				defer rc.Free()
				gc, err := got.NewCache(160)
				if err != nil {
					t.Fatal(err)
				}
				defer gc.Free()
				V := cfg.VocabSize
				ids := make([]int32, 118)
				for i := range ids {
					ids[i] = int32((i*37 + 5) % V)
				}
				worst := 0.0
				for s := 0; s < 16; s++ {
					logits := func(m *Model, c *Cache) []float32 {
						out, err := m.Forward(c, ids, false)
						if err != nil {
							t.Fatalf("step %d: %v", s, err)
						}
						x, err := out.Download()
						if err != nil {
							t.Fatal(err)
						}
						return x
					}
					w, g := logits(ref, rc), logits(got, gc)
					msg, share := compareRows(g, f64(w), V, megaRel)
					if msg != "" {
						t.Errorf("step %d: persistent layer vs the ops path: %s", s, msg)
					}
					worst = max(worst, share)
					if argmax(g) != argmax(w) {
						t.Fatalf("step %d: greedy token %d persistent, %d on the ops path", s, argmax(g), argmax(w))
					}
					ids = []int32{argmax(w)}
				}
				t.Logf("logits within %.0f%% of %.0e of the ops path's", 100*worst, megaRel)
				if got.GraphReplays() == 0 || got.ops.persistentSteps != 15 {
					t.Errorf("%d decode steps replayed from a graph, %d ran the persistent layer (want 15)", got.GraphReplays(), got.ops.persistentSteps)
				}
			})
		}
	}
}

// TestPlanMega checks the launch plan at an H100's grid for Qwen3-0.6B
// and 4B: k-splits that keep every block busy where a projection has
// fewer tiles than blocks, slices long enough to keep loads in flight,
// and one round of attention items.
func TestPlanMega(t *testing.T) {
	for _, name := range []string{"qwen3-0.6b", "qwen3-4b"} {
		cfg, ok := Presets[name]
		if !ok {
			t.Fatalf("no preset %q", name)
		}
		p := planMega(cfg, 132, megaMaxSeqs(cfg))
		shapes := [4][2]int{{cfg.QDim() + 2*cfg.KVDim(), cfg.HiddenSize}, {cfg.HiddenSize, cfg.QDim()}, {2 * cfg.IntermediateSize, cfg.HiddenSize}, {cfg.HiddenSize, cfg.IntermediateSize}}
		var notes []string
		for i, s := range shapes {
			tiles, ks := s[0]/16, p.ks[i]
			units := tiles * ks
			rounds := (units + p.grid - 1) / p.grid
			eff := float64(units) / float64(rounds*p.grid)
			notes = append(notes, fmt.Sprintf("%dx%d: %d tiles, split %d, %.0f%% busy", s[0], s[1], tiles, ks, 100*eff))
			if eff < 0.8 {
				t.Errorf("%s %dx%d: split %d keeps %.0f%% of the grid busy", name, s[0], s[1], ks, 100*eff)
			}
			if ks > 1 && s[1]/32/ks < megaUnroll*megaWarps/2 {
				t.Errorf("%s %dx%d: split %d leaves %d chunks a slice", name, s[0], s[1], ks, s[1]/32/ks)
			}
			if p.part < units*16*p.maxS || p.cnt < tiles {
				t.Errorf("%s: scratch %d/%d short of %d units of %d tiles", name, p.part, p.cnt, units, tiles)
			}
		}
		if items := cfg.NumKeyValueHeads * p.nsplit; items > p.grid || items <= p.grid-cfg.NumKeyValueHeads {
			t.Errorf("%s: %d attention items for %d blocks", name, items, p.grid)
		}
		t.Logf("%s: %s", name, strings.Join(notes, "; "))
	}
}

// TestPersistentDecodeRefusals: a model the layer cannot run is refused
// by name, before any launch.
func TestPersistentDecodeRefusals(t *testing.T) {
	cfg := Presets["tiny"]
	m, err := NewRandom(testDevices[0].dev, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if err := m.UsePersistentDecode(true); err == nil || !strings.Contains(err.Error(), "UseOps") {
		t.Errorf("before UseOps: %v", err)
	}
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.HeadDim = 256 }, "head dim 256"},
		{func(c *Config) { c.NumAttentionHeads, c.NumKeyValueHeads = 32, 2 }, "16 query heads per KV head"},
		{func(c *Config) { c.IntermediateSize = 16384 }, "projection input of 16384"},
	} {
		bad := cfg
		c.edit(&bad)
		if err := megaFits(bad, 128); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %q", bad, err, c.want)
		}
	}
}

// TestPersistentDecodeBadPage: the kernel is nobounds, so the indices it
// reads from memory are checked on the device: a block table entry that
// is not a page of the cache ends the step with a *kern.DeviceError
// naming it, on the emulator and in native mode.
func TestPersistentDecodeBadPage(t *testing.T) {
	for _, d := range testDevices[:2] { // a GPU's trap would poison the shared device
		t.Run(d.name, func(t *testing.T) {
			m := randomOps(t, d.dev, Presets["tiny"], 3, false)
			persist(t, m, 2)
			cache, err := m.NewCache(64)
			if err != nil {
				t.Fatal(err)
			}
			defer cache.Free()
			ids := make([]int32, DefaultPageSize+4) // the next token's page is the second
			if _, err := m.Forward(cache, ids, false); err != nil {
				t.Fatal(err)
			}
			cache.pages[0] = 1 << 20
			_, err = m.Forward(cache, []int32{1}, false)
			var de *kern.DeviceError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), "block table entry") {
				t.Fatalf("decode over a bad page: %v, want a device error naming the block table entry", err)
			}
		})
	}
}

// TestPersistentDecodeBatch: a decode step of several sequences through
// the persistent layer gives each sequence the bits of the same step taken
// alone (nothing in the layer depends on the step's sequence count: the
// mma's columns are independent, the plan and a sequence's splits are
// fixed), over sequences of different lengths in split and unsplit
// attention, and stays within megaRel of the ops path's batched step.
// A step of more sequences than the layer takes runs the ops path.
func TestPersistentDecodeBatch(t *testing.T) {
	cfg := Presets["tiny"]
	cfg.HeadDim, cfg.NumAttentionHeads, cfg.NumKeyValueHeads = 64, 8, 2
	cfg.MaxPositionEmbeddings = 256
	dev := testDevices[0].dev
	open := func(persistent bool) *Model {
		m := randomOps(t, dev, cfg, 5, false)
		if persistent {
			persist(t, m, 3)
		}
		return m
	}
	V := cfg.VocabSize
	lens := []int{3, 20, 70, 1, 130}
	prompt := func(i int) []int32 {
		p := make([]int32, lens[i])
		for j := range p {
			p[j] = int32((i*131 + j*17 + 1) % V)
		}
		return p
	}
	tok := func(i, step int) []int32 { return []int32{int32((400 + 7*i + step) % V)} }
	// run prefills every sequence alone, then takes decode steps of the
	// batches given, returning each sequence's logits per step.
	run := func(m *Model, batches [][]int) map[[2]int][]float32 {
		pool, err := m.NewKVPool(64, 16)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Free()
		seqs := make([]*Seq, len(lens))
		for i := range seqs {
			seqs[i] = pool.NewSeq()
			if _, err := m.ForwardBatch([]*Seq{seqs[i]}, [][]int32{prompt(i)}); err != nil {
				t.Fatal(err)
			}
		}
		out := map[[2]int][]float32{}
		step := make([]int, len(lens))
		for _, batch := range batches {
			var ss []*Seq
			var in [][]int32
			for _, i := range batch {
				ss = append(ss, seqs[i])
				in = append(in, tok(i, step[i]))
			}
			o, err := m.ForwardBatch(ss, in)
			if err != nil {
				t.Fatal(err)
			}
			xs, err := o.Download()
			if err != nil {
				t.Fatal(err)
			}
			for r, i := range batch {
				out[[2]int{i, step[i]}] = xs[r*V : (r+1)*V]
				step[i]++
			}
		}
		for _, s := range seqs {
			s.Release()
		}
		return out
	}
	var solo [][]int
	for s := 0; s < 2; s++ {
		for i := range lens {
			solo = append(solo, []int{i})
		}
	}
	batched := [][]int{{0, 1, 2, 3, 4}, {4, 2, 0}, {1, 3}}
	mp := open(true)
	want := run(mp, solo)
	before := mp.ops.persistentSteps
	got := run(mp, batched)
	// The batched steps, and sequence 3's one-token prompt: a step of one
	// token per sequence is a decode step, at position 0 too.
	if n := mp.ops.persistentSteps - before; n != len(batched)+1 {
		t.Errorf("%d steps ran the persistent layer, want %d", n, len(batched)+1)
	}
	ops := run(open(false), batched)
	for k, w := range want {
		g := got[k]
		for j := range w {
			if g[j] != w[j] {
				t.Fatalf("sequence %d step %d: logit %d is %g batched, %g alone", k[0], k[1], j, g[j], w[j])
			}
		}
		if msg, _ := compareRows(g, f64(ops[k]), V, megaRel); msg != "" {
			t.Errorf("sequence %d step %d: persistent vs the ops path: %s", k[0], k[1], msg)
		}
	}
}

// randomOps is a random model of cfg's shape on the ops path (decode
// graphs on if graphs), freed with the test.
func randomOps(t *testing.T, dev *kern.Device, cfg Config, seed uint64, graphs bool) *Model {
	t.Helper()
	m, err := NewRandom(dev, cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Free)
	if err := m.UseOps(); err != nil {
		t.Fatal(err)
	}
	if graphs {
		if err := m.EnableGraphs(); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// persist turns m's persistent decode layer on, its grid capped at grid
// blocks (0: the device's).
func persist(t *testing.T, m *Model, grid int) {
	t.Helper()
	if err := m.UsePersistentDecode(true); err != nil {
		t.Fatal(err)
	}
	m.ops.persistentGrid = grid
}

// TestPersistentSequences: Qwen3 up to 8B takes 8 sequences a step
// within megaSharedBytes, which with the static arrays stays within an
// sm_90 block's 227 KiB.
func TestPersistentSequences(t *testing.T) {
	for _, name := range []string{"qwen3-0.6b", "qwen3-4b"} {
		if n := megaMaxSeqs(Presets[name]); n != megaMaxS {
			t.Errorf("%s: %d sequences a step, want %d", name, n, megaMaxS)
		}
	}
	c8 := Presets["qwen3-4b"]
	c8.HiddenSize, c8.IntermediateSize = 4096, 12288 // Qwen3-8B's inputs
	if n := megaMaxSeqs(c8); n != megaMaxS {
		t.Errorf("Qwen3-8B's shapes: %d sequences a step, want %d", n, megaMaxS)
	}
	if megaSharedBytes+megaLayerBF16Kernel.Kernel().Spec().SharedBytes > 227*1024 {
		t.Errorf("%d bytes of dynamic and %d of static shared memory: over 227 KiB", megaSharedBytes, megaLayerBF16Kernel.Kernel().Spec().SharedBytes)
	}
}

// TestPersistentProfile runs a decode step of 1 and of 8 sequences
// through the persistent layer under the emulator's profiler: no shared
// access of the layer has a bank conflict (the warp sums' and the
// inputs' row strides, megaRed and megaRow), and the projections' weight
// loads use every byte of the sectors they move.
func TestPersistentProfile(t *testing.T) {
	cfg := Presets["tiny"]
	cfg.HiddenSize, cfg.IntermediateSize, cfg.HeadDim, cfg.NumAttentionHeads, cfg.NumKeyValueHeads = 256, 512, 128, 4, 2
	for _, S := range []int{1, 8} {
		p := emu.NewProfile()
		m := randomOps(t, kern.OpenEmulator(emu.Options{Observer: p}), cfg, 1, false)
		persist(t, m, 4)
		pool, err := m.NewKVPool(64, 16)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []*Seq
		var in [][]int32
		for i := 0; i < S; i++ {
			s := pool.NewSeq()
			if _, err := m.ForwardBatch([]*Seq{s}, [][]int32{make([]int32, 20+i)}); err != nil {
				t.Fatal(err)
			}
			seqs, in = append(seqs, s), append(in, []int32{int32(i)})
		}
		if _, err := m.ForwardBatch(seqs, in); err != nil {
			t.Fatal(err)
		}
		shared, weights := 0, 0
		for _, s := range p.Stats() {
			if !strings.HasPrefix(s.Kernel, "megaLayer") {
				continue
			}
			if s.SharedRequests > 0 {
				shared++
				if s.BankConflicts() > 0 {
					t.Errorf("%d sequences: %s:%d %s: %d bank conflicts in %d requests", S, s.File, s.GoLine, s.Instr, s.BankConflicts(), s.SharedRequests)
				}
			}
			if s.GlobalRequests > 0 && strings.Contains(s.Instr, "L2::256B.v4") {
				weights++
				if e := s.SectorEfficiency(); e != 1 {
					t.Errorf("%d sequences: %s:%d %s: sector efficiency %.2f", S, s.File, s.GoLine, s.Instr, e)
				}
			}
		}
		if shared == 0 || weights == 0 {
			t.Fatalf("%d sequences: %d shared and %d weight-load instructions profiled", S, shared, weights)
		}
		pool.Free()
	}
}
