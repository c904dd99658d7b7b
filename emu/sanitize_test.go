package emu

import (
	"errors"
	"strings"
	"testing"
)

func TestMemcheckReportsEveryBadAccess(t *testing.T) {
	m := loadTestdata(t, "vecadd.ptx")
	d := NewDevice(Options{Memcheck: true})
	const n = 100
	a, b := make([]float32, n), make([]float32, n-10)
	for i := range a {
		a[i] = float32(i)
	}
	for i := range b {
		b[i] = 1000
	}
	pa := upload(t, d, f32bytes(a))
	pb := upload(t, d, f32bytes(b))
	pout := upload(t, d, make([]byte, 4*n))
	p := params{}.u64(pa).u64(n).u64(pb).u64(pout).u32(n)
	err := d.Launch(m, "vecadd", LaunchConfig{Grid: [3]int{4}, Block: [3]int{32}, Params: p})
	var r *Report
	if !errors.As(err, &r) || len(r.Findings) != 1 {
		t.Fatalf("err = %v, want a report with one finding", err)
	}
	f := r.Findings[0]
	// Threads 90..99 (block 2, threads 26..31, and block 3, threads 0..3)
	// read past b; the first is block 2 thread 26.
	if f.Tool != "memcheck" || f.Count != 10 || f.Block != [3]int{2, 0, 0} || f.Thread != [3]int{26, 0, 0} ||
		f.PTXLine != 44 || f.File != "/src/vec/add.go" || f.Line != 12 || !strings.Contains(f.What, "invalid global load of 4 bytes") {
		t.Errorf("finding %+v", f)
	}
	if !strings.Contains(f.Detail, "past the end") {
		t.Errorf("detail %q does not place the address", f.Detail)
	}
	// The launch ran to completion; the faulting loads read zero.
	out := bytesF32(download(t, d, pout, 4*n))
	if out[89] != 1089 || out[95] != 95 {
		t.Errorf("out[89] = %v, out[95] = %v; want 1089, 95", out[89], out[95])
	}
}

func TestInitcheck(t *testing.T) {
	m := loadTestdata(t, "vecadd.ptx")
	d := NewDevice(Options{Memcheck: true})
	const n = 64
	pa := upload(t, d, f32bytes(make([]float32, n)))
	pb, _ := d.Alloc(4 * n) // never written
	pout, _ := d.Alloc(4 * n)
	p := params{}.u64(pa).u64(n).u64(pb).u64(pout).u32(n)
	err := d.Launch(m, "vecadd", LaunchConfig{Grid: [3]int{1}, Block: [3]int{64}, Params: p})
	var r *Report
	if !errors.As(err, &r) || len(r.Findings) != 1 || r.Findings[0].Tool != "initcheck" || r.Findings[0].Count != n {
		t.Fatalf("err = %v, want one initcheck finding for %d reads", err, n)
	}
	// Once the host writes b, and the kernel has written out, nothing is
	// reported.
	if err := d.Memset(pb, 0, 4*n); err != nil {
		t.Fatal(err)
	}
	if err := d.Launch(m, "vecadd", LaunchConfig{Grid: [3]int{1}, Block: [3]int{64}, Params: p}); err != nil {
		t.Fatalf("clean launch: %v", err)
	}
}

func TestRacecheck(t *testing.T) {
	m := loadTestdata(t, "race.ptx")
	d := NewDevice(Options{Racecheck: true})
	pout := upload(t, d, make([]byte, 256))
	err := d.Launch(m, "racy", LaunchConfig{Grid: [3]int{1}, Block: [3]int{64}, Params: params{}.u64(pout)})
	var r *Report
	if !errors.As(err, &r) {
		t.Fatalf("err = %v, want a race report", err)
	}
	// Warp 0 runs first to completion of its read; warp 1 then writes
	// what warp 0 read (write-after-read) and reads what warp 0 wrote
	// (read-after-write).
	var kinds []string
	for _, f := range r.Findings {
		kinds = append(kinds, f.What)
		if f.Tool != "racecheck" || f.Block != [3]int{0, 0, 0} || f.Thread[0] < 32 {
			t.Errorf("finding %s", f.String())
		}
	}
	got := strings.Join(kinds, ", ")
	if got != "write-after-read hazard, read-after-write hazard" {
		t.Errorf("hazards: %s\n%v", got, err)
	}
	if err := d.Launch(m, "fixed", LaunchConfig{Grid: [3]int{1}, Block: [3]int{64}, Params: params{}.u64(pout)}); err != nil {
		t.Errorf("fixed kernel: %v", err)
	}
	// The tree reduction synchronizes every level.
	mr := loadTestdata(t, "reduce.ptx")
	pin := upload(t, d, make([]byte, 4*256))
	if err := d.Launch(mr, "block_sum", LaunchConfig{Grid: [3]int{1}, Block: [3]int{256}, Params: params{}.u64(pin).u64(pout)}); err != nil {
		t.Errorf("reduction: %v", err)
	}
}

