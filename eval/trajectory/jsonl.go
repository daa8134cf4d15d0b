package trajectory

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/planner-engine/planner/trace"
)

// ErrTrace means a JSONL trace could not be read as trace events.
var ErrTrace = errors.New("trajectory: unreadable trace")

// ReadJSONL reads a JSONL trace, one trace.Event per line as trace.JSONL
// writes it (a run's --trace file, or a comparison's
// traces/<model>/<config>.jsonl, where the runs' lines interleave), and
// returns each run's trajectory by run id (trace.Event.RunID), as a
// Collector configured by o would have recorded it live. Blank lines are
// skipped. An input that is not a sequence of JSON objects fails with an
// error wrapping ErrTrace that names the event's position.
func ReadJSONL(r io.Reader, o Options) (map[string]Trajectory, error) {
	dec := json.NewDecoder(r)
	runs := map[string]*Collector{}
	for n := 1; ; n++ {
		var e trace.Event
		err := dec.Decode(&e)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: event %d: %v; give the JSONL file a run or a comparison wrote, one trace event (a JSON object) per line", ErrTrace, n, err)
		}
		c := runs[e.RunID]
		if c == nil {
			c = NewCollector(o)
			runs[e.RunID] = c
		}
		c.Emit(e)
	}
	out := make(map[string]Trajectory, len(runs))
	for id, c := range runs {
		out[id] = c.Trajectory()
	}
	return out, nil
}
