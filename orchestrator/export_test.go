package orchestrator

// FinalResponseToolForTest is the always-on final_response tool.
var FinalResponseToolForTest Tool = finalResponse{}
