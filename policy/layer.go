package policy

import "fmt"

// Layer is the step of the gate's decision order that decided an action, as
// [github.com/reins-go/reins/gate.Decision] carries it and audit records write it. One type
// names the layer on both sides, so a decision and its record cannot disagree.
//
// The zero Layer is LayerNone: a record that is not a decision (a profile switch, a reset
// note) has no layer, and encodes as the empty string.
type Layer uint8

// The layers, in the order the gate walks them. The first layer that decides wins.
const (
	// LayerNone: not a decision; encodes as "".
	LayerNone Layer = iota
	// LayerInput: the action itself is malformed (an invalid risk value, an unreadable target).
	LayerInput
	// LayerHalted: a latched hard stop or the emergency-stop mode denies everything until reset.
	LayerHalted
	// LayerHardStop: budget exceeded, a sandbox escape signal, repeated tool failure, or a
	// write outside the workspace. Each latches the halt.
	LayerHardStop
	// LayerBoundary: a protected path.
	LayerBoundary
	// LayerMode: the permission mode (plan denies all; read-only denies all but ReadOnly).
	LayerMode
	// LayerRule: a policy rule of the active profile.
	LayerRule
	// LayerMatrix: the autonomy matrix.
	LayerMatrix
	// LayerAudit: the decision could not be recorded, so it is a Deny.
	LayerAudit
	// LayerApproval: after the decision order, the approval of a CONFIRM: refused, timed out,
	// parked, or nobody to ask (the run's pipeline, package reins).
	LayerApproval
	// LayerObligation: after the decision order, an obligation that could not be honoured (no
	// checkpointer, a notification that failed, no sandbox runner).
	LayerObligation
)

var layerNames = [...]string{"", "input", "halted", "hard_stop", "boundary", "mode", "rule", "matrix", "audit", "approval", "obligation"}

// String returns the layer's name as audit records write it ("hard_stop", "rule", ...; "" for
// LayerNone). An out-of-range value prints as "Layer(n)".
func (l Layer) String() string {
	if int(l) < len(layerNames) {
		return layerNames[l]
	}
	return fmt.Sprintf("Layer(%d)", uint8(l))
}

// Valid reports whether l is one of the layers above.
func (l Layer) Valid() bool { return int(l) < len(layerNames) }

// ParseLayer parses a layer's name as [Layer.String] writes it; "" is LayerNone. Anything else
// is an error naming the text.
func ParseLayer(text string) (Layer, error) {
	for i, n := range layerNames {
		if n == text {
			return Layer(i), nil
		}
	}
	return LayerNone, fmt.Errorf("policy: unknown layer %q", text)
}

// MarshalText implements [encoding.TextMarshaler]. An out-of-range layer is an error.
func (l Layer) MarshalText() ([]byte, error) {
	if !l.Valid() {
		return nil, fmt.Errorf("policy: cannot marshal invalid layer %d", uint8(l))
	}
	return []byte(layerNames[l]), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler] with [ParseLayer].
func (l *Layer) UnmarshalText(text []byte) error {
	parsed, err := ParseLayer(string(text))
	*l = parsed
	return err
}
