package emu

import (
	"errors"
	"testing"
)

// electParamPTX: lanes 5.. elect a leader (d = its lane, p only there),
// and every lane reads word lane of a 128-byte by-value parameter through
// its generic address (cvta.param); store writes through that address.
const electParamPTX = `
.version 8.0
.target sm_90a
.address_size 64
.visible .entry electparam(
	.param .align 64 .b8 blob[128],
	.param .u64 out
)
{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %laneid;
	mul.wide.u32 %rd2, %r1, 12;
	add.s64 %rd3, %rd1, %rd2;
	mov.u32 %r2, -1;
	mov.u32 %r3, 0;
	setp.lt.u32 %p1, %r1, 5;
	@%p1 bra SKIP;
	elect.sync %r2|%p2, 0xffffffe0;
	selp.u32 %r3, 1, 0, %p2;
SKIP:
	st.global.u32 [%rd3], %r2;
	st.global.u32 [%rd3+4], %r3;
	mov.b32 %r4, blob;
	cvt.u64.u32 %rd4, %r4;
	cvta.param.u64 %rd5, %rd4;
	mul.wide.u32 %rd6, %r1, 4;
	add.s64 %rd7, %rd5, %rd6;
	ld.u32 %r5, [%rd7];
	st.global.u32 [%rd3+8], %r5;
	ret;
}
.visible .entry paramstore(
	.param .align 64 .b8 blob[128]
)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<3>;
	mov.b32 %r1, blob;
	cvt.u64.u32 %rd1, %r1;
	cvta.param.u64 %rd2, %rd1;
	st.u32 [%rd2], %r1;
	ret;
}
`

// TestElectSyncAndParamGeneric checks elect.sync (the lowest lane of
// membermask among those executing it leads; every executing lane
// learns its id) and generic addresses of kernel parameters (cvta.param:
// loads read the parameter, stores fault).
func TestElectSyncAndParamGeneric(t *testing.T) {
	m, err := Load([]byte(electParamPTX))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDevice(Options{Synccheck: true})
	pout := upload(t, d, make([]byte, 12*32))
	blob := make([]uint32, 32)
	for i := range blob {
		blob[i] = 0x1000 + uint32(i)*3
	}
	p := params(u32bytes(blob)).u64(pout)
	launchOrFail(t, d, m, "electparam", [3]int{1}, [3]int{32}, 0, p)
	out := bytesU32(download(t, d, pout, 12*32))
	for l := range 32 {
		wantID, wantLead := uint32(0xffffffff), uint32(0)
		if l >= 5 {
			wantID, wantLead = 5, b2u32(l == 5)
		}
		if got := out[3*l : 3*l+3]; got[0] != wantID || got[1] != wantLead || got[2] != blob[l] {
			t.Errorf("lane %d: elect %#x leader %d param word %#x; want %#x %d %#x", l, got[0], got[1], got[2], wantID, wantLead, blob[l])
		}
	}
	err = d.Launch(m, "paramstore", LaunchConfig{Grid: [3]int{1}, Block: [3]int{1}, Params: make([]byte, 128)})
	if !errors.Is(err, ErrReadOnly) {
		t.Errorf("a store through a parameter's generic address: %v, want ErrReadOnly", err)
	}
}
