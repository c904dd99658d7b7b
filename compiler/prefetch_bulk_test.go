package compiler

// gpu.PrefetchL2Bulk (lower_prefetch_bulk.go): the range it prefetches,
// for i and n anywhere in int, against a saturating reference written
// differently from the compiler's clamp. The emitted PTX is run on the
// emulator twice: as compiled (the sm_90 form's alignment and size are
// checked there, a fault otherwise), and instrumented, each prefetch
// replaced by stores of what it would prefetch (the sm_90 instruction's
// address and size; the sm_80 loop's line count, lowest and highest
// line), which the test compares with the reference.

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/gokern/kern/emu"
)

// bulkRange is the reference: the elements [lo, lo+cnt) of s[i:i+n]
// clamped to [0, length), with i+n saturated at MaxInt64.
func bulkRange(i, n, length int64) (lo, cnt int64) {
	if n <= 0 {
		return 0, 0
	}
	end := i + n
	if i > 0 && n > math.MaxInt64-i {
		end = math.MaxInt64
	}
	lo, hi := max(i, 0), min(end, length)
	if hi <= lo {
		return 0, 0
	}
	return lo, hi - lo
}

const bulkSrc = `package k

import "github.com/gokern/kern/gpu"

//kern:kernel
func K(t gpu.Thread, w []ELEM, dbg []uint64, i, n int) {
	dbg[0] = 1
	gpu.PrefetchL2Bulk(w, i, n)
}
`

var (
	dbgParam  = regexp.MustCompile(`ld\.param\.u64 (%rd\d+), \[dbg_ptr\];`)
	bulkLine  = regexp.MustCompile(`(?m)^\t(@%p\d+) cp\.async\.bulk\.prefetch\.L2\.global \[(%rd\d+)\], (%r\d+);$`)
	prefLine  = regexp.MustCompile(`(?m)^\tprefetch\.global\.L2 \[(%rd\d+)\];$`)
	bulkCases = [][2]int64{
		{0, 1000}, {0, 1}, {3, 5}, {7, 100}, {1, 1}, {-5, 10}, {-5, 3}, {995, 100}, {999, 1}, {1000, 5},
		{500, 0}, {500, -3}, {math.MinInt64, math.MaxInt64}, {math.MinInt64 + 10, math.MaxInt64},
		{math.MaxInt64 - 5, 100}, {10, math.MaxInt64}, {-1 << 62, 1<<62 + 7}, {math.MinInt64, math.MinInt64},
	}
)

func TestPrefetchL2BulkRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cases := append([][2]int64(nil), bulkCases...)
	for range 40 {
		cases = append(cases, [2]int64{rng.Int64N(1100) - 50, rng.Int64N(300) - 20})
	}
	const length = 1000
	for _, elem := range []struct {
		name string
		size int64
	}{{"uint8", 1}, {"gpu.Half", 2}, {"float32", 4}, {"float64", 8}} {
		src := strings.Replace(bulkSrc, "ELEM", elem.name, 1)
		for _, arch := range []string{"sm_80", "sm_90"} {
			p, err := CompileSource(Config{Arch: arch}, "k.go", []byte(src))
			if err != nil {
				t.Fatalf("%s %s: %v", elem.name, arch, err)
			}
			dbg := dbgPointer(t, p.PTX)
			var inst string
			if arch == "sm_90" {
				if !strings.Contains(p.PTX, ".version 8.0") || len(bulkLine.FindAllString(p.PTX, -1)) != 1 || prefLine.MatchString(p.PTX) {
					t.Fatalf("%s sm_90: want one predicated cp.async.bulk.prefetch, PTX 8.0:\n%s", elem.name, p.PTX)
				}
				inst = bulkLine.ReplaceAllString(p.PTX, "\t$1 st.global.u64 ["+dbg+"+8], $2;\n\t$1 st.global.u32 ["+dbg+"+16], $3;")
			} else {
				if strings.Contains(p.PTX, "cp.async.bulk") || len(prefLine.FindAllString(p.PTX, -1)) != 1 {
					t.Fatalf("%s sm_80: want one prefetch.global.L2 in a loop:\n%s", elem.name, p.PTX)
				}
				inst = prefLine.ReplaceAllString(p.PTX, "\tred.global.add.u64 ["+dbg+"+24], 1;\n\tred.global.min.u64 ["+dbg+"+32], $1;\n\tred.global.max.u64 ["+dbg+"+40], $1;")
			}
			for _, c := range cases {
				if _, _, err := runBulk(p.PTX, length, elem.size, c[0], c[1]); err != nil {
					t.Fatalf("%s %s i=%d n=%d: %v", elem.name, arch, c[0], c[1], err)
				}
				got, base, err := runBulk(inst, length, elem.size, c[0], c[1])
				if err != nil {
					t.Fatalf("%s %s i=%d n=%d (instrumented): %v", elem.name, arch, c[0], c[1], err)
				}
				lo, cnt := bulkRange(c[0], c[1], length)
				want := [6]uint64{1, 0, 0, 0, math.MaxUint64, 0} // nothing prefetched
				if cnt > 0 {
					start, end := base+uint64(lo*elem.size), base+uint64((lo+cnt)*elem.size)
					if arch == "sm_90" {
						a := start &^ 15
						want[1], want[2] = a, ((end+15)&^15)-a
					} else {
						first, last := start&^127, (end-1)&^127
						want[3], want[4], want[5] = (last-first)/128+1, first, last
					}
				}
				if got != want {
					t.Errorf("%s %s i=%d n=%d: got %s, want %s (lo %d, cnt %d)", elem.name, arch, c[0], c[1], fmtBulk(got, base), fmtBulk(want, base), lo, cnt)
				}
			}
		}
	}
}

