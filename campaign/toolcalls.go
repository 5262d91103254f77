package campaign

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/callrun/callrun/apiclient"
)

// toolCallLists name, as [normName] writes them, the arrays of the tools
// an agent invoked during the call: Vapi's tool-calls message
// (message.toolCallList, message.toolWithToolCallList), the tool calls of
// a turn of its artifact's messages (toolCalls).
var toolCallLists = map[string]bool{"toolcalllist": true, "toolwithtoolcalllist": true, "toolcalls": true}

// toolTurnLists name, as [normName] writes them, the arrays of a call's
// turns among which the agent's invocations of its tools are: Retell's
// transcript_with_tool_calls (role tool_call_invocation), Vapi's
// artifact.messages (role tool_calls, each holding its toolCalls).
var toolTurnLists = map[string]bool{"transcriptwithtoolcalls": true, "messages": true}

// ToolCallSaysDoNotCall returns where delivery d says that the agent
// invoked, during the call, a tool named as a do-not-call action
// ("add_to_do_not_call_list", "mark_dnc", "opt_out": [deliveryFlagName]),
// as an agent does when the person asks not to be called again: in
// Vapi's tool-calls message (message.toolCallList[0]), or among the
// turns of Retell's transcript_with_tool_calls or Vapi's
// artifact.messages. "" when it says none. The tools the agent is set up
// with (an assistant's model.tools, listed on every call) are never
// read: only those it invoked.
func ToolCallSaysDoNotCall(d apiclient.Delivery) string {
	for _, path := range slices.Sorted(maps.Keys(d.Fields)) {
		v := strings.TrimSpace(d.Fields[path])
		if !strings.HasPrefix(v, "[") {
			continue
		}
		segs := strings.Split(path, ".")
		leaf := normName(segs[len(segs)-1])
		if !toolCallLists[leaf] && !toolTurnLists[leaf] || agentSetup(strings.Join(segs[:len(segs)-1], ".")) {
			continue
		}
		if at := toolCallsSay(v, toolCallLists[leaf], 2); at != "" {
			return path + at
		}
	}
	return ""
}

// toolCallsSay reads v, a JSON array, for [ToolCallSaysDoNotCall]: of
// invocations when calls is set (each element's function.name, or name),
// else of turns, whose invocations are those of role
// tool_call_invocation (their name) or holding toolCalls (read as
// invocations, depth bounding the nesting). It returns where, [i].
func toolCallsSay(v string, calls bool, depth int) string {
	elems, _, _, ok := apiclient.ArrayElements(v)
	if !ok {
		return ""
	}
	for i, e := range elems {
		at := fmt.Sprintf("[%d]", i)
		role := normName(e.Fields["role"])
		if calls || role == "toolcallinvocation" {
			for _, k := range []string{"function.name", "toolCall.function.name", "name"} {
				if n := e.Fields[k]; n != "" && deliveryFlagName(n) {
					return at
				}
			}
		}
		if depth > 0 {
			for _, k := range []string{"toolCalls", "tool_calls", "toolCallList"} {
				if inner := e.Fields[k]; strings.HasPrefix(strings.TrimSpace(inner), "[") {
					if in := toolCallsSay(inner, true, depth-1); in != "" {
						return at + "." + k + in
					}
				}
			}
		}
	}
	return ""
}
