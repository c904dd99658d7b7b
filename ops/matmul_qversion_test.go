package ops

import "testing"

// The names kern bench prints follow the dispatch: the GEMV up to 16 rows
// (v1 only past v2's group limit), the tensor-core kernels above.
func TestMatmulQuantVersions(t *testing.T) {
	deep := 128 * 200 // more groups than GEMV v2 stages
	for _, c := range []struct {
		got, want string
	}{
		{MatmulInt4Version(1, 6144, 2560), "gemv v2 mma"},
		{MatmulInt4Version(16, 2560, 9728), "gemv v2 mma"},
		{MatmulInt4Version(16, 2560, deep), "gemv v1"},
		{MatmulInt4Version(17, 2560, 2560), "gemm 64x128"},
		{MatmulInt8Version(1, 6144, 2560), "gemv"},
		{MatmulInt8Version(16, 6144, 2560), "gemv"},
		{MatmulInt8Version(16, 6144, 2568), "v1"},
		{MatmulInt8Version(17, 6144, 2560), "v2 128x128"},
		{MatmulInt8Version(128, 6144, 2568), "v1"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if int4Pick(16, deep) != w4GEMV || int8Pick(17, 2568) != i8V1 {
		t.Errorf("picks disagree with the names")
	}
}
