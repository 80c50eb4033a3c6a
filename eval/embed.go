// Package eval holds the starter evaluation case set (cases/*.yaml),
// embedded so a wunder binary can evaluate without the repository; see
// docs/evaluation.md.
package eval

import "embed"

// Cases is the starter case set: cases/*.yaml.
//
//go:embed cases/*.yaml
var Cases embed.FS
