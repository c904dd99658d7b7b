package main

import "fmt"

// Theoretical occupancy: how many warps of a kernel an SM holds at once,
// limited by threads, blocks, registers and shared memory per SM. It is
// the figure of the CUDA occupancy calculator, computed from what ptxas
// reports, so it can be known without a GPU.

// smLimits are one architecture's per-SM resources (CUDA C Programming
// Guide, "Technical Specifications per Compute Capability").
type smLimits struct {
	threads int // resident threads
	blocks  int // resident blocks
	smem    int // shared memory bytes available to blocks
	reserve int // shared memory the system reserves per block
}

var archLimits = map[string]smLimits{
	"sm_70":  {2048, 32, 96 << 10, 0},
	"sm_72":  {2048, 32, 96 << 10, 0},
	"sm_75":  {1024, 16, 64 << 10, 0},
	"sm_80":  {2048, 32, 164 << 10, 1 << 10},
	"sm_86":  {1536, 16, 100 << 10, 1 << 10},
	"sm_87":  {2048, 16, 164 << 10, 1 << 10},
	"sm_89":  {1536, 24, 100 << 10, 1 << 10},
	"sm_90":  {2048, 32, 228 << 10, 1 << 10},
	"sm_90a": {2048, 32, 228 << 10, 1 << 10},
}

const (
	regsPerSM       = 64 << 10
	regUnitPerWarp  = 256 // registers are allocated per warp in units of 256
	maxRegsPerBlock = 64 << 10
)

// occupancy returns the resident warps per SM and the SM's maximum for a
// kernel using regs registers per thread and smem bytes of shared memory
// per block, launched with blocks of threads threads; 0 warps means the
// block cannot run at all.
func occupancy(arch string, regs, smem, threads int) (warps, maxWarps int) {
	lim, ok := archLimits[arch]
	if !ok || threads <= 0 {
		return 0, 0
	}
	maxWarps = lim.threads / 32
	warpsPerBlock := (threads + 31) / 32
	blocks := min(lim.blocks, lim.threads/(warpsPerBlock*32))
	if regs > 0 {
		perWarp := (regs*32 + regUnitPerWarp - 1) / regUnitPerWarp * regUnitPerWarp
		if perWarp*warpsPerBlock > maxRegsPerBlock {
			return 0, maxWarps
		}
		blocks = min(blocks, regsPerSM/perWarp/warpsPerBlock)
	}
	if need := smem + lim.reserve; smem > 0 {
		blocks = min(blocks, lim.smem/need)
	}
	return blocks * warpsPerBlock, maxWarps
}

// occupancyText is occupancy as the reports print it: "75% (48/64 warps)",
// or "-" for an unknown architecture.
func occupancyText(arch string, regs, smem, threads int) string {
	warps, most := occupancy(arch, regs, smem, threads)
	if most == 0 {
		return "-"
	}
	return fmt.Sprintf("%d%% (%d/%d warps)", 100*warps/most, warps, most)
}
