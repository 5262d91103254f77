package campaign

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/callrun/callrun/apiclient"
	"github.com/go-json-experiment/json/jsontext"
)

// SummaryFields name the fields of a delivery that hold an AI's summary
// of the call, as [apiclient.FieldValues] matches them (any case, at the
// top or nested in its containers): Bland's summary, Vapi's
// message.summary and message.analysis.summary, Retell's
// call.call_analysis.call_summary, ElevenLabs'
// data.analysis.transcript_summary, the call_summary of others.
var SummaryFields = []string{"summary", "call_summary", "analysis.summary", "call_analysis.call_summary", "call_analysis.summary", "transcript_summary", "analysis.transcript_summary"}

// TranscriptFields name the fields of a delivery that hold the call's
// transcript, as [apiclient.FieldValues] matches them: the service's
// envelope's data.transcript, Retell's call.transcript,
// call.transcript_object and call.transcript_with_tool_calls, Vapi's
// message.artifact.transcript, message.artifact.messages,
// message.artifact.messagesOpenAIFormatted and message.transcript (and
// in its live messages, a conversation-update's message.messages and
// message.conversation, and a transcript message's message.transcript,
// one turn whose speaker is message.role: [oneTurnSaysDoNotCall]),
// Bland's concatenated_transcript and transcripts, AWS Transcribe's
// results.audio_segments (each a turn whose speaker is its
// speaker_label) and results.transcripts. A transcript is text
// of turns, one a line that starts with its speaker's label ("User:
// ..."), or a JSON array of turns, each an object that names its speaker
// (role, speaker, or Bland's user) and holds its words (content,
// message, text or utterance: a string, or parts, [readTurn]).
var TranscriptFields = []string{"transcript", "transcripts", "transcript_object", "transcript_with_tool_calls", "concatenated_transcript",
	"artifact.transcript", "artifact.messages", "messages", "artifact.messagesOpenAIFormatted", "messagesOpenAIFormatted", "conversation",
	"results.audio_segments", "results.transcripts"}

// personLabels are the labels senders give the called person's turns
// in a transcript, folded ([foldString]): Retell's, Vapi's and Bland's
// user, Air's HUMAN, the customer, caller or lead of others, and the word
// for a customer in the languages of signalwords.yaml. The agent's side
// (agent, AI, bot, assistant, robot, system, a tool call) is never read:
// an artificial voice must offer the do-not-call list on every call ("say
// stop to be added to our do-not-call list"), so reading it would list
// everyone. A label of neither is read as [readSpeakers] tells.
var personLabels = map[string]bool{
	"user": true, "customer": true, "human": true, "caller": true, "callee": true, "client": true, "lead": true, "contact": true,
	"prospect": true, "person": true, "recipient": true,
	"kunde": true, "cliente": true, "klant": true, "kund": true, "klient": true, "asiakas": true, "musteri": true, "anrufer": true,
	"appelant": true, "interlocuteur": true,
}

// agentLabels are the labels senders give the agent's turns, folded
// ([foldString]), in English and in the languages of signalwords.yaml.
// Beside a speaker labelled so and none labelled as the person, the
// other speakers are the called person whatever their labels ("Agent:
// ...\nAda: ...", the service's own example): see [readSpeakers].
var agentLabels = map[string]bool{
	"agent": true, "ai": true, "bot": true, "assistant": true, "robot": true, "aiagent": true, "voiceagent": true,
	"virtualassistant": true, "aiassistant": true,
	// The same in the languages of signalwords.yaml: Agente, Agentin,
	// Assistent, Asistente, KI (German AI), IA (French, Spanish,
	// Portuguese and Italian AI), Yapay Zeka.
	"agente": true, "agentin": true, "assistent": true, "assistente": true, "asistente": true, "assistentin": true,
	"ki": true, "ia": true, "agentti": true, "avustaja": true, "asystent": true, "asistent": true, "yapayzeka": true,
}

// maxLabel bounds the length of a transcript line's label: "User:",
// "Customer:", "SPEAKER_01:", not a sentence that holds a colon.
const maxLabel = 24

// SaysDoNotCall returns where delivery d's call transcript or summary
// says the called person asked not to be called again, "" when none
// does: a summary ([SummaryFields]) that holds a do-not-call phrase of
// signalwords.yaml as words ("The customer asked not to be called
// again"), or a turn of the called person ([readSpeakers]) in a
// transcript ([TranscriptFields]) that does ("please don't call me
// again", "stop calling me"), or that is one whole ("Stop."), or that
// answers yes to the agent's offer of the list ([acceptsOffer]). The
// turns of the agent are not read. A transcript with no speaker labels at
// all is read failing closed, every line's sentences but the agent's
// offer of the list ([plainSaysDoNotCall]). It names the field and, for
// a transcript, its turn (call.transcript_object[3],
// message.artifact.transcript line 5), never the words said: they are
// the person's. listen's intake takes such a delivery for an opt-out, as
// it does one [FlagsDoNotCall] finds.
func SaysDoNotCall(d apiclient.Delivery) string {
	for _, name := range SummaryFields {
		paths, vals := apiclient.FieldValues(d.Fields, name)
		for i, v := range vals {
			if spokenDoNotCall(v) {
				return paths[i]
			}
		}
	}
	for _, name := range TranscriptFields {
		paths, vals := apiclient.FieldValues(d.Fields, name)
		for i, v := range vals {
			if at := transcriptSaysDoNotCall(v, turnSpeaker(d.Fields, paths[i]) != ""); at != "" {
				return paths[i] + at
			}
			if oneTurnSaysDoNotCall(d.Fields, paths[i], v) {
				return paths[i]
			}
		}
	}
	return ""
}

// oneTurnSaysDoNotCall reports whether v, the transcript field at path
// of fields, is the words of one turn whose speaker a field beside it
// names (role, else speaker), as Vapi's live transcript message sends
// each ({"type": "transcript", "role": "user", "transcriptType":
// "final", "transcript": "..."}), and they say do not call: a person's
// ([personLabels]), or, failing closed, a speaker's of no label known
// that does not offer the list as the agent does ([offersAsAgent]); never
// the agent's or the record's. A turn marked partial (transcriptType,
// or transcript_type, "partial") says it only by a phrase: "Stop" may
// yet be "Stop by on Tuesday" when the final one comes.
func oneTurnSaysDoNotCall(fields map[string]string, path, v string) bool {
	parent := ""
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent = path[:i+1]
	}
	who := turnSpeaker(fields, path)
	if who == "" || strings.HasPrefix(strings.TrimSpace(v), "[") {
		return false
	}
	f := foldString(who)
	switch {
	case agentLabels[f] || recordLabel(f):
		return false
	case !personLabels[f] && offersAsAgent(v):
		return false
	}
	kind := fields[parent+"transcriptType"]
	if kind == "" {
		kind = fields[parent+"transcript_type"]
	}
	if strings.EqualFold(kind, "partial") {
		return spokenPhrase(v)
	}
	return spokenDoNotCall(v)
}

// turnSpeaker returns the speaker a field beside the transcript field at
// path of fields names (role, else speaker), as Vapi's live transcript
// message sends one turn ([oneTurnSaysDoNotCall]); "" when none does.
// [SaysDoNotCall] reads such a field's text of no labels as that
// speaker's one turn, never as a transcript of no labels.
func turnSpeaker(fields map[string]string, path string) string {
	parent := ""
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent = path[:i+1]
	}
	if who := fields[parent+"role"]; who != "" {
		return who
	}
	return fields[parent+"speaker"]
}

// spokenDoNotCall reports whether text a person said (or a summary of
// it) holds a do-not-call phrase as words ("don't call me again"), or is
// one whole ("Stop.", "Please stop.", "Stop it!", "Remove me."), or an
// opt-out's words whole ("Unsubscribe.", "Opt out, please."), its fillers
// ([fillers]: "stop, uh, calling me") and, for a whole, its courtesies
// ([courtesies]) aside. A word a text uses for other things
// ([ordinaryWords]) says it only as the whole text, and a name ("Mrs
// Robinson") never.
func spokenDoNotCall(text string) bool { return spoken(text, true) }

// spokenPhrase reports whether text a person said holds a do-not-call
// phrase as words, as [spokenDoNotCall] reads it, its being one whole
// aside: the words of a turn not yet ended.
func spokenPhrase(text string) bool { return spoken(text, false) }

// spoken is [spokenDoNotCall], and with whole false [spokenPhrase].
func spoken(text string, whole bool) bool {
	ws := strings.Fields(text)
	kept := ws[:0:0]
	var all strings.Builder
	for _, w := range ws {
		f := foldString(w)
		if fillers[f] {
			continue
		}
		kept = append(kept, w)
		if !courtesies[f] {
			all.WriteString(f)
		}
	}
	if len(kept) < len(ws) {
		text = strings.Join(kept, " ")
	}
	if mentionsIn(text, nil, true) {
		return true
	}
	if !whole {
		return false
	}
	k, w := all.String(), words()
	if k != "robinson" && (w.phrases[k] || slices.Contains(w.optOut, k)) {
		return true
	}
	// A turn that ends on such a sentence ("Why do you keep calling?
	// Stop.", "Say stop? Fine. Stop.").
	if last := lastSentence(text); last != "" && len(last) < len(strings.TrimSpace(text)) {
		return spoken(last, true)
	}
	return false
}

// lastSentence returns the last sentence of text, without the marks that
// end it: what follows the last ".", "!", "?" or line end before them.
func lastSentence(text string) string {
	t := strings.TrimRight(text, " \t\r\n.!?…。！？")
	i := strings.LastIndexAny(t, ".!?\n…。！？")
	if i < 0 {
		return strings.TrimSpace(t)
	}
	_, n := utf8.DecodeRuneInString(t[i:])
	return strings.TrimSpace(t[i+n:])
}

// fillers are the sounds a transcript writes between a person's words
// ("uh", "um", "äh", "euh"), folded ([foldString]): read without them,
// "stop, uh, calling me" says stop calling me.
var fillers = map[string]bool{"uh": true, "uhh": true, "um": true, "umm": true, "uhm": true, "erm": true, "ah": true, "ahh": true,
	"hmm": true, "hm": true, "mm": true, "ahm": true, "euh": true, "eh": true}

// courtesies are the words around a one-word opt-out that leave it one
// ("Please stop.", "Stop it, thanks"), folded ([foldString]).
var courtesies = map[string]bool{"please": true, "pls": true, "just": true, "now": true, "it": true, "ok": true, "okay": true,
	"thanks": true, "thank": true, "you": true, "already": true, "bitte": true, "sil": true, "vous": true, "plait": true,
	"por": true, "favor": true}

