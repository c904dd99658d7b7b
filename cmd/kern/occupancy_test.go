package main

import "testing"

func TestOccupancy(t *testing.T) {
	cases := []struct {
		arch                string
		regs, smem, threads int
		warps, maxWarps     int
	}{
		{"sm_80", 32, 0, 256, 64, 64},        // full: 2048 threads
		{"sm_80", 64, 0, 256, 32, 64},        // 64 regs: 32 warps of 2048 regs
		{"sm_80", 128, 0, 256, 16, 64},       // 128 regs: 16 warps
		{"sm_80", 16, 48 << 10, 256, 24, 64}, // 164 KiB / 49 KiB = 3 blocks of 8 warps
		{"sm_80", 16, 0, 32, 32, 64},         // 32 blocks of one warp
		{"sm_90", 255, 0, 1024, 0, 64},       // 255 regs × 1024 threads exceed a block's registers
		{"sm_86", 32, 0, 256, 48, 48},        // 1536 threads per SM
	}
	for _, c := range cases {
		w, m := occupancy(c.arch, c.regs, c.smem, c.threads)
		if w != c.warps || m != c.maxWarps {
			t.Errorf("%s regs=%d smem=%d threads=%d: %d/%d warps, want %d/%d", c.arch, c.regs, c.smem, c.threads, w, m, c.warps, c.maxWarps)
		}
	}
}
