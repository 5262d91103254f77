package apiclient

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
)

// WrappedNumberFields are the fields an element of an array a delivery
// wraps must name a number by, as [Field] matches them, for the array
// to be read as deliveries ([unwrap]): the called person's number as
// the service and its peers name it (campaign.NumberFields).
var WrappedNumberFields = []string{"phone_number", "to_number", "customer.number", "customer_number", "contact_number", "phone", "to", "mobile"}

// wrappedWhatFields are the fields, beside its number, that make an
// element of a wrapped array a delivery rather than a list of contacts:
// an event, a status or an outcome of a call, or its summary.
var wrappedWhatFields = []string{"event", "event_type", "type", "status", "call_status", "disposition", "outcome", "result",
	"summary", "call_summary", "call_id", "end_reason", "ended_reason"}

// maxWrapDepth bounds how deep in a delivery's objects an array of
// deliveries is looked for: {"data": [...]}, {"payload": {"items": [...]}}.
const maxWrapDepth = 3

// ArrayElements reads v, a field's value that is the JSON text of an
// array, into a delivery for each element that is a non-empty JSON
// object, and the strings among its elements, of n elements in all; ok
// is false when v is no JSON array.
func ArrayElements(v string) (ds []Delivery, strs []string, n int, ok bool) {
	t := strings.TrimSpace(v)
	if !strings.HasPrefix(t, "[") {
		return nil, nil, 0, false
	}
	var elems []json.RawMessage
	if json.Unmarshal([]byte(t), &elems) != nil {
		return nil, nil, 0, false
	}
	for _, e := range elems {
		e = bytes.TrimSpace(e)
		switch {
		case len(e) > 0 && e[0] == '{':
			if d, err := jsonDelivery(e, false); err == nil && len(d.Fields) > 0 {
				ds = append(ds, d)
			}
		case len(e) > 0 && e[0] == '"':
			var s string
			if json.Unmarshal(e, &s) == nil {
				strs = append(strs, s)
			}
		}
	}
	return ds, strs, len(elems), true
}

// looksLikeDelivery reports whether d, an element of a wrapped array,
// names a number ([WrappedNumberFields]) and what happened to it
// (wrappedWhatFields).
func looksLikeDelivery(d Delivery) bool {
	return firstField(d.Fields, WrappedNumberFields) != "" && firstField(d.Fields, wrappedWhatFields) != ""
}

// unwrap returns the deliveries an object d wraps in an array (a
// batching sender's {"data": [...]}, {"events": [...]}, {"batch": [...]},
// {"payload": {"items": [...]}}), read element by element as a JSON
// array of deliveries is: an array member, up to maxWrapDepth deep,
// whose elements are all non-empty objects and at least one names a
// number and an event, a status, an outcome or a summary
// ([looksLikeDelivery]). A d that names a number of its own, by
// [WrappedNumberFields], the service's envelope's caller_number or
// phoneField (outcomes.phone_field), or a call's id (by which listen
// finds the person in the journal), is a delivery itself (its array may
// be its transcript's turns, its call's legs), and is returned as it is,
// as is one that wraps no such array, and one whose own fields, those
// arrays aside, o.KeepWhole says to keep (they say do not call: dropped
// with the wrapper, the person's wish would be lost while each element
// was stored and acknowledged). Each element is signed as d was.
func unwrap(d Delivery, o ReadOptions) []Delivery {
	phoneField := o.PhoneField
	if firstField(d.Fields, WrappedNumberFields) != "" || Field(d.Fields, "caller_number") != "" ||
		phoneField != "" && Field(d.Fields, phoneField) != "" ||
		d.CallID != "" || firstField(d.Fields, callIDFields) != "" {
		return nil
	}
	paths := make([]string, 0, 4)
	for p, v := range d.Fields {
		if strings.Count(p, ".") < maxWrapDepth && strings.HasPrefix(v, "[") {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var out []Delivery
	var unwrapped []string
	for _, p := range paths {
		elems, _, n, ok := ArrayElements(d.Fields[p])
		if !ok || n == 0 || n != len(elems) || !slices.ContainsFunc(elems, looksLikeDelivery) {
			continue // an element that is no delivery: the array is read as a whole
		}
		unwrapped = append(unwrapped, p)
		for _, e := range elems {
			e.Signed = d.Signed
			out = append(out, e)
		}
	}
	if len(out) > 0 && o.KeepWhole != nil && o.KeepWhole(wrapperOwn(d, unwrapped)) {
		return nil
	}
	return out
}

// wrapperOwn returns d, an object that wraps arrays of deliveries, with
// those arrays (the fields at paths) left out: the wrapper's own fields.
func wrapperOwn(d Delivery, paths []string) Delivery {
	own := Delivery{Event: d.Event, AgentID: d.AgentID, CallID: d.CallID, Fields: make(map[string]string, len(d.Fields)), Signed: d.Signed}
	for k, v := range d.Fields {
		if !slices.Contains(paths, k) {
			own.Fields[k] = v
		}
	}
	for k, vs := range d.Repeated {
		if !slices.Contains(paths, k) {
			if own.Repeated == nil {
				own.Repeated = map[string][]string{}
			}
			own.Repeated[k] = vs
		}
	}
	return own
}

// unwrapAll replaces each delivery of ds that wraps an array of
// deliveries ([unwrap]) by them.
func unwrapAll(ds []Delivery, o ReadOptions) []Delivery {
	var out []Delivery
	for i, d := range ds {
		els := unwrap(d, o)
		if els == nil {
			if out != nil {
				out = append(out, d)
			}
			continue
		}
		if out == nil {
			out = append(make([]Delivery, 0, len(ds)+len(els)), ds[:i]...)
		}
		out = append(out, els...)
	}
	if out == nil {
		return ds
	}
	return out
}