// transcriptSaysDoNotCall returns where in transcript v (text or a JSON
// array of turns) a turn of the called person says do not call: "[i]"
// for the i-th element of an array, " line n" for a turn of text that
// starts on line n; "" when none does. A text with no speaker labels is
// read as [plainSaysDoNotCall] reads it, unless oneTurn (a field beside
// it names its speaker, and [oneTurnSaysDoNotCall] reads it as that
// speaker's turn), or it is a JSON array of objects or strings that
// [turnsSayDoNotCall] read up to a fault: its JSON text is no one's words.
func transcriptSaysDoNotCall(v string, oneTurn bool) string {
	plain := !oneTurn
	t := strings.TrimSpace(v)
	if strings.HasPrefix(t, "[") {
		if at, ok := turnsSayDoNotCall(t); ok {
			return at
		}
		if r := strings.TrimLeft(t[1:], " \t\r\n"); strings.HasPrefix(r, "{") || strings.HasPrefix(r, "\"") {
			plain = false
		}
	}
	if n := anyTextSays(v, plain); n > 0 {
		return fmt.Sprintf(" line %d", n)
	}
	return ""
}

// anyTextSays returns the line (from 1) where transcript text says do
// not call, 0 when it does not: by its labels ([textSaysDoNotCall]) and,
// when plain, the lines before its first label, or the whole of a text
// with none, as [plainSaysDoNotCall] reads them. A transcript field and
// a JSON array's string element are read so.
func anyTextSays(text string, plain bool) int {
	if !hasLabels(text) {
		if plain {
			return plainSaysDoNotCall(text)
		}
		return 0
	}
	if n := textSaysDoNotCall(text); n > 0 || !plain {
		return n
	}
	return plainSaysDoNotCall(beforeLabels(text))
}

// beforeLabels returns the lines of transcript text before its first
// that starts a turn with a label ([eachLine]), one a line, numbered as
// in text: [textSaysDoNotCall] reads no one's words there, and in a
// text of no labels but one line that reads as labelled ("Reminder:
// your appointment is Tuesday"), the person's words before it are there.
func beforeLabels(text string) string {
	var b strings.Builder
	eachLine(text, func(_ int, l, _, _ string, ok bool) bool {
		if ok {
			return false
		}
		b.WriteString(l)
		b.WriteByte('\n')
		return true
	})
	return b.String()
}

// turnsSayDoNotCall reads v as a JSON array of turns, in one pass, and
// returns "[i]" for the first turn i that is the called person's and says
// do not call, or takes up the agent's offer of the list in the turn just
// before it ([acceptsOffer]): an object whose role (else speaker, else
// Bland's user) is a person's label, its words its content (else
// message, else text, else utterance; [readTurn]), keys matched in any
// case; a string element is a turn of text, read as a transcript's text
// is. ok is false when v is no JSON array, or is one
// only up to a fault (cut short, or text that starts with a time in
// brackets, "[00:01] User: ..."): the turns before the fault are read,
// and the caller reads v as text too.
func turnsSayDoNotCall(v string) (at string, ok bool) {
	dec := jsontext.NewDecoder(strings.NewReader(v), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return "", false
	}
	offered := false // the turn before was the agent's offer of the list ([offersList])
	// Until a turn of the person's label comes, every turn, for
	// [guessedTurnsSay] to read when none does.
	var turns []jsonTurn
	hasPerson, hasAgent := false, false
	guessed := func() string {
		if j := guessedTurnsSay(turns, hasAgent); !hasPerson && j >= 0 {
			return fmt.Sprintf("[%d]", j)
		}
		return ""
	}
	for i := 0; ; i++ {
		switch dec.PeekKind() {
		case ']':
			return guessed(), true
		case 0:
			if at := guessed(); at != "" {
				return at, true
			}
			return "", false
		case '"':
			tok, err := dec.ReadToken()
			if err != nil {
				return "", false
			}
			if anyTextSays(tok.String(), true) > 0 {
				return fmt.Sprintf("[%d]", i), true
			}
			offered = false
			if !hasPerson {
				turns = append(turns, jsonTurn{i: i})
			}
		case '{':
			who, said, err := readTurn(dec)
			if err != nil {
				if at := guessed(); at != "" {
					return at, true
				}
				return "", false
			}
			f := foldString(who)
			if personLabels[f] && said != "" && (spokenDoNotCall(said) || offered && acceptsOffer(said)) {
				return fmt.Sprintf("[%d]", i), true
			}
			hasAgent = hasAgent || agentLabels[f]
			if hasPerson = hasPerson || personLabels[f]; hasPerson {
				turns = nil
			} else {
				turns = append(turns, jsonTurn{who: f, said: said, i: i})
			}
			if (agentLabels[f] || !recordLabel(f)) && !((personLabels[f] || agentLabels[f]) && noWords(said)) {
				offered = agentLabels[f] && offersList(said)
			}
		default:
			if err := dec.SkipValue(); err != nil {
				return "", false
			}
			offered = false
		}
	}
}

// jsonTurn is one element i of a JSON array of turns: its speaker's
// label, folded ([foldString]), and its words; "" and "" for an element
// that is no object.
type jsonTurn struct {
	who, said string
	i         int
}

// guessedTurnsSay returns the element of the first turn of turns, a JSON
// array of turns none of whose speakers is labelled as the person, that
// says do not call as [readSpeakers] reads a text's speakers: beside the
// agent's label (hasAgent), every other speaker's but the record's; with
// none, as a diarized transcript's ({"speaker": "A"}, {"speaker": 0}),
// every speaker's but the one who offers the list ([offersAsAgent]) when
// another does not, and never a turn that offers it. When no turn names
// its speaker at all ({"text": ..., "start": ...}), each turn's words are
// read as a line of a text of no labels is ([plainReader]). -1 when none
// does.
func guessedTurnsSay(turns []jsonTurn, hasAgent bool) int {
	if !slices.ContainsFunc(turns, func(t jsonTurn) bool { return t.who != "" }) {
		var r plainReader
		for _, t := range turns {
			if r.says(t.said) {
				return t.i
			}
		}
		return -1
	}
	labels, offers := map[string]bool{}, map[string]bool{}
	for _, t := range turns {
		if t.who == "" || agentLabels[t.who] || recordLabel(t.who) {
			continue
		}
		labels[t.who] = true
		if !hasAgent && !offers[t.who] && offersAsAgent(t.said) {
			offers[t.who] = true
		}
	}
	quiet := false // a speaker who does not offer the list: those who do are the agent
	for f := range labels {
		quiet = quiet || !offers[f]
	}
	offered, by := false, ""
	for _, t := range turns {
		person := labels[t.who] && !(quiet && offers[t.who])
		if person && t.said != "" && (hasAgent || !offersAsAgent(t.said)) &&
			(spokenDoNotCall(t.said) || offered && by != t.who && acceptsOffer(t.said)) {
			return t.i
		}
		if t.who == "" || !recordLabel(t.who) && !noWords(t.said) {
			offered, by = (person || agentLabels[t.who] || offers[t.who]) && offersList(t.said), t.who
		}
	}
	return -1
}

