package memory

// RenderForTest is the [Long-term Memory] block of records given newest
// first, within budget estimated tokens.
var RenderForTest = render
