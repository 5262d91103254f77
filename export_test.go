package main

import "github.com/callrun/callrun/campaign/run"

// The run, listen and their messages are package run's; the tests of the
// commands reach them under the names they had here.
type (
	runOptions    = run.Options
	listenOptions = run.ListenOptions
	savedOptions  = run.SavedOptions
	waitingLine   = run.WaitingLine
)

var (
	runCampaign        = run.Campaign
	listen             = run.Listen
	message            = run.Message
	parseUntil         = run.ParseUntil
	callEndpoints      = run.CallEndpoints
	listenDrainTimeout = run.ListenDrainTimeout
	rebuildReport      = run.RebuildReport
	loadSaved          = run.LoadSaved
)
