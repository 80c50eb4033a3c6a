// Package loadtest is the measuring core shared by `wunder bench` (a
// client driving a server from outside) and the admin load test
// (/wunder/admin/throughput, the server driving itself): it runs a
// function from N workers at once, times each run (total and first
// event), and summarises a step as runs/s, p50/p95/p99 and errors.
//
//	samples, wall := loadtest.Drive(ctx, loadtest.Plan{Workers: 4, Runs: 10}, func(ctx context.Context, worker int) loadtest.Sample {
//		return loadtest.Ask(ctx, c, client.RunRequest{UserID: fmt.Sprint("u", worker), Question: "hi"}, true)
//	})
//	step := loadtest.Summarize(4, samples, wall)
//
// [Ladder] runs one [Plan] per concurrency level, one after another, and
// [Manager] keeps one ladder at a time per process with its progress and
// stored reports (the admin routes).
package loadtest