// readTurn reads the object of one turn, whose '{' dec is at: its
// speaker and its words, under the keys senders give them. Words may be
// a string, or parts (OpenAI's format of messages, which Vapi's
// messagesOpenAIFormatted keeps): an array of strings and of objects
// whose text is their words ({"type": "text", "text": "..."}), or one
// such object; the parts' words are read joined by spaces.
func readTurn(dec *jsontext.Decoder) (who, said string, err error) {
	if _, err := dec.ReadToken(); err != nil {
		return "", "", err
	}
	// By rank: role, speaker, user, a speaker's number, AWS Transcribe's
	// speaker_label; content, message, text, utterance, transcript.
	var whos [5]string
	var saids [5]string
	for dec.PeekKind() != '}' {
		key, err := dec.ReadToken()
		if err != nil {
			return "", "", err
		}
		var slot *string
		isWords := false
		switch strings.ToLower(key.String()) {
		case "role":
			slot = &whos[0]
		case "speaker":
			slot = &whos[1]
		case "user": // Bland: user, assistant, robot, agent-action
			slot = &whos[2]
		case "speaker_label", "speakerlabel": // AWS Transcribe's audio_segments: "spk_0"
			slot = &whos[4]
		case "content":
			slot, isWords = &saids[0], true
		case "message":
			slot, isWords = &saids[1], true
		case "text":
			slot, isWords = &saids[2], true
		case "utterance":
			slot, isWords = &saids[3], true
		case "transcript": // a diarized utterance's: {"speaker": 0, "transcript": "..."}
			slot, isWords = &saids[4], true
		}
		switch k := dec.PeekKind(); {
		case slot == &whos[1] && k == '0': // a diarized speaker's number: {"speaker": 0}
			tok, err := dec.ReadToken()
			if err != nil {
				return "", "", err
			}
			// Below Bland's user, as before numbers were read: a number
			// names no side, and must not hide a role that does.
			whos[3] = "speaker" + tok.String()
		case slot == nil, k != '"' && (!isWords || k != '[' && k != '{'):
			if err := dec.SkipValue(); err != nil {
				return "", "", err
			}
		case k == '"':
			tok, err := dec.ReadToken()
			if err != nil {
				return "", "", err
			}
			*slot = tok.String()
		default:
			v, err := dec.ReadValue()
			if err != nil {
				return "", "", err
			}
			*slot = partsText(v)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return "", "", err
	}
	first := func(vs []string) string {
		for _, v := range vs {
			if strings.TrimSpace(v) != "" {
				return v
			}
		}
		return ""
	}
	return first(whos[:]), first(saids[:]), nil
}

// partsText returns the words of a turn's parts, v: an array of strings
// and of objects whose text (else content) is a string, or one such
// object, joined by spaces; "" when v holds none.
func partsText(v jsontext.Value) string {
	var parts any
	if err := json.Unmarshal(v, &parts); err != nil {
		return ""
	}
	list, ok := parts.([]any)
	if !ok {
		list = []any{parts}
	}
	var out []string
	for _, p := range list {
		switch p := p.(type) {
		case string:
			out = append(out, p)
		case map[string]any:
			for _, k := range []string{"text", "content"} {
				if s, ok := p[k].(string); ok {
					out = append(out, s)
					break
				}
			}
		}
	}
	return strings.Join(out, " ")
}

// textSaysDoNotCall returns the line (from 1) where a turn of the called
// person that says do not call starts in transcript text, 0 when none
// does. A turn starts on a line that begins with a label and a colon
// ("User: ...", " assistant: ..." as Bland writes them), and runs until
// the next such line ([eachLine]); a line without a label goes on the
// turn before it. Lines before the first label are no one's; a text with
// no label is read by [plainSaysDoNotCall], not here. Whose turns are the
// called person's is [readSpeakers]'s. A turn of theirs says do not call when its words do, or when it takes up
// the offer of the list another speaker's turn just before it made
// ([acceptsOffer]); a turn that itself offers the list, of a speaker told
// from the agent only by what they said, says nothing ([offersAsAgent]).
func textSaysDoNotCall(text string) int {
	who := readSpeakers(text)
	start, person, agent, offered, record := 0, false, false, false, false
	label, offeredBy := "", ""
	var turn strings.Builder
	said := func() bool {
		if !person || turn.Len() == 0 {
			return false
		}
		t := turn.String()
		if who.guessed(label) && offersAsAgent(t) {
			return false
		}
		return spokenDoNotCall(t) || offered && offeredBy != label && acceptsOffer(t)
	}
	found := 0
	eachLine(text, func(line int, l, next, words string, ok bool) bool {
		if !ok {
			if person || agent {
				turn.WriteByte('\n')
				turn.WriteString(l)
			}
			return true
		}
		if said() {
			found = start
			return false
		}
		if !record && !((person || agent) && noWords(turn.String())) {
			offered = (agent || who.guessed(label)) && offersList(turn.String())
			offeredBy = label
		}
		turn.Reset()
		label = speakerKey(next)
		start, person = line, who.person(label)
		agent = !person && who.agent(label)
		record = !person && !agent && recordLabel(label)
		if person || agent {
			turn.WriteString(words)
		}
		return true
	})
	if found == 0 && said() {
		found = start
	}
	return found
}

// hasLabels reports whether transcript text has a line that starts a
// turn with its speaker's label ([eachLine]): [textSaysDoNotCall] reads
// such a text, [plainSaysDoNotCall] one with none.
func hasLabels(text string) bool {
	found := false
	eachLine(text, func(_ int, _, _, _ string, ok bool) bool {
		found = ok
		return !ok
	})
	return found
}

// plainSaysDoNotCall returns the line (from 1) where transcript text
// with no speaker labels says do not call, 0 when none does. Whose words
// are whose cannot be told, so, failing closed, everyone's are read, but
// for the agent's offer of the list: each line is a turn (in captions,
// SubRip's or WebVTT's, each cue's words, its number and timing aside,
// [eachPlainTurn]), read sentence by sentence as [plainReader] reads it.
func plainSaysDoNotCall(text string) int {
	var r plainReader
	found := 0
	eachPlainTurn(text, func(line int, turn string) bool {
		if r.says(turn) {
			found = line
			return false
		}
		return true
	})
	return found
}

// plainReader reads the turns of a transcript with no speaker labels in
// order, for [plainSaysDoNotCall] and for a JSON array of turns none of
// which names its speaker ([guessedTurnsSay]).
type plainReader struct {
	// offered: the last sentence with words was an offer of the list
	// asked as a question ([offersList]).
	offered bool
}

// says reports whether one turn of a transcript with no speaker labels
// says do not call. Each of its sentences ([sentences]) that offers the
// list as an agent does ([offersAsAgent], [actsOnListener]), or is the
// caller's own word about its calls ([speaksAsCaller]), is left out; any
// other that
// says do not call ([spokenDoNotCall]), or that answers yes
// ([acceptsOffer]) to an offer of the list asked in the sentence before
// it, in this turn or the one before, says it; so does one read with the
// sentence before it when that ends in a hesitation's dots ("Take me...
// off your list."), as a phrase. A yes after the offer asked is read as
// the person's answer: the agent does not answer its own question, and
// were the yes the agent's, the one listed is one person not called
// again, the safe side.
func (r *plainReader) says(turn string) bool {
	hesitated := "" // the sentence before, when it ended in "..." or "…"
	for _, s := range sentences(turn) {
		switch {
		case noWords(s):
			continue
		case r.offered && leadInOnly(s):
			// "Okay. Yes, please.": the yes after it still answers.
			continue
		case offersAsAgent(s) || actsOnListener(foldWords(s)):
			r.offered = offersList(s)
		case spokenDoNotCall(s) || r.offered && acceptsOffer(s) || hesitated != "" && spokenPhrase(hesitated+" "+s):
			caller, invites := speaksAsCaller(s)
			if !caller {
				return true
			}
			r.offered = offersList(s) || invites
		default:
			r.offered = offersList(s)
			if strings.HasSuffix(s, "...") || strings.HasSuffix(s, "…") {
				hesitated = s
				continue
			}
		}
		hesitated = ""
	}
	return false
}

// actsOnListener reports whether the words ws of a sentence, folded
// ([foldWords]), have its speaker put the one spoken to on a list or take
// them off it, as only the agent says to the called person: "I can add
// you to our do-not-call list", "we'll put you on our list", "we will
// remove you": read in a transcript of no labels ([plainReader]) as the
// agent's, not as a request. A sentence with the speaker's own me or my
// in it ("I'll remove you from my contacts, stop calling me") is none.
func actsOnListener(ws []string) bool {
	if slices.ContainsFunc(ws, func(w string) bool { return w == "me" || w == "my" || w == "mine" || w == "myself" }) {
		return false
	}
	// Add, put and place you are a listing only with a list named, and
	// take you with "off" or one: "I'll take you to court if you don't
	// stop calling" is the person's, and says it.
	list := slices.ContainsFunc(ws, func(w string) bool { return w == "list" || w == "lists" || w == "registry" })
	verb := func(j int) bool {
		switch ws[j] {
		case "remove", "mark", "flag":
			return true
		case "add", "put", "place":
			return list
		case "take":
			return list || at(ws, j+2) == "off"
		}
		return false
	}
	for i := 0; i+2 < len(ws); i++ {
		switch ws[i] {
		case "i", "we":
			switch ws[i+1] {
			case "can", "could", "will", "would", "shall", "may", "have", "just":
				if j := i + 2; j+1 < len(ws) && verb(j) && ws[j+1] == "you" {
					return true
				}
			}
		case "ill", "well", "wed", "id", "weve", "ive":
			// I'll, we'll, we'd, I'd, we've, I've
			if verb(i+1) && ws[i+2] == "you" {
				return true
			}
		}
	}
	return false
}

// speaksAsCaller reports whether a sentence of a transcript of no labels
// is the caller's own words about its calls, which only the agent says
// to the called person, and which [plainReader] leaves out as it does
// the agent's offer of the list: when or until when the caller calls
// ("We don't call after 8 pm", "We'll never call you on weekends",
// "I'll make a note not to call you before noon", "We'll stop calling
// once you confirm"), the rules it keeps ("We honor the national do not
// call registry", "If you're on a do-not-call list, we apologize"), and
// the choice it leaves the one spoken to ("If at any point you want us
// to stop calling, let me know", "Would you like me to stop calling?",
// "Um keine Anrufe mehr zu erhalten, antworten Sie STOPP"). A sentence
// with a clause that says do not call and is none of these, one with the
// speaker's own I, me or my ([ownWords]: beyond "let me know", "tell
// me", "would you like me to", "I will make a note"), one that joins
// another statement to it ([joins]: "We don't call after 8 pm and
// neither should you"), or a promise with nothing after it ("We won't
// call you again"), the agent's word that the person asked, is none: the
// person may say those. invites: the sentence leaves the choice to
// the one spoken to, or says whether they are on a list ("Just tell me
// if you'd like to be removed", "If you're on a do-not-call list, we
// apologize"), and a yes right after it answers as after an offer asked
// ([plainReader]).
func speaksAsCaller(s string) (caller, invites bool) {
	low := strings.ToLower(strings.ReplaceAll(s, "’", "'"))
	for _, r := range [][2]string{{"we'll", "we will"}, {"we'd", "we would"}, {"i'll", "i will"}} {
		low = strings.ReplaceAll(low, r[0], r[1])
	}
	if ws := foldWords(low); ownWords(ws) || joins(ws) {
		return false, false
	}
	clauses := strings.FieldsFunc(low, func(r rune) bool { return r == ',' || r == ';' || r == ':' || r == '—' || r == '–' })
	// conditional: a clause starts with a condition ("Once you reply,
	// ..."); reply: the German "antworten Sie" is in one; apology: the
	// caller's "we apologize" is one.
	conditional, reply, apology := false, false, false
	for _, c := range clauses {
		cw := foldWords(c)
		switch at(cw, 0) {
		case "once", "when", "after", "until", "as":
			conditional = true
		}
		reply = reply || slices.Contains(cw, "antworten") && slices.Contains(cw, "sie")
		apology = apology || len(cw) == 2 && cw[0] == "we" && (cw[1] == "apologize" || cw[1] == "apologise")
	}
	for _, c := range clauses {
		if !spokenDoNotCall(c) {
			continue
		}
		cw := foldWords(c)
		switch {
		case callerChoice(cw):
			invites = true
		case callerRules(cw, apology, len(clauses) == 1):
			invites = invites || slices.ContainsFunc(cw, func(w string) bool { return w == "you" || w == "your" || w == "youre" })
		case callerWhen(cw, conditional) || reply && at(cw, 0) == "um" && !ownWords(cw):
		default:
			return false, false
		}
		caller = true
	}
	return caller, caller && invites
}

// ownWords reports whether the words ws, folded ([foldWords]), hold the
// speaker's own I, me or my, the agent's "let me know", "tell me",
// "(would) you like me to" and "I will make a note" aside: a sentence
// that does is the person's as likely as the agent's.
func ownWords(ws []string) bool {
	for i, w := range ws {
		switch w {
		case "i":
			// "I will make a note not to call you before noon"
			if at(ws, i+1) != "will" || at(ws, i+2) != "make" && at(ws, i+2) != "note" {
				return true
			}
		case "im", "ive", "id", "my", "mine", "myself", "mich", "mir", "mein", "meine", "meinen", "meiner", "meinem":
			return true
		case "me":
			switch {
			case at(ws, i-1) == "let" && at(ws, i+1) == "know", at(ws, i-1) == "tell":
			case at(ws, i-2) == "you" && at(ws, i+1) == "to" && (at(ws, i-1) == "want" || at(ws, i-1) == "like"):
				// "Would you like me to stop calling?"
			default:
				return true
			}
		}
	}
	return false
}

// joins reports whether the words ws of a sentence, folded
// ([foldWords]), join another statement to the first ("and", "but",
// "so", "neither", "either", "too", "why", "should"): "We don't call
// after 8 pm and neither should you", "We honor the do not call registry
// and expect you to as well". The caller's own words about its calls
// are said alone; joined, they may be the person's ([speaksAsCaller]).
// "federal and state" is one word of the rules.
func joins(ws []string) bool {
	for i, w := range ws {
		switch w {
		case "and":
			if at(ws, i-1) != "federal" && at(ws, i-1) != "state" {
				return true
			}
		case "as":
			if at(ws, i+1) == "well" {
				return true
			}
		case "but", "so", "neither", "either", "nor", "too", "why", "should", "shouldnt", "yet", "while", "whereas", "also",
			"though", "although":
			return true
		}
	}
	return false
}

// callerWhen reports whether the words ws of a clause, folded
// ([foldWords]), are the caller's of when it calls or stops: "we" and
// at most a modal and a not or never ("will", "do not", "don't",
// "won't", "never"), or "will stop", before a word of calling ("we
// don't call", "we will stop calling"), or "(I|we) will make a note not
// to call", then, after "you", "anyone" or "this number" and "again",
// words of when ("after 8 pm", "on Sundays", "once you confirm", "about
// this appointment"); or, when another clause of the sentence starts
// with a condition (conditional: "Once you reply, we'll stop calling";
// not "if", as in the agent's "If that's what you want, we'll stop
// calling" after a request), nothing. Either the Portuguese "vou anotar
// para não ligar" before words of when.
func callerWhen(ws []string, conditional bool) bool {
	if ownWords(slices.DeleteFunc(slices.Clone(ws), func(w string) bool { return w == "i" })) {
		return false
	}
	calling := func(w string) bool {
		switch w {
		case "call", "calls", "calling", "phone", "phoning", "ring", "ringing", "contact", "contacting", "text", "texting",
			"ligar", "ligaremos", "telefonar":
			return true
		}
		return false
	}
	// when reports whether the words from m say when the caller calls,
	// not that it calls no more: "after 8 pm", "on Sundays", "in the
	// evening", "once you confirm", but not "at all", "at once", "on this
	// number", "in the future", "after this call", "until you call us",
	// "about anything", the agent's word that the person asked. After
	// "stop", only a condition or a matter is: "once you confirm", "about
	// this appointment".
	when := func(m int, stop bool) bool {
		next := at(ws, m+1)
		switch w := at(ws, m); w {
		case "once":
			return next != "and" && next != ""
		case "about", "regarding":
			return next != "anything" && next != "everything" && next != "all" && next != "any" && next != ""
		}
		if stop {
			return false
		}
		switch w := at(ws, m); w {
		case "at":
			return next != "all" && next != "this" && next != "that" && next != "any" && next != "your" && next != "once" && next != "the"
		case "on", "no", "na", "nos":
			return next != "this" && next != "that" && next != "any" && next != "your" && next != "the" && next != "este" &&
				next != "esse" && next != "seu" && next != "qualquer"
		case "in":
			return next != "the" && next != "future" && next != "any"
		case "after", "depois", "apos":
			return next != "this" && next != "that" && next != "today" && next != "now" && next != "tonight" && next != "hoje" &&
				next != "agora" && next != "disso"
		case "until", "till", "ate":
			return next != "you" && next != "voce"
		case "before", "during", "between", "outside", "past", "when", "without", "early", "late", "weekends", "sundays",
			"saturdays", "holidays", "today", "tonight", "tomorrow", "antes", "durante", "aos":
			return true
		}
		return false
	}
	for k, w := range ws {
		if !calling(w) {
			continue
		}
		j := k - 1
		stopped := false
		switch {
		case at(ws, j) == "nao" && at(ws, j-1) == "para" && (at(ws, j-2) == "anotar" && at(ws, j-3) == "vou" || at(ws, j-2) == "anotarei"):
			// "vou anotar para não ligar"
		case at(ws, j) == "to" && at(ws, j-1) == "not" && at(ws, j-2) == "note":
			// "(I|we) will make a note not to call", "we will note not to call"
			i := j - 3
			if at(ws, i) == "a" && at(ws, i-1) == "make" {
				i -= 2
			}
			if at(ws, i) == "will" {
				i--
			}
			if at(ws, i) != "i" && at(ws, i) != "we" {
				continue
			}
		default:
			if slices.Contains(ws, "i") {
				continue
			}
			if stopped = at(ws, j) == "stop"; stopped {
				j--
			}
			neg := false
			switch at(ws, j) {
			case "not", "never":
				neg = true
				j--
			case "dont", "wont", "wouldnt", "doesnt":
				neg = true
				j--
			}
			switch at(ws, j) {
			case "will", "would", "shall", "do", "does":
				if at(ws, j+1) == "dont" || at(ws, j+1) == "wont" {
					continue
				}
				j--
			}
			if at(ws, j) != "we" || !neg && !stopped {
				continue
			}
		}
		m := k + 1
		switch {
		case at(ws, m) == "you" || at(ws, m) == "anyone" || at(ws, m) == "people" || at(ws, m) == "customers" || at(ws, m) == "patients":
			m++
		case (at(ws, m) == "this" || at(ws, m) == "your") && at(ws, m+1) == "number":
			m += 2
		}
		if at(ws, m) == "again" && at(ws, m+1) != "" {
			m++
		}
		if when(m, stopped) || m == len(ws) && conditional {
			return true
		}
	}
	return false
}

// callerRules reports whether the words ws of a sentence, folded
// ([foldWords]), name the do-not-call list only as the rules the caller
// keeps, with no other do-not-call words: in a sentence of one clause
// (alone), "we", "our" or "this" (of the caller's business,
// [callerNoun], or "this call") and a word of keeping them ("honor",
// "comply", "compliant", "follow", "check", "respect") beside "do not
// call" (or "DNC") and a word of a registry or of rules ("We honor the
// national do not call registry", "Our company honors the do not call
// registry", "This call complies with all do not call rules"; not "We
// honor the do not call registry, you should too"), or the one spoken
// to said not to be on it ("Your number is not on the do not call
// registry", "You're not on any do-not-call list"), or, in a sentence
// of the caller's apology (apology: "we apologize" a clause of its
// own), a condition of theirs ("If you're on a do-not-call list, we
// apologize", "If you registered with the do not call registry, we
// apologize").
func callerRules(ws []string, apology, alone bool) bool {
	if ownWords(ws) {
		return false
	}
	var rest []string
	named := false
	for i := 0; i < len(ws); i++ {
		n := 0
		switch {
		case ws[i] == "dnc":
			n = 1
		case ws[i] == "dont" && i+1 < len(ws) && ws[i+1] == "call":
			n = 2
		case ws[i] == "do" && i+2 < len(ws) && ws[i+1] == "not" && ws[i+2] == "call":
			n = 3
		}
		if n > 0 && i+n < len(ws) {
			switch ws[i+n] {
			case "registry", "registries", "list", "lists", "rules", "regulations", "laws", "law", "requirements", "register":
				named = true
				i += n
				continue
			}
		}
		rest = append(rest, ws[i])
	}
	if !named || spokenDoNotCall(strings.Join(rest, " ")) {
		return false
	}
	for i, w := range ws {
		switch w {
		case "we", "our", "this":
			if !alone || w == "our" && !callerNoun(at(ws, i+1)) || w == "this" && at(ws, i+1) != "call" && !callerNoun(at(ws, i+1)) {
				continue
			}
			for _, x := range ws[i+1 : min(i+5, len(ws))] {
				switch x {
				case "honor", "honors", "honour", "honours", "respect", "respects", "comply", "complies", "compliant", "follow",
					"follows", "check", "checks", "checked", "scrub", "scrubs", "scrubbed", "abide", "abides", "obey", "adhere",
					"observe", "screen", "screens", "screened":
					return true
				}
			}
		case "your":
			if i+3 < len(ws) && ws[i+1] == "number" && (ws[i+2] == "is" || ws[i+2] == "isnt") && (ws[i+3] == "not" || ws[i+3] == "on") {
				return true
			}
		case "youre", "you":
			j := i + 1
			if w == "you" && at(ws, j) == "are" {
				j++
			}
			if at(ws, j) == "not" && at(ws, j+1) == "on" && (w == "youre" || j > i+1) {
				return true
			}
		case "if":
			// "If you're on a do-not-call list, we apologize": a condition
			// of the one spoken to beside the caller's apology.
			if apology && i == 0 && (at(ws, 1) == "you" || at(ws, 1) == "youre") {
				return true
			}
		}
	}
	return false
}

// callerNoun reports whether w, folded ([foldString]), names the
// caller's business after "our" or "this" ("Our company honors the do
// not call registry"): not a household's ("Our household follows the
// do not call rules").
func callerNoun(w string) bool {
	switch w {
	case "company", "team", "office", "business", "organization", "practice", "agency", "firm", "clinic", "campaign":
		return true
	}
	return false
}

// at returns ws[i], "" when i is out of its range.
func at(ws []string, i int) string {
	if i >= 0 && i < len(ws) {
		return ws[i]
	}
	return ""
}

// callerChoice reports whether the words ws of a sentence, folded
// ([foldWords]), leave the one spoken to the choice of what the caller
// does, as only the agent says to the called person: "(if) you want us
// to", "you'd like us to" ("If at any point you want us to stop calling,
// let me know"), "tell me if you'd like", "let me know if you want"
// ("Just tell me if you'd like to be removed"), "(do|would) you (want|
// like) me to" ("Would you like me to stop calling?"), or the German
// "antworten Sie" ("Um keine Anrufe mehr zu erhalten, antworten Sie
// STOPP"); the speaker's own I, me or my beyond these, none.
func callerChoice(ws []string) bool {
	wants := func(w string) bool { return w == "want" || w == "wish" || w == "like" || w == "prefer" }
	for i, w := range ws {
		switch w {
		case "you", "youd":
			j := i + 1
			if at(ws, j) == "would" {
				j++
			}
			if !wants(at(ws, j)) {
				continue
			}
			switch obj := at(ws, j+1); {
			case obj == "us" && at(ws, j+2) == "to":
				return !ownWords(ws)
			case obj == "me" && at(ws, j+2) == "to" && (at(ws, i-1) == "do" || at(ws, i-1) == "would") && i == 1:
				// The question asked: "Would you like me to stop calling?"
				rest := slices.Delete(slices.Clone(ws), j+1, j+2)
				return !ownWords(rest)
			}
			if i >= 3 && at(ws, i-1) == "if" && (at(ws, i-2) == "me" && at(ws, i-3) == "tell" || at(ws, i-2) == "know" && at(ws, i-3) == "me" && at(ws, i-4) == "let") {
				return !ownWords(ws)
			}
		}
	}
	return false
}

// leadInOnly reports whether a sentence says nothing but a lead-in to an
// answer ([leadIns]: "Okay.", "Oh.", "Well,"), fillers aside.
func leadInOnly(s string) bool {
	lead := false
	for _, w := range strings.Fields(s) {
		switch f := foldString(w); {
		case f == "" || fillers[f]:
		case leadIns[f]:
			lead = true
		default:
			return false
		}
	}
	return lead
}

// sentences splits a turn's text into its sentences, each with the
// marks that end it: after ".", "!", "?" or "…" before a space or the
// end, after "。", "！" or "？", and at a line's end.
func sentences(text string) []string {
	var out []string
	start := 0
	add := func(end int) {
		if t := strings.TrimSpace(text[start:end]); t != "" {
			out = append(out, t)
		}
		start = end
	}
	for i, r := range text {
		switch r {
		case '\n', '\r', '。', '！', '？':
			add(i + utf8.RuneLen(r))
		case '.', '!', '?', '…':
			if j := i + utf8.RuneLen(r); j == len(text) || text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r' {
				add(j)
			}
		}
	}
	add(len(text))
	return out
}

