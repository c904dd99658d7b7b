package qwen3

import (
	"fmt"
	"math"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/internal/fixture"
)

var testDevices = []struct {
	name string
	dev  *kern.Device
}{
	{"emu", kern.OpenEmulator()},
	{"native", kern.OpenNative()},
}

type variant struct{ name, dir string }

func testVariants(t *testing.T) []variant {
	var vs []variant
	for _, name := range fixture.Variants {
		vs = append(vs, variant{name, fixture.Model(t, name)})
	}
	return vs
}

// logitsRel is the acceptance tolerance on logits: relative to
// |ref| + the row's rms (see compareRows), against transformers' fp32
// compute over the same bf16 weights.
const logitsRel = 2e-3

// stageRel is the per-stage tolerance against the float64 reference:
// float32 compute over a few hundred-term sums is good to ~1e-6; 1e-4
// leaves room and still catches any wrong index or missing scale.
const stageRel = 1e-4

// TestForwardMatchesReference runs prefill and the greedy decode steps of
// every tiny model on every test device, with the engine's matmul and
// with OpsMatmul (ops.Matmul over split activations), checks every stage of every
// layer against the float64 reference (a failure names the layer), the
// logits against transformers' within logitsRel, and the greedy tokens.
func TestForwardMatchesReference(t *testing.T) {
	for _, v := range testVariants(t) {
		hf := loadHFReference(t, v.dir)
		for _, d := range testDevices {
			for _, mm := range []string{"warp", "ops"} {
				t.Run(v.name+"/"+d.name+"/"+mm, func(t *testing.T) {
					m, err := Load(d.dev, v.dir, LoadOptions{})
					if err != nil {
						t.Fatal(err)
					}
					defer m.Free()
					if mm == "ops" { // the projections on ops.Matmul (opsmatmul.go)
						o := &OpsMatmul{}
						defer o.Free()
						m.Matmul = o
					}
					ref := loadRef(t, v.dir)
					V := m.Config.VocabSize
					cache, err := m.NewCache(32)
					if err != nil {
						t.Fatal(err)
					}
					defer cache.Free()

					var failed []string
					m.Trace = func(stage string, layer int, x *kern.Buffer[float32], rows, cols int) error {
						got, err := x.Download()
						if err != nil {
							return err
						}
						want := ref.stages[fmt.Sprintf("%d/%s", layer, stage)]
						if msg, _ := compareRows(got, want, cols, stageRel); msg != "" {
							failed = append(failed, fmt.Sprintf("layer %d %s: %s", layer, stage, msg))
						}
						return nil
					}
					// The reference runs first so its stages are there when
					// the engine's trace compares.
					step := func(name string, ids []int32, hfLogits []float32) int32 {
						t.Helper()
						ref.forward(ids)
						failed = nil
						out, err := m.Forward(cache, ids, true)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						for _, f := range failed {
							t.Errorf("%s: %s", name, f)
						}
						got, err := out.Download()
						if err != nil {
							t.Fatal(err)
						}
						want := f64(hfLogits)
						msg, share := compareRows(got, want, V, logitsRel)
						if msg != "" {
							t.Errorf("%s: logits vs transformers: %s", name, msg)
						} else if testing.Verbose() {
							t.Logf("%s: logits within %.2g%% of the 2e-3 tolerance", name, 100*share)
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
				})
			}
		}
	}
}

// TestLastLogitsOnly checks Forward(all=false) returns the last row of
// Forward(all=true) for the same positions.
func TestLastLogitsOnly(t *testing.T) {
	dir := fixture.Model(t, "tiny-qwen3-hd32")
	dev := testDevices[0].dev
	m, err := Load(dev, dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	ids := []int32{5, 9, 200, 31}
	run := func(all bool) []float32 {
		c, err := m.NewCache(8)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Free()
		out, err := m.Forward(c, ids, all)
		if err != nil {
			t.Fatal(err)
		}
		xs, err := out.Download()
		if err != nil {
			t.Fatal(err)
		}
		return xs
	}
	full, last := run(true), run(false)
	V := m.Config.VocabSize
	for j := range last {
		if d := math.Abs(float64(last[j] - full[len(full)-V+j])); d > 1e-5 {
			t.Fatalf("logit %d: last-only %g, full %g", j, last[j], full[len(full)-V+j])
		}
	}
}
