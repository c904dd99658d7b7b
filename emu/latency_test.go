package emu

import (
	"encoding/binary"
	"strings"
	"testing"
)

// latencyPTX holds the model's test kernels:
//   - chase: thread 0 follows a chain of 3 pointers (3 dependent trips);
//   - fan: thread 0 loads 3 independent words and adds them (1 trip);
//   - pf: thread 0 prefetches a line to L2, then loads it after a load
//     the address depends on (the line is in L2 by then);
//   - handoff: warp 0 loads a word and stores it to shared memory, the
//     block meets at bar.sync, and warp 1 reads it back: warp 1's chain
//     holds warp 0's trip;
//   - flag: block 0 stores a flag it read through two dependent loads;
//     block 1 polls it with nanosleep (a cooperative launch), then stores;
//   - copy, use: a load, then a mov (copy) or an add (use) of its value,
//     then a loop whose back edge the warp issues in order, then a second,
//     independent load.
var latencyPTX = latencyKernels + copyKernel("copy", "mov.b64 %rd2, %rd1;") + copyKernel("use", "add.u64 %rd2, %rd1, 1;")

const latencyKernels = `.version 7.0
.target sm_80
.address_size 64
.visible .entry chase(.param .u64 p)
{
	.reg .b64 %rd<6>;
	ld.param.u64 %rd0, [p];
	ld.global.u64 %rd1, [%rd0];
	ld.global.u64 %rd2, [%rd1];
	ld.global.u64 %rd3, [%rd2];
	st.global.u64 [%rd0+64], %rd3;
	ret;
}
.visible .entry fan(.param .u64 p)
{
	.reg .b64 %rd<6>;
	ld.param.u64 %rd0, [p];
	ld.global.u64 %rd1, [%rd0];
	ld.global.u64 %rd2, [%rd0+128];
	ld.global.u64 %rd3, [%rd0+256];
	add.u64 %rd4, %rd1, %rd2;
	add.u64 %rd4, %rd4, %rd3;
	st.global.u64 [%rd0+64], %rd4;
	ret;
}
.visible .entry pf(.param .u64 p)
{
	.reg .b64 %rd<6>;
	ld.param.u64 %rd0, [p];
	prefetch.global.L2 [%rd0+256];
	ld.global.u64 %rd1, [%rd0];
	add.u64 %rd2, %rd1, %rd0;
	sub.u64 %rd2, %rd2, %rd1;
	ld.global.u64 %rd3, [%rd2+256];
	st.global.u64 [%rd0+64], %rd3;
	ret;
}
.visible .entry handoff(.param .u64 p)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	.shared .align 8 .b8 box[8];
	ld.param.u64 %rd0, [p];
	mov.u32 %r0, %tid.x;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra wait;
	ld.global.u64 %rd1, [%rd0];
	st.shared.u64 [box], %rd1;
wait:
	bar.sync 0;
	setp.ne.u32 %p1, %r0, 32;
	@%p1 bra done;
	ld.shared.u64 %rd2, [box];
	st.global.u64 [%rd0+64], %rd2;
done:
	ret;
}
.visible .entry flag(.param .u64 p)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd0, [p];
	mov.u32 %r0, %ctaid.x;
	setp.ne.u32 %p0, %r0, 0;
	@%p0 bra poll;
	ld.global.u64 %rd1, [%rd0];
	ld.global.u64 %rd2, [%rd1];
	cvt.u32.u64 %r2, %rd2;
	st.relaxed.gpu.global.u32 [%rd0+128], %r2;
	ret;
poll:
	nanosleep.u32 100;
	ld.relaxed.gpu.global.u32 %r1, [%rd0+128];
	setp.eq.u32 %p1, %r1, 0;
	@%p1 bra poll;
	st.global.u32 [%rd0+192], %r1;
	ret;
}
`

// copyKernel is the copy and use kernels: op is the instruction between
// the first load and the loop.
func copyKernel(name, op string) string {
	return strings.NewReplacer("NAME", name, "OP", op).Replace(`.visible .entry NAME(.param .u64 p)
{
	.reg .pred %p<2>;
	.reg .b32 %r<2>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd0, [p];
	mov.u32 %r0, 0;
	ld.global.u64 %rd1, [%rd0];
	OP
again:
	add.u32 %r0, %r0, 1;
	setp.lt.u32 %p0, %r0, 2;
	@%p0 bra again;
	ld.global.u64 %rd3, [%rd0+128];
	add.u64 %rd4, %rd2, %rd3;
	st.global.u64 [%rd0+64], %rd4;
	ret;
}
`)
}

