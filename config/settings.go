package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
)

// ErrSettings marks invalid node or tool settings.
var ErrSettings = errors.New("invalid settings")

// SettingError names the setting at fault, so the config loader can point
// at its line.
type SettingError struct {
	Key string
	Err error
}

func (e *SettingError) Error() string {
	var u *unknownSetting
	if errors.As(e.Err, &u) {
		return u.describe(e.Key)
	}
	return fmt.Sprintf("setting %q: %v", e.Key, e.Err)
}

// Unwrap returns the cause.
func (e *SettingError) Unwrap() error { return e.Err }

// Decode decodes node or tool settings into out (a pointer to a struct with
// mapstructure tags), rejecting unknown keys. Durations accept strings such
// as "30s". Errors are *SettingError wrapping ErrSettings, each one line:
// a value of the wrong type reads `setting "max_iterations": want a whole
// number, got "ten"`, an unknown key `unknown setting "max_iteration"
// (did you mean "max_iterations"? known settings: ...)`.
func Decode(settings map[string]any, out any) error {
	var md mapstructure.Metadata
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:           out,
		Metadata:         &md,
		WeaklyTypedInput: true,
		DecodeHook:       mapstructure.ComposeDecodeHookFunc(mapstructure.StringToTimeDurationHookFunc(), mapstructure.StringToSliceHookFunc(",")),
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSettings, err)
	}
	if err := dec.Decode(settings); err != nil {
		if key, msg, ok := typeProblem(err, reflect.TypeOf(out), settings); ok {
			return &SettingError{Key: key, Err: &settingProblem{msg: msg, err: err}}
		}
		return &SettingError{Err: fmt.Errorf("%w: %w", ErrSettings, err)}
	}
	if len(md.Unused) > 0 {
		sort.Strings(md.Unused)
		bad := md.Unused[0]
		return &SettingError{Key: bad, Err: &unknownSetting{name: bad, known: knownKeys(out)}}
	}
	return nil
}

// settingProblem is a decode error of a setting told in one line (msg);
// it matches ErrSettings under errors.Is, and err, the decoder's own
// error, under errors.As.
type settingProblem struct {
	msg string
	err error
}

func (p *settingProblem) Error() string { return p.msg }

// Unwrap returns ErrSettings and the decoder's error.
func (p *settingProblem) Unwrap() []error { return []error{ErrSettings, p.err} }

// unknownSetting is the error of a settings key that no field decodes:
// name is the key as written, known the keys there are, sorted.
type unknownSetting struct {
	name  string
	known []string
}

func (u *unknownSetting) Error() string {
	return fmt.Sprintf("unknown setting %q (%sknown settings: %s)", u.name, DidYouMean(u.name, u.known), strings.Join(u.known, ", "))
}

// Unwrap returns ErrSettings.
func (u *unknownSetting) Unwrap() error { return ErrSettings }

// describe writes u as the error of key: u.name itself, or u.name nested
// under a block ("react.max_iteration", "routes[0].whne", NestSetting),
// whose suggestion then names the block too.
func (u *unknownSetting) describe(key string) string {
	prefix, ok := strings.CutSuffix(key, u.name)
	if key == "" || !ok || (prefix != "" && !strings.HasSuffix(prefix, ".")) {
		return u.Error()
	}
	hint := ""
	if c := Closest(u.name, u.known); c != "" {
		hint = fmt.Sprintf("did you mean %q? ", prefix+c)
	}
	where := ""
	if prefix != "" {
		where = " of " + strings.TrimSuffix(prefix, ".")
	}
	return fmt.Sprintf("unknown setting %q (%sknown settings%s: %s)", key, hint, where, strings.Join(u.known, ", "))
}

// knownKeys lists the setting keys of out, a pointer to a settings struct,
// sorted; the keys of embedded structs tagged ",squash" count as out's own.
func knownKeys(out any) []string {
	t := reflect.TypeOf(out)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	keys := fieldKeys(t)
	sort.Strings(keys)
	return keys
}

func fieldKeys(t reflect.Type) []string {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if tag == "-" {
			continue
		}
		if slices.Contains(strings.Split(opts, ","), "squash") {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			keys = append(keys, fieldKeys(ft)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if tag == "" {
			tag = strings.ToLower(f.Name)
		}
		keys = append(keys, tag)
	}
	return keys
}

// SettingErrorf returns a *SettingError for key wrapping ErrSettings, with
// a message formatted like fmt.Sprintf.
func SettingErrorf(key, format string, args ...any) error {
	return &SettingError{Key: key, Err: fmt.Errorf("%w: %s", ErrSettings, fmt.Sprintf(format, args...))}
}

// NestSetting returns err, the error of a nested block of settings (a
// node's `react:` or `dispatch:` mapping), as the error of the key it
// names under prefix: a *SettingError keyed "react.max_iterations" for
// one keyed "max_iterations", and any other error as the error of prefix
// itself. A nil err stays nil.
func NestSetting(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var se *SettingError
	if errors.As(err, &se) {
		return &SettingError{Key: prefix + "." + se.Key, Err: se.Err}
	}
	return &SettingError{Key: prefix, Err: err}
}
