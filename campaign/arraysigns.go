package campaign

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/callrun/callrun/apiclient"
)

// maxArraySignDepth bounds how deep [ArraySaysDoNotCall] reads arrays
// inside the objects of arrays.
const maxArraySignDepth = 3

// ArraySaysDoNotCall returns the path of the first field of delivery d
// whose value is a JSON array ([apiclient.ArrayElements]) that says do
// not call, "" when none does: an element object whose fields do as a
// delivery's would (the campaign's outcomes.opt_out, [FlagsDoNotCall],
// [SaysDoNotCall]), or a string element that holds a do-not-call phrase
// as words. A transcript's field ([TranscriptFields]) is not read here:
// [SaysDoNotCall] reads it by its speakers, and neither is an array
// whose elements are turns of named speakers (role, speaker): it is read
// as a transcript is, the agent's turns left out; nor is the agent's
// own set-up a delivery may carry ([agentSetup]), nor the field of
// outcomes.opt_out, read by its values. Such an array's sign
// is an opt-out whose number is in doubt: the delivery names a number of
// its own, or none, and the array may be of other people (a batch of
// events, a list of contacts) whose numbers callrun cannot tell apart;
// listen's intake lists the contacts' numbers among its values and holds
// the opt-out. values are every value of the array's elements, for the
// intake to find the contacts' numbers among.
func (o *Outcomes) ArraySaysDoNotCall(d apiclient.Delivery) (path string, values []string) {
	skip := map[string]bool{}
	for _, name := range TranscriptFields {
		paths, _ := apiclient.FieldValues(d.Fields, name)
		for _, p := range paths {
			skip[p] = true
		}
	}
	if o != nil && o.OptOut != nil {
		// outcomes.opt_out's field is read by its values, each string of
		// its array ([Outcomes.OptsOut]): another value there is none.
		paths, _ := apiclient.FieldValues(d.Fields, o.OptOut.Field)
		for _, p := range paths {
			skip[p] = true
		}
	}
	paths := make([]string, 0, 4)
	for p, v := range d.Fields {
		if !skip[p] && !agentSetup(p) && strings.HasPrefix(strings.TrimSpace(v), "[") {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		if at, vals := o.arraySays(d.Fields[p], 1); at != "" {
			return p + at, vals
		}
	}
	return "", nil
}

// arraySays reads v, a JSON array, for [ArraySaysDoNotCall]: where in it
// a sign is, and every value of its elements.
func (o *Outcomes) arraySays(v string, depth int) (at string, values []string) {
	elems, strs, _, ok := apiclient.ArrayElements(v)
	if !ok {
		return "", nil
	}
	turns := len(elems) > 0 && !slices.ContainsFunc(elems, func(e apiclient.Delivery) bool {
		return apiclient.Field(e.Fields, "role") == "" && apiclient.Field(e.Fields, "speaker") == ""
	})
	if turns {
		// A transcript under a name callrun does not know: read by its
		// speakers, as one it knows is.
		if said := transcriptSaysDoNotCall(v, false); said != "" {
			return said, allValues(elems, strs)
		}
		return "", nil
	}
	for i, e := range elems {
		sign := ""
		switch {
		case o.OptsOut(e):
			sign = "opt_out"
		default:
			if f, _ := FlagsDoNotCall(e); f != "" {
				sign = f
			} else {
				sign = SaysDoNotCall(e)
			}
		}
		if sign == "" && depth < maxArraySignDepth {
			for p, fv := range e.Fields {
				if strings.HasPrefix(strings.TrimSpace(fv), "[") {
					if in, _ := o.arraySays(fv, depth+1); in != "" {
						sign = p + in
						break
					}
				}
			}
		}
		if sign != "" {
			return fmt.Sprintf("[%d].%s", i, sign), allValues(elems, strs)
		}
	}
	for i, s := range strs {
		if spokenPhrase(s) {
			return fmt.Sprintf("[string %d]", i), allValues(elems, strs)
		}
	}
	return "", nil
}

// allValues returns every field value of elems, then strs.
func allValues(elems []apiclient.Delivery, strs []string) []string {
	var out []string
	for _, e := range elems {
		for _, v := range e.Fields {
			out = append(out, v)
		}
	}
	return append(out, strs...)
}

// agentSetupSegs are the segments of a field's path under which a
// delivery carries the agent's own set-up (Vapi's message.assistant with
// its model's messages and tools, a tool's description): its words of
// the do-not-call list are the agent's instructions, no one's request.
var agentSetupSegs = map[string]bool{"assistant": true, "agent": true, "model": true, "tools": true, "functions": true,
	"toolcalls": true, "toolcalllist": true, "toolwithtoolcalllist": true, "prompt": true, "llm": true, "squad": true,
	"workflow": true, "assistantoverrides": true, "agentoverrides": true}

// agentSetup reports whether path is of a field under the agent's set-up
// ([agentSetupSegs]).
func agentSetup(path string) bool {
	for _, seg := range strings.Split(path, ".") {
		if agentSetupSegs[normName(seg)] {
			return true
		}
	}
	return false
}
