package tp

// Starting the follower processes: rank 0 runs the same executable for
// ranks 1 … T-1 (cmd/qwen3's "rank" mode), with each one's stderr
// copied, line by line and prefixed with its rank, into rank 0's.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Ranks are follower processes started by Spawn.
type Ranks struct {
	cmds  []*exec.Cmd
	dead  chan struct{} // closed when the first process ends
	once  sync.Once
	wg    sync.WaitGroup
	mu    sync.Mutex
	first error // why the first process ended (nil for a clean exit)
	errs  []error
}

// Spawn starts exe with args(r) for r = 1 … size-1. Their stdout is
// discarded, their stderr lines go to log as "rank r: …".
func Spawn(exe string, args func(rank int) []string, size int, log io.Writer) (*Ranks, error) {
	rs := &Ranks{dead: make(chan struct{})}
	var logMu sync.Mutex
	for r := 1; r < size; r++ {
		cmd := exec.Command(exe, args(r)...)
		cmd.Env = os.Environ()
		pr, err := cmd.StderrPipe()
		if err != nil {
			rs.Stop(0)
			return nil, fmt.Errorf("tp: rank %d: %w", r, err)
		}
		if err := cmd.Start(); err != nil {
			rs.Stop(0)
			return nil, fmt.Errorf("tp: starting rank %d (%s): %w", r, exe, err)
		}
		rs.cmds = append(rs.cmds, cmd)
		rs.wg.Add(1)
		go func() {
			defer rs.wg.Done()
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				logMu.Lock()
				fmt.Fprintf(log, "rank %d: %s\n", r, sc.Text())
				logMu.Unlock()
			}
			why := fmt.Errorf("tp: rank %d (pid %d) exited", r, cmd.Process.Pid)
			if err := cmd.Wait(); err != nil {
				why = fmt.Errorf("tp: rank %d (pid %d): %w", r, cmd.Process.Pid, err)
				rs.mu.Lock()
				rs.errs = append(rs.errs, why)
				rs.mu.Unlock()
			}
			rs.once.Do(func() {
				rs.mu.Lock()
				rs.first = why
				rs.mu.Unlock()
				close(rs.dead)
			})
		}()
	}
	return rs, nil
}

// Dead is closed when the first process ends, for whatever reason: rank
// 0 watches it to stop waiting for a rank that died while joining, and
// to break the clique of one that dies while serving.
func (rs *Ranks) Dead() <-chan struct{} { return rs.dead }

// Why says how the first process to end ended (nil while none has).
func (rs *Ranks) Why() error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.first
}

// Stop waits, up to grace, for the processes to end by themselves (after
// rank 0 told them to quit or closed their connections), then kills
// those left. It returns the processes' failures.
func (rs *Ranks) Stop(grace time.Duration) error {
	done := make(chan struct{})
	go func() { rs.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		for _, c := range rs.cmds {
			c.Process.Kill()
		}
		<-done
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return errors.Join(rs.errs...)
}

// WatchJoin returns a context that ends when ctx does or when a rank
// exits before join has returned, so a rank 0 waiting for its peers does
// not wait for one that died.
func (rs *Ranks) WatchJoin(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	go func() {
		select {
		case <-rs.dead:
			cancel(rs.Why())
		case <-stop:
		}
	}()
	return ctx, func() { close(stop); cancel(nil) }
}