// dbgPointer returns the register holding dbg's global address.
func dbgPointer(t *testing.T, ptx string) string {
	t.Helper()
	if m := dbgParam.FindStringSubmatch(ptx); m != nil {
		cvta := regexp.MustCompile(`cvta\.to\.global\.u64 (%rd\d+), ` + regexp.QuoteMeta(m[1]) + `;`)
		if c := cvta.FindStringSubmatch(ptx); c != nil {
			return c[1]
		}
	}
	t.Fatalf("no global address of dbg in\n%s", ptx)
	return ""
}

func fmtBulk(v [6]uint64, base uint64) string {
	s := "no bulk prefetch"
	if v[2] != 0 {
		s = fmt.Sprintf("bulk at base%+d, %d bytes", int64(v[1]-base), v[2])
	}
	if v[3] == 0 {
		return s + "; no lines"
	}
	return s + fmt.Sprintf("; %d lines, base%+d..base%+d", v[3], int64(v[4]-base), int64(v[5]-base))
}

// runBulk launches K on one thread with w of length elements of size
// bytes and returns dbg[0:6] (dbg[2] holds the u32 size) and w's device
// address.
func runBulk(ptx string, length, size, i, n int64) ([6]uint64, uint64, error) {
	var out [6]uint64
	m, err := emu.Load([]byte(ptx))
	if err != nil {
		return out, 0, err
	}
	dev := emu.NewDevice(emu.Options{Memcheck: true})
	w, err := dev.Alloc(int(length * size))
	if err != nil {
		return out, 0, err
	}
	dbg, err := dev.Alloc(8 * len(out))
	if err != nil {
		return out, 0, err
	}
	raw := make([]byte, 8*len(out))
	binary.LittleEndian.PutUint64(raw[32:], math.MaxUint64)
	if err := dev.Write(dbg, raw); err != nil {
		return out, 0, err
	}
	prm := binary.LittleEndian.AppendUint64(nil, w)
	prm = binary.LittleEndian.AppendUint64(prm, uint64(length))
	prm = binary.LittleEndian.AppendUint64(prm, dbg)
	prm = binary.LittleEndian.AppendUint64(prm, uint64(len(out)))
	prm = binary.LittleEndian.AppendUint64(prm, uint64(i))
	prm = binary.LittleEndian.AppendUint64(prm, uint64(n))
	if err := dev.Launch(m, "K", emu.LaunchConfig{Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}, Params: prm}); err != nil {
		return out, 0, err
	}
	if err := dev.Read(dbg, raw); err != nil {
		return out, 0, err
	}
	for k := range out {
		out[k] = binary.LittleEndian.Uint64(raw[8*k:])
	}
	out[2] &= math.MaxUint32 // the stored u32 size, not the word after it
	return out, w, nil
}