// runLatency launches entry on a fresh device with an H100 model
// attached (runLatencyOn with another machine), over a 512-byte buffer
// whose first words chain: word 0 → byte 256 → byte 384 (as addresses),
// and returns the entry's timing.
func runLatency(t *testing.T, entry string, grid, block int, coop bool) Timing {
	t.Helper()
	return runLatencyOn(t, H100, entry, grid, block, coop)
}

func runLatencyOn(t *testing.T, c LatencyConfig, entry string, grid, block int, coop bool) Timing {
	t.Helper()
	m, err := Load([]byte(latencyPTX))
	if err != nil {
		t.Fatal(err)
	}
	model := NewLatency(c)
	d := NewDevice(Options{Observer: model})
	buf := upload(t, d, make([]byte, 512))
	init := make([]byte, 512)
	binary.LittleEndian.PutUint64(init[0:], buf+256)
	binary.LittleEndian.PutUint64(init[256:], buf+384)
	binary.LittleEndian.PutUint64(init[384:], 7)
	if err := d.Write(buf, init); err != nil {
		t.Fatal(err)
	}
	cfg := LaunchConfig{Grid: [3]int{grid}, Block: [3]int{block}, Params: params{}.u64(buf), Cooperative: coop}
	if err := d.Launch(m, entry, cfg); err != nil {
		t.Fatal(err)
	}
	ts := model.Timings()
	if len(ts) != 1 || ts[0].Kernel != entry {
		t.Fatalf("timings %+v, want one for %s", ts, entry)
	}
	return ts[0]
}

func TestLatencyDependentLoads(t *testing.T) {
	c := H100
	chase := runLatency(t, "chase", 1, 32, false)
	if chase.Trips != 3 || len(chase.Chain) != 3 || !strings.HasPrefix(chase.Chain[0], "PTX line ") || chase.Chain[2] != "PTX line 10@2431" {
		t.Errorf("chase: %d trips, chain %q; want 3, each at its PTX line, the last from line 10 in at cycle 2431 (ld.param, 3 DRAM latencies)", chase.Trips, chase.Chain)
	}
	// Three first touches in a row, then the store's drain to L2.
	if lo := int64(3 * c.DRAM); chase.Cycles < lo || chase.Cycles > lo+int64(c.DRAM) {
		t.Errorf("chase: %d cycles, want about 3 DRAM latencies (%d)", chase.Cycles, lo)
	}
	fan := runLatency(t, "fan", 1, 32, false)
	if fan.Trips != 1 {
		t.Errorf("fan: %d trips, want 1", fan.Trips)
	}
	if hi := int64(c.Shared + c.DRAM + 3*c.ALU + c.L2 + 20); fan.Cycles > hi { // the store drains to L2
		t.Errorf("fan: %d cycles, want the loads overlapped (under %d)", fan.Cycles, hi)
	}
	// The loads and the store touch 4 sectors: 0, 64, 128, 256.
	if fan.DRAMBytes != 4*32 {
		t.Errorf("fan: %d DRAM bytes, want 128", fan.DRAMBytes)
	}
	if fan.Micros <= 0 {
		t.Errorf("fan: %g µs", fan.Micros)
	}
}

// TestLatencyCopiesWaitForNothing: a register copy is a rename (ptxas
// coalesces kern's copies away), so the loop after it issues at once and
// the second load overlaps the first: one trip. An add of the loaded value
// is a real use, the warp waits there, and the second load starts a
// second trip.
func TestLatencyCopiesWaitForNothing(t *testing.T) {
	if got := runLatency(t, "copy", 1, 32, false); got.Trips != 1 {
		t.Errorf("copy: %d trips, want 1: %q", got.Trips, got.Chain)
	}
	if got := runLatency(t, "use", 1, 32, false); got.Trips != 2 {
		t.Errorf("use: %d trips, want 2: %q", got.Trips, got.Chain)
	}
}

func TestLatencyPrefetch(t *testing.T) {
	c := H100
	pf := runLatency(t, "pf", 1, 32, false)
	if pf.Trips != 2 {
		t.Errorf("pf: %d trips, want 2", pf.Trips)
	}
	// The second load finds its line in L2: one DRAM and two L2 spans
	// (the load, the store's drain), not two DRAM.
	if hi := int64(c.Shared + c.DRAM + 2*c.L2 + 40); pf.Cycles > hi {
		t.Errorf("pf: %d cycles, want the prefetched line from L2 (under %d)", pf.Cycles, hi)
	}
}

