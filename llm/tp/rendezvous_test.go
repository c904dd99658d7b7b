package tp

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gokern/kern/nccl"
)

func testID() nccl.UniqueID {
	var id nccl.UniqueID
	for i := range id {
		id[i] = byte(i*7 + 3)
	}
	return id
}

// Ranks 1…3 fetch rank 0's id over a Unix socket and over loopback TCP;
// they start dialing before rank 0 listens, as separate processes would.
func TestRendezvousHandsTheIDToEveryRank(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			addr := filepath.Join(t.TempDir(), "rank0.sock")
			if network == "tcp" {
				probe, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Skip(err)
				}
				addr = probe.Addr().String()
				probe.Close()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			const size = 4
			got := make([]nccl.UniqueID, size)
			errs := make([]error, size)
			var wg sync.WaitGroup
			for r := 1; r < size; r++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[r], errs[r] = FetchID(ctx, network, addr, r, size)
				}()
			}
			time.Sleep(50 * time.Millisecond) // the ranks are already retrying
			ln, err := net.Listen(network, addr)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			if err := ServeID(ctx, ln, testID(), size); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			for r := 1; r < size; r++ {
				if errs[r] != nil || got[r] != testID() {
					t.Errorf("rank %d: %v (id matches: %v)", r, errs[r], got[r] == testID())
				}
			}
		})
	}
}

// A rank with the wrong clique size, one out of range, and one that joins
// twice are refused with the reason; ServeID keeps waiting for real ranks
// and gives up when its context ends.
func TestRendezvousRefusesMismatches(t *testing.T) {
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "rank0.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- ServeID(ctx, ln, testID(), 3) }()
	addr := ln.Addr().String()
	if _, err := FetchID(ctx, "unix", addr, 1, 3); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rank, size int
		want       string
	}{
		{2, 4, "rank 2 expects 4 ranks; rank 0 has 3"},
		{3, 3, "rank 3 is outside 1…2"},
		{0, 3, "rank 0 is outside 1…2"},
		{1, 3, "rank 1 has already joined"},
	} {
		_, err := FetchID(ctx, "unix", addr, c.rank, c.size)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("rank %d of %d: %v, want %q", c.rank, c.size, err, c.want)
		}
	}
	cancel()
	if err := <-served; err == nil || !strings.Contains(err.Error(), "1 of 2 ranks still to come") {
		t.Errorf("ServeID after cancel: %v", err)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if _, err := FetchID(short, "unix", filepath.Join(t.TempDir(), "nobody.sock"), 1, 2); err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("FetchID with no rank 0: %v", err)
	}
}
