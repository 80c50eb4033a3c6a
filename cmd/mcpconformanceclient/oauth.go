package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// redirectURL is where the authorization server sends the code; nothing
// listens there: the suite's server redirects at once, and the fetcher reads
// the code from the Location header.
const redirectURL = "http://localhost:3000/callback"

// oauthHandler is the go-sdk's authorization-code handler (discovery,
// client ID metadata document, pre-registration or dynamic registration,
// PKCE, token exchange, scope step-up), configured as the suite expects.
// contextJSON is MCP_CONFORMANCE_CONTEXT: pre-registered credentials, if any.
func oauthHandler(contextJSON string) (auth.OAuthHandler, error) {
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:                    redirectURL,
		AuthorizationCodeFetcher:       followRedirect,
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: "https://conformance-test.local/client-metadata.json"},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{redirectURL}},
		},
	}
	if contextJSON != "" {
		var c struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		if err := json.Unmarshal([]byte(contextJSON), &c); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		if c.ClientID != "" && c.ClientSecret != "" {
			cfg.PreregisteredClient = &oauthex.ClientCredentials{
				ClientID: c.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: c.ClientSecret},
			}
		}
	}
	return auth.NewAuthorizationCodeHandler(cfg)
}

// followRedirect stands in for the user's browser: it opens the
// authorization URL and reads code, state and iss from the redirect.
func followRedirect(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		return nil, fmt.Errorf("authorization server answered %d without a code (location %q)", resp.StatusCode, resp.Header.Get("Location"))
	}
	q := loc.Query()
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}
