package ops

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gokern/kern"
	"github.com/gokern/kern/emu"
	"github.com/gokern/kern/gpu"
	"github.com/gokern/kern/ops/internal/gemv3"
)

// sm90Emu is an emulator with an H100's 227 KiB of shared memory per
// block, which v3's 128×256 tile needs (two stages and the epilogue
// staging are 128 KiB; the default emulator allows 99 KiB).
var sm90Emu = kern.OpenEmulator(emu.Options{MaxSharedPerBlock: emu.MaxSharedPerBlockSM90})

// TestHopperPick: v3 replaces v2, in either layout, exactly where the
// Hopper kernels apply (hopperKernels: compute capability 9.0, or the
// emulator with forceHopper); with W[N,K] it is the 128×256 tile where
// the device has the shared memory for it and MatmulHopperTile (by
// default: the shape, against the SM count) does not ask for 128×128,
// and B[K,N] is always 128×128.
func TestHopperPick(t *testing.T) {
	emu := testDevices[0].dev
	for _, v := range []int{mmV1, mmGEMV, mmGEMVv1, mmV2} {
		if got := hopperPick(v, emu, WeightNK, 4096, 4096); got != v {
			t.Errorf("hopperPick(%d) without forceHopper = %d", v, got)
		}
	}
	for _, d := range testDevices {
		if d.dev.Kind() != "cuda" && hopperKernels(d.dev) {
			t.Errorf("hopperKernels(%s) without forceHopper", d.dev)
		}
	}
	forceHopper = true
	defer func() { forceHopper, MatmulHopperTile = false, HopperTileAuto }()
	if !hopperKernels(emu) {
		t.Error("hopperKernels(emulator) with forceHopper = false")
	}
	for _, c := range []struct {
		dev  *kern.Device
		tile HopperTile
		lay  BLayout
		m    int
		want string
	}{
		{emu, HopperTileAuto, WeightNK, 200, "v3 sm_90a 128x128"}, // 99 KiB: no room for 128×256
		{emu, HopperTile128x256, WeightNK, 200, "v3 sm_90a 128x128"},
		{emu, HopperTileAuto, RowMajorKN, 200, "v3 sm_90a 128x128"},
		{sm90Emu, HopperTileAuto, WeightNK, 200, "v3 sm_90a 128x256"}, // the emulator reports 0 SMs
		{sm90Emu, HopperTile128x256, WeightNK, 200, "v3 sm_90a 128x256"},
		{sm90Emu, HopperTile128x256RowMajor, WeightNK, 200, "v3 sm_90a 128x256 rowmajor"},
		{sm90Emu, HopperTile128x128, WeightNK, 200, "v3 sm_90a 128x128"},
		{sm90Emu, HopperTile(99), WeightNK, 200, "v3 sm_90a 128x256"}, // unknown: auto
		{sm90Emu, HopperTileAuto, RowMajorKN, 200, "v3 sm_90a 128x128"},
		{sm90Emu, HopperTile128x256, RowMajorKN, 200, "v3 sm_90a 128x128"},
		{sm90Emu, HopperTileAuto, WeightNK, 4, "gemv v2"},
	} {
		MatmulHopperTile = c.tile
		if got := MatmulVersion(c.dev, c.m, 136, 72, c.lay); got != c.want {
			t.Errorf("%s, %v, %v: MatmulVersion %q, want %q", c.dev, c.tile, c.lay, got, c.want)
		}
	}
	MatmulHopperTile = HopperTileAuto
	forceHopper = false
	if hopperKernels(nil) {
		t.Error("hopperKernels(nil)")
	}
	for _, c := range []struct {
		dev     *kern.Device
		v, want int
	}{{emu, mmHopper, 2}, {emu, mmHopperWide, 1}, {sm90Emu, mmHopper, 4}, {sm90Emu, mmHopperWide, 4}} {
		if got := hopperStages(c.dev, c.v); got != c.want {
			t.Errorf("hopperStages(%s with %d bytes of shared memory, v%d) = %d, want %d", c.dev, c.dev.Limits().MaxSharedPerBlock, c.v, got, c.want)
		}
	}
	if got := hopperBlocks(emu, 6); got != 1 {
		t.Errorf("hopperBlocks on the emulator = %d, want 1 (one persistent block)", got)
	}
}