// eachPlainTurn calls fn with each turn of transcript text with no
// speaker labels and the line (from 1) it starts on, until fn returns
// false: each line with words, and the line after it too when it ends in
// a comma or a hesitation's dots (its sentence goes on there: "To be put
// on our do-not-call list," then "say stop."; "Take me..." then "off
// your list."); in captions (a line of a cue's timing,
// "00:00:01,000 --> 00:00:04,000", [captionLine]), each cue's words, the
// lines after its timing up to the blank line that ends it, joined, as a
// caption wraps a sentence over two lines. A caption file's header and
// its notes and styles (a block that starts "WEBVTT", "NOTE", "STYLE" or
// "REGION") are no one's words, nor are a cue's number and timing.
func eachPlainTurn(text string, fn func(line int, turn string) bool) {
	var lines []string
	for rest := text; rest != ""; {
		i := strings.IndexAny(rest, "\r\n")
		if i < 0 {
			lines = append(lines, rest)
			break
		}
		lines = append(lines, rest[:i])
		if rest[i] == '\r' && strings.HasPrefix(rest[i+1:], "\n") {
			i++
		}
		rest = rest[i+1:]
	}
	timing := func(l string) bool { return strings.Contains(l, "-->") && captionLine(l, false) }
	if !slices.ContainsFunc(lines, timing) {
		start := -1 // the line the turn going on started on
		var turn strings.Builder
		for i, l := range lines {
			if captionLine(l, i == 0 || strings.TrimSpace(lines[i-1]) == "") || noWords(l) {
				continue
			}
			if start < 0 {
				start = i
			} else {
				turn.WriteByte(' ')
			}
			turn.WriteString(l)
			if t := strings.TrimRight(l, " \t"); (strings.HasSuffix(t, ",") || strings.HasSuffix(t, "...") || strings.HasSuffix(t, "…")) &&
				i+1 < len(lines) {
				continue
			}
			if !fn(start+1, turn.String()) {
				return
			}
			start = -1
			turn.Reset()
		}
		if start >= 0 {
			fn(start+1, turn.String())
		}
		return
	}
	for i := 0; i < len(lines); {
		if strings.TrimSpace(lines[i]) == "" {
			i++
			continue
		}
		end := i
		for end < len(lines) && strings.TrimSpace(lines[end]) != "" {
			end++
		}
		block := lines[i:end]
		from := i
		i = end
		switch f := strings.Fields(block[0])[0]; f {
		case "WEBVTT", "NOTE", "STYLE", "REGION":
			continue
		}
		if k := slices.IndexFunc(block, timing); k >= 0 {
			block, from = block[k+1:], from+k+1
		}
		if len(block) > 0 && !fn(from+1, strings.Join(block, " ")) {
			return
		}
	}
}

