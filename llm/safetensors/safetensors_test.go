package safetensors

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gokern/kern/internal/fixture"
)

func f32Bytes(xs ...float32) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func bf16Bytes(xs ...float32) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint16(b, uint16(math.Float32bits(x)>>16))
	}
	return b
}

func f16Bytes(xs ...uint16) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint16(b, x)
	}
	return b
}

func sample(t *testing.T) []byte {
	t.Helper()
	img, err := Encode(map[string]Entry{
		"a.weight": {F32, []int{2, 2}, f32Bytes(1, -2, 3.5, 0)},
		"b.weight": {BF16, []int{3}, bf16Bytes(1, -0.5, 256)},
		"c.weight": {F16, []int{2}, f16Bytes(0x3c00, 0xc000)}, // 1, -2
	})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestRoundTripDTypes(t *testing.T) {
	f, err := Parse("mem", sample(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{"a.weight": {1, -2, 3.5, 0}, "b.weight": {1, -0.5, 256}, "c.weight": {1, -2}}
	for name, w := range want {
		got, err := f.Tensor(name).Float32()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(w) {
			t.Fatalf("%s: %d elements, want %d", name, len(got), len(w))
		}
		for i := range w {
			if got[i] != w[i] {
				t.Errorf("%s[%d] = %g, want %g", name, i, got[i], w[i])
			}
		}
	}
	if err := f.Tensor("a.weight").CheckShape(2, 2); err != nil {
		t.Error(err)
	}
	if err := f.Tensor("a.weight").CheckShape(4); err == nil || !strings.Contains(err.Error(), `"a.weight"`) {
		t.Errorf("CheckShape(4) = %v, want an error naming a.weight", err)
	}
	if _, err := f.Tensor("a.weight").BFloat16(); err == nil {
		t.Error("BFloat16 of an F32 tensor: no error")
	}
}

// corrupt writes img to a file and requires Open to fail with an error
// containing the file name and every string in want.
func corrupt(t *testing.T, name string, img []byte, want ...string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err == nil {
		f.Close()
		t.Fatalf("%s: Open succeeded on a corrupt file", name)
	}
	for _, w := range append(want, name) {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not mention %q", name, err, w)
		}
	}
}

func header(t *testing.T, h string, data int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(b, h...), make([]byte, data)...)
}

func TestCorruptFiles(t *testing.T) {
	good := sample(t)
	corrupt(t, "empty.safetensors", nil, "too short")
	corrupt(t, "truncated.safetensors", good[:len(good)-3], "truncated", `"c.weight"`)
	corrupt(t, "cut-header.safetensors", good[:20], "truncated")
	corrupt(t, "huge-header.safetensors", binary.LittleEndian.AppendUint64(nil, 1<<40), "header length")
	corrupt(t, "bad-json.safetensors", header(t, `{"a": [}`, 0), "bad JSON")
	corrupt(t, "bad-dtype.safetensors", header(t, `{"w":{"dtype":"F8X","shape":[1],"data_offsets":[0,1]}}`, 1), `"w"`, "dtype")
	corrupt(t, "bad-shape.safetensors", header(t, `{"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,16]}}`, 16), `"w"`, "[2 3]")
	corrupt(t, "neg-shape.safetensors", header(t, `{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, 4), `"w"`, "negative")
	corrupt(t, "bad-offsets.safetensors", header(t, `{"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}}`, 8), `"w"`, "interval")
	corrupt(t, "overlap.safetensors", header(t, `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"v":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), "overlap")
	corrupt(t, "entry.safetensors", header(t, `{"w":{"dtype":"F32","shape":"x","data_offsets":[0,4]}}`, 4), `"w"`)
	if _, err := Open(filepath.Join(t.TempDir(), "missing.safetensors")); err == nil {
		t.Error("Open of a missing file: no error")
	}
}

func TestShardedDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, e map[string]Entry) {
		img, err := Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), img, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("model-00001-of-00002.safetensors", map[string]Entry{"x": {F32, []int{1}, f32Bytes(7)}})
	write("model-00002-of-00002.safetensors", map[string]Entry{"y": {BF16, []int{1}, bf16Bytes(3)}})
	index := `{"metadata":{},"weight_map":{"x":"model-00001-of-00002.safetensors","y":"model-00002-of-00002.safetensors"}}`
	if err := os.WriteFile(filepath.Join(dir, IndexName), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, want := range map[string]float32{"x": 7, "y": 3} {
		tn, err := s.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := tn.Float32()
		if v[0] != want {
			t.Errorf("%s = %v, want %g", name, v, want)
		}
	}
	if _, err := s.Tensor("z"); err == nil || !strings.Contains(err.Error(), `"z"`) {
		t.Errorf("missing tensor: %v", err)
	}

	// An index naming the wrong shard is an error naming the tensor.
	bad := `{"weight_map":{"x":"model-00002-of-00002.safetensors","y":"model-00002-of-00002.safetensors"}}`
	if err := os.WriteFile(filepath.Join(dir, IndexName), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDir(dir); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("wrong shard: %v", err)
	}
}

// TestTinyModel opens a real checkpoint written by transformers.
func TestTinyModel(t *testing.T) {
	s, err := OpenDir(fixture.Model(t, "tiny-qwen3-untied"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := s.Tensor("model.embed_tokens.weight")
	if err != nil {
		t.Fatal(err)
	}
	if w.DType != BF16 || w.CheckShape(1000, 64) != nil {
		t.Errorf("embed_tokens: %s %v, want BF16 [1000 64]", w.DType, w.Shape)
	}
	if !s.Has("lm_head.weight") {
		t.Error("untied model has no lm_head.weight")
	}
}
