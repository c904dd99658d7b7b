package emu

import (
	"errors"
	"strings"
	"testing"
)

// setmaxnregPTX is a two-warp kernel whose warps give registers back and
// take them, then store their lane; COUNT and GUARD are substituted.
const setmaxnregPTX = `.version 8.0
.target sm_90a
.address_size 64
.visible .entry split(.param .u64 out_ptr)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out_ptr];
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 3;
	GUARD setmaxnreg.dec.sync.aligned.u32 COUNT;
	setmaxnreg.inc.sync.aligned.u32 232;
	mul.wide.u32 %rd2, %r1, 4;
	add.u64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r1;
	ret;
}
`

func runSetmaxnreg(t *testing.T, count, guard string) error {
	t.Helper()
	m, err := Load([]byte(strings.NewReplacer("COUNT", count, "GUARD", guard).Replace(setmaxnregPTX)))
	if err != nil {
		return err
	}
	d := NewDevice(Options{})
	out := upload(t, d, make([]byte, 4*64))
	if err := d.Launch(m, "split", LaunchConfig{Grid: [3]int{1}, Block: [3]int{64}, Params: params{}.u64(out)}); err != nil {
		return err
	}
	for i, v := range bytesU32(download(t, d, out, 4*64)) {
		if v != uint32(i) {
			t.Errorf("out[%d] = %d", i, v)
		}
	}
	return nil
}

// TestSetmaxnreg: the instruction is a no-op on the emulator's registers
// but keeps the hardware's rules: a constant count, a multiple of 8 in
// 24..256, executed by the whole warp.
func TestSetmaxnreg(t *testing.T) {
	if err := runSetmaxnreg(t, "40", ""); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"20", "44", "264"} {
		err := runSetmaxnreg(t, c, "")
		if err == nil || !strings.Contains(err.Error(), "multiple of 8 in 24..256") {
			t.Errorf("count %s: %v, want a load error naming the rule", c, err)
		}
	}
	if err := runSetmaxnreg(t, "40", "@%p1"); !errors.Is(err, ErrTrap) || !strings.Contains(err.Error(), "all 32 lanes") {
		t.Errorf("one lane: %v, want ErrTrap naming the rule", err)
	}
}
