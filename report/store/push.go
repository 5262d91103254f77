package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Pushed says what [Postgres.PushFiles] copied into the database, each
// count of its part of the files, and how many of those were new there.
type Pushed struct {
	Records                         int    // the journals' records
	Entries, EntriesNew             int    // the do-not-call list's
	Starts, StartsNew               int    // the last StartsHorizon's call starts
	Conversations, ConversationsNew int    // and conversations
	List, CallStarts                string // where the list and the starts were
}

// PushFiles copies into the database the state a campaign kept in files:
// the do-not-call list of the files first (once the journal is in the
// database, runs read the database's list only), then the machine's call
// starts and conversations of the last [StartsHorizon], every campaign's
// (contact pressure in the database counts only what the database holds,
// and a number called from these files today must stay held there), then
// the journals, and marks the state directory dir with [PushedFile]. The
// caller holds dir's lock and the database's. Copied again, an entry, a
// start or a conversation changes nothing; merge adds the journals to a
// campaign the database holds already.
func (p *Postgres) PushFiles(ctx context.Context, dir string, journals []string, merge bool) (Pushed, error) {
	var out Pushed
	files, err := Files{Dir: dir}.DoNotCall()
	if err != nil {
		return out, err
	}
	out.List = files.String()
	dnc, err := files.Entries(ctx)
	if err != nil {
		return out, err
	}
	copied, err := (&pgDoNotCall{p: p}).Add(ctx, dnc)
	if err != nil {
		return out, fmt.Errorf("copying the %s into the database (nothing of the journal was pushed): %w", files, err)
	}
	out.Entries, out.EntriesNew = len(dnc), len(copied)
	home, err := Home()
	if err != nil {
		return out, err
	}
	startsFile := OpenCallStartsFile(home)
	out.CallStarts = startsFile.String()
	recent, err := startsFile.Recent(ctx, time.Now().Add(-StartsHorizon))
	if err != nil {
		return out, err
	}
	if out.StartsNew, _, err = p.CopyCallStarts(ctx, recent); err != nil {
		return out, fmt.Errorf("copying the %s into the database (nothing of the journal was pushed): %w", startsFile, err)
	}
	out.Starts = len(recent)
	conversations, err := startsFile.RecentConversations(ctx, time.Now().Add(-StartsHorizon))
	if err != nil {
		return out, err
	}
	if out.ConversationsNew, err = p.CopyConversations(ctx, conversations); err != nil {
		return out, fmt.Errorf("copying the conversations beside the %s into the database (nothing of the journal was pushed): %w", startsFile, err)
	}
	out.Conversations = len(conversations)
	if out.Records, err = p.Push(ctx, merge, journals...); err != nil {
		return out, err
	}
	mark := fmt.Sprintf("pushed to the %s on %s\n", p, time.Now().Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(dir, PushedFile), []byte(mark), 0o600); err != nil {
		return out, fmt.Errorf("the journal was pushed, but marking %s failed (a run from these files would not see later calls): %w", dir, err)
	}
	return out, nil
}
