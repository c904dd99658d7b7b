package main

// kern bench -json: the table as JSON, for tools/benchplot (a module of
// its own, so that the plotting library stays out of the kern command
// users run as a tool) or any other consumer.

import (
	"encoding/json"
	"math"
	"os"
)

// BenchReport is the JSON document kern bench -json writes.
type benchReport struct {
	Device string         `json:"device"`
	Rows   []benchRowJSON `json:"rows"`
	Notes  []string       `json:"notes,omitempty"`
}

type benchRowJSON struct {
	Bench string   `json:"bench"`
	Name  string   `json:"name"`
	Size  string   `json:"size"`
	Time  float64  `json:"seconds"`
	Value *float64 `json:"value"` // null when the run was too short to time
	Unit  string   `json:"unit"`
	Peak  *float64 `json:"peak_pct,omitempty"`
	Ref   *float64 `json:"cublas_pct,omitempty"` // matmul: % of cuBLAS on the same case
	Note  string   `json:"note,omitempty"`
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func writeBenchJSON(path, device string, rows []benchRow, notes []string) error {
	rep := benchReport{Device: device, Notes: notes, Rows: make([]benchRowJSON, len(rows))}
	for i, r := range rows {
		rep.Rows[i] = benchRowJSON{Bench: r.bench, Name: r.name, Size: r.size, Time: r.time,
			Value: finite(r.value), Unit: r.unit, Peak: finite(r.peak), Note: r.note}
		if r.ref > 0 {
			rep.Rows[i].Ref = finite(r.ref)
		}
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
