package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
)

// artifact attaches a workspace file or a JSON value to the run's result
// (orchestrator/artifact.go): the front-ends carry it their own way (an
// artifact event on /wunder, an A2A FilePart or DataPart, MCP resource
// links and structured content, Connect's event). A file of at most
// inlineArtifactBytes travels with its bytes (unless the model asks for a
// link); a larger one by its path, which the caller downloads with their
// own credentials.
var artifactDef = &toolDef{
	name:    "artifact",
	aliases: []string{"附件"},
	description: "Attach a result to your answer: a file of the workspace ({\"path\"}) or a JSON value ({\"data\"}), " +
		"with an optional name, media type and description. The user (or the calling agent) receives it beside your " +
		"answer. Attach what the task produced, not intermediate files.",
	schema: `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"A file of the workspace to attach."},` +
		`"data":{"description":"A JSON value to attach (an object, a list, ...) instead of a file."},` +
		`"name":{"type":"string","maxLength":200,"description":"A name for it. Default: the file's name, or \"data\"."},` +
		`"media_type":{"type":"string","maxLength":100,"description":"Its media type, e.g. text/csv. Default: from the file's extension, application/json for data."},` +
		`"description":{"type":"string","maxLength":1000,"description":"What it is."},` +
		`"link":{"type":"boolean","description":"Send a file by its download link only, without its bytes, even when small (it travels with them up to 64 KiB)."}` +
		`}}`,
	readOnly: true,
	run:      runArtifact,
}

// Bounds of an artifact.
const (
	// inlineArtifactBytes is the largest file that travels with its bytes.
	inlineArtifactBytes = 64 << 10
	// maxArtifactData bounds a data artifact's JSON.
	maxArtifactData = 256 << 10
)

type artifactArgs struct {
	Path        string          `json:"path"`
	Data        json.RawMessage `json:"data"`
	Name        string          `json:"name"`
	MediaType   string          `json:"media_type"`
	Description string          `json:"description"`
	// Link sends a file by its download route only, whatever its size.
	Link bool `json:"link"`
}

func runArtifact(_ context.Context, c *call) (*orchestrator.ToolResult, error) {
	var a artifactArgs
	if err := decodeArgs(c.inv.Arguments, &a); err != nil {
		return errorf("%v", err)
	}
	hasData := len(a.Data) > 0 && string(a.Data) != "null"
	switch {
	case (a.Path == "") == !hasData:
		return errorf(`artifact needs exactly one of "path" (a workspace file) and "data" (a JSON value)`)
	case utf8.RuneCountInString(a.Name) > 200 || utf8.RuneCountInString(a.Description) > 1000:
		return errorf("name is at most 200 characters and description at most 1000")
	}
	if a.MediaType != "" {
		if _, _, err := mime.ParseMediaType(a.MediaType); err != nil || len(a.MediaType) > 100 {
			return errorf("media_type %q is not a media type", a.MediaType)
		}
	}
	ad := orchestrator.ArtifactData{ArtifactID: orchestrator.NewID("art_"), Name: a.Name, MediaType: a.MediaType,
		Description: a.Description, CallID: c.inv.CallID}
	if hasData {
		if len(a.Data) > maxArtifactData {
			return errorf("data is %s, over the %s limit of a data artifact", formatSize(int64(len(a.Data))), formatSize(maxArtifactData))
		}
		ad.Kind, ad.Data = orchestrator.ArtifactJSON, a.Data
		if ad.Name == "" {
			ad.Name = "data"
		}
		if ad.MediaType == "" {
			ad.MediaType = "application/json"
		}
	} else if res := fileArtifact(c, a.Path, a.Link, &ad); res != nil {
		return res, nil
	}
	c.inv.Emit(orchestrator.EventArtifact, ad)
	what := ad.Name
	if ad.Kind == orchestrator.ArtifactFile {
		what = fmt.Sprintf("%s (%s, %s)", ad.Path, ad.MediaType, formatSize(ad.Size))
	}
	return &orchestrator.ToolResult{Content: "Attached " + what + " to the result as " + ad.ArtifactID + "."}, nil
}

// fileArtifact fills ad from the workspace file rel: its path, size,
// media type, digest, and its bytes when small and not sent by link. It
// returns the error result, or nil.
func fileArtifact(c *call, rel string, link bool, ad *orchestrator.ArtifactData) *orchestrator.ToolResult {
	root, r, err := c.openTarget(rel)
	if err != nil {
		res, _ := errorf("%v", err)
		return res
	}
	defer root.Close()
	f, err := root.Open(r.rel)
	if err != nil {
		res, _ := errorf("%s: %s", r.name, describeErr(err))
		return res
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		res, _ := errorf("%s is not a regular file", r.name)
		return res
	}
	h := sha256.New()
	head := make([]byte, 0, min(info.Size(), inlineArtifactBytes)+1)
	buf := &limitedBuffer{b: head, max: inlineArtifactBytes + 1}
	if _, err := io.Copy(io.MultiWriter(h, buf), f); err != nil {
		res, _ := errorf("%s: %s", r.name, describeErr(err))
		return res
	}
	ad.Kind, ad.Path, ad.Size, ad.SHA256 = orchestrator.ArtifactFile, r.rel, info.Size(), hex.EncodeToString(h.Sum(nil))
	if ad.Name == "" {
		ad.Name = path.Base(r.rel)
	}
	if ad.MediaType == "" {
		ad.MediaType = mime.TypeByExtension(strings.ToLower(path.Ext(r.rel)))
		if ad.MediaType == "" {
			ad.MediaType = http.DetectContentType(buf.b)
		}
	}
	if info.Size() <= inlineArtifactBytes && !link {
		ad.Bytes = buf.b
	}
	return nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	b   []byte
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
