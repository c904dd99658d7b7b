package compiler

// Tests of reassoc32.go, of the shared indices a 32-bit entry keeps in 64
// bits (narrowadd.go sharedIndex) and of their constants moved into the
// address (sharedlin.go): the 32-bit entry computes what the kernel's
// entry computes, and a failing check reports the same site, index and
// length.

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// regroupSrc loads an edge tile as MatMul32 does, `(r0+r)*n + k0 + tx`
// under `r0+r < n && k0+tx < n`, into a shared tile read back at
// `ty*8 + kk` in an unrolled loop, and ends with an unguarded read whose
// index `(tx-3) + (ty*n + 2*tx)` has a negative int32 term (regrouped as
// ty*n + sign-extended (tx-3 + 2*tx)), which fails for short in.
const regroupSrc = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel block=8x4 idx32
func K(t gpu.Thread, in, out []int32, n int) {
	s := gpu.Shared[int32](t, 8*8)
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	r0 := t.BlockIdx().X * 8
	acc := int32(0)
	for k0 := 0; k0 < n; k0 += 8 {
		//kern:unroll
		for i := range 2 {
			r := ty + 4*i
			v := int32(0)
			if r0+r < n && k0+tx < n {
				v = in[(r0+r)*n+k0+tx]
			}
			s[r*8+tx] = v
		}
		t.Sync()
		//kern:unroll
		for kk := range 8 {
			acc = acc*3 + s[ty*8+kk]
		}
		t.Sync()
	}
	acc += in[(tx-3)+(ty*n+2*tx)]
	if o := t.BlockIdx().X*32 + t.LinearIdx(); o < len(out) {
		out[o] = acc
	}
}
`

func TestRegroupAddMatchesEntry(t *testing.T) {
	p, err := CompileSource(Config{}, "k.go", []byte(regroupSrc))
	if err != nil {
		t.Fatal(err)
	}
	body := entryBody(t, p, "K_i32")
	// The regrouped sums, an int32 add extended and added to the product:
	// the tile load's in both unrolled copies and the final read's.
	if got := regroupedSums(body); got < 3 {
		t.Errorf("%d regrouped sums, want 3 ((r0+r)*n + (k0+tx) twice, ty*n + (tx-3 + 2*tx)):\n%s", got, body)
	}
	// The shared tile's indices stay 64-bit: no shl.b64 of an extended
	// 32-bit value addresses it.
	if bad := narrowSharedAddrs(body); bad > 0 {
		t.Errorf("%d shared addresses from a 32-bit index:\n%s", bad, body)
	}
	// sharedlin.go: the constant of `r*8 + tx` (copy 1 of the store, r =
	// ty+4) and of `ty*8 + kk` (kk = 1…7) is an offset of the tile's
	// address.
	if got := offsetSharedAddrs(body); got < 8 {
		t.Errorf("%d shared accesses at tile+constant+index, want 8 (s[r*8+tx] in copy 1, s[ty*8+kk] for kk 1…7):\n%s", got, body)
	}
	for _, n := range []int{1, 3, 7, 8, 9, 13, 21, -2, 0} {
		full := max(n*n, 0)
		for _, inLen := range []int{full + 64, full, full - 1, full / 2, 1, 0} {
			if inLen < 0 {
				continue
			}
			for _, block := range [][3]int{{8, 4, 1}, {1, 1, 1}, {5, 3, 1}, {2, 1, 1}} {
				// Threads that fail at different sites race for the error
				// slot: one thread (one block) compares site, index and
				// length, the others whether and how the launch failed
				// (and 2×1 threads in two blocks the second block's rows).
				one := block == [3]int{1, 1, 1}
				grid := [3]int{2, 1, 1}
				if one {
					grid = [3]int{1, 1, 1}
				}
				a := runBCEEntry(t, p, "K_i32", block, grid, inLen, n)
				b := runBCEEntry(t, p, "K", block, grid, inLen, n)
				if (a.site == "") != (b.site == "") || a.err != b.err || one && (a.site != b.site || a.idx != b.idx || a.n != b.n) ||
					b.site == "" && fmt.Sprint(a.out) != fmt.Sprint(b.out) {
					t.Errorf("n %d len %d block %v: K_i32 failed at %q index %d length %d out %v, K at %q %d %d out %v",
						n, inLen, block, a.site, int64(a.idx), a.n, a.out, b.site, int64(b.idx), b.n, b.out)
				}
			}
		}
	}
}

// narrowSharedAddrs counts the ld/st.shared whose byte offset is a shl.b64
// of a register that a cvt from 32 bits defines.
func narrowSharedAddrs(body string) int {
	def := map[string]string{}
	defRE := regexp.MustCompile(`^(\S+)\s+(%\w+),`)
	shlRE := regexp.MustCompile(`^shl\.b64 (%\w+), (%\w+), \d+;`)
	addRE := regexp.MustCompile(`^add\.s64 (%\w+), (%\w+), (%\w+);`)
	memRE := regexp.MustCompile(`^(?:ld|st)\.shared\.\S+ .*\[(%\w+)\]`)
	shlOf, addOf := map[string]string{}, map[string][2]string{}
	bad := 0
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		if m := defRE.FindStringSubmatch(l); m != nil {
			def[m[2]] = m[1]
		}
		if m := shlRE.FindStringSubmatch(l); m != nil {
			shlOf[m[1]] = m[2]
		}
		if m := addRE.FindStringSubmatch(l); m != nil {
			addOf[m[1]] = [2]string{m[2], m[3]}
		}
		m := memRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for _, o := range addOf[m[1]] {
			if src, ok := shlOf[o]; ok && strings.HasPrefix(def[src], "cvt.") && strings.HasSuffix(def[src], "32") {
				bad++
			}
		}
	}
	return bad
}

// regroupedSums counts the lines `add.s32 %r, …`, `cvt.{s,u}64.{s,u}32
// %rd, %r` and `add.s64 %rd, %rd, %rd` in a row that regroupAdd emits.
func regroupedSums(body string) int {
	add32 := regexp.MustCompile(`^add\.s32 (%r\d+), `)
	cvt := regexp.MustCompile(`^cvt\.[su]64\.[su]32 (%rd\d+), (%r\d+);`)
	add64 := regexp.MustCompile(`^add\.s64 %rd\d+, (%rd\d+), %rd\d+;`)
	var ls []string
	for _, l := range strings.Split(body, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, ".loc") {
			ls = append(ls, l)
		}
	}
	n := 0
	for i := 0; i+2 < len(ls); i++ {
		a, c, w := add32.FindStringSubmatch(ls[i]), cvt.FindStringSubmatch(ls[i+1]), add64.FindStringSubmatch(ls[i+2])
		if a != nil && c != nil && w != nil && c[2] == a[1] && w[1] == c[1] {
			n++
		}
	}
	return n
}

