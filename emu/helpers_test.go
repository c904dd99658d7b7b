package emu

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// loadTestdata reads and loads testdata/name.
func loadTestdata(t testing.TB, name string) *Module {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(src)
	if err != nil {
		t.Fatalf("Load(%s): %v", name, err)
	}
	return m
}

// params packs kernel arguments at their natural alignment.
type params []byte

func (p params) align(n int) params {
	for len(p)%n != 0 {
		p = append(p, 0)
	}
	return p
}

func (p params) u64(v uint64) params { return binary.LittleEndian.AppendUint64(p.align(8), v) }
func (p params) u32(v uint32) params { return binary.LittleEndian.AppendUint32(p.align(4), v) }
func (p params) f32(v float32) params {
	return binary.LittleEndian.AppendUint32(p.align(4), math.Float32bits(v))
}

// upload allocates and fills device memory.
func upload(t testing.TB, d *Device, b []byte) uint64 {
	t.Helper()
	a, err := d.Alloc(len(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Write(a, b); err != nil {
		t.Fatal(err)
	}
	return a
}

func download(t testing.TB, d *Device, a uint64, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if err := d.Read(a, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func u32bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func bytesU32(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func u64bytes(v []uint64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

func bytesU64(b []byte) []uint64 {
	v := make([]uint64, len(b)/8)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return v
}
