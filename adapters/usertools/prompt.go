package usertools

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// ExtraPrompt returns the user's extra prompt ("" when none).
func (s *Set) ExtraPrompt(ctx context.Context, userID string) (string, error) {
	c, err := s.configs.Get(ctx, userID)
	if err != nil {
		return "", err
	}
	return c.ExtraPrompt, nil
}

// SetExtraPrompt replaces the user's extra prompt ("" removes it): valid
// UTF-8, at most Options.MaxExtraPromptChars characters, no control
// characters but newlines and tabs. It returns the prompt as stored.
func (s *Set) SetExtraPrompt(ctx context.Context, userID, prompt string) (string, error) {
	if err := s.checkPrompt(prompt); err != nil {
		return "", err
	}
	c, err := s.configs.Update(ctx, userID, func(c *toolconfig.UserConfig) error {
		c.ExtraPrompt = prompt
		return nil
	})
	if err != nil {
		return "", err
	}
	return c.ExtraPrompt, nil
}

func (s *Set) checkPrompt(p string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: extra_prompt %s", orchestrator.ErrInvalidArgument, fmt.Sprintf(format, args...))
	}
	switch n := utf8.RuneCountInString(p); {
	case !utf8.ValidString(p):
		return bad("is not valid UTF-8")
	case n > s.opts.MaxExtraPromptChars:
		return bad("has %d characters; at most %d are allowed (user_tools.max_extra_prompt_chars)", n, s.opts.MaxExtraPromptChars)
	}
	if i := strings.IndexFunc(p, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' }); i >= 0 {
		return bad("contains the control character %U at byte %d", []rune(p[i:])[0], i)
	}
	return nil
}
