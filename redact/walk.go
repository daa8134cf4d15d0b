package redact

import (
	"maps"
	"reflect"
)

// StringScrubber scrubs one string. *Scrubber implements it; Walk accepts
// any implementation, so packages can take a scrubber without depending on
// this package's concrete type.
type StringScrubber interface {
	String(s string) string
}

// maxDepth bounds how deep Walk descends, which also stops it on cyclic
// pointers. Deeper values are returned unscrubbed.
const maxDepth = 32

// Walk returns v with every string inside it passed through s: strings and
// named string types, and recursively the elements of slices and arrays,
// the values (not the keys) of maps, what pointers and interfaces hold, and
// the exported fields of structs. It never modifies v: whatever holds a
// changed string is copied (copy on write), and v itself is returned, with
// no copying, when nothing changed. Types are preserved, so the result of
// walking a map[string]any is a map[string]any.
//
// Not scrubbed: map keys, unexported struct fields, byte slices, what a
// type's own MarshalJSON or String method derives from them, and anything
// nested deeper than 32 levels. A nil s leaves v as is.
func Walk[T any](v T, s StringScrubber) T {
	if s == nil {
		return v
	}
	out, changed := walkAny(any(v), s, 0)
	if !changed {
		return v
	}
	return out.(T)
}

// walkAny scrubs the common shapes of event data without reflection and
// hands the rest to walkValue. It reports whether anything changed.
func walkAny(v any, s StringScrubber, depth int) (any, bool) {
	if depth > maxDepth {
		return v, false
	}
	switch t := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr,
		float32, float64, complex64, complex128, []byte:
		return v, false
	case string:
		if out := s.String(t); out != t {
			return out, true
		}
		return v, false
	case []string:
		out := walkStrings(t, s)
		return out, out != nil
	case map[string]string:
		var out map[string]string
		for k, val := range t {
			if sv := s.String(val); sv != val {
				if out == nil {
					out = maps.Clone(t)
				}
				out[k] = sv
			}
		}
		return out, out != nil
	case []any:
		var out []any
		for i, el := range t {
			if nv, ok := walkAny(el, s, depth+1); ok {
				if out == nil {
					out = append([]any(nil), t...)
				}
				out[i] = nv
			}
		}
		return out, out != nil
	case map[string]any:
		var out map[string]any
		for k, val := range t {
			if nv, ok := walkAny(val, s, depth+1); ok {
				if out == nil {
					out = maps.Clone(t)
				}
				out[k] = nv
			}
		}
		return out, out != nil
	}
	rv := reflect.ValueOf(v)
	nv, changed := walkValue(rv, s, depth)
	if !changed {
		return v, false
	}
	return nv.Interface(), true
}

// walkStrings returns a scrubbed copy of ss, or nil when nothing changed.
func walkStrings(ss []string, s StringScrubber) []string {
	var out []string
	for i, str := range ss {
		if sv := s.String(str); sv != str {
			if out == nil {
				out = append([]string(nil), ss...)
			}
			out[i] = sv
		}
	}
	return out
}

// walkValue is Walk by reflection. v must be readable (not obtained
// through an unexported field); the result, when changed, is a new value of
// v's type.
func walkValue(v reflect.Value, s StringScrubber, depth int) (reflect.Value, bool) {
	if depth > maxDepth || !v.IsValid() {
		return v, false
	}
	t := v.Type()
	switch v.Kind() {
	case reflect.String:
		str := v.String()
		out := s.String(str)
		if out == str {
			return v, false
		}
		nv := reflect.New(t).Elem()
		nv.SetString(out)
		return nv, true
	case reflect.Interface:
		if v.IsNil() {
			return v, false
		}
		inner, changed := walkAny(v.Elem().Interface(), s, depth+1)
		if !changed {
			return v, false
		}
		nv := reflect.New(t).Elem()
		nv.Set(reflect.ValueOf(inner))
		return nv, true
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		inner, changed := walkValue(v.Elem(), s, depth+1)
		if !changed {
			return v, false
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(inner)
		return p, true
	case reflect.Slice:
		if v.IsNil() || !mayHoldStrings(t.Elem()) {
			return v, false
		}
		var out reflect.Value
		for i := range v.Len() {
			nv, changed := walkValue(v.Index(i), s, depth+1)
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.MakeSlice(t, v.Len(), v.Len())
				reflect.Copy(out, v)
			}
			out.Index(i).Set(nv)
		}
		return out, out.IsValid()
	case reflect.Array:
		if !mayHoldStrings(t.Elem()) {
			return v, false
		}
		return rebuild(v, v.Len(), reflect.Value.Index, nil, s, depth)
	case reflect.Map:
		if v.IsNil() || !mayHoldStrings(t.Elem()) {
			return v, false
		}
		type change struct{ key, val reflect.Value }
		var changes []change
		for it := v.MapRange(); it.Next(); {
			if nv, changed := walkValue(it.Value(), s, depth+1); changed {
				changes = append(changes, change{it.Key(), nv})
			}
		}
		if len(changes) == 0 {
			return v, false
		}
		out := reflect.MakeMapWithSize(t, v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), it.Value())
		}
		for _, c := range changes {
			out.SetMapIndex(c.key, c.val)
		}
		return out, true
	case reflect.Struct:
		return rebuild(v, t.NumField(), reflect.Value.Field, func(i int) bool { return !t.Field(i).IsExported() }, s, depth)
	default:
		return v, false
	}
}

// rebuild walks the n children of an array or struct v (child(v, i) is the
// i'th; skip, when not nil, passes over some) and returns a copy of v with
// the changed children replaced, made at the first change, or v and false
// when nothing changed.
func rebuild(v reflect.Value, n int, child func(reflect.Value, int) reflect.Value, skip func(int) bool, s StringScrubber, depth int) (reflect.Value, bool) {
	var out reflect.Value
	for i := range n {
		if skip != nil && skip(i) {
			continue
		}
		nv, changed := walkValue(child(v, i), s, depth+1)
		if !changed {
			continue
		}
		if !out.IsValid() {
			out = reflect.New(v.Type()).Elem()
			out.Set(v)
		}
		child(out, i).Set(nv)
	}
	return out, out.IsValid()
}

// mayHoldStrings reports whether values of type t can contain a string
// Walk would scrub; it lets Walk skip numeric and byte slices whole.
func mayHoldStrings(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128,
		reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return false
	default:
		return true
	}
}