// speakerKey is the label of a transcript's turn as [readSpeakers] and
// [textSaysDoNotCall] tell speakers by it: folded ([foldString]), or,
// when that leaves nothing (a label of symbols, "🤖:", "👤:"), as
// written, so that two such speakers are told apart.
func speakerKey(label string) string {
	if f := foldString(label); f != "" {
		return f
	}
	return strings.TrimSpace(label)
}

// speakers are the speakers of a transcript's text, told apart by their
// labels, folded ([foldString]), as [readSpeakers] tells them, for
// [textSaysDoNotCall].
type speakers struct {
	// told: a label of [personLabels] is in the text, and only such a
	// label is the person's. labelled: one of [agentLabels] is, and every
	// other label but the record's is the person's, read whole.
	told, labelled bool
	// offering are, in a text with no label of [personLabels] or
	// [agentLabels], the labels of the speakers who offer the list beside
	// one who does not: the agent's.
	offering map[string]bool
}

// person reports whether the turns of label f are the called person's.
// A label of symbols alone ("-:", an emoji), which folds to "", is a
// speaker's too: failing closed, it is read as any other unknown label.
func (s speakers) person(f string) bool {
	if s.told {
		return personLabels[f]
	}
	return !agentLabels[f] && !recordLabel(f) && !s.offering[f]
}

// agent reports whether label f is the agent's, whose offer of the list
// a person's yes answers.
func (s speakers) agent(f string) bool { return agentLabels[f] || s.offering[f] }

// guessed reports whether label f is the person's by no label of
// either side: a turn of theirs that offers the list is not read.
func (s speakers) guessed(f string) bool { return !s.told && !s.labelled && s.person(f) }

// readSpeakers tells the speakers of transcript text apart, failing
// closed where their labels do not: a label of [personLabels] is the
// person's, and then no other is. Without one, beside a label of
// [agentLabels], every other label but a part of the record's
// ([recordLabel]) is the person's ("Agent: ...\nAda: ...", the service's
// own example). With neither, as a diarized transcript is written
// ("SPEAKER_00:", "Speaker 1:", "spk_0:") or one of names, every
// speaker's turns are read, but that of a speaker who offers the list
// ([offersAsAgent]: "Say stop to be added to our do-not-call list") when
// another speaker does not: that one is the agent.
func readSpeakers(text string) speakers {
	var s speakers
	hasAgent := false
	eachLine(text, func(_ int, _, label, _ string, ok bool) bool {
		if ok {
			f := foldString(label)
			s.told = s.told || personLabels[f]
			hasAgent = hasAgent || agentLabels[f]
		}
		return !s.told
	})
	if s.told || hasAgent {
		s.labelled = !s.told
		return s
	}
	labels, offers := map[string]bool{}, map[string]bool{}
	label := ""
	var turn strings.Builder
	end := func() {
		if label != "" && !offers[label] && offersAsAgent(turn.String()) {
			offers[label] = true
		}
		turn.Reset()
	}
	eachLine(text, func(_ int, l, next, words string, ok bool) bool {
		if !ok {
			turn.WriteByte('\n')
			turn.WriteString(l)
			return true
		}
		end()
		label = speakerKey(next)
		if !recordLabel(label) {
			labels[label] = true
		}
		turn.WriteString(words)
		return true
	})
	end()
	for f := range labels {
		if !offers[f] { // one who does not offer it: those who do are the agent
			s.offering = offers
			break
		}
	}
	return s
}

// offersAsAgent reports whether a turn offers the do-not-call list as an
// agent does: asked ([offersList]) or said as a statement that holds a do-not-call phrase of
// signalwords.yaml as words, or the agent's own words for the list
// ([offersRemoval], [offersNoMoreCalls]), beside words that leave the
// choice to the one it speaks to ("say stop", "press 9", "if you'd
// rather", "if you ask", "you can ask us", "any request", "on request", "let us know", "at any time", "Sagen Sie",
// "si vous", "diga"), and no word the speaker uses of themselves as the
// one not to be called (me, my; mich, mir, mein; mi, llamarme; moi, mon,
// m'; meu, minha) but in the words it tells the other to say ("diga no me llame
// más"): "You can ask us not to call you again" is an offer, "You can
// take me off your list" is a request. [readSpeakers] tells the agent
// of a diarized transcript by it.
func offersAsAgent(turn string) bool {
	ws := foldWords(turn)
	asked := offersList(turn) && agentSide(ws)
	if !asked && !mentionsIn(turn, nil, true) && !offersRemoval(ws) && !offersNoMoreCalls(ws) {
		return false
	}
	for _, w := range strings.Fields(strings.ToLower(turn)) {
		if strings.HasPrefix(w, "m'") || strings.HasPrefix(w, "m’") {
			return false // French m': "ne m'appelez plus"
		}
	}
	offer, quoting := false, false // quoting: after "say", the words the person may say
	for i, w := range ws {
		switch w {
		case "llamarme", "contactarme", "molestarme", "telefonearme", "escribirme", "borrarme", "quitarme", "eliminarme",
			"sacarme", "excluirme", "llamenme", "llameme", "borrenme", "quitenme", "sacenme":
			// Spanish's me joined to the verb: "deje de llamarme"
			if !quoting {
				return false
			}
		case "me":
			if !quoting && (at(ws, i-1) != "let" || at(ws, i+1) != "know") {
				return false
			}
		case "my", "mine", "myself", "mich", "mir", "mein", "meine", "meinen", "meiner", "meinem", "mi", "mis", "moi", "mon", "ma",
			"mes", "meu", "meus", "minha", "minhas", "mim":
			if !quoting {
				return false
			}
		case "say", "reply", "text":
			switch at(ws, i+1) {
			case "stop", "remove", "unsubscribe", "dnc", "opt", "optout", "do", "dont", "no":
				offer, quoting = offer || at(ws, i-1) != "i", at(ws, i-1) != "i"
			}
		case "diga", "digan", "dites", "sagen", "diz", "digam":
			offer, quoting = true, true
		case "press", "dial", "druecken", "drucken", "pressione", "marque":
			offer = true
		case "you":
			if !quoting && (youCall(ws[i+1:]) || youRemove(ws[i+1:])) {
				// The one spoken to is the caller: "you can stop calling
				// now", "you can remove this number".
				return false
			}
			switch at(ws, i+1) {
			case "can", "may", "could", "canalways":
				offer = true
			}
		case "youll":
			offer = true
		case "if":
			switch at(ws, i+1) {
			case "youd":
				offer = true
			case "you":
				for _, x := range ws[min(i+2, len(ws)):min(i+5, len(ws))] {
					switch x {
					case "rather", "prefer", "like", "want", "wish", "would", "no", "ask", "request":
						offer = true
					}
				}
			case "vous", "usted", "ustedes", "voce", "sie", "no", "nao":
				offer = true
			}
		case "si", "se", "wenn", "falls":
			switch at(ws, i+1) {
			case "vous", "usted", "ustedes", "voce", "sie", "no", "nao", "ne":
				offer = true
			}
		case "let", "tell", "ask":
			if at(ws, i+1) == "us" {
				offer = true
			}
		case "any", "at":
			if at(ws, i+1) == "time" || at(ws, i+1) == "anytime" || w == "any" && at(ws, i+1) == "request" {
				offer = true
			}
		case "your", "upon", "on":
			if at(ws, i+1) == "request" { // "we will honor your request", "upon request"
				offer = true
			}
		case "anytime":
			offer = true
		case "puede", "pueden", "pode", "podem", "pouvez", "konnen", "koennen":
			offer = true
		}
	}
	return offer || asked
}

