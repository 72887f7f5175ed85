package etcdstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/gate"
)

// The key layout under a fleet's prefix P (see the package documentation):
//
//	P/state/fleet/rev               updates of the fleet's part (decimal)
//	P/state/fleet/halt              the fleet's halt (gate.Halt, JSON); absent: not halted
//	P/state/fleet/meters/<name>     one shared meter (reins.MeterStatus, JSON)
//	P/state/fleet/grants/<id>       one shared ("always") grant with its use count (reins.Grant)
//	P/state/runs/<run>/rev          updates of the run's part (decimal)
//	P/state/runs/<run>/halt         the run's own halt (tool failures)
//	P/state/runs/<run>/failures     the run's failure counts (map, JSON)
//	P/state/runs/<run>/parked       the run's parked actions and their sequence number
//	P/state/runs/<run>/grants/<id>  one session grant of the run
//	P/members/<run>                 the run's liveness and last activity, under its lease
//	P/anchors/<run>/<seq>           one audit chain head of the run (audit.Anchor), seq 20 digits
//
// <name> and <id> are path-escaped (url.PathEscape), so a '/' in them cannot leave their key.
const (
	keyRev      = "rev"
	keyHalt     = "halt"
	keyFailures = "failures"
	keyParked   = "parked"
	dirMeters   = "meters/"
	dirGrants   = "grants/"
)

// layout names the keys of one fleet.
type layout struct{ prefix string }

func (l layout) fleet() string            { return l.prefix + "/state/fleet/" }
func (l layout) runs() string             { return l.prefix + "/state/runs/" }
func (l layout) run(id string) string     { return l.runs() + id + "/" }
func (l layout) members() string          { return l.prefix + "/members/" }
func (l layout) member(id string) string  { return l.members() + id }
func (l layout) anchors(id string) string { return l.prefix + "/anchors/" + id + "/" }
func (l layout) anchor(id string, seq uint64) string {
	return l.anchors(id) + fmt.Sprintf("%020d", seq)
}

// Bounds on names and on what a read returns.
const (
	maxPrefix = 256
	maxRunID  = 128
	// maxStateKeys bounds the keys one part (the fleet's, a run's) may hold: the bounds of
	// reins.RunState.Validate plus the fixed keys.
	maxStateKeys = 4096 + 256 + 16
)

// checkPrefix checks a fleet prefix: it starts with '/', does not end with one, and holds only
// printable ASCII without spaces.
func checkPrefix(p string) error {
	switch {
	case p == "":
		return errors.New("etcdstore: the prefix is empty")
	case len(p) > maxPrefix:
		return fmt.Errorf("etcdstore: the prefix is longer than %d bytes", maxPrefix)
	case p[0] != '/' || strings.HasSuffix(p, "/"):
		return fmt.Errorf("etcdstore: prefix %q must start with '/' and not end with one", p)
	}
	for _, c := range []byte(p) {
		if c <= ' ' || c >= 0x7f {
			return fmt.Errorf("etcdstore: prefix %q holds a space, a control or a non-ASCII byte", p)
		}
	}
	return nil
}

// CheckRunID reports whether id can name a run: 1 to 128 bytes of letters, digits, '.', '_',
// '-' and ':', not starting with '.' (so it is one key segment and never "." or "..").
func CheckRunID(id string) error {
	if id == "" || len(id) > maxRunID || id[0] == '.' {
		return fmt.Errorf("etcdstore: run id %q: want 1 to %d bytes, not starting with '.'", id, maxRunID)
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':') {
			return fmt.Errorf("etcdstore: run id %q: only letters, digits, '.', '_', '-' and ':' are allowed", id)
		}
	}
	return nil
}

// decodeStrict decodes one value, refusing unknown fields and trailing data.
func decodeStrict(key string, b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("etcdstore: key %s: %w", key, err)
	}
	if dec.More() {
		return fmt.Errorf("etcdstore: key %s: data after the value", key)
	}
	return nil
}

// parked is the value of a run's parked key.
type parked struct {
	Seq    uint64         `json:"seq"`
	Parked []reins.Parked `json:"parked,omitempty"`
}

// part is what one part of the state holds (the fleet's or a run's), decoded.
type part struct {
	rev      uint64
	mod      int64 // the rev key's mod revision; 0 when absent
	halt     *gate.Halt
	failures map[string]int
	parked   parked
	meters   map[string]reins.MeterStatus
	grants   []reins.Grant
}

// decodePart decodes the keys under dir (raw maps full keys to values; mods full keys to mod
// revisions). fleet says which part it is: meters only in the fleet's; failures and parked
// actions only in a run's. Grants must be as narrow as an approval (reins.Grant.Validate): a
// key edited to widen one is refused.
func decodePart(dir string, fleet bool, raw map[string][]byte, mods map[string]int64) (part, error) {
	var p part
	for key, b := range raw {
		name, ok := strings.CutPrefix(key, dir)
		if !ok {
			continue
		}
		switch {
		case name == keyRev:
			n, err := strconv.ParseUint(string(b), 10, 64)
			if err != nil {
				return p, fmt.Errorf("etcdstore: key %s: %q is not a count", key, b)
			}
			p.rev, p.mod = n, mods[key]
		case name == keyHalt:
			h := &gate.Halt{}
			if err := decodeStrict(key, b, h); err != nil {
				return p, err
			}
			p.halt = h
		case name == keyFailures && !fleet:
			if err := decodeStrict(key, b, &p.failures); err != nil {
				return p, err
			}
		case name == keyParked && !fleet:
			if err := decodeStrict(key, b, &p.parked); err != nil {
				return p, err
			}
		case strings.HasPrefix(name, dirMeters) && fleet:
			var m reins.MeterStatus
			if err := decodeStrict(key, b, &m); err != nil {
				return p, err
			}
			if esc(m.Name) != name[len(dirMeters):] {
				return p, fmt.Errorf("etcdstore: key %s holds meter %q", key, m.Name)
			}
			if p.meters == nil {
				p.meters = map[string]reins.MeterStatus{}
			}
			p.meters[m.Name] = m
		case strings.HasPrefix(name, dirGrants):
			var g reins.Grant
			if err := decodeStrict(key, b, &g); err != nil {
				return p, err
			}
			if esc(g.ID) != name[len(dirGrants):] {
				return p, fmt.Errorf("etcdstore: key %s holds grant %q", key, g.ID)
			}
			if err := g.Validate(); err != nil {
				return p, fmt.Errorf("etcdstore: key %s: %w", key, err)
			}
			p.grants = append(p.grants, g)
		default:
			return p, fmt.Errorf("etcdstore: key %s is not part of the run-state layout", key)
		}
	}
	slices.SortFunc(p.grants, byCreated)
	return p, nil
}

// byCreated orders grants as they were made (then by id): the order a run consults them in.
func byCreated(a, b reins.Grant) int {
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// esc escapes a meter name or grant id into one key segment.
func esc(s string) string { return url.PathEscape(s) }

// unesc undoes esc (a segment that does not unescape is returned as it is).
func unesc(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// encode encodes a value for its key.
func encode(v any) ([]byte, error) { return json.Marshal(v) }

// memberInfo is the value of a run's member key.
type memberInfo struct {
	Run        string    `json:"run"`
	Host       string    `json:"host,omitempty"`
	PID        int       `json:"pid,omitempty"`
	Started    time.Time `json:"started"`
	LastActive time.Time `json:"last_active,omitzero"`
}
