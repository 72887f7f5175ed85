package policy

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Verdict is the outcome of a decision: Deny, Allow or Confirm (ask a human).
//
// The zero Verdict is Deny, so an unset or undecoded verdict denies. Code that does not
// understand Confirm must treat it as Deny.
type Verdict uint8

// The three verdicts of the policy spec.
const (
	// Deny forbids the action.
	Deny Verdict = iota
	// Allow permits the action (with its obligations).
	Allow
	// Confirm permits the action only after a human approves it.
	Confirm
)

// String returns "DENY", "ALLOW" or "CONFIRM"; an out-of-range value prints as "Verdict(n)".
func (v Verdict) String() string {
	switch v {
	case Deny:
		return "DENY"
	case Allow:
		return "ALLOW"
	case Confirm:
		return "CONFIRM"
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// ParseVerdict parses "ALLOW", "DENY" or "CONFIRM" in any case, and "ask" (any case) as Confirm.
// Anything else is an error, and the returned verdict is then Deny: unknown text never allows.
func ParseVerdict(text string) (Verdict, error) {
	switch {
	case strings.EqualFold(text, "ALLOW"):
		return Allow, nil
	case strings.EqualFold(text, "DENY"):
		return Deny, nil
	case strings.EqualFold(text, "CONFIRM"), strings.EqualFold(text, "ASK"):
		return Confirm, nil
	}
	return Deny, fmt.Errorf("policy: unknown verdict %q (want ALLOW, DENY or CONFIRM)", text)
}

// MarshalText implements [encoding.TextMarshaler]. An out-of-range verdict is an error.
func (v Verdict) MarshalText() ([]byte, error) {
	if v > Confirm {
		return nil, fmt.Errorf("policy: cannot marshal invalid verdict %d", uint8(v))
	}
	return []byte(v.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler] with [ParseVerdict]. On error the verdict
// is set to Deny.
func (v *Verdict) UnmarshalText(text []byte) error {
	parsed, err := ParseVerdict(string(text))
	*v = parsed
	return err
}

// rank orders verdicts by strictness: Allow < Confirm < Deny. Unknown values rank as Deny.
func (v Verdict) rank() int {
	switch v {
	case Allow:
		return 0
	case Confirm:
		return 1
	}
	return 2
}

// StricterThan reports whether v is stricter than w in the order Allow < Confirm < Deny.
func (v Verdict) StricterThan(w Verdict) bool { return v.rank() > w.rank() }

// Strictest returns the stricter of v and w (Deny over Confirm over Allow).
func Strictest(v, w Verdict) Verdict {
	if w.rank() > v.rank() {
		return w
	}
	return v
}

// Obligations are what must happen around an allowed or confirmed action: snapshot the
// workspace first, tell the user, run it in a sandbox. They are a bit set; the zero value is
// none.
type Obligations uint8

// The obligations of the autonomy matrix ("Notify+Checkpoint", "Allow (sandbox)").
const (
	// Checkpoint: snapshot the workspace before the action, so it can be rolled back.
	Checkpoint Obligations = 1 << iota
	// Notify: tell the user the action happened.
	Notify
	// Sandbox: run the action in a sandbox.
	Sandbox

	allObligations = Checkpoint | Notify | Sandbox
)

var obligationNames = [...]struct {
	o    Obligations
	name string
}{{Checkpoint, "checkpoint"}, {Notify, "notify"}, {Sandbox, "sandbox"}}

// Has reports whether every obligation in o2 is in o.
func (o Obligations) Has(o2 Obligations) bool { return o&o2 == o2 }

// String returns the obligations joined by "+", e.g. "checkpoint+notify"; none is "".
func (o Obligations) String() string {
	var b strings.Builder
	for _, n := range obligationNames {
		if o&n.o != 0 {
			if b.Len() > 0 {
				b.WriteByte('+')
			}
			b.WriteString(n.name)
		}
	}
	return b.String()
}

// ParseObligation parses one obligation name: "checkpoint", "notify" or "sandbox" (any case).
func ParseObligation(name string) (Obligations, error) {
	for _, n := range obligationNames {
		if strings.EqualFold(name, n.name) {
			return n.o, nil
		}
	}
	return 0, fmt.Errorf("policy: unknown obligation %q (want checkpoint, notify or sandbox)", name)
}

// MarshalJSON encodes the obligations as a JSON array of names.
func (o Obligations) MarshalJSON() ([]byte, error) {
	if o&^allObligations != 0 {
		return nil, fmt.Errorf("policy: cannot marshal invalid obligations %#x", uint8(o))
	}
	names := []string{}
	for _, n := range obligationNames {
		if o&n.o != 0 {
			names = append(names, n.name)
		}
	}
	return json.Marshal(names)
}

// UnmarshalJSON decodes a JSON array of obligation names; unknown names are errors.
func (o *Obligations) UnmarshalJSON(data []byte) error {
	var names []string
	if err := json.Unmarshal(data, &names); err != nil {
		return fmt.Errorf("policy: obligations are a JSON array of names: %w", err)
	}
	var v Obligations
	for _, name := range names {
		p, err := ParseObligation(name)
		if err != nil {
			return err
		}
		v |= p
	}
	*o = v
	return nil
}
