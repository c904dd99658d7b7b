package tp

// One process per rank: rank 0 (the process serving HTTP, with the
// engine's scheduler) leads, ranks 1 … T-1 follow (Follow), each on its
// own device. They meet in a rendezvous directory of Unix sockets that
// rank 0 makes:
//
//	id.sock    NCCL's unique id, from rank 0 to the others (ServeID)
//	comm.sock  the Socket communicator's star, when not over NCCL
//	ctl.sock   rank 0's orders: allocate the KV pool, run a step (Plan),
//	           quit; each answered with an error string ("" for none)
//
// Every rank joins the communicator first, then the control star, then
// loads its shard, so the joins meet in the same order everywhere.

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/gokern/kern"
	"github.com/gokern/kern/llm/engine"
	"github.com/gokern/kern/llm/qwen3"
)

// Clique says how a process finds its peers.
type Clique struct {
	Dir  string // the rendezvous directory (rank 0 made it; short: Unix socket paths are ≤ 107 bytes)
	Rank int
	Size int
	// NCCL joins an NCCL communicator (CUDA devices); otherwise a
	// Socket one through rank 0.
	NCCL bool
}

// join connects one rank's communicator and control connection.
func (c Clique) join(ctx context.Context, dev *kern.Device) (Comm, *Socket, error) {
	var comm Comm
	var err error
	if c.NCCL {
		comm, err = JoinNCCL(ctx, dev, "unix", filepath.Join(c.Dir, "id.sock"), c.Rank, c.Size)
	} else {
		comm, err = DialSocket(ctx, "unix", filepath.Join(c.Dir, "comm.sock"), c.Rank, c.Size)
	}
	if err != nil {
		return nil, nil, err
	}
	// The control star is made like a Socket clique (the same greeting
	// and checks), but its connections carry gob orders, never
	// collectives.
	ctl, err := DialSocket(ctx, "unix", filepath.Join(c.Dir, "ctl.sock"), c.Rank, c.Size)
	if err != nil {
		comm.Close()
		return nil, nil, fmt.Errorf("tp: control connection: %w", err)
	}
	return comm, ctl, nil
}

// JoinTimeout bounds the wait for the other ranks to join (a rank that
// never starts, or a rank 0 that died before listening).
var JoinTimeout = 2 * time.Minute

// order is what rank 0 sends: a pool to allocate, a step to run, or quit.
type order struct {
	Op              byte
	Pages, PageSize int
	Plan            Plan
}

const (
	orderPool byte = iota + 1
	orderStep
	orderQuit
)

// answer is a rank's reply to an order.
type answer struct{ Err string }

// Leader is rank 0 of a model split over processes: an engine.Runner
// that sends each step's Plan to ranks 1 … T-1 (which run Follow) and
// runs the step on its own shard. A failed step breaks the clique (a rank
// may be stuck in a collective that will not complete): the Leader closes
// its connections, which ends the followers, and fails every later step.
type Leader struct {
	Shard  *qwen3.Model
	Config *qwen3.Config // the whole model's
	comm   Comm
	ctl    *Socket
	enc    []*gob.Encoder
	dec    []*gob.Decoder
	pool   *qwen3.KVPool
	mu     sync.Mutex
	broken error // set once; read by Broken from other goroutines
	once   sync.Once
}

// Lead joins clique c as rank 0 on dev and loads its shard of the model
// in dir; the other ranks must be running Follow with the same dir.
func Lead(ctx context.Context, dev *kern.Device, c Clique, dir string) (*Leader, error) {
	if c.Rank != 0 {
		return nil, fmt.Errorf("tp: Lead as rank %d", c.Rank)
	}
	full, err := qwen3.LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	if _, err := qwen3.ShardConfig(full, c.Size); err != nil {
		return nil, err
	}
	jctx, cancel := context.WithTimeout(ctx, JoinTimeout)
	comm, ctl, err := c.join(jctx, dev)
	cancel()
	if err != nil {
		return nil, err
	}
	l := &Leader{Config: full, comm: comm, ctl: ctl}
	for _, p := range ctl.peers[1:] {
		l.enc = append(l.enc, gob.NewEncoder(p))
		l.dec = append(l.dec, gob.NewDecoder(p))
	}
	if l.Shard, err = qwen3.LoadShard(dev, dir, comm, qwen3.LoadOptions{}); err != nil {
		l.Free()
		return nil, err
	}
	return l, nil
}

// Broken returns why the clique broke (a failed step, a rank that
// exited), or nil while it works: what a liveness probe reports, since a
// broken clique does not recover without restarting every rank.
func (l *Leader) Broken() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.broken
}