// TestMatmulVersionAgrees checks that MatmulVersion names what
// matmulCheck chooses, on every test shape, with GEMVv1 and GEMVv3 off
// and on (GEMVv1 wins over GEMVv3).
func TestMatmulVersionAgrees(t *testing.T) {
	dev := testDevices[0].dev
	names := map[int]string{mmV1: "v1", mmGEMV: "gemv v2", mmGEMVv1: "gemv v1"}
	t.Cleanup(func() { GEMVv1, GEMVv3 = false, false })
	for _, knobs := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		old, v3 := knobs[0], knobs[1]
		GEMVv1, GEMVv3 = old, v3
		for _, sh := range matmulShapes {
			for _, lay := range []BLayout{WeightNK, RowMajorKN} {
				a, _ := kern.Alloc[gpu.BFloat16](dev, sh.m*sh.k)
				b, _ := kern.Alloc[gpu.BFloat16](dev, sh.n*sh.k)
				c, _ := kern.Alloc[float32](dev, sh.m*sh.n)
				v, err := matmulCheck(newShape("test"), c, a, b, sh.m, sh.n, sh.k, MatmulOpts[float32]{Layout: lay})
				if err != nil {
					t.Fatal(err)
				}
				if want := (sh.m <= 16 && sh.k%8 == 0 && lay == WeightNK); want != (v == mmGEMV || v == mmGEMVv1 || v == mmGEMVv3) ||
					(want && (old != (v == mmGEMVv1) || (v3 && !old) != (v == mmGEMVv3))) {
					t.Errorf("%v %v GEMVv1=%v GEMVv3=%v: matmulCheck chose version %d", sh, lay, old, v3, v)
				}
				want, ok := names[v]
				if v == mmGEMVv3 {
					want, ok = fmt.Sprintf("gemv v3 split %d", gemv3.Splits(0, sh.n, sh.k)), true
				}
				if !ok {
					want = "v2 " + pickConfig(sh.m, sh.n).name
				}
				if got := MatmulVersion(dev, sh.m, sh.n, sh.k, lay); got != want {
					t.Errorf("%v %v: MatmulVersion %q, matmulCheck chose %q", sh, lay, got, want)
				}
			}
		}
	}
}

// TestMatmulHopperOnTheStubDriver runs Matmul on the stub libcuda's
// second device, which reports compute capability 9.0: Matmul must pick
// v3, build both tensor maps through cuTensorMapEncodeTiled, load the
// sm_90a module (the architecture check passes only on 9.0) and launch
// it with more than 48 KiB of dynamic shared memory. A second stub
// without cuTensorMapEncodeTiled (a pre-12.0 driver) must make Matmul
// fall back to v2. The stub runs no kernel, so only the plumbing is
// checked; emu checks the numbers. The driver is loaded once per process:
// each case runs in a child process.
func TestMatmulHopperOnTheStubDriver(t *testing.T) {
	if c := os.Getenv("KERN_MMH_STUB_CHILD"); c != "" {
		matmulHopperStubChild(t, c == "notma")
		return
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no C compiler to build the stub libcuda: %v", err)
		}
		t.Skipf("no C compiler to build the stub libcuda: %v", err)
	}
	srcs, _ := filepath.Glob(filepath.Join("..", "cuda", "testdata", "stub", "*.c"))
	noTMA := slices.DeleteFunc(slices.Clone(srcs), func(f string) bool { return filepath.Base(f) == "stub_tensormap.c" })
	if len(noTMA) != len(srcs)-1 {
		t.Fatalf("no stub_tensormap.c among %v", srcs)
	}
	for _, c := range []struct {
		name string
		srcs []string
	}{{"tma", srcs}, {"notma", noTMA}} {
		lib := filepath.Join(t.TempDir(), "libcuda_stub.so")
		args := append([]string{"-shared", "-fPIC", "-fvisibility=hidden", "-O1", "-o", lib}, c.srcs...)
		if out, err := exec.Command(cc, append(args, "-lpthread")...).CombinedOutput(); err != nil {
			t.Fatalf("building the stub: %v\n%s", err, out)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestMatmulHopperOnTheStubDriver$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "KERN_MMH_STUB_CHILD="+c.name, "KERN_LIBCUDA="+lib, "KERN_DEVICE=cuda:1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: the child failed: %v\n%s", c.name, err, out)
		}
	}
}

