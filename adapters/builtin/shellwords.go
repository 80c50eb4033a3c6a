package builtin

import (
	"errors"
	"fmt"
	"strings"
)

// splitCommand splits a command line into words the way a POSIX shell would
// for a simple command, and refuses everything else a shell would do.
//
// Supported: blanks separate words; '...' is literal; "..." is literal except
// that \" \\ \$ and \` are escapes; outside quotes a backslash makes the next
// character literal and a backslash-newline is dropped.
//
// Refused, with a message saying so: unquoted | & ; < > ( ) $ ` (pipes,
// lists, redirection, subshells, expansions), unquoted * ? [ (globbing),
// unquoted { } except the word "{}" (brace expansion), a word starting with
// an unquoted ~ (home expansion) or # (comment), an unquoted newline, and
// inside double quotes a $ that would expand or a backtick.
func splitCommand(line string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		rawWord strings.Builder // the word's unquoted, unescaped characters
	)
	flush := func() error {
		if inWord {
			if raw := rawWord.String(); raw != "{}" && strings.ContainsAny(raw, "{}") {
				return refused("unquoted { or }", "brace expansion")
			}
			words = append(words, cur.String())
		}
		cur.Reset()
		rawWord.Reset()
		inWord = false
		return nil
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		ch := rs[i]
		switch {
		case ch == ' ' || ch == '\t':
			if err := flush(); err != nil {
				return nil, err
			}
		case ch == '\\':
			if i+1 >= len(rs) {
				return nil, errors.New("command ends with a lone backslash")
			}
			i++
			if rs[i] == '\n' {
				continue
			}
			cur.WriteRune(rs[i])
			inWord = true
		case ch == '\'':
			end := indexRune(rs, i+1, '\'')
			if end < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(string(rs[i+1 : end]))
			i = end
			inWord = true
		case ch == '"':
			j, err := doubleQuoted(rs, i+1, &cur)
			if err != nil {
				return nil, err
			}
			i = j
			inWord = true
		case ch == '\n' || ch == '\r':
			return nil, refused("an unquoted newline", "several commands")
		case strings.ContainsRune("|&;<>()", ch):
			return nil, refused("unquoted "+string(ch), "pipes, lists, redirection and subshells")
		case ch == '$' || ch == '`':
			return nil, refused("unquoted "+string(ch), "variable and command substitution")
		case strings.ContainsRune("*?[", ch):
			return nil, refused("unquoted "+string(ch), "globbing")
		case (ch == '~' || ch == '#') && !inWord:
			return nil, refused("unquoted "+string(ch), "home expansion and comments")
		default:
			cur.WriteRune(ch)
			rawWord.WriteRune(ch)
			inWord = true
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, errors.New("command is empty")
	}
	return words, nil
}

// doubleQuoted reads a "..." body starting at rs[i] into cur and returns the
// index of the closing quote.
func doubleQuoted(rs []rune, i int, cur *strings.Builder) (int, error) {
	for ; i < len(rs); i++ {
		switch ch := rs[i]; ch {
		case '"':
			return i, nil
		case '\\':
			if i+1 < len(rs) && strings.ContainsRune("\"\\$`\n", rs[i+1]) {
				i++
				if rs[i] != '\n' {
					cur.WriteRune(rs[i])
				}
				continue
			}
			cur.WriteRune(ch)
		case '`':
			return 0, refused("`", "command substitution (also inside double quotes; use single quotes for a literal)")
		case '$':
			if i+1 < len(rs) && (isNameRune(rs[i+1]) || strings.ContainsRune("{(@*#?$!-", rs[i+1])) {
				return 0, refused("$", "expansion (also inside double quotes; use single quotes for a literal)")
			}
			cur.WriteRune(ch)
		default:
			cur.WriteRune(ch)
		}
	}
	return 0, errors.New("unterminated double quote")
}

func isNameRune(r rune) bool {
	return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}

func indexRune(rs []rune, from int, r rune) int {
	for i := from; i < len(rs); i++ {
		if rs[i] == r {
			return i
		}
	}
	return -1
}

func refused(what, feature string) error {
	return fmt.Errorf("%s is refused: commands run without a shell, so %s are not available; "+
		"run one program with plain arguments (quote a character you mean literally)", what, feature)
}
