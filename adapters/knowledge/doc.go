// Package knowledge is the knowledge-base tool source: each base, a set of
// Markdown (.md) and plain-text (.txt) files, is a read-only tool the model
// searches with {query, limit}.
//
//	cmd/wunder ──New(opts)──▶ *Set ──Tools(ctx, user)──▶ orchestrator.Registry
//	                           │
//	   bases ─────────────────┤ knowledge.bases dirs      name       (everyone)
//	                           │ admin uploads (owner "")  name       (everyone)
//	                           │ the user's own            user@name  (the user)
//	                           │ other users' shared       owner@name (everyone else)
//	                           │
//	   a search ──▶ cache ──▶ index (points + BM25) ──▶ [RRF with embeddings] ──▶ [model rerank] ──▶ hits
//
// Sources. Configured bases are directories read through an os.Root (no
// way out by symlink). Uploaded bases live in the store
// (toolconfig.FileStore, kind "knowledge"), so every replica sees an
// upload: the admin's under owner "", a user's under the user's id. Which
// uploaded bases exist is a list: a user's in their
// toolconfig.UserConfig.Knowledge, the admin's in the configuration
// of owner "" (the owner admin uploads already have in the file store),
// both read through toolconfig.Configs (cached for a few
// seconds, updated at once in the process that writes). A user's base
// never lives at a path anyone chooses; it is searched with its owner's
// files whoever calls it, and only a base its owner marks shared is offered
// to others. The management methods (manage.go, behind the gateway's
// routes) look bases up under the acting owner only, so another user's base
// is "not found" like one that does not exist.
//
// Knowledge points (split.go). A Markdown file is split at its top-level
// headings (a lone heading over the whole file is its title, and the file
// splits at the level below); a section longer than MaxPointChars is split
// at its next heading level, each part keeping its heading path; what is
// still too long, and a file without headings, is cut at paragraphs, then
// sentences. A hit carries the point's title, heading path, content, score
// and source file.
//
// Ranking. BM25 over an in-memory bleve index (github.com/blevesearch/bleve
// v2.5, scorch with no path, BM25 scoring) of two fields, the point's
// headings (boosted) and its text, analysed alike: Unicode segmentation,
// width folding, lower case, English stop words and Snowball stems, then
// CJK bigrams plus unigrams — Chinese needs no dictionary, a two-character
// word matches as a bigram and a one-character query still matches (the
// unigrams lift MRR on the Chinese half of the labelled set from 0.73 to
// 0.89; see docs/benchmarks.md). With Options.Embeddings the points are
// also embedded through an OpenAI-compatible /embeddings endpoint (vectors
// kept in a VectorStore by model and content hash, so unchanged text is
// never embedded twice) and the cosine ranking is fused with BM25 by
// reciprocal rank fusion (k = 60); when the endpoint fails the search is
// BM25 alone, and the embeddings are tried again after a pause. With
// Options.Rerank the run's model (or RerankModel) orders the best
// RerankCandidates; an error, a reply without a JSON array of passage
// numbers, or RerankTimeout keeps the order before it.
//
// Index cache (cache.go). A base's parsed index is kept with the
// fingerprint of its files (path, size and mtime for a directory; path and
// SHA-256 for the store, from a listing without contents). Each search
// compares fingerprints and rebuilds only when the files changed; one
// build per base at a time, however many searches wait for it, and other
// bases go on meanwhile. Indexes are reference-counted: a replaced or
// evicted index (beyond MaxCachedIndexes, least recently used first) is
// closed when its last search releases it.
//
// Every search emits a knowledge_request event {base, query, hits: [{title,
// score}]} through the invocation's Emit.
//
// Goroutines: the package starts none of its own. bleve starts a pool of
// four analysis workers when it is loaded (its init), for the life of the
// process. Each bleve index runs scorch's goroutines (introducer, merger,
// persister) from its build until it is closed — when replaced or evicted
// and released, or at [Set.Close], which cmd/wunder calls on shutdown; the
// tests check with goleak that none outlives its Set. A search runs on the
// caller's goroutine; an embeddings request and the rerank are bounded by
// their timeouts and the call's context.
package knowledge