// Break marks the clique broken by err (a rank process ended, say) and
// closes the control connections, so the next step fails at once. It
// also ends rank 0's collectives in flight: a Socket communicator is
// closed (so a rank waiting in a collective for rank 0 fails too and its
// process ends), an NCCL one aborted (ncclCommAbort; with a libnccl too
// old to have it, a collective waiting for a dead rank waits on, and the
// liveness probe's restart is what ends it).
func (l *Leader) Break(err error) {
	l.mu.Lock()
	first := l.broken == nil
	if first {
		l.broken = fmt.Errorf("tp: the ranks' clique is broken: %w", err)
	}
	l.mu.Unlock()
	if !first {
		return
	}
	l.ctl.Close()
	switch c := l.comm.(type) {
	case *Socket:
		c.Close()
	case *NCCL:
		c.Abort()
	}
}

// send gives every follower o, runs mine, then collects their answers.
func (l *Leader) send(o order, mine func() error) error {
	if err := l.Broken(); err != nil {
		return err
	}
	var errs []error
	for i, e := range l.enc {
		if err := e.Encode(o); err != nil {
			errs = append(errs, fmt.Errorf("rank %d: %w", i+1, err))
		}
	}
	if len(errs) == 0 && mine != nil {
		if err := mine(); err != nil {
			errs = append(errs, fmt.Errorf("rank 0: %w", err))
		}
	}
	if len(errs) == 0 {
		for i, d := range l.dec {
			var a answer
			if err := d.Decode(&a); err != nil {
				errs = append(errs, fmt.Errorf("rank %d: %w", i+1, err))
			} else if a.Err != "" {
				errs = append(errs, fmt.Errorf("rank %d: %s", i+1, a.Err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		l.Break(err)
		return l.Broken()
	}
	return nil
}

// NewKVPool implements engine.Runner.
func (l *Leader) NewKVPool(pages, pageSize int) (*qwen3.KVPool, error) {
	err := l.send(order{Op: orderPool, Pages: pages, PageSize: pageSize}, func() (err error) {
		l.pool, err = l.Shard.NewKVPool(pages, pageSize)
		return err
	})
	if err != nil {
		return nil, err
	}
	return l.pool, nil
}

// Forward implements engine.Runner.
func (l *Leader) Forward(seqs []*qwen3.Seq, tokens [][]int32, all bool) (*kern.Buffer[float32], error) {
	var out *kern.Buffer[float32]
	err := l.send(order{Op: orderStep, Plan: PlanOf(seqs, tokens, all)}, func() (err error) {
		out, err = engine.ForwardOn(l.Shard, seqs, tokens, all)
		return err
	})
	return out, err
}

// Free implements engine.Runner: the followers are told to quit, then
// the connections close.
func (l *Leader) Free() {
	if l.Broken() == nil && l.enc != nil {
		l.send(order{Op: orderQuit}, nil)
	}
	l.close()
	if l.pool != nil {
		l.pool.Free()
		l.pool = nil
	}
	if l.Shard != nil {
		l.Shard.Free()
		l.Shard = nil
	}
}

func (l *Leader) close() {
	l.once.Do(func() {
		l.ctl.Close()
		l.comm.Close()
	})
}

// Follow is ranks 1 … T-1's life: join clique c on dev, load its shard of
// the model in dir, and carry out rank 0's orders until it says quit
// (nil) or a step fails or rank 0 goes away (an error).
func Follow(ctx context.Context, dev *kern.Device, c Clique, dir string) error {
	if c.Rank < 1 || c.Rank >= c.Size {
		return fmt.Errorf("tp: Follow as rank %d of %d", c.Rank, c.Size)
	}
	jctx, cancel := context.WithTimeout(ctx, JoinTimeout)
	comm, ctl, err := c.join(jctx, dev)
	cancel()
	if err != nil {
		return err
	}
	defer ctl.Close()
	defer comm.Close()
	shard, err := qwen3.LoadShard(dev, dir, comm, qwen3.LoadOptions{})
	if err != nil {
		return err
	}
	defer shard.Free()
	var pool *qwen3.KVPool
	defer func() {
		if pool != nil {
			pool.Free()
		}
	}()
	conn := ctl.peers[0]
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	enc, dec := gob.NewEncoder(conn), gob.NewDecoder(conn)
	for {
		var o order
		if err := dec.Decode(&o); err != nil {
			return fmt.Errorf("tp: rank %d: rank 0's orders: %w", c.Rank, err)
		}
		var err error
		switch o.Op {
		case orderQuit:
			return nil
		case orderPool:
			if pool != nil {
				pool.Free()
			}
			pool, err = shard.NewKVPool(o.Pages, o.PageSize)
		case orderStep:
			if pool == nil {
				err = errors.New("a step before the KV pool")
			} else {
				_, err = o.Plan.Replay(shard, pool)
			}
		default:
			err = fmt.Errorf("unknown order %d", o.Op)
		}
		a := answer{}
		if err != nil {
			a.Err = err.Error()
		}
		if werr := enc.Encode(a); werr != nil {
			return fmt.Errorf("tp: rank %d: answering rank 0: %w", c.Rank, werr)
		}
		if err != nil {
			return fmt.Errorf("tp: rank %d: %w", c.Rank, err)
		}
	}
}

var (
	_ engine.Runner = (*Leader)(nil)
	_ engine.Runner = (*Runner)(nil)
)
