package campaign

import (
	"fmt"
	"testing"
)

// TestSaysDoNotCallThirdPerson: a summary that reports, in Spanish,
// Portuguese, French or German, that the person asked not to be called
// again, in the third person as a summary writes it ("pidió que no lo
// llamen más", "pediu para não ligarem mais", "ne veut plus être
// appelé", "möchte nicht mehr angerufen werden"), says do not call;
// the agent's offer of the same in a transcript of no labels, answered
// no, does not, and answered yes does.
func TestSaysDoNotCallThirdPerson(t *testing.T) {
	const vapi = `{"message":{"type":"end-of-call-report","customer":{"number":"+14155550132"},"analysis":{"summary":%s}}}`
	for _, s := range []string{
		"El cliente pidió que no lo llamen más.",
		"La clienta pidió que no la vuelvan a llamar.",
		"El cliente no quiere que lo llamen.",
		"El cliente pidió no ser llamado de nuevo.",
		"O cliente pediu para não ligarem mais.",
		"A cliente pediu que não liguem mais.",
		"O cliente não quer mais ser contactado.",
		"Le client ne veut plus être appelé.",
		"La cliente a demandé qu'on ne l'appelle plus.",
		"Der Kunde möchte nicht mehr angerufen werden.",
		"Die Kundin bat darum, nicht mehr angerufen zu werden.",
	} {
		if got := SaysDoNotCall(readDelivery(t, fmt.Sprintf(vapi, q(s)))); got != "message.analysis.summary" {
			t.Errorf("%q: SaysDoNotCall = %q, want message.analysis.summary", s, got)
		}
	}
	for _, s := range []string{
		"El cliente confirmó la cita del martes y pidió que lo llamen mañana.",
		"O cliente pediu para ligarem mais tarde.",
		"Le client veut être appelé demain.",
		"Der Kunde möchte morgen wieder angerufen werden.",
	} {
		if got := SaysDoNotCall(readDelivery(t, fmt.Sprintf(vapi, q(s)))); got != "" {
			t.Errorf("%q: SaysDoNotCall = %q, want none", s, got)
		}
	}
	checkTranscripts(t, []transcriptCase{
		{"Spanish offer, no", "Hola Ana. ¿Quiere que no le llamemos más?\nNo, gracias.", ""},
		{"German offer, no", "Hallo Frau Weber. Möchten Sie nicht mehr angerufen werden?\nNein, danke.", ""},
		{"German offer, yes", "Hallo Frau Weber. Möchten Sie nicht mehr angerufen werden?\nJa, bitte.", " line 2"},
		{"French offer, no", "Bonjour Madame. Vous ne voulez plus être appelée ?\nNon, merci.", ""},
		{"German offer, labelled, no", "KI: Möchten Sie nicht mehr angerufen werden?\nKunde: Nein, danke.", ""},
	})
}
