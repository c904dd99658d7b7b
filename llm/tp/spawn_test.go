//go:build linux

package tp

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A rank process that dies while the ranks join ends rank 0's wait at
// once, with the rank's exit as the cause, instead of after JoinTimeout.
func TestSpawnedRankDiesWhileJoining(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	var log strings.Builder
	rs, err := Spawn(sh, func(r int) []string { return []string{"-c", "echo giving up >&2; exit 3"} }, 2, &log)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/tmp", "kern-tp-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, done := rs.WatchJoin(context.Background())
	defer done()
	start := time.Now()
	_, err = DialSocket(ctx, "unix", dir+"/comm.sock", 0, 2)
	if err == nil {
		t.Fatal("rank 0 joined a clique whose other rank died")
	}
	if cause := context.Cause(ctx); cause == nil || !strings.Contains(cause.Error(), "rank 1") || !strings.Contains(cause.Error(), "exit status 3") {
		t.Errorf("cause %v, want rank 1's exit", cause)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("rank 0 waited %v", d)
	}
	if err := rs.Stop(time.Second); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Stop: %v", err)
	}
	if !strings.Contains(log.String(), "rank 1: giving up") {
		t.Errorf("the rank's stderr was not passed on: %q", log.String())
	}
}
