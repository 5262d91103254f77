package main

import (
	"strings"
	"testing"
)

func TestInterspersedFlags(t *testing.T) {
	app := newApp(&session{})
	for in, want := range map[string]string{
		"callrun plan c.yaml --offline --format json":           "callrun plan --offline --format json c.yaml",
		"callrun run c.yaml --limit 3 --sandbox":                "callrun run --limit 3 --sandbox c.yaml",
		"callrun run --limit 3 c.yaml":                          "callrun run --limit 3 c.yaml",
		"callrun -q run c.yaml --until=19:30":                   "callrun -q run --until=19:30 c.yaml",
		"callrun --log-format json status c.yaml --format json": "callrun --log-format json status --format json c.yaml",
		"callrun auth login c.yaml --code sandbox-code":         "callrun auth login --code sandbox-code c.yaml",
		"callrun init leads.csv --agent Spring Promo":           "callrun init --agent Spring leads.csv Promo",
		"callrun plan c.yaml -- --offline":                      "callrun plan c.yaml -- --offline",
		"callrun plan c.yaml --nope":                            "callrun plan --nope c.yaml",
		"callrun plan c.yaml --quiet --offline":                 "callrun --quiet plan --offline c.yaml",
		"callrun run c.yaml --log-level debug --no-progress":    "callrun --log-level debug --no-progress run c.yaml",
		"callrun auth --quiet login c.yaml":                     "callrun --quiet auth login c.yaml",
		"callrun status c.yaml --help":                          "callrun status --help",
		"callrun -q agents list -h c.yaml":                      "callrun -q agents list --help",
		"callrun run --re --generate-bash-completion":           "callrun run --re --generate-bash-completion",
		"callrun --version":                                     "callrun --version",
		"callrun frobnicate --x":                                "callrun frobnicate --x",
		"callrun":                                               "callrun",
	} {
		got := strings.Join(interspersed(app, strings.Fields(in)), " ")
		if got != want {
			t.Errorf("%s\n  got  %s\n  want %s", in, got, want)
		}
	}
}