func TestLatencyBarrierCarriesTheChain(t *testing.T) {
	h := runLatency(t, "handoff", 1, 64, false)
	if h.Trips != 1 {
		t.Errorf("handoff: %d trips, want warp 0's load in warp 1's chain", h.Trips)
	}
	if h.Cycles < int64(H100.DRAM+H100.Shared) {
		t.Errorf("handoff: %d cycles, want at least the load and the shared read after it", h.Cycles)
	}
}

// TestLatencyPollsAreFree: block 1's wait costs what block 0's chain
// costs, not what the emulator's count of polls would.
func TestLatencyPollsAreFree(t *testing.T) {
	f := runLatency(t, "flag", 2, 32, true)
	c := H100
	if f.Trips != 3 {
		t.Errorf("flag: %d trips, want 3 (block 0's two loads, then block 1's read of the flag)", f.Trips)
	}
	// The flag reaches L2 an L2 latency after its store, the poll that
	// sees it takes another, and block 1's store a third.
	lo := int64(2*c.DRAM + 3*c.L2)
	if f.Cycles < lo || f.Cycles > lo+100 {
		t.Errorf("flag: %d cycles, want about 2 DRAM and 3 L2 latencies (%d)", f.Cycles, lo)
	}
}

func TestLatencySlots(t *testing.T) {
	c := H100
	c.SMs = 1
	c.Slots = func(string, [3]int) int { return 1 }
	// Four blocks on one slot run one after another.
	ts := runLatencyOn(t, c, "fan", 4, 32, false)
	if ts.Blocks != 4 || ts.Cycles < int64(3*c.L2+c.DRAM) {
		t.Errorf("4 blocks on one slot: %+v, want at least one DRAM and three L2 spans", ts)
	}
}

// TestLatencyFirstTouchByModelTime: blocks run on goroutines, so a
// sector's first touch in the emulator's order may be issued later in
// the model's time than a touch emulated after it. The earlier request
// fetches the sector itself (one DRAM trip, never a wait for the later
// one's), and the sector's bytes count once.
func TestLatencyFirstTouchByModelTime(t *testing.T) {
	c := H100
	l := &latLaunch{t: &Timing{}, sectors: map[uint64]int64{}}
	fetch := int64(c.DRAM - c.L2)
	if in := l.inL2(0x1000, 5000, &c); in != 5000+fetch {
		t.Errorf("a first touch at 5000: in L2 at %d, want %d", in, 5000+fetch)
	}
	if in := l.inL2(0x1000, 100, &c); in != 100+fetch {
		t.Errorf("a touch at 100 emulated after one at 5000: in L2 at %d, want its own fetch's %d", in, 100+fetch)
	}
	if in := l.inL2(0x1000, 3000, &c); in != 100+fetch {
		t.Errorf("a touch at 3000: in L2 at %d, want the fetch at 100's %d", in, 100+fetch)
	}
	if l.t.DRAMBytes != 32 {
		t.Errorf("%d DRAM bytes for one sector, want 32", l.t.DRAMBytes)
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		text  string
		class OpClass
		dest  bool
	}{
		{"ld.global.nc.v4.u32", ClassMem, true},
		{"st.global.u32", ClassMem, false},
		{"atom.global.add.u32", ClassMem, true},
		{"red.global.add.f32", ClassMem, false},
		{"cp.async.cg.shared.global", ClassMem, false},
		{"cp.async.commit_group", ClassAsyncCommit, false},
		{"cp.async.wait_group", ClassAsyncWait, false},
		{"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", ClassMMA, true},
		{"bar.sync", ClassBarrier, false},
		{"bar.red.or.pred", ClassBarrier, true},
		{"bar.warp.sync", ClassShuffle, false},
		{"shfl.sync.bfly.b32", ClassShuffle, true},
		{"ex2.approx.f32", ClassSFU, true},
		{"fma.rn.f32", ClassALU, true},
		{"setp.lt.s32", ClassALU, true},
		{"fence.acq_rel.gpu", ClassFence, false},
		{"nanosleep.u32", ClassSleep, false},
		{"mbarrier.try_wait.parity.shared.b64", ClassWait, true},
		{"wgmma.wait_group.sync.aligned", ClassWait, false},
	} {
		class, dest := classify(c.text, 3)
		if class != c.class || dest != c.dest {
			t.Errorf("classify(%q) = %d, %v; want %d, %v", c.text, class, dest, c.class, c.dest)
		}
	}
}
