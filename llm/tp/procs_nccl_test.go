//go:build linux && (amd64 || arm64) && !gpu

package tp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/internal/cudastub"
	"github.com/gokern/kern/internal/fixture"
	"github.com/gokern/kern/llm/qwen3"
	"github.com/gokern/kern/nccl"
)

// TestLeadFollowOnTheStubs runs the one-process-per-GPU start as far as
// the stubs go, with goroutines in the processes' places (the stub
// libnccl's ranks are threads of one process): rank 0 makes NCCL's id
// and hands it over its Unix socket, both ranks join the NCCL clique and
// the control star, load their shards onto stub CUDA devices, allocate
// the KV pool on rank 0's order and receive a step's plan. The stub
// driver runs no kernels, so the step fails at its first launch on both
// ranks; what is checked there is that the failure ends both ranks (no
// rank waits forever in a collective) and breaks the clique for later
// steps.
func TestLeadFollowOnTheStubs(t *testing.T) {
	l, followed := leadFollowOnTheStubs(t)
	pool, err := l.NewKVPool(4, 16)
	if err != nil {
		t.Fatalf("NewKVPool: %v", err)
	}
	s := pool.NewSeq()
	if err := s.Reserve(3); err != nil {
		t.Fatal(err)
	}
	_, err = l.Forward([]*qwen3.Seq{s}, [][]int32{{3, 141, 59}}, false)
	if err == nil {
		t.Skip("the stub driver ran a step: extend this test to check its logits")
	}
	if !strings.Contains(err.Error(), "stub") {
		t.Errorf("step on the stubs: %v, want the stub driver's refusal", err)
	}
	select {
	case ferr := <-followed:
		if ferr == nil {
			t.Error("rank 1 ended without an error after a failed step")
		}
		t.Logf("rank 0: %v\nrank 1: %v", err, ferr)
	case <-time.After(30 * time.Second):
		t.Fatal("rank 1 still running 30 s after a failed step")
	}
	if _, err := l.Forward([]*qwen3.Seq{s}, [][]int32{{3}}, false); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("a step after a failed one: %v, want the broken clique", err)
	}
}

// TestBreakAbortsNCCL: breaking the clique (a rank process died) aborts
// rank 0's NCCL communicator, so a collective waiting for the missing
// rank fails instead of waiting forever, and ends the other ranks.
func TestBreakAbortsNCCL(t *testing.T) {
	l, followed := leadFollowOnTheStubs(t)
	n, ok := l.comm.(*NCCL)
	if !ok {
		t.Fatalf("rank 0's communicator is a %T, want *NCCL", l.comm)
	}
	b, err := kern.Alloc[float32](n.dev, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	done := make(chan error, 1)
	go func() { done <- l.comm.AllReduceSumF32(n.dev, b) }() // rank 1 waits for orders, not in a collective
	select {
	case err := <-done:
		t.Fatalf("an all-reduce without rank 1 returned: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	l.Break(errors.New("rank 1 is gone (test)"))
	select {
	case err := <-done:
		if !errors.Is(err, nccl.RemoteError) {
			t.Errorf("the waiting all-reduce: %v, want ncclRemoteError", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the all-reduce still waits 10 s after Break")
	}
	select {
	case ferr := <-followed:
		if ferr == nil {
			t.Error("rank 1 ended without an error")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("rank 1 still running 30 s after Break")
	}
	if _, err := l.NewKVPool(4, 16); err == nil || !strings.Contains(err.Error(), "rank 1 is gone") {
		t.Errorf("an order after Break: %v", err)
	}
}

// leadFollowOnTheStubs starts rank 1 (Follow) in a goroutine and returns
// rank 0's Leader, both over NCCL on stub devices, and rank 1's end.
func leadFollowOnTheStubs(t *testing.T) (*Leader, <-chan error) {
	t.Helper()
	model := fixture.Model(t, "tiny-qwen3-tied")
	t.Setenv("KERN_LIBCUDA", cudastub.Libcuda(t))
	t.Setenv(nccl.LibraryEnv, cudastub.Build(t, "libnccl_stub.so", filepath.Join("nccl", "testdata", "stub")))
	rdir, err := os.MkdirTemp("/tmp", "kern-tp-test-") // Unix socket paths are short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rdir) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	followed := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		dev, err := kern.OpenCUDA(1)
		if err != nil {
			followed <- err
			return
		}
		defer dev.Close()
		followed <- Follow(ctx, dev, Clique{Dir: rdir, Rank: 1, Size: 2, NCCL: true}, model)
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	dev, err := kern.OpenCUDA(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	l, err := Lead(ctx, dev, Clique{Dir: rdir, Rank: 0, Size: 2, NCCL: true}, model)
	if err != nil {
		t.Fatalf("Lead: %v", err)
	}
	t.Cleanup(l.Free)
	if _, ok := l.comm.(*NCCL); !ok {
		t.Fatalf("rank 0's communicator is a %T, want *NCCL", l.comm)
	}
	if l.Shard.Ranks() != 2 || l.Shard.Config.NumAttentionHeads != 2 {
		t.Fatalf("rank 0's shard: rank of %d, %d heads", l.Shard.Ranks(), l.Shard.Config.NumAttentionHeads)
	}
	return l, followed
}
