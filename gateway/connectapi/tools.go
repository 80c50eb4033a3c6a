package connectapi

import (
	"context"

	"connectrpc.com/connect"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/gen/wunder/v1/wunderv1connect"
)

// toolService implements wunder.v1.ToolService.
type toolService struct{ *API }

var _ wunderv1connect.ToolServiceHandler = (*toolService)(nil)

// ListTools returns the catalog the user may select from, with each tool's
// JSON Schema as a Struct, its wire name, owner and catalog group (the
// groups of GET /wunder/tools, from the same registry catalog).
func (s *toolService) ListTools(ctx context.Context, req *connect.Request[wunderv1.ListToolsRequest]) (*connect.Response[wunderv1.ListToolsResponse], error) {
	proc := req.Spec().Procedure
	userID, err := s.scope(ctx, req.Msg.GetUserId(), true)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	specs, err := s.b.Tools(ctx, userID)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	reg := s.b.Registry()
	out := &wunderv1.ListToolsResponse{}
	for _, spec := range specs {
		if spec.AppOnly {
			continue // an MCP App's own tool: no run may select it
		}
		out.Tools = append(out.Tools, toolProto(spec, reg.WireName(spec.Name), userID))
	}
	return connect.NewResponse(out), nil
}