// youCall reports whether the words ws after a "you", folded
// ([foldWords]), make the one spoken to the one who calls, as only the
// called person speaks to the agent: "(you) keep calling", "(you) can
// stop calling", "(you) quit phoning", "(you) call, I hang up", "(you)
// call here every day"; not "(you) call us back", the agent's.
func youCall(ws []string) bool {
	calling := func(w string) bool {
		switch w {
		case "call", "calling", "calls", "called", "phone", "phoning", "ring", "ringing", "contacting":
			return true
		}
		return false
	}
	i := 0
	switch at(ws, 0) {
	case "can", "could", "may", "should", "must", "will", "would", "just", "please", "need", "have", "going":
		// "going to": "When are you going to stop calling us?"
		i = 1
		if at(ws, 1) == "to" {
			i = 2
		}
	}
	switch w := at(ws, i); {
	case w == "stop" || w == "quit":
		// "Can you stop calling us?": a household's request.
		return calling(at(ws, i+1))
	case w == "keep":
		// Not of the agent's own line: "if you keep calling our line".
		return calling(at(ws, i+1)) && at(ws, i+2) != "our" && at(ws, i+2) != "us"
	case i == 0 && (w == "call" || w == "called"):
		// Only before the caller's own words: "Thank you. Calling from
		// Acme", "Thank you. Call me anytime", "you called again about
		// billing" are the agent's.
		switch at(ws, i+1) {
		case "i", "here", "my", "every", "all", "so", "twice", "constantly", "anymore", "too":
			return true
		}
	}
	return false
}

// youRemove reports whether the words ws after a "you", folded
// ([foldWords]), have the one spoken to take the number off the list, as
// only the called person tells the caller to: "(you) can remove this
// number", "(you) may delete it", "(you) could just take us off"; not
// the agent's "(you) can remove your number by pressing 9", nor "(you)
// can ask us to remove your number". [offersAsAgent] reads such words as
// a request, never an offer.
func youRemove(ws []string) bool {
	switch at(ws, 0) {
	case "can", "may", "could":
	default:
		return false
	}
	i := 1
	if at(ws, i) == "just" || at(ws, i) == "please" {
		i++
	}
	switch at(ws, i) {
	case "remove", "delete", "take", "drop", "erase":
	default:
		return false
	}
	switch at(ws, i+1) {
	case "us", "it":
		return true
	case "this", "the":
		// "this number", "the phone number", or "this" alone
		// ("You can remove this.").
		switch at(ws, i+2) {
		case "number", "phone":
			return true
		}
		return at(ws, i+1) == "this" && (i+2 == len(ws) || at(ws, i+2) == "off" || at(ws, i+2) == "from")
	}
	return false
}

// agentSide reports whether the words ws of a question that names the
// list, folded ([foldWords]), are the agent's asking the person what
// they want ("Would you like to be added to our do-not-call list?",
// "¿Desea que lo eliminemos de nuestra lista?"): a word of the caller's
// side (we, our) or of the person's wish (like, want, prefer). Without
// one ("Can you stop calling?", "Could you remove this number?") the
// question is the person's request.
func agentSide(ws []string) bool {
	for _, w := range ws {
		switch w {
		case "we", "us", "our", "ours", "like", "want", "prefer", "wish", "shall", "should",
			"nuestra", "nuestro", "nuestras", "nuestros", "desea", "quiere", "prefiere", "nossa", "nosso", "deseja", "quer", "prefere",
			"notre", "nos", "nous", "souhaitez", "voulez", "preferez", "unserer", "unsere", "wir", "mochten", "sollen", "wollen":
			return true
		}
	}
	return false
}

// offersList reports whether a turn of the agent ends by offering the
// do-not-call list as a question: its last sentence ends in a question
// mark and holds a do-not-call phrase of signalwords.yaml as words ("Would
// you like to be added to our do-not-call list?"), or an opt-out's words
// beside a word of calls or texts ("Would you like to opt out of future
// calls?"). The offer every call must make, said as a statement ("Say stop
// to be added to our do-not-call list."), is none, nor is a question after
// it ("... list. Is now a good time?").
func offersList(turn string) bool {
	t := strings.TrimRight(turn, " \t\r\n")
	q, ok := strings.CutSuffix(t, "?")
	if !ok {
		if q, ok = strings.CutSuffix(t, "？"); !ok {
			return false
		}
	}
	if i := strings.LastIndexFunc(q, func(r rune) bool { return strings.ContainsRune(".!?\n。！？", r) }); i >= 0 {
		_, n := utf8.DecodeRuneInString(q[i:])
		q = q[i+n:]
	}
	if ws := foldWords(q); mentionsIn(q, nil, true) || offersRemoval(ws) || offersNoMoreCalls(ws) || offersInOtherTongues(ws) {
		return true
	}
	// Read as a header is ([header.has]) only when its letters run together
	// hold an opt-out's and a call's: an agent's every question is asked so.
	w := words()
	var buf [256]byte
	joined := string(appendFold(buf[:0], q))
	within := func(list []string) bool {
		return slices.ContainsFunc(list, func(e string) bool { return strings.Contains(joined, e) })
	}
	if !within(w.optOut) || !within(w.calls) && !within(w.texts) {
		return false
	}
	h := readHeaderWords(q)
	return h.has(w.optOut) && (h.has(w.calls) || h.has(w.texts))
}

// offersRemoval reports whether the words ws of an agent's question,
// folded ([foldWords]), offer to take the person off a list of calls
// in the agent's own words, which are not the person's phrases of
// signalwords.yaml: "remove you", "remove your (phone) number", "take you
// off", "take your number off", followed by a word of a list or of calls
// ("Shall I take you off our calling list?", "Do you want me to remove
// your number from our list?"), and no word of e-mail or another channel
// without one of calls ("... from our newsletter list?", "... from the
// waiting list?").
func offersRemoval(ws []string) bool {
	at := -1
	for i := 0; i+1 < len(ws) && at < 0; i++ {
		switch {
		case (ws[i] == "remove" || ws[i] == "take") && ws[i+1] == "you":
			at = i + 2
		case (ws[i] == "remove" || ws[i] == "take") && ws[i+1] == "your":
			if j := i + 2; j < len(ws) && ws[j] == "number" || j+1 < len(ws) && ws[j] == "phone" && ws[j+1] == "number" {
				at = i + 2
			}
		}
	}
	if at < 0 {
		return false
	}
	w := words()
	calls, list, other := false, false, false
	for _, x := range ws[at:] {
		switch {
		case x == "list" || x == "lists":
			list = true
		case slices.Contains(w.calls, x):
			calls = true
		case slices.Contains(w.other, x) || slices.Contains(w.texts, x) || x == "waiting" || x == "wait" || x == "waitlist":
			other = true // a waiting list is another, as "lista de espera" is
		}
	}
	return calls || list && !other
}

// removalWords are the agent's words for taking the person off a list,
// folded ([foldString]), in Spanish, Portuguese, French and German, by
// how the person is named beside them: conjugated after an object
// pronoun ("que lo eliminemos", "que o removamos", "que nous vous
// retirions"), with the pronoun joined after ("eliminarlo"; Portuguese's
// "removê-lo" is two words), or as a participle after "to be" ("ser
// eliminado", "être retiré", "gestrichen werden").
var removalWords = struct {
	afterPronoun, joined, participle map[string]bool
}{
	afterPronoun: setOf("eliminemos", "quitemos", "borremos", "saquemos", "retiremos", "excluyamos", "eliminamos", "quitamos",
		"borramos", "sacamos", "retiramos", "excluimos", "eliminaremos",
		"removamos", "tiremos", "excluamos", "apaguemos", "removemos", "tiramos", "removeremos",
		"retirions", "supprimions", "enlevions", "rayions", "desinscrivions", "retirons", "supprimons", "enlevons", "rayons",
		"desinscrivons", "retirer", "supprimer", "enlever", "rayer", "desinscrire", "retirerons", "supprimerons",
		"entfernen", "streichen", "loschen", "austragen", "sperren", "nehmen"),
	joined: setOf("eliminarlo", "eliminarla", "eliminarle", "quitarlo", "quitarla", "quitarle", "borrarlo", "borrarla",
		"sacarlo", "sacarla", "retirarlo", "retirarla", "excluirlo", "excluirla", "darlo", "darla"),
	participle: setOf("eliminado", "eliminada", "quitado", "quitada", "retirado", "retirada", "excluido", "excluida", "borrado",
		"borrada", "sacado", "sacada", "removido", "removida", "tirado", "tirada",
		"retire", "retiree", "supprime", "supprimee", "enleve", "enlevee", "raye", "rayee", "desinscrit", "desinscrite",
		"entfernt", "gestrichen", "geloscht", "ausgetragen", "gesperrt", "genommen"),
}

