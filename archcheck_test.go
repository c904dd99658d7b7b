package kern

import "testing"

func TestArchFits(t *testing.T) {
	for _, c := range []struct {
		arch         string
		major, minor int
		ok           bool
	}{
		{"sm_80", 8, 0, true},
		{"sm_80", 9, 0, true},
		{"sm_80", 7, 5, false},
		{"sm_90", 9, 0, true},
		{"sm_90a", 9, 0, true},
		{"sm_90a", 8, 9, false},
		{"sm_90a", 10, 0, false}, // arch-specific PTX is not forward compatible
		{"bogus", 9, 0, false},
	} {
		if err := archFits(c.arch, c.major, c.minor); (err == nil) != c.ok {
			t.Errorf("archFits(%s, %d.%d) = %v, want ok=%v", c.arch, c.major, c.minor, err, c.ok)
		}
	}
}
