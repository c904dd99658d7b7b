package ir

// domTree is the dominator tree of a Func's blocks, by block position in
// f.Blocks, computed with the iterative algorithm of Cooper, Harvey and
// Kennedy ("A Simple, Fast Dominance Algorithm") over reverse postorder.
// Blocks unreachable from the entry have no dominator (idom -1) and
// dominate nothing.
type domTree struct {
	idom []int // immediate dominator; the entry's is itself
	rpo  []int // rpo number of each block, -1 when unreachable
}

func dominators(f *Func) *domTree {
	n := len(f.Blocks)
	index := make(map[string]int, n)
	for i, b := range f.Blocks {
		index[b.Label] = i
	}
	succ := make([][]int, n)
	preds := make([][]int, n)
	for i, b := range f.Blocks {
		for _, l := range successors(b) {
			if j, ok := index[l]; ok {
				succ[i] = append(succ[i], j)
				preds[j] = append(preds[j], i)
			}
		}
	}
	d := &domTree{idom: make([]int, n), rpo: make([]int, n)}
	if n == 0 {
		return d
	}
	// Postorder, iteratively (unrolled kernels have thousands of blocks).
	var post []int
	seen := make([]bool, n)
	type frame struct{ b, next int }
	stack := []frame{{0, 0}}
	seen[0] = true
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(succ[top.b]) {
			s := succ[top.b][top.next]
			top.next++
			if !seen[s] {
				seen[s] = true
				stack = append(stack, frame{s, 0})
			}
			continue
		}
		post = append(post, top.b)
		stack = stack[:len(stack)-1]
	}
	for i := range d.rpo {
		d.rpo[i], d.idom[i] = -1, -1
	}
	order := make([]int, len(post)) // blocks in reverse postorder
	for i := range post {
		b := post[len(post)-1-i]
		order[i], d.rpo[b] = b, i
	}
	d.idom[0] = 0
	intersect := func(a, b int) int {
		for a != b {
			for d.rpo[a] > d.rpo[b] {
				a = d.idom[a]
			}
			for d.rpo[b] > d.rpo[a] {
				b = d.idom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for _, b := range order[1:] {
			nd := -1
			for _, p := range preds[b] {
				if d.idom[p] == -1 {
					continue
				}
				if nd == -1 {
					nd = p
				} else {
					nd = intersect(p, nd)
				}
			}
			if nd != d.idom[b] {
				d.idom[b], changed = nd, true
			}
		}
	}
	return d
}

// dominates reports whether block a dominates block b (every block
// dominates itself).
func (d *domTree) dominates(a, b int) bool {
	if d.rpo[a] < 0 || d.rpo[b] < 0 {
		return false
	}
	for d.rpo[b] > d.rpo[a] {
		b = d.idom[b]
	}
	return a == b
}