// setOf is a set of words.
func setOf(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// offersInOtherTongues reports whether the words ws of an agent's
// question, folded ([foldWords]), offer the do-not-call list in Spanish,
// Portuguese, French or German, in the agent's own words rather than the
// person's phrases of signalwords.yaml: to take the person off a list
// ([removalWords]: "¿Desea que lo eliminemos de nuestra lista de
// llamadas?", "Deseja ser removido da nossa lista?", "Souhaitez-vous que
// nous vous retirions de notre liste d'appels ?", "Sollen wir Sie von
// unserer Anrufliste streichen?") followed by a word of a list or of
// calls, and no word of e-mail or another channel without one of calls
// ("... de nuestra lista de correo?"); or to call them no more ("¿Quiere
// que dejemos de llamarle?", "¿Prefiere que no le volvamos a llamar?",
// "Quer que paremos de ligar?", "Prefere que não liguemos mais?",
// "Voulez-vous que nous ne vous appelions plus ?"). A question of another
// list ("¿Quitamos la cita de la lista de espera?") names no person beside
// its verb, and is none.
func offersInOtherTongues(ws []string) bool {
	w := words()
	listed := func(from int) bool {
		calls, list, other := false, false, false
		for _, x := range ws[min(from, len(ws)):] {
			switch {
			case x == "lista" || x == "listas" || x == "liste" || x == "listen" || x == "anrufliste" || x == "telefonliste" ||
				x == "kontaktliste" || x == "sperrliste" || x == "listado" || x == "registro" || x == "fichier":
				list = true
			case slices.Contains(w.calls, x) || strings.HasPrefix(x, "llamar") || strings.HasPrefix(x, "appel") ||
				strings.HasPrefix(x, "ligac"):
				calls = true
			case slices.Contains(w.other, x) || slices.Contains(w.texts, x) || x == "espera" || x == "attente":
				other = true // a waiting list ("lista de espera", "liste d'attente") is another
			}
		}
		return calls || list && !other
	}
	for i, x := range ws {
		prev, next := at(ws, i-1), at(ws, i+1)
		switch {
		// The removal, its person named.
		case removalWords.afterPronoun[x] && (prev == "lo" || prev == "la" || prev == "le" || prev == "los" || prev == "las" ||
			prev == "o" || prev == "a" || prev == "vous"):
			if listed(i + 1) {
				return true
			}
		case removalWords.afterPronoun[x] && slices.Contains(ws[:i], "wir"):
			// "Sollen wir Sie von unserer Anrufliste streichen?", "dass wir
			// Ihre Nummer aus unserer Liste entfernen"
			for j := 0; j+1 < i; j++ {
				if y := ws[j+1]; ws[j] == "wir" && (y == "sie" || y == "ihre" || y == "ihren") && listed(j+2) {
					return true
				}
			}
		case removalWords.joined[x] || (x == "remove" || x == "retira" || x == "tira" || x == "exclui") && (next == "lo" || next == "la"):
			if listed(i + 1) {
				return true
			}
		case removalWords.participle[x] && (prev == "ser" || prev == "etre" || next == "werden" || next == "zu"):
			if listed(i+1) || (next == "werden" || next == "zu") && listed(0) {
				return true
			}
		case (removalWords.afterPronoun[x] || x == "remover" || x == "retirar" || x == "tirar" || x == "excluir" ||
			x == "eliminar" || x == "quitar" || x == "borrar") && (next == "voce" || next == "usted"):
			// "remover você da lista"
			if listed(i + 1) {
				return true
			}
		case (removalWords.afterPronoun[x] || x == "remover" || x == "retirar" || x == "tirar" || x == "excluir" ||
			x == "eliminar" || x == "quitar" || x == "borrar") && (next == "su" || next == "seu" || next == "votre" || next == "o"):
			// "quitemos su número de nuestra lista", "remover o seu número"
			for _, y := range ws[min(i+2, len(ws)):min(i+4, len(ws))] {
				if (y == "numero" || y == "telefono" || y == "telefone") && listed(i+1) {
					return true
				}
			}
		// No more calls.
		case (x == "dejemos" || x == "paremos" || x == "arretions" || x == "arretons" || x == "deixemos") &&
			(next == "de" || next == "d"):
			for _, y := range ws[min(i+2, len(ws)):min(i+5, len(ws))] {
				if strings.HasPrefix(y, "llamar") || strings.HasPrefix(y, "ligar") || strings.HasPrefix(y, "telefonar") ||
					strings.HasPrefix(y, "appeler") || strings.HasPrefix(y, "contactar") {
					return true
				}
			}
		case x == "no" || x == "nao":
			// "no le volvamos a llamar", "no le llamemos más", "não liguemos mais"
			j := i + 1
			if y := at(ws, j); y == "le" || y == "lo" || y == "la" || y == "lhe" || y == "o" || y == "a" || y == "te" {
				j++
			}
			switch y := at(ws, j); {
			case y == "volvamos" || y == "vuelva" || y == "vuelvan" || y == "volveremos" || y == "voltemos" ||
				y == "voltaremos" || y == "voltarmos":
				if z := at(ws, j+2); at(ws, j+1) == "a" && (strings.HasPrefix(z, "llamar") || strings.HasPrefix(z, "ligar") ||
					strings.HasPrefix(z, "contactar")) {
					return true
				}
			case y == "llamemos" || y == "llamaremos" || y == "liguemos" || y == "ligaremos" || y == "ligarmos" ||
				y == "contactemos":
				if slices.Contains(ws[j+1:], "mas") || slices.Contains(ws[j+1:], "mais") {
					return true
				}
			}
		case x == "ne" && next == "vous":
			// "que nous ne vous appelions plus", "ne vous contactions plus"
			if y := at(ws, i+2); (strings.HasPrefix(y, "appel") || strings.HasPrefix(y, "rappel") || strings.HasPrefix(y, "contact")) &&
				at(ws, i+3) == "plus" {
				return true
			}
		}
	}
	return false
}

// offersNoMoreCalls reports whether the words ws of an agent's question,
// folded ([foldWords]), offer to stop calling the person, asked in the
// negative: "not call you" ("Would you prefer we not call you again?"),
// "didn't call", "stop calling you", "no longer" or "no more" or "any
// more" before a word of calls ("Would you like to no longer receive
// calls from us?", "Do you not want any more calls?").
func offersNoMoreCalls(ws []string) bool {
	calls := words().calls
	isCall := func(x string) bool { return slices.Contains(calls, x) }
	for i := 0; i+1 < len(ws); i++ {
		next := ws[i+1]
		third := ""
		if i+2 < len(ws) {
			third = ws[i+2]
		}
		switch ws[i] {
		case "not":
			if next == "call" && third == "you" {
				return true
			}
		case "didnt", "dont":
			if next == "call" {
				return true
			}
		case "stop":
			if next == "calling" && third == "you" {
				return true
			}
		case "no", "any":
			if next != "longer" && next != "more" {
				continue
			}
			for _, x := range ws[i+2 : min(i+5, len(ws))] {
				if isCall(x) {
					return true
				}
			}
		}
	}
	return false
}

// recordLabel reports whether a turn's label, folded ([foldString]), names
// a part of the call's record rather than a speaker ([roleLabels]; a tool
// call and its result, "tool_call_invocation", "function_call"): such a
// turn between the agent's offer of the list and the person's answer
// leaves the offer the turn before the answer. A name that only starts
// so ("Toole", "Toolan") is a speaker's: beside the agent, the person's.
func recordLabel(f string) bool {
	if roleLabels[f] {
		return true
	}
	rest, ok := strings.CutPrefix(f, "tool")
	if !ok {
		if rest, ok = strings.CutPrefix(f, "function"); !ok {
			return false
		}
	}
	return rest == "" || slices.ContainsFunc(toolParts, func(p string) bool { return strings.HasPrefix(rest, p) })
}

// toolParts are the words after "tool" or "function" in the label of a
// tool call's turn, folded ([foldString]): "tool_call_invocation",
// "tool_result", "ToolResponse", "function_output", "tool_use".
var toolParts = []string{"call", "result", "response", "output", "input", "invocation", "return", "use", "s"}

// acceptsOffer reports whether a turn of the called person, said, takes
// up an offer of the do-not-call list ([offersList]) made in the agent's
// turn just before it (a tool call's turns between aside,
// [recordLabel], and a turn of fillers alone, [noWords]): its first word,
// fillers and lead-ins aside ([fillers], [leadIns]: "Okay, yes"), is an
// affirmative ([affirmatives]: "Yes.", "Yes please", "Sure", "Ja,
// bitte"), none of its words denies or hedges ([denials], or a word with
// "n't": "Yes, but not now", "Yeah, no"), and its first sentence asks
// nothing back ("Yes? Who is this?").
func acceptsOffer(said string) bool {
	// Its first sentence asked back ("Yes? Who is this?", "Sure, what
	// company is this?"): no answer. A question after a yes said ("Yes,
	// please. How long does that take?") leaves it one.
	if i := strings.IndexAny(said, ".!?。！？¿"); i >= 0 {
		if r, _ := utf8.DecodeRuneInString(said[i:]); r == '?' || r == '？' || r == '¿' {
			return false
		}
	}
	first := true
	for _, w := range strings.Fields(said) {
		f := foldString(w)
		if f == "" || fillers[f] || first && leadIns[f] {
			continue
		}
		if first {
			if !affirmatives[f] {
				return false
			}
			first = false
			continue
		}
		if denials[f] || strings.Contains(strings.ToLower(w), "n't") || strings.Contains(strings.ToLower(w), "n’t") {
			return false
		}
	}
	return !first
}

// leadIns are the words a person's yes may come after without being one
// ("Okay, yes please", "Oh, yes", "Well, yes"), folded ([foldString]):
// alone they take up no offer.
var leadIns = map[string]bool{"oh": true, "well": true, "okay": true, "ok": true, "alright": true,
	// The first word of a yes of two in the languages of
	// signalwords.yaml: "Por favor", "Por supuesto", "Com certeza",
	// "Bien sûr".
	"por": true, "com": true, "bien": true}

// noWords reports whether a turn says nothing but fillers ([fillers]):
// a person's "Um." before their answer in a turn of its own, or an agent's
// turn that only calls a tool (ElevenLabs writes its message null). Such a
// turn leaves the agent's offer before it the offer the next turn answers.
func noWords(turn string) bool {
	for _, w := range strings.Fields(turn) {
		if f := foldString(w); f != "" && !fillers[f] {
			return false
		}
	}
	return true
}

// affirmatives are the words a person's yes starts with, folded
// ([foldString]), in English and in the languages of signalwords.yaml.
// "OK" and "right" are not among them: they as often only acknowledge.
var affirmatives = map[string]bool{
	"yes": true, "yeah": true, "yep": true, "yup": true, "yea": true, "ya": true, "sure": true, "please": true,
	"absolutely": true, "definitely": true, "certainly": true,
	"ja": true, "jawohl": true, "gerne": true, "gern": true, "bitte": true, "oui": true, "ouais": true, "volontiers": true,
	"si": true, "claro": true, "sim": true, "certo": true, "graag": true, "garna": true, "gjerne": true, "tak": true,
	"kylla": true, "joo": true, "ano": true, "evet": true,
	// The second word of "Por favor", "Por supuesto", "Com certeza",
	// "Bien sûr" ([leadIns]), and others' "of course".
	"favor": true, "supuesto": true, "certeza": true, "sur": true, "naturlich": true, "selbstverstandlich": true,
	"genau": true, "exacto": true, "exactement": true, "evidemment": true, "exatamente": true,
}

// denials are the words that take back or hedge a yes, folded
// ([foldString]), in English and in the languages of signalwords.yaml:
// no, not, never and but.
var denials = map[string]bool{
	"no": true, "not": true, "nope": true, "nah": true, "never": true, "but": true, "however": true, "wait": true,
	"dont": true, "wont": true, "cant": true, "didnt": true, "doesnt": true, "isnt": true,
	"nein": true, "nicht": true, "kein": true, "keine": true, "nie": true, "niemals": true, "aber": true,
	"non": true, "pas": true, "ne": true, "jamais": true, "mais": true, "nunca": true, "pero": true, "nao": true, "mas": true,
	"mai": true, "ma": true, "nee": true, "niet": true, "geen": true, "nooit": true, "maar": true, "nej": true, "inte": true,
	"ej": true, "aldrig": true, "men": true, "ikke": true, "nei": true, "aldri": true, "nigdy": true, "ale": true,
	"ei": true, "mutta": true, "nikdy": true, "hayir": true, "degil": true, "ama": true,
}

// eachLine calls fn with each line of transcript text (from 1; a line
// ends at "\n", "\r\n" or a "\r" alone, as old Macs wrote; a caption
// file's cue numbers and timings, [captionLine], read as blank), and its
// label and the words after it when it starts a turn ([turnLabel]), until
// fn returns false. In a turn that is not the agent's, a line after one
// whose words end in a colon ("User: Look here:") starts no turn unless
// its label is a person's or the agent's ([personLabels],
// [agentLabels]): it is the person's turn going on ("you people: stop
// calling me"), not a third speaker. In the agent's, it does: a named
// person's reply to a question that ended in a colon cannot be told from
// the agent's words going on ("Option one: ..."), and the person's must
// be read.
func eachLine(text string, fn func(line int, l, label, words string, ok bool) bool) {
	line, colon, agent, block := 0, false, false, true
	for rest := text; rest != ""; {
		var l string
		if i := strings.IndexAny(rest, "\r\n"); i >= 0 {
			crlf := rest[i] == '\r' && strings.HasPrefix(rest[i+1:], "\n")
			l, rest = rest[:i], rest[i+1:]
			if crlf {
				rest = rest[1:]
			}
		} else {
			l, rest = rest, ""
		}
		line++
		blank := strings.TrimSpace(l) == ""
		if captionLine(l, block) {
			l = ""
		}
		block = blank
		label, words, ok := turnLabel(l)
		if ok && colon && !agent {
			f := foldString(label)
			ok = personLabels[f] || agentLabels[f]
		}
		if !fn(line, l, label, words, ok) {
			return
		}
		if ok {
			agent = agentLabels[foldString(label)]
		}
		if t := strings.TrimRight(l, " \t\r"); !ok || strings.TrimSpace(words) != "" {
			colon = strings.HasSuffix(t, ":") || strings.HasSuffix(t, "：")
		}
	}
}

// roleLabels are labels of a transcript's line that name no speaker but
// a part of the call's record, folded ([foldString]): the system prompt,
// a tool or function call and its result, a note, the voicemail or the
// phone menu. Beside the agent's label alone they are not the person's.
var roleLabels = map[string]bool{
	"system": true, "systemprompt": true, "prompt": true, "tool": true, "tools": true, "toolcall": true, "toolcalls": true,
	"toolresult": true, "function": true, "functioncall": true, "functionresult": true, "action": true, "agentaction": true,
	"note": true, "notes": true, "summary": true, "transcript": true, "voicemail": true, "ivr": true, "machine": true,
	"narrator": true, "recording": true, "event": true, "info": true, "warning": true, "error": true, "debug": true,
	// The prompt by other names (OpenAI's developer message), and the
	// call's steps: no one's words.
	"developer": true, "instructions": true, "instruction": true, "context": true, "metadata": true, "nodetransition": true,
	"dtmf": true, "transfer": true,
}

// turnLabel splits a transcript's line into its speaker's label and the
// words after it, when it starts with one: up to three words of letters,
// digits, _ or - (at most maxLabel bytes), then a colon (or a full-width
// one, "User：") and a space or the line's end; after a person's or the
// agent's label ([personLabels], [agentLabels]), a colon alone ("User:stop").
// A time before the label ("[00:01:02] User:", "00:01 User:", "(0:04) -
// User:") or in brackets after it ("User (00:04):"), a name in brackets
// after it ("User (Ada):", whose role, "Ada (customer):", is the label
// when only it is one), brackets around it ("[User]:"), and the asterisks
// of markdown's bold around it ("**User:**", "**User**:"), are no part of
// it. A WebVTT caption's voice tag ("<v User>words") is a label too
// ([voiceTag]).
func turnLabel(l string) (label, rest string, ok bool) {
	t := strings.TrimLeft(l, " \t\r")
	if n := clockLen(t, false); n > 0 {
		t = strings.TrimLeft(t[n:], " \t-|")
	}
	t = strings.TrimLeft(t, "*")
	if label, rest, ok := voiceTag(t); ok {
		return label, rest, true
	}
	if strings.HasPrefix(t, "[") { // "[User]: ..."
		if k := strings.IndexByte(t, ']'); k > 1 && k <= maxLabel+1 {
			if c, _ := labelColon(t[k+1:]); c == 0 {
				t = t[1:k] + t[k+1:]
			}
		}
	}
	i, width := labelColon(t)
	end := i // the label ends before a time in brackets: "User (00:04):"
	inner := ""
	if j := strings.IndexAny(t, "(["); j > 0 && j < i {
		if n := clockLen(t[j:], true); n > 0 {
			if k, w := labelColon(t[j+n:]); k == 0 {
				end, i, width = j, j+n, w
			}
		} else if k := strings.IndexAny(t[j+1:], ")]"); k >= 0 && k <= maxLabel && j+1+k+1 == i {
			// A name in brackets after the label: "User (Ada):",
			// "Customer [Ada Lovelace]:".
			end, inner = j, t[j+1:j+1+k]
		}
	}
	if end <= 0 || end > maxLabel {
		return "", "", false
	}
	label = strings.TrimSpace(strings.TrimRight(t[:end], "*"))
	// "Ada (customer):": the role in the brackets names the speaker.
	if f, g := foldString(label), foldString(inner); !personLabels[f] && !agentLabels[f] && (personLabels[g] || agentLabels[g]) {
		label = strings.TrimSpace(inner)
	}
	if label == "" || len(strings.Fields(label)) > 3 {
		return "", "", false
	}
	for _, r := range label {
		if !(r == ' ' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f) {
			return "", "", false
		}
	}
	rest = strings.TrimLeft(t[i+width:], "*")
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\r' {
		if f := foldString(label); !personLabels[f] && !agentLabels[f] {
			return "", "", false
		}
	}
	return label, rest, true
}

