//go:build linux

package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gokern/kern/internal/fixture"
)

// rankPIDs lists this process's children running qwen3's rank mode.
func rankPIDs(t *testing.T) []int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so split after ")".
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		dir := filepath.Dir(st)
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if strings.Contains(string(cmdline), "\x00rank\x00") {
			pid, _ := strconv.Atoi(filepath.Base(dir))
			out = append(out, pid)
		}
	}
	return out
}

// TestServeTensorParallelRankDies: when a rank process dies under a
// multi-process server, the clique breaks: /health turns 503 (so a
// liveness probe restarts the pod) and requests fail at once instead of
// waiting for the rank.
func TestServeTensorParallelRankDies(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc to find the rank processes")
	}
	t.Setenv(asQwen3, "1")
	url, stop := startServe(t, "-device", "emu", "-q", "-model", fixture.Model(t, "tiny-qwen3-tied"), "-tokenizer", fixture.Tokenizer(t), "-tp", "2", "-tp-comm", "socket")
	defer stop()
	complete(t, url, [][]int32{{1, 2, 3}}, 2, false)
	pids := rankPIDs(t)
	if len(pids) != 1 {
		t.Fatalf("rank processes %v, want one", pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + "/health")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 503 {
			if !strings.Contains(string(b), "broken") {
				t.Errorf("/health: %s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/health still %d 30 s after a rank died", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"prompt":[1,2],"max_tokens":2}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || !strings.Contains(string(b), "broken") {
		t.Errorf("a completion after the rank died: %d %s", resp.StatusCode, b)
	}
}
