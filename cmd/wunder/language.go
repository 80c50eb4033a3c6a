package main

import "strings"

// cliLanguage is the language the CLI asks the server's messages in, as
// an Accept-Language tag: $WUNDER_LANGUAGE, else the locale of $LANG
// (zh_CN.UTF-8 -> zh-CN, which the server resolves to zh); "" for none
// (C, POSIX, unset), which leaves the choice to i18n.default_language.
func cliLanguage(getenv func(string) string) string {
	if v := strings.TrimSpace(getenv("WUNDER_LANGUAGE")); v != "" {
		return v
	}
	loc := getenv("LANG")
	loc, _, _ = strings.Cut(loc, ".") // the codeset: .UTF-8
	loc, _, _ = strings.Cut(loc, "@") // the modifier: @euro
	if loc == "" || loc == "C" || loc == "POSIX" {
		return ""
	}
	return strings.ReplaceAll(loc, "_", "-")
}
