package apiclient

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

// SalesforceAck is the answer a Salesforce Outbound Message wants once
// its notifications are taken: without it Salesforce sends the message
// again, up to 24 hours, then drops it. The envelope of the outbound
// messaging WSDL (http://soap.sforce.com/2005/09/outbound), as
// ASP.NET WebHooks' Salesforce receiver answers it
// (aspnet/WebHooks, SalesforceSoapWebHookReceiver.cs,
// Messages/NotificationResponse.xml).
const SalesforceAck = `<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><notificationsResponse xmlns="http://soap.sforce.com/2005/09/outbound"><Ack>true</Ack></notificationsResponse></soapenv:Body></soapenv:Envelope>
`

// SalesforceEvent is the event callrun gives each notification of a
// Salesforce Outbound Message: a record's fields that changed, no call.
const SalesforceEvent = "salesforce.outbound_message"

// WantsSOAPAck reports whether ds were read from a Salesforce Outbound
// Message, which `callrun listen` answers with [SalesforceAck].
func WantsSOAPAck(ds []Delivery) bool {
	return len(ds) > 0 && ds[0].soap
}

// soapDeliveries reads a Salesforce Outbound Message (a SOAP envelope
// whose body's notifications hold one or more Notification, each the
// sObject of a record: a Lead's or Contact's Phone, MobilePhone,
// DoNotCall, HasOptedOutOfEmail) into a delivery for each
// notification: the sObject's fields by their names, its type
// (sObjectType: Lead), the notification's id (NotificationId), the
// message's OrganizationId and ActionId, and the event
// [SalesforceEvent]. A body that is other XML is an error.
func soapDeliveries(body []byte) ([]Delivery, error) {
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.Strict = false
	var (
		ds           []Delivery
		org, action  string
		notification string
		fields       map[string]string // the sObject's, while in it
		path         []string          // the local names of the open elements
		text         strings.Builder
		inNotifs     bool
	)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, errors.New("the delivery's body is XML that does not parse")
		}
		switch t := tok.(type) {
		case xml.StartElement:
			path = append(path, t.Name.Local)
			text.Reset()
			switch {
			case t.Name.Local == "notifications":
				inNotifs = true
			case inNotifs && t.Name.Local == "Notification":
				notification = ""
			case inNotifs && t.Name.Local == "sObject":
				fields = map[string]string{}
				for _, a := range t.Attr {
					if a.Name.Local == "type" {
						_, typ, _ := strings.Cut(a.Value, ":")
						fields["sObjectType"] = typ
					}
				}
			}
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			name := t.Name.Local
			depth := len(path)
			v := strings.TrimSpace(text.String())
			text.Reset()
			switch {
			case fields != nil && name == "sObject":
				fields["OrganizationId"], fields["ActionId"], fields["NotificationId"] = org, action, notification
				fields["type"] = SalesforceEvent
				for k, x := range fields {
					if x == "" {
						delete(fields, k)
					}
				}
				d := newDelivery(fields, "")
				// Its event whatever the record's own fields: a
				// CampaignMember's, an Account's or an Opportunity's Type
				// (Lead, Customer) would be read as the event before the
				// type set here.
				d.Event = SalesforceEvent
				d.soap = true
				ds = append(ds, d)
				fields = nil
			case fields != nil && depth >= 2 && path[depth-2] == "sObject":
				fields[name] = v
			case inNotifs && depth >= 2 && path[depth-2] == "notifications" && name == "OrganizationId":
				org = v
			case inNotifs && depth >= 2 && path[depth-2] == "notifications" && name == "ActionId":
				action = v
			case inNotifs && depth >= 2 && path[depth-2] == "Notification" && name == "Id":
				notification = v
			}
			if depth > 0 {
				path = path[:depth-1]
			}
		}
	}
	if len(ds) == 0 {
		return nil, errors.New("the delivery's body is XML, but no Salesforce Outbound Message with a notification: callrun reads no other XML")
	}
	return ds, nil
}