// voiceTag reads a WebVTT caption's voice tag at the start of t, "<v
// User>words" or "<v.loud User>words</v>": the voice's name is the label
// and the words after the tag, without its closing tag, the rest.
func voiceTag(t string) (label, rest string, ok bool) {
	if len(t) < 4 || !strings.HasPrefix(t, "<v") || t[2] != ' ' && t[2] != '.' {
		return "", "", false
	}
	k := strings.IndexByte(t, '>')
	if k < 0 {
		return "", "", false
	}
	name := t[2:k]
	if name[0] == '.' { // classes before the name: "<v.loud User>"
		j := strings.IndexByte(name, ' ')
		if j < 0 {
			return "", "", false
		}
		name = name[j:]
	}
	name = strings.TrimSpace(name)
	if name == "" || len(name) > maxLabel || len(strings.Fields(name)) > 3 {
		return "", "", false
	}
	return name, " " + strings.ReplaceAll(t[k+1:], "</v>", ""), true
}

// captionLine reports whether a line of transcript text is a caption
// file's own and no words of anyone's: SubRip's and WebVTT's cue timings
// ("00:00:12,340 --> 00:00:14,000", settings after), a cue's number
// ("12"), WebVTT's header ("WEBVTT") and its notes ("NOTE ..."), which
// start a block of their own: first, or after a blank line (block). A
// line in a turn that starts "NOTE" ("NOTE THAT I SAID DON'T CALL ME
// AGAIN") is the speaker's words.
func captionLine(l string, block bool) bool {
	t := strings.TrimSpace(l)
	if t == "" {
		return false
	}
	if block && (t == "WEBVTT" || strings.HasPrefix(t, "WEBVTT ") || strings.HasPrefix(t, "NOTE ") || t == "NOTE") {
		return true
	}
	if strings.Trim(t, "0123456789") == "" {
		return true
	}
	if i := strings.Index(t, "-->"); i > 0 {
		start := strings.TrimSpace(t[:i])
		return clockLen(start+" ", false) == len(start) || strings.Trim(start, "0123456789:.,") == ""
	}
	return false
}

// labelColon returns where the first colon of s is, ':' or the
// full-width '：', and its length in bytes; -1 when s has none.
func labelColon(s string) (int, int) {
	i := strings.IndexByte(s, ':')
	if j := strings.Index(s, "："); j >= 0 && (i < 0 || j < i) {
		return j, len("：")
	}
	return i, 1
}

// clockLen returns the length of the time of the call at the start of s,
// 0 when there is none: hours, minutes and seconds, or minutes and
// seconds, each of digits, split by colons, with a fraction of a second
// after a dot or a comma ("00:01:02", "1:02.5"), in brackets or
// parentheses ("[00:01:02]", "(0:04)"), or, unless bracketed, bare and
// then a space.
func clockLen(s string, bracketed bool) int {
	closing := byte(0)
	i := 0
	if s != "" && (s[0] == '[' || s[0] == '(') {
		closing, i = ']', 1
		if s[0] == '(' {
			closing = ')'
		}
	} else if bracketed {
		return 0
	}
	digits := func() int {
		j := i
		for i < len(s) && i-j < 3 && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	if digits() == 0 {
		return 0
	}
	parts := 1
	for parts < 3 && i < len(s) && s[i] == ':' {
		i++
		if digits() != 2 {
			return 0
		}
		parts++
	}
	if parts < 2 {
		return 0
	}
	if i < len(s) && (s[i] == '.' || s[i] == ',') {
		i++
		if digits() == 0 {
			return 0
		}
	}
	switch {
	case closing != 0 && i < len(s) && s[i] == closing:
		return i + 1
	case closing == 0 && i < len(s) && (s[i] == ' ' || s[i] == '\t'):
		return i
	}
	return 0
}
