package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-viper/mapstructure/v2"
)

// typeProblem turns a failed decode of raw into root (the type decoded
// into, a struct) into the key at fault, as a dotted path such as
// "limits.max_steps" or "nodes[1].id", and one line that says what the key
// wants and what it got: `want a whole number, got "ten"`. It reports
// false when err names no key (no *mapstructure.DecodeError inside).
func typeProblem(err error, root reflect.Type, raw map[string]any) (key, msg string, ok bool) {
	var de *mapstructure.DecodeError
	if !errors.As(err, &de) {
		return "", "", false
	}
	key = de.Name()
	// The decoder wraps a lone value in a list for a list key and then
	// fails on its item "[0]": name the key the file has, and what it holds.
	if parent, ok := strings.CutSuffix(key, "[0]"); ok {
		if v, found := lookupPath(raw, parent); found {
			if _, isList := v.([]any); !isList {
				key = parent
			}
		}
	}
	want := ""
	if t, found := fieldType(root, key); found {
		want = describeType(t)
	}
	var got any
	gotOK := false
	var pe *mapstructure.ParseError
	var ue *mapstructure.UnconvertibleTypeError
	switch {
	case key != de.Name():
	case errors.As(de, &pe):
		got, gotOK = pe.Value, true
		if want == "" && pe.Expected.IsValid() {
			want = describeType(pe.Expected.Type())
		}
	case errors.As(de, &ue):
		got, gotOK = ue.Value, true
		if want == "" && ue.Expected.IsValid() {
			want = describeType(ue.Expected.Type())
		}
	}
	if v, found := lookupPath(raw, key); found {
		got, gotOK = v, true
	}
	switch {
	case want != "" && gotOK:
		return key, fmt.Sprintf("want %s, got %s", want, describeValue(got)), true
	case want != "":
		return key, "want " + want, true
	}
	// A type the description does not know: the decoder's own words,
	// without its quoting of the key.
	return key, de.Unwrap().Error(), true
}

// describeType says in words what a value of t is written as in YAML.
func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[time.Duration]() {
		return "a duration such as 30s, 1m30s or 2h"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "text"
	case reflect.Slice, reflect.Array:
		if each := describeType(t.Elem()); each != "any value" {
			return "a list, each item " + each
		}
		return "a list"
	case reflect.Map:
		if each := describeType(t.Elem()); each != "any value" {
			return "a mapping, each value " + each
		}
		return "a mapping"
	case reflect.Struct:
		return "a mapping"
	}
	return "any value"
}

// describeValue writes a decoded YAML value for an error message: text
// quoted (and clipped), numbers and booleans as written, other shapes by
// name.
func describeValue(v any) string {
	if v == nil {
		return "nothing (an empty value)"
	}
	if s, ok := v.(string); ok {
		if utf8.RuneCountInString(s) > 60 {
			return fmt.Sprintf("%.60q…", s)
		}
		return strconv.Quote(s)
	}
	switch reflect.TypeOf(v).Kind() {
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return fmt.Sprint(v)
}

// pathPart matches one step of a decoder key path: a name, or an index or
// map key in brackets.
var pathPart = regexp.MustCompile(`[^.\[\]]+|\[[^\]]*\]`)

// fieldType returns the type decoded at path ("llm.retry.max_attempts",
// "nodes[1].id", "vars[a]") inside root, following mapstructure tags,
// squashed embedded structs and ",remain" maps.
func fieldType(root reflect.Type, path string) (reflect.Type, bool) {
	t := root
	for _, part := range pathPart.FindAllString(path, -1) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if strings.HasPrefix(part, "[") {
			switch t.Kind() {
			case reflect.Slice, reflect.Array, reflect.Map:
				t = t.Elem()
				continue
			}
			return nil, false
		}
		if t.Kind() == reflect.Map {
			t = t.Elem()
			continue
		}
		if t.Kind() != reflect.Struct {
			return nil, false
		}
		f, ok := structField(t, part)
		if !ok {
			return nil, false
		}
		t = f
	}
	return t, true
}

// structField returns the type of t's field decoded from key: tagged key,
// named key when untagged, inside a squashed embedded struct, or else the
// element of a ",remain" map.
func structField(t reflect.Type, key string) (reflect.Type, bool) {
	var remain reflect.Type
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		switch {
		case name == "-":
		case strings.Contains(","+opts+",", ",squash,"):
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if inner, ok := structField(ft, key); ok {
					return inner, true
				}
			}
		case strings.Contains(","+opts+",", ",remain,"):
			if f.Type.Kind() == reflect.Map {
				remain = f.Type.Elem()
			}
		case !f.IsExported():
		case name == "" && strings.EqualFold(f.Name, key), name != "" && strings.EqualFold(name, key):
			return f.Type, true
		}
	}
	return remain, remain != nil
}

// lookupPath returns the value at path inside raw (decoded YAML), keys
// compared without regard to case as viper lowers them.
func lookupPath(raw map[string]any, path string) (any, bool) {
	var cur any = raw
	for _, part := range pathPart.FindAllString(path, -1) {
		if strings.HasPrefix(part, "[") {
			inside := part[1 : len(part)-1]
			if list, ok := cur.([]any); ok {
				i, err := strconv.Atoi(inside)
				if err != nil || i < 0 || i >= len(list) {
					return nil, false
				}
				cur = list[i]
				continue
			}
			part = inside
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		v, found := m[part]
		if !found {
			for k, kv := range m {
				if strings.EqualFold(k, part) {
					v, found = kv, true
					break
				}
			}
		}
		if !found {
			return nil, false
		}
		cur = v
	}
	return cur, true
}