func matmulHopperStubChild(t *testing.T, noTMA bool) {
	dev, err := kern.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if major, minor := dev.ComputeCapability(); major != 9 || minor != 0 {
		t.Fatalf("stub device 1 is %d.%d, want 9.0", major, minor)
	}
	const m, n, k = 200, 136, 72
	// Two 128×256 tiles for 132 SMs: the default is 128×128 (a GPU of 132
	// SMs takes 128×256 from 67 tiles up, 4096³ has 512).
	if got := MatmulVersion(dev, m, n, k, WeightNK); got != "v3 sm_90a 128x128" {
		t.Errorf("MatmulVersion = %q, want v3 sm_90a 128x128", got)
	}
	if got := MatmulVersion(dev, 4096, 4096, 4096, WeightNK); got != "v3 sm_90a 128x256" {
		t.Errorf("MatmulVersion 4096³ = %q, want v3 sm_90a 128x256", got)
	}
	if got := MatmulVersion(dev, 1024, 1024, 1024, WeightNK); got != "v3 sm_90a 128x128" {
		t.Errorf("MatmulVersion 1024³ = %q, want v3 sm_90a 128x128", got)
	}
	a, _ := kern.Alloc[gpu.BFloat16](dev, m*k)
	w, _ := kern.Alloc[gpu.BFloat16](dev, n*k)
	c, err := kern.Alloc[gpu.BFloat16](dev, m*n)
	if err != nil {
		t.Fatal(err)
	}
	_, err = dev.TensorMap(a, kern.TensorMapSpec{Dims: [2]int{k, m}, Box: [2]int{64, 128}, Swizzle: gpu.Swizzle128B})
	if noTMA != errors.Is(err, kern.ErrNoTensorMaps) {
		t.Errorf("TensorMap on a driver without tensor maps = %t: %v", noTMA, err)
	}
	if err := Matmul(dev, c, a, w, m, n, k, MatmulOpts[gpu.BFloat16]{}); err != nil {
		t.Fatal(err)
	}
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
	// The 128×256 kernel: 225 KiB of dynamic shared memory with 4 stages.
	MatmulHopperTile = HopperTile128x256
	if got := MatmulVersion(dev, m, n, k, WeightNK); got != "v3 sm_90a 128x256" {
		t.Errorf("MatmulVersion with HopperTile128x256 = %q", got)
	}
	if got := hopperStages(dev, mmHopperWide); got != 4 {
		t.Errorf("v3 128x256 stages on the stub H100 (%d bytes of shared memory) = %d, want 4", dev.Limits().MaxSharedPerBlock, got)
	}
	err = Matmul(dev, c, a, w, m, n, k, MatmulOpts[gpu.BFloat16]{})
	MatmulHopperTile = HopperTileAuto
	if err != nil {
		t.Fatalf("v3 128x256: %v", err)
	}
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
	// FlashAttention picks attnh there too (the same hopperKernels) and
	// makes its q, k and v maps through Device.TensorMap, or falls back to
	// the sm_80 kernels on a driver without tensor maps.
	if got := FlashAttentionKernels(dev); got[:6] != "sm_90a" {
		t.Errorf("FlashAttentionKernels = %q, want sm_90a", got)
	}
	const seq, heads, hd = 70, 2, 64
	q, _ := kern.Alloc[gpu.BFloat16](dev, seq*heads*hd)
	kv, _ := kern.Alloc[gpu.BFloat16](dev, seq*hd)
	out, _ := kern.Alloc[gpu.BFloat16](dev, seq*heads*hd)
	cu, err := kern.Upload(dev, SeqOffsets(seq))
	if err != nil {
		t.Fatal(err)
	}
	if err := FlashAttention(dev, out, q, kv, kv, nil, cu, cu, Attention{Heads: heads, KVHeads: 1, HeadDim: hd, Causal: true, MaxSeqQ: seq}); err != nil {
		t.Fatalf("FlashAttention: %v", err)
	}
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
	// B[K,N] runs v3 too (GemmKN: b's map is n columns × k rows).
	if got := MatmulVersion(dev, m, n, k, RowMajorKN); got != "v3 sm_90a 128x128" {
		t.Errorf("RowMajorKN: %q, want v3 sm_90a 128x128", got)
	}
	if err := Matmul(dev, c, a, w, m, n, k, MatmulOpts[gpu.BFloat16]{Layout: RowMajorKN}); err != nil {
		t.Fatal(err)
	}
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestMatmulHopperKN runs v3 with b as B[K,N] (mmh's GemmKN: B an
// MN-major wgmma operand in two 64-column boxes per stage) on shapes
// the list does not reach in that layout: three column tiles, the last
// only 8 columns wide (its second box wholly past N), three row tiles
// and k tiles going round the emulator's two stages, with the
// epilogues, against float64.
func TestMatmulHopperKN(t *testing.T) {
	dev := testDevices[0].dev
	ver := mmVersion{"v3-sm90a", mmHopper, tcConfig{}}
	for _, sh := range []mmCase{{300, 264, 200}, {64, 128, 64}} {
		for _, o := range []mmOpts{{layout: RowMajorKN}, {layout: RowMajorKN, act: ActSwiGLU, bias: true, res: true}} {
			name := fmt.Sprintf("%dx%dx%d/act%d", sh.m, sh.n, sh.k, o.act)
			t.Run(name+"/bf16-bf16", func(t *testing.T) { testMatmul[gpu.BFloat16, gpu.BFloat16](t, dev, ver, sh, o) })
			t.Run(name+"/f16-f32", func(t *testing.T) { testMatmul[gpu.Half, float32](t, dev, ver, sh, o) })
		}
	}
}
