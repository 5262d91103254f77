package sandbox_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// Example walks through the whole service with plain net/http: a token from
// the demo code, an agent, its call endpoint and one call.
func Example() {
	srv := sandbox.NewServer(sandbox.Options{})
	defer srv.Close()

	// Exchange the reusable demo authorization code for tokens.
	resp, err := http.PostForm(srv.URL+"/oauth/token", url.Values{
		"code":          {sandbox.DefaultCode},
		"client_id":     {sandbox.DefaultClientID},
		"client_secret": {sandbox.DefaultClientSecret},
		"grant_type":    {"authorization_code"},
		"redirect_uri":  {"http://127.0.0.1:8765/callback"},
	})
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	decode(resp, err, &tok)
	fmt.Println("token:", resp.Status, tok.TokenType)

	// Create an agent.
	req, _ := http.NewRequest("POST", srv.URL+"/api/ai/agent/create",
		strings.NewReader(`{"agent_name": "Spring Promo", "general_prompt": "Be brief and friendly."}`))
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	var agent struct {
		AgentID string `json:"agent_id"`
		Status  string `json:"status"`
	}
	decode(resp, err, &agent)
	fmt.Println("create:", resp.Status, agent.Status)

	// Read its call endpoint (the service contract lists Content-Type as required here).
	req, _ = http.NewRequest("GET", srv.URL+"/api/ai/agent/call-endpoint?agent_id="+agent.AgentID, nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	var ep struct {
		Data struct {
			Endpoint string `json:"endpoint"`
			Method   string `json:"Method"`
		} `json:"data"`
	}
	decode(resp, err, &ep)
	fmt.Println("endpoint:", resp.Status, ep.Data.Method)

	// Start a call with form fields.
	resp, err = http.PostForm(ep.Data.Endpoint, url.Values{
		"phone_number":          {"+15551234567"},
		"first_name":            {"Ada"},
		"local_presence_number": {"No"},
	})
	var call struct {
		CallID string `json:"call_id"`
	}
	decode(resp, err, &call)
	fmt.Println("call:", resp.Status, call.CallID)

	fmt.Println("calls in ledger:", len(srv.Calls()))
	// Output:
	// token: 200 OK Bearer
	// create: 201 Created active
	// endpoint: 200 OK POST
	// call: 200 OK call_1
	// calls in ledger: 1
}

// ExampleServer_SetFaults makes every call start fail with 503, the way a
// busy service would, and shows that nothing was placed.
func ExampleServer_SetFaults() {
	srv := sandbox.NewServer(sandbox.Options{})
	defer srv.Close()
	agent := srv.AddAgent(sandbox.Agent{AgentName: "Spring Promo", GeneralPrompt: "Be brief."})
	endpoint, _ := srv.CallEndpoint(agent.AgentID)

	srv.SetFaults(sandbox.Faults{Share503: 1, RetryAfter: 2 * time.Second})
	resp, err := http.PostForm(endpoint, url.Values{"phone_number": {"+15551234567"}})
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status, "Retry-After:", resp.Header.Get("Retry-After"))
	fmt.Println("received:", len(srv.Calls()), "placed:", len(srv.Placed()))
	// Output:
	// 503 Service Unavailable Retry-After: 2
	// received: 1 placed: 0
}

// decode reads a JSON answer into v.
func decode(resp *http.Response, err error, v any) {
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		log.Fatal(err)
	}
}
