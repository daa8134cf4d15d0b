// Package clock is the get_time tool: the current date and time in a time
// zone (IANA name or UTC offset).
package clock

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/planner-engine/planner/tools"
)

// Tool reports the current time. Now is injectable for tests.
type Tool struct {
	now func() time.Time
}

// New returns the tool. now may be nil for time.Now.
func New(now func() time.Time) *Tool {
	if now == nil {
		now = time.Now
	}
	return &Tool{now: now}
}

// Name implements tools.Tool.
func (t *Tool) Name() string { return "get_time" }

// Description implements tools.Tool.
func (t *Tool) Description() string {
	return `Current date and time. Input: an IANA time zone such as "Asia/Shanghai" or "Europe/Paris", an offset such as "UTC+8", or empty for UTC.`
}

// Schema implements tools.Schemer.
func (t *Tool) Schema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{
		"timezone": map[string]any{"type": "string", "description": "IANA zone or UTC offset; empty for UTC"},
	}}
}

// Meta implements tools.MetaProvider.
func (t *Tool) Meta() tools.Meta { return tools.Meta{ReadOnly: true} }

// Call reports the time in the requested zone.
func (t *Tool) Call(_ context.Context, input string) (string, error) {
	zone := strings.TrimSpace(input)
	if strings.HasPrefix(zone, "{") {
		var args struct {
			Timezone string `json:"timezone"`
			Input    string `json:"input"`
		}
		if err := json.Unmarshal([]byte(zone), &args); err != nil {
			return "", fmt.Errorf("%w: %w", tools.ErrBadInput, err)
		}
		zone = args.Timezone + args.Input
	}
	zone = strings.Trim(zone, "\"' ")
	loc, err := location(zone)
	if err != nil {
		return "", err
	}
	now := t.now().In(loc)
	return fmt.Sprintf("%s (%s, %s)", now.Format("2006-01-02 15:04:05 MST -07:00"), now.Weekday(), loc.String()), nil
}

func location(zone string) (*time.Location, error) {
	upper := strings.ToUpper(zone)
	switch {
	case zone == "" || upper == "UTC" || upper == "GMT" || upper == "Z":
		return time.UTC, nil
	case strings.HasPrefix(upper, "UTC") || strings.HasPrefix(upper, "GMT"):
		off := strings.TrimSpace(upper[3:])
		sign := 1
		if strings.HasPrefix(off, "-") {
			sign = -1
		}
		off = strings.TrimLeft(off, "+-")
		h, m, _ := strings.Cut(off, ":")
		hours, err := strconv.Atoi(h)
		mins := 0
		if err == nil && m != "" {
			mins, err = strconv.Atoi(m)
		}
		if err != nil || hours > 14 || mins >= 60 {
			return nil, fmt.Errorf("%w: bad UTC offset %q (use e.g. UTC+8 or UTC-05:30)", tools.ErrBadInput, zone)
		}
		secs := sign * (hours*3600 + mins*60)
		return time.FixedZone(zone, secs), nil
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, fmt.Errorf("%w: unknown time zone %q (use an IANA name such as Europe/Paris)", tools.ErrBadInput, zone)
	}
	return loc, nil
}
