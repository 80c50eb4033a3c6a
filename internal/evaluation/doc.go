// Package evaluation runs capability evaluations: a case set (YAML files)
// played against a model through the core, each case as a user of its own
// (so in a workspace of its own, removed afterwards), graded by checks on
// the answer and the workspace, with the outcome of every case stored and
// streamed.
//
//	cases --load--> [Case] --Manager.Start--> per case: prerequisites? -> setup files
//	  -> core run (Backend) -> checks (contains, regex, file_exists, json_path, judge)
//	  -> Item stored + event --> Run (score, counts) stored + eval_finished
//
// Goroutines: Start launches the run in a goroutine the Manager owns,
// detached from the request; Cancel cancels it and Close waits for all.
package evaluation
