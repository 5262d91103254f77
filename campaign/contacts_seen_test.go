package campaign

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestNumbersSeenSharedAsItGrows: goroutines sharing one table, each
// recording the same keys in the same order (warm between batches), from
// the least size through many growths, all get each key's first index.
func TestNumbersSeenSharedAsItGrows(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	var keys []uint64
	for range 60_000 {
		switch rng.Intn(4) {
		case 0:
			if len(keys) > 0 {
				keys = append(keys, keys[rng.Intn(len(keys))])
				continue
			}
			fallthrough
		default:
			agent := uint64(rng.Intn(3))
			if rng.Intn(50) == 0 {
				agent = 8192 + uint64(rng.Intn(3)) // bit 63 set
			}
			keys = append(keys, (uint64(rng.Int63n(1e15-1))+1)|agent<<50)
		}
	}
	keys = append(keys, 0, 0, emptyKey|5, 0)
	first := map[uint64]int{}
	for i, k := range keys {
		if _, ok := first[k]; !ok {
			first[k] = i
		}
	}
	seen := newNumbersSeen(nil)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			batch := 1 + g*37
			for start := 0; start < len(keys); start += batch {
				b := keys[start:min(start+batch, len(keys))]
				seen.warm(b)
				for j, k := range b {
					i := start + j
					got := seen.firstRow(k, rowAt{sheet: int32(i >> 20), row: int32(i)})
					if want := first[k]; got != (rowAt{sheet: int32(want >> 20), row: int32(want)}) {
						errs <- fmt.Sprintf("goroutine %d key %#x at %d: got %v, want row %d", g, k, i, got, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if seen.used != len(first) || 2*seen.used > len(seen.slots) {
		t.Errorf("used %d of %d slots, want %d", seen.used, len(seen.slots), len(first))
	}
}

// TestContactReadersShareAGrowingTable: a run and a report reading the
// same sheets at once, batches of 7 rows on 4 workers, sharing a table that
// starts at its least size and grows while both read, judge every row as
// one reader alone does and as a map of first rows says.
func TestContactReadersShareAGrowingTable(t *testing.T) {
	saved := [2]int{judgeWorkers, rowBatchSize}
	judgeWorkers, rowBatchSize = 4, 7
	defer func() { judgeWorkers, rowBatchSize = saved[0], saved[1] }()
	for _, mode := range []string{"campaign", "agent"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			rng := rand.New(rand.NewSource(3))
			// numbers of which a third repeat, across 3 sheets of 2 agents
			pool := make([]string, 3000)
			for i := range pool {
				pool[i] = fmt.Sprintf("+1415%03d%04d", 200+rng.Intn(700), rng.Intn(10000))
			}
			type row struct {
				agent int
				phone string
			}
			var all [][]row
			for s, agent := range []int{0, 1, 0} {
				var b strings.Builder
				b.WriteString("Phone\n")
				var rows []row
				for range 2500 {
					p := pool[rng.Intn(len(pool))]
					b.WriteString(p + "\n")
					rows = append(rows, row{agent, p})
				}
				all = append(all, rows)
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%d.csv", s)), []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			yaml := "name: c\nagents: [{name: A, prompt: p}, {name: B, prompt: p}]\nsheets:\n" +
				"  - {file: s0.csv, agent: A, fields: {phone_number: Phone}}\n" +
				"  - {file: s1.csv, agent: B, fields: {phone_number: Phone}}\n" +
				"  - {file: s2.csv, agent: A, fields: {phone_number: Phone}}\n" +
				"region: US\ndedupe: " + mode + "\n"
			if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
			if err != nil {
				t.Fatal(err)
			}
			// the model
			var want []string
			seenModel := map[string]bool{}
			for _, rows := range all {
				for _, r := range rows {
					k := r.phone
					if mode == "agent" {
						k = fmt.Sprint(r.agent, k)
					}
					if seenModel[k] {
						want = append(want, Duplicate)
					} else {
						seenModel[k] = true
						want = append(want, ToCall)
					}
				}
			}
			wantS := strings.Join(want, " ")
			read := func(seen *numbersSeen) (string, error) {
				cr := f.NewContactReader(nil)
				if seen != nil {
					cr.seen = seen
				}
				var out []Contact
				err := cr.Each(context.Background(), func(c *Contact) error {
					out = append(out, *c)
					return nil
				})
				return statuses(out), err
			}
			alone, err := read(nil)
			if err != nil {
				t.Fatal(err)
			}
			if alone != wantS {
				t.Fatalf("alone differs from the model")
			}
			for round := range 5 {
				shared := newNumbersSeen(nil) // least size: grows as they read
				var got [2]string
				var errs [2]error
				var wg sync.WaitGroup
				for k := range 2 {
					wg.Go(func() { got[k], errs[k] = read(shared) })
				}
				wg.Wait()
				for k := range 2 {
					if errs[k] != nil {
						t.Fatal(errs[k])
					}
					if got[k] != wantS {
						t.Fatalf("round %d reader %d: statuses differ from the model", round, k)
					}
				}
				if len(shared.slots) == 1024 {
					t.Fatalf("table never grew")
				}
			}
		})
	}
}

// TestTooManyAgentsRefused: a campaign of more agents than a dedupe key
// holds the index of is refused before anything is read: with 16,385,
// agents 0 and 16,384 shared the key of a number, and with dedupe: agent
// the second row was held a duplicate and not called.
func TestTooManyAgentsRefused(t *testing.T) {
	for _, n := range []int{maxAgents, maxAgents + 1} {
		dir := t.TempDir()
		var b strings.Builder
		b.WriteString("name: c\nregion: US\ndedupe: agent\nagents:\n")
		for i := range n {
			fmt.Fprintf(&b, "  - {name: A%d, prompt: p}\n", i)
		}
		b.WriteString("sheets:\n  - {file: s0.csv, agent: A0, fields: {phone_number: Phone}}\n")
		for name, content := range map[string]string{"c.yaml": b.String(), "s0.csv": "Phone\n+14155550132\n"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
		want := fmt.Sprintf("%d agents are declared; a campaign takes at most %d", n, maxAgents)
		switch {
		case n <= maxAgents && err != nil:
			t.Errorf("%d agents: %v", n, err)
		case n > maxAgents && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%d agents: error %v, want one saying %q", n, err, want)
		}
	}
}
