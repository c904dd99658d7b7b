package gomlx

// Compile and Execute: the plan is the recorded nodes the outputs need,
// in recording order (which is topological: a node's inputs are recorded
// before it), with the step after which each intermediate is freed.

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// Executable is a compiled graph. It implements backends.Executable.
type Executable struct {
	b       *Backend
	bl      *Builder
	plan    []*node
	lastUse map[*node]int // plan step of a node's last reader
	outputs []*node
	// clones[i] copies output i when it is not a buffer of its own (an
	// input, a constant, or a node returned twice); planned at Compile so
	// that Execute uploads nothing.
	clones []*copyPlan
}

var _ backends.Executable = (*Executable)(nil)

// Compile implements backends.Builder.
func (bl *Builder) Compile(outputs []backends.Op, shardings []*backends.ShardingSpec) (backends.Executable, error) {
	if len(shardings) > 0 {
		return nil, fmt.Errorf("backend kern: Compile: sharding is not supported")
	}
	outs, err := bl.in(backends.OpTypeInvalid, outputs...)
	if err != nil {
		return nil, err
	}
	bl.compiled = true
	if !bl.backend.noFusion {
		bl.fuse()
	}
	for _, f := range bl.fused {
		bl.backend.fusions.Add(f)
	}
	need := make([]bool, len(bl.nodes))
	for _, o := range outs {
		need[o.idx] = true
	}
	for i := len(bl.nodes) - 1; i >= 0; i-- {
		if need[i] {
			for _, in := range bl.nodes[i].inputs {
				need[in.idx] = true
			}
		}
	}
	e := &Executable{b: bl.backend, bl: bl, lastUse: map[*node]int{}, outputs: outs, clones: make([]*copyPlan, len(outs))}
	seen := map[*node]bool{}
	for i, o := range outs {
		if o.param >= 0 || o.value != nil || seen[o] {
			if e.clones[i], err = bl.copyPlan([]int{o.shape.Size()}, []int{1}, []int{1}, 0, 0); err != nil {
				return nil, fmt.Errorf("backend kern: Compile: %w", err)
			}
		}
		seen[o] = true
	}
	for i, n := range bl.nodes {
		if need[i] {
			for _, in := range n.inputs {
				e.lastUse[in] = len(e.plan)
			}
			e.plan = append(e.plan, n)
		}
	}
	return e, nil
}

// Finalize implements backends.Executable: it frees the graph's constants
// and index maps.
func (e *Executable) Finalize() {
	if e.b.finalized {
		return
	}
	for _, m := range e.bl.metas {
		m.free()
	}
	e.bl.metas = nil
}

// Inputs implements backends.Executable.
func (e *Executable) Inputs() (names []string, inputShapes []shapes.Shape) {
	for _, p := range e.bl.params {
		names = append(names, fmt.Sprintf("p%d", p.param))
		inputShapes = append(inputShapes, p.shape)
	}
	return names, inputShapes
}

// Outputs implements backends.Executable.
func (e *Executable) Outputs() []shapes.Shape {
	s := make([]shapes.Shape, len(e.outputs))
	for i, o := range e.outputs {
		s[i] = o.shape
	}
	return s
}

// Execute implements backends.Executable. It launches kernels only: no
// data crosses between host and device. Donated inputs are freed when
// the execution no longer needs them.
func (e *Executable) Execute(inputs []backends.Buffer, donate []bool, _ backends.DeviceNum) ([]backends.Buffer, error) {
	if len(inputs) != len(e.bl.params) {
		return nil, fmt.Errorf("backend kern: Execute %q: %d inputs, want %d", e.bl.name, len(inputs), len(e.bl.params))
	}
	ins := make([]*Buffer, len(inputs))
	for i, in := range inputs {
		buf, err := e.b.toBuffer(in, "Execute")
		if err != nil {
			return nil, err
		}
		if !buf.shape.Equal(e.bl.params[i].shape) {
			return nil, fmt.Errorf("backend kern: Execute %q: input #%d is %s, want %s", e.bl.name, i, buf.shape, e.bl.params[i].shape)
		}
		ins[i] = buf
	}
	vals := make(map[*node]*Buffer, len(e.plan))
	owned := map[*Buffer]bool{} // buffers this execution made
	isOutput := map[*node]bool{}
	for _, o := range e.outputs {
		isOutput[o] = true
	}
	freeAll := func() {
		for buf := range owned {
			e.b.release(buf)
		}
	}
	for step, n := range e.plan {
		switch {
		case n.param >= 0:
			vals[n] = ins[n.param]
		case n.value != nil:
			vals[n] = n.value
		default:
			args := make([]*Buffer, len(n.inputs))
			for i, in := range n.inputs {
				args[i] = vals[in]
			}
			e.b.transfers.Runs.Add(1)
			out, err := n.run(e.b, args)
			if out != nil {
				owned[out] = true
			}
			if err != nil {
				freeAll()
				return nil, fmt.Errorf("backend kern: executing %q, node #%d %s %s: %w", e.bl.name, n.idx, n.op, n.shape, err)
			}
			vals[n] = out
		}
		for _, in := range n.inputs {
			if e.lastUse[in] == step && owned[vals[in]] && !isOutput[in] {
				e.b.release(vals[in])
				delete(owned, vals[in])
			}
		}
	}
	// Each output is a buffer of its own: an input, a constant or a value
	// returned twice is copied.
	res := make([]backends.Buffer, len(e.outputs))
	for i, o := range e.outputs {
		v := vals[o]
		if p := e.clones[i]; p != nil {
			c, err := e.b.alloc(v.shape)
			if err == nil {
				err = e.b.runCopy(p, c, v)
			}
			if err != nil {
				freeAll()
				return nil, fmt.Errorf("backend kern: executing %q, output #%d: %w", e.bl.name, i, err)
			}
			v = c
		}
		delete(owned, v)
		res[i] = v
	}
	for buf := range owned { // intermediates that are outputs of nothing
		e.b.release(buf)
	}
	for i, d := range donate {
		if d && i < len(ins) && !ins[i].freed {
			e.b.BufferFinalize(ins[i])
		}
	}
	return res, nil
}
