// Command bareproxy is the least an MCP pass-through can do: Go's
// httputil.ReverseProxy to one upstream, with no parsing, no
// authentication and no logging. scripts/bench-mcp.sh runs it beside
// wunder's /wunder/mcp/{server} as the floor a pass-through's cost is
// measured against on the same machine.
package main

import (
	"flag"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18896", "address to listen on")
	upstream := flag.String("upstream", "http://127.0.0.1:18895", "the server to forward to")
	flag.Parse()
	u, err := url.Parse(*upstream)
	if err != nil {
		log.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.FlushInterval = -1 // server-sent events go as they come
	p.Transport = &http.Transport{MaxIdleConnsPerHost: 256}
	log.Fatal(http.ListenAndServe(*addr, p))
}
