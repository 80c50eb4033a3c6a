package config

import (
	"bytes"
	"net/url"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Mask replaces a secret in [Config.Redacted]. An empty secret stays empty,
// so the output still tells "unset" from "set".
const Mask = "********"

// Clone returns a deep copy of c: changing one never changes the other.
func (c *Config) Clone() *Config {
	out := reflect.New(reflect.TypeFor[Config]()).Elem()
	deepCopy(out, reflect.ValueOf(c).Elem())
	cp := out.Addr().Interface().(*Config)
	cp.meta = c.meta // read-only after Load
	return cp
}

// Redacted returns a deep copy of c with every secret masked: fields tagged
// secret:"true" (security.api_key, llm.models.*.api_key) become [Mask], and
// the password inside storage.postgres.dsn (secret:"dsn") is masked. It is
// what `wunder config validate --print` shows.
func (c *Config) Redacted() *Config {
	cp := c.Clone()
	redact(reflect.ValueOf(cp).Elem())
	return cp
}

// Marshal renders c as YAML in the schema [Load] reads (two-space indent,
// keys in schema order, models sorted by name). A $ in a value is written $$,
// so loading the output gives back an equal Config. Call it on
// [Config.Redacted] before showing it.
func (c *Config) Marshal() ([]byte, error) {
	var root yaml.Node
	if err := root.Encode(c); err != nil {
		return nil, err
	}
	escapeDollars(&root)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// escapeDollars doubles the $ of every scalar value (not key) of n.
func escapeDollars(n *yaml.Node) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			escapeDollars(c)
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			escapeDollars(n.Content[i])
		}
	case yaml.ScalarNode:
		n.Value = strings.ReplaceAll(n.Value, "$", "$$")
	}
}

// deepCopy copies src into dst (both of the same type), duplicating maps,
// slices and pointers; unexported fields are skipped.
func deepCopy(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Struct:
		for i := range src.NumField() {
			if src.Type().Field(i).IsExported() {
				deepCopy(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		for it := src.MapRange(); it.Next(); {
			e := reflect.New(src.Type().Elem()).Elem()
			deepCopy(e, it.Value())
			m.SetMapIndex(it.Key(), e)
		}
		dst.Set(m)
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			deepCopy(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		p := reflect.New(src.Type().Elem())
		deepCopy(p.Elem(), src.Elem())
		dst.Set(p)
	default:
		dst.Set(src)
	}
}

// redact masks the secret fields of v in place; v is an addressable copy.
func redact(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			switch f.Tag.Get("secret") {
			case "true":
				maskAll(v.Field(i))
			case "dsn":
				if v.Field(i).Kind() == reflect.String {
					v.Field(i).SetString(maskDSN(v.Field(i).String()))
				}
			default:
				redact(v.Field(i))
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			redact(e)
			v.SetMapIndex(it.Key(), e)
		}
	case reflect.Slice:
		for i := range v.Len() {
			redact(v.Index(i))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			redact(v.Elem())
		}
	}
}

// maskAll masks a secret string, or every string in a secret list or map.
func maskAll(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.String() != "" {
			v.SetString(Mask)
		}
	case reflect.Slice:
		for i := range v.Len() {
			maskAll(v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			maskAll(e)
			v.SetMapIndex(it.Key(), e)
		}
	}
}

var (
	dsnPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)
	dsnKeyValue = regexp.MustCompile(`^\s*\w+\s*=`)
)

// maskDSN masks the password of a postgres:// URL or a key=value DSN. A DSN
// that is neither is masked whole.
func maskDSN(dsn string) string {
	if dsn == "" {
		return ""
	}
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" && u.Host != "" {
		// url escapes '*'; mask with a placeholder it keeps, then swap.
		const placeholder = "WUNDERMASKEDPASSWORD"
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), placeholder)
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", placeholder)
			u.RawQuery = q.Encode()
		}
		return strings.ReplaceAll(u.String(), placeholder, Mask)
	}
	if dsnPassword.MatchString(dsn) {
		return dsnPassword.ReplaceAllString(dsn, "${1}"+Mask)
	}
	if dsnKeyValue.MatchString(dsn) {
		return dsn // key=value without a password
	}
	return Mask
}