func TestSynccheck(t *testing.T) {
	src := header + `
.visible .entry k()
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	mov.u32 %r1, %laneid;
	setp.lt.u32 %p1, %r1, 16;
	@%p1 bra $L_a;
	bar.sync 0;
	bra $L_b;
$L_a:
	bar.sync 0;
$L_b:
	@!%p1 exit;
	shfl.sync.idx.b32 %r2, %r1, 20, 31, 0x0000ffff;
	ret;
}`
	m, err := Load([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	// Without the check the kernel runs: the halves meet at different
	// bar.sync instructions, which emu treats like barrier.sync.
	if err := NewDevice(Options{}).Launch(m, "k", LaunchConfig{Grid: [3]int{1}, Block: [3]int{32}}); err != nil {
		t.Fatal(err)
	}
	err = NewDevice(Options{Synccheck: true}).Launch(m, "k", LaunchConfig{Grid: [3]int{1}, Block: [3]int{32}})
	var r *Report
	if !errors.As(err, &r) {
		t.Fatalf("err = %v, want a synccheck report", err)
	}
	var what []string
	for _, f := range r.Findings {
		what = append(what, f.What)
	}
	// Then lanes 0-15 shuffle from lane 20, which has exited.
	got := strings.Join(what, "; ")
	if got != "divergent aligned barrier; shuffle from a lane that is not executing it" {
		t.Errorf("findings: %s\n%v", got, err)
	}
}

// TestSynccheckJoinAboveTheBranch: lanes that reach one bar.sync at
// different steps (the join block lies above the branch, as clang lays
// out bitonic sort's loop, so emu runs the short path's lanes first) do
// execute it together. Synccheck reported this as divergent before it
// judged a barrier at its release.
func TestSynccheckJoinAboveTheBranch(t *testing.T) {
	m, err := Load([]byte(header + `
.visible .entry k()
{
	.reg .pred %p<3>;
	.reg .b32 %r<4>;
	mov.u32 %r1, %laneid;
	mov.u32 %r2, 0;
	bra.uni $L_loop;
$L_join:
	bar.sync 0;
	add.u32 %r2, %r2, 1;
	setp.ge.u32 %p2, %r2, 3;
	@%p2 bra $L_done;
$L_loop:
	setp.lt.u32 %p1, %r1, 16;
	@%p1 bra $L_join;
	add.u32 %r3, %r3, 1;
	bra.uni $L_join;
$L_done:
	ret;
}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := NewDevice(Options{Synccheck: true}).Launch(m, "k", LaunchConfig{Grid: [3]int{1}, Block: [3]int{64}}); err != nil {
		t.Fatal(err)
	}
}

// TestRacecheckSameValueWrites: warps that store the value shared memory
// already holds (Triton stages replicated mma results through shared
// memory that way) race harmlessly; storing a different value is a
// write-after-write hazard.
func TestRacecheckSameValueWrites(t *testing.T) {
	m, err := Load([]byte(header + `
.visible .entry k(.param .u32 v)
{
	.reg .b32 %r<4>;
	.shared .align 4 .b32 s[1];
	mov.u32 %r1, %tid.x;
	shr.u32 %r1, %r1, 5;
	ld.param.u32 %r2, [v];
	mul.lo.u32 %r2, %r2, %r1;
	st.shared.u32 [s], %r2;
	ret;
}`))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDevice(Options{Racecheck: true})
	// v = 0: every warp stores 0 over 0.
	if err := d.Launch(m, "k", LaunchConfig{Grid: [3]int{1}, Block: [3]int{64}, Params: params{}.u32(0)}); err != nil {
		t.Errorf("same value: %v", err)
	}
	// v = 1: warp 0 stores 0, warp 1 stores 1.
	err = d.Launch(m, "k", LaunchConfig{Grid: [3]int{1}, Block: [3]int{64}, Params: params{}.u32(1)})
	var r *Report
	if !errors.As(err, &r) || len(r.Findings) != 1 || r.Findings[0].What != "write-after-write hazard" {
		t.Errorf("different values: %v, want one write-after-write hazard", err)
	}
}