// offsetSharedAddrs counts the ld/st.shared whose address is
// `add.s64 %a, %b, %i` with %b = `add.s64 %b, %tile, <constant>` and %tile
// a shared array's address.
func offsetSharedAddrs(body string) int {
	tileRE := regexp.MustCompile(`^mov\.u64 (%rd\d+), smem\d+;`)
	offRE := regexp.MustCompile(`^add\.s64 (%rd\d+), (%rd\d+), \d+;`)
	addRE := regexp.MustCompile(`^add\.s64 (%rd\d+), (%rd\d+), %rd\d+;`)
	memRE := regexp.MustCompile(`^(?:ld|st)\.shared\.\S+ .*\[(%rd\d+)\]`)
	tile, off, addr := map[string]bool{}, map[string]bool{}, map[string]bool{}
	n := 0
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		if m := tileRE.FindStringSubmatch(l); m != nil {
			tile[m[1]] = true
		}
		if m := offRE.FindStringSubmatch(l); m != nil && tile[m[2]] {
			off[m[1]] = true
		}
		if m := addRE.FindStringSubmatch(l); m != nil && off[m[2]] {
			addr[m[1]] = true
		}
		if m := memRE.FindStringSubmatch(l); m != nil && addr[m[1]] {
			n++
		}
	}
	return n
}
