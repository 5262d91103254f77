package campaign

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/report/store"
	"golang.org/x/time/rate"
)

// instantCalls is a CallStarter that answers every call start at once, as
// the service would, without any HTTP: what is left of a run is callrun's
// own work.
type instantCalls struct{}

func (instantCalls) StartCallForm(context.Context, *apiclient.CallEndpoint, string) (*apiclient.CallResponse, error) {
	return &apiclient.CallResponse{StatusCode: 200, Body: `{"status":"success","call_id":"call_1"}`}, nil
}

// BenchmarkRunOverhead measures what a run costs callrun itself for each
// contact, with the service out of the picture (instantCalls): reading and
// normalising the sheet, the journal's intent and outcome (written and
// fsynced in group commits), and the dispatch bookkeeping, at concurrency
// 4 and 32 with pacing off. cpu-µs/contact is this process's CPU time
// (user and system) over contacts; allocs/op and B/op are per contact.
func BenchmarkRunOverhead(b *testing.B) {
	const n = 20_000
	for _, conc := range []int{4, 32} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			dir := b.TempDir()
			var sheet []byte
			sheet = append(sheet, "Contact Id,First Name,Last Name,Phone,Email\n"...)
			areas := []string{"212", "213", "303", "312", "404", "415", "512", "617"}
			for i := range n {
				sheet = fmt.Appendf(sheet, "hl_%07d,Ada,Lovelace,(%s) %d-%04d,ada%d@example.com\n", i, areas[i%len(areas)], 200+i/10_000%800, i%10_000, i)
			}
			if err := os.WriteFile(filepath.Join(dir, "contacts.csv"), sheet, 0o644); err != nil {
				b.Fatal(err)
			}
			yml := fmt.Sprintf(`name: overhead
agents:
  - name: Bench
    prompt: hello
sheets:
  - file: contacts.csv
    agent: Bench
    fields: {phone_number: Phone, first_name: First Name, last_name: Last Name, email: Email, ghl_contact_id: Contact Id}
    set: {local_presence_number: "No"}
region: US
pace: {per_second: 1000, burst: 1000, concurrency: %d}
unsafe_ignore_called_person_hours: true # measures dispatch at any hour
`, conc)
			path := filepath.Join(dir, "campaign.yaml")
			if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
				b.Fatal(err)
			}
			f, err := Load(path, LoadOptions{Offline: true})
			if err != nil {
				b.Fatal(err)
			}
			agents := []AgentPlan{{Spec: &f.Agents[0], AgentID: "agent_1", Status: "active"}}
			eps := []*apiclient.CallEndpoint{{URL: "http://127.0.0.1:1/call", Method: "POST"}}
			var cpu time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				j, st, err := store.OpenJournal(filepath.Join(dir, fmt.Sprintf("journal-%d.jsonl", i)), store.JournalOptions{})
				if err != nil {
					b.Fatal(err)
				}
				c0 := benchRusage()
				b.StartTimer()
				res, err := Run(context.Background(), f, rate.NewLimiter(rate.Inf, 1), RunOptions{
					Calls: instantCalls{}, Agents: agents, Endpoints: eps, Journal: j, State: st,
				})
				b.StopTimer()
				cpu += benchRusage() - c0
				if err != nil || res.Sent != n {
					b.Fatalf("%v: %+v", err, res)
				}
				j.Close()
				st.Close()
				b.StartTimer()
			}
			b.StopTimer()
			contacts := float64(b.N * n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/contacts, "ns/contact")
			b.ReportMetric(float64(cpu.Microseconds())/contacts, "cpu-µs/contact")
			b.ReportMetric(0, "ns/op")
		})
	}
}
