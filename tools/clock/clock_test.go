package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/planner-engine/planner/tools"
	"github.com/planner-engine/planner/tools/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGetTimeHonoursZones(t *testing.T) {
	fixed := time.Date(2026, 11, 29, 19, 30, 0, 0, time.UTC)
	tool := clock.New(func() time.Time { return fixed })
	cases := []struct{ in, want string }{
		{"", "2026-11-29 19:30:00 UTC +00:00 (Sunday, UTC)"},
		{"Asia/Shanghai", "2026-11-30 03:30:00 CST +08:00 (Monday, Asia/Shanghai)"},
		{`{"timezone":"America/New_York"}`, "2026-11-29 14:30:00 EST -05:00"},
		{"UTC+5:30", "2026-11-30 01:00:00"},
		{"utc-3", "2026-11-29 16:30:00"},
	}
	for _, tc := range cases {
		out, err := tool.Call(context.Background(), tc.in)
		require.NoError(t, err, tc.in)
		assert.Contains(t, out, tc.want, tc.in)
	}
}

func TestGetTimeRejectsUnknownZones(t *testing.T) {
	tool := clock.New(nil)
	for _, in := range []string{"Mars/Olympus", "UTC+99", "{bad json"} {
		_, err := tool.Call(context.Background(), in)
		assert.ErrorIs(t, err, tools.ErrBadInput, in)
	}
}
