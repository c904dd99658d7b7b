package compiler

// Tests of guardiv.go: a K loop's guarded loads whose index is walked
// (one register per access, the unrolled copies adding 4·i·n) read what
// the kernel that keeps every check reads, and a short slice fails at the
// same site (in one thread, with the same index and length).

import "testing"

const guardIVSrc = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=8x4
func K(t gpu.Thread, in, out []int32, n int) {
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	acc := int32(0)
	for k0 := 0; k0 < n; k0 += 8 {
		//kern:unroll
		for i := range 2 {
			r := ty + 4*i
			v := int32(0)
			if r < n && k0+tx < n {
				v = in[r*n+k0+tx]
			}
			acc = acc*3 + v
		}
	}
	if o := t.BlockIdx().X*32 + t.LinearIdx(); o < len(out) {
		out[o] = acc
	}
}
`

func TestGuardIVKeepsFailingChecks(t *testing.T) {
	opt, err := CompileSource(Config{}, "k.go", []byte(guardIVSrc))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := CompileSource(Config{KeepChecks: true}, "k.go", []byte(guardIVSrc))
	if err != nil {
		t.Fatal(err)
	}
	// The walked index: set before the loop, stepped by 8 on the back edge.
	body := entryBody(t, opt, "K")
	if countLines(body, `^add\.s64 %rd\d+, %rd\d+, 8;`) < 2 {
		t.Errorf("no index stepped by 8 beside the counter:\n%s", body)
	}
	if got := countLines(body, `^mul\.lo\.s64 `); got > 3 {
		t.Errorf("%d 64-bit multiplies, want the index's r*n computed before the loop only:\n%s", got, body)
	}
	for _, n := range []int{1, 3, 7, 8, 9, 13, 21, -2} {
		full := max(n*n, 0)
		for _, inLen := range []int{full, full - 1, full - 9, full / 2, 1} {
			if inLen < 0 {
				continue
			}
			for _, block := range [][3]int{{8, 4, 1}, {1, 1, 1}} {
				grid := [3]int{2, 1, 1}
				a, b := runBCE(t, opt, block, grid, inLen, n), runBCE(t, ref, block, grid, inLen, n)
				// Many threads race for the error slot: the site must match,
				// the index and length in one thread.
				one := block == [3]int{1, 1, 1}
				if a.site != b.site || a.err != b.err || one && (a.idx != b.idx || a.n != b.n) {
					t.Errorf("n %d len %d block %v: failed at %q index %d length %d, want %q %d %d", n, inLen, block, a.site, a.idx, a.n, b.site, b.idx, b.n)
					continue
				}
				if b.site == "" {
					for i := range a.out {
						if a.out[i] != b.out[i] {
							t.Errorf("n %d len %d block %v: out[%d] = %d, want %d", n, inLen, block, i, a.out[i], b.out[i])
							break
						}
					}
				}
			}
		}
	}
}
