// Package sse is wunder's one Server-Sent Events writer and its one reader
// (the text/event-stream format of the HTML standard).
//
// The writer ([NewWriter], [NewDeferredWriter], [Pump]) is the server side
// of every stream wunder serves: POST /wunder and a run's events (GET
// /wunder/runs/{id}/events, resumed with Last-Event-ID), A2A streaming on
// JSON-RPC and REST, the MCP pass-through's relayed answers, the admin
// streams (evaluation, throughput), and `wunder fakellm`. One event per
// call, flushed at once, or several buffered and sent in one write; a
// comment as heartbeat. It is deliberately small: the orchestrator's event
// log does the buffering and replay.
//
// The reader ([NewReader], [Read]) is the client side of every stream
// wunder reads, GET or POST: A2A peers (internal/a2awire, for
// adapters/a2atools), wunder itself (internal/client: `wunder run`,
// `wunder bench`, the admin load test), the model's streamed answer
// (adapters/llm), an MCP upstream's answer on the pass-through's raw path
// (mcpserver), and scripts/sseload.
//
// # The reader is r3labs/sse/v2's
//
// r3labs/sse/v2's EventStreamReader cuts the stream into events at each
// blank line and bounds an event's size; [Reader] runs it on any response
// body. Its Client is not used: it only sends GET (POST /wunder, A2A
// SendStreamingMessage and MCP answer a POST with a stream), it gives an
// event without an id: the id of the one before (wunder's error events
// have none, and a client must see ids as sent), it reconnects on its own
// rules, and its field parser is reachable only through it.
// TestR3labsClientIsGETOnlyAndCarriesIDsOver shows the first two. So
// [Reader] parses each event's fields itself, by r3labs's rules (lines end
// in LF, CR or CRLF; one space after the colon dropped; comments and
// unknown fields ignored; data lines joined with LF) and the standard's
// where r3labs differs: an event without a data line is not dispatched,
// an id holding NUL is ignored, retry is digits only.
//
// Around EventStreamReader, Reader adds what the standard asks and it does
// not do: at the end of the stream it returns what is left as an event,
// cut or not; Reader watches the stream's last bytes and, when it did not
// end with a blank line, holds the last event back and returns
// [ErrIncomplete]. EventStreamReader reports a read cancelled with
// context.Canceled as the end of the stream; Reader returns the error. And
// an event over the bound is an error that names the bound.
//
// One limit of EventStreamReader's cut, kept: it knows a blank line as LF
// LF, CR CR, CRLF CRLF, CRLF LF or LF CRLF, not LF CR. Two events
// separated by a line ended in LF and a blank line ended in a lone CR read
// as one, their data joined. No server mixes line ends so;
// TestReadMixedLineEnds pins it.
//
// # The writer is ours
//
// r3labs/sse/v2's Server is a broker: events are published to a stream
// named by ?stream= and fanned out to its subscribers. It cannot answer
// one POST with that request's own stream; it numbers event ids itself
// (EventLog.Add sets the log index) where wunder's ids are a run's seq; it
// replays from Last-Event-ID inclusive, sending the client's last event
// again; it writes id, data, event in that order (the golden transcripts
// pin id, event, data), one fmt.Fprintf per line and a flush per event;
// and one subscriber whose buffer is full stalls the others. The writer
// here writes what EventStreamReader reads back (FuzzWriteThenRead).
package sse
