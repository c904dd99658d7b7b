package dynlib

import (
	"strings"
	"testing"
)

func TestResolvePrefersTheFirstNameAndReportsMissingRequiredOnes(t *testing.T) {
	exported := map[string]uintptr{"f_v2": 0x20, "f": 0x10, "g": 0x30}
	var f, g, h, o Proc
	missing := Resolve([]Symbol{
		Req(&f, "f_v2", "f"),
		Req(&g, "g_v2", "g"),
		Req(&h, "h"),
		Opt(&o, "o"),
	}, func(n string) uintptr { return exported[n] })
	if f != (Proc{"f_v2", 0x20}) || g != (Proc{"g", 0x30}) || h != (Proc{"h", 0}) || o != (Proc{"o", 0}) {
		t.Errorf("resolved f=%v g=%v h=%v o=%v", f, g, h, o)
	}
	if len(missing) != 1 || missing[0] != "h" {
		t.Errorf("missing = %v, want [h]", missing)
	}
}

func TestLoadNamesEveryCandidateThatFailed(t *testing.T) {
	var prepared []string
	r := Load([]string{"/nonexistent/libkern_a.so", "libkern_b_does_not_exist.so"},
		func(n string) { prepared = append(prepared, n) },
		func(func(string) uintptr) []string { t.Fatal("resolve called"); return nil })
	if r.OK() || r.Library != "" || len(r.Tried) != 2 || len(prepared) != 2 {
		t.Fatalf("Load = %+v (prepared %v)", r, prepared)
	}
	for i, n := range []string{"libkern_a.so", "libkern_b_does_not_exist.so"} {
		if !strings.Contains(r.Tried[i].Error(), n) {
			t.Errorf("Tried[%d] = %v, does not name %s", i, r.Tried[i], n)
		}
	}
}

func TestCodesAndGoString(t *testing.T) {
	type result int32
	codes := Codes[result]{0: {"LIB_SUCCESS", "no error"}, 7: {"LIB_BAD", "a bad value"}}
	if codes.Name(7, "libResult") != "LIB_BAD" || codes.Text(7) != "a bad value" {
		t.Errorf("known code: %q %q", codes.Name(7, "libResult"), codes.Text(7))
	}
	if codes.Name(42, "libResult") != "libResult(42)" || codes.Text(42) != "" {
		t.Errorf("unknown code: %q %q", codes.Name(42, "libResult"), codes.Text(42))
	}
	b := []byte("CUDA_ERROR_X\x00junk")
	if s := GoString(&b[0]); s != "CUDA_ERROR_X" {
		t.Errorf("GoString = %q", s)
	}
	if GoString(nil) != "" {
		t.Error("GoString(nil) is not empty")
	}
}
