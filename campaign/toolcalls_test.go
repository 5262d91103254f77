package campaign

import (
	"testing"

	"github.com/callrun/callrun/apiclient"
)

// TestToolCallSaysDoNotCall: a tool named as a do-not-call action that
// the agent invoked says the person asked; one it is only set up with
// (listed on every call), or another it invoked, does not.
func TestToolCallSaysDoNotCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields map[string]string
		want   string
	}{
		{"vapi tool-calls", map[string]string{"message.type": "tool-calls", "message.toolCallList": `[{"id":"t1","type":"function","function":{"name":"add_to_dnc","arguments":{}}}]`}, "message.toolCallList[0]"},
		{"vapi with tool", map[string]string{"message.toolWithToolCallList": `[{"type":"function","function":{"name":"optOutCustomer"},"toolCall":{"id":"t1","function":{"name":"optOutCustomer"}}}]`}, "message.toolWithToolCallList[0]"},
		{"vapi other tool", map[string]string{"message.toolCallList": `[{"id":"t1","type":"function","function":{"name":"book_appointment"}}]`}, ""},
		{"vapi artifact", map[string]string{"message.artifact.messages": `[{"role":"user","message":"Hm."},{"role":"tool_calls","toolCalls":[{"id":"t1","function":{"name":"mark_dnc"}}]}]`}, "message.artifact.messages[1].toolCalls[0]"},
		{"vapi set up only", map[string]string{"message.assistant.model.tools": `[{"type":"function","function":{"name":"add_to_dnc"}}]`, "message.assistant.model.toolCalls": `[{"function":{"name":"add_to_dnc"}}]`}, ""},
		{"retell invocation", map[string]string{"call.transcript_with_tool_calls": `[{"role":"agent","content":"Hi"},{"role":"tool_call_invocation","tool_call_id":"t1","name":"mark_do_not_call","arguments":"{}"}]`}, "call.transcript_with_tool_calls[1]"},
		{"retell result only", map[string]string{"call.transcript_with_tool_calls": `[{"role":"tool_call_result","tool_call_id":"t1","name":"mark_do_not_call","content":"ok"}]`}, ""},
		{"turns naming no tool", map[string]string{"messages": `[{"role":"user","name":"dnc","content":"hi"}]`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ToolCallSaysDoNotCall(apiclient.Delivery{Fields: tc.fields}); got != tc.want {
				t.Errorf("ToolCallSaysDoNotCall(%v) = %q, want %q", tc.fields, got, tc.want)
			}
		})
	}
}
