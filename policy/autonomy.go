package policy

import (
	"fmt"
	"math"
	"strings"

	"github.com/reins-go/reins/risk"
)

// Band is a named range of the continuous autonomy dial (0.0 to 1.0) of the autonomy seed.
//
// The seed's ranges are 0.0–0.33, 0.34–0.66 and 0.67–1.0; reins closes the gaps between them
// with half-open intervals so every dial value has exactly one band:
//
//	Supervised  0.00 <= x < 0.34
//	Trusted     0.34 <= x < 0.67
//	Autonomous  0.67 <= x <= 1.00
//
// so 0.33 and 0.335 are Supervised, 0.34 and 0.665 Trusted, 0.67 Autonomous. The zero Band is
// Supervised, the strictest.
type Band uint8

// The three bands of the autonomy dial.
const (
	// BandSupervised: every mutating, exec or destructive action asks the user.
	BandSupervised Band = iota
	// BandTrusted: mutating and exec actions are auto-approved with checkpoint and notify.
	BandTrusted
	// BandAutonomous: most actions are auto-approved; only destructive ones ask.
	BandAutonomous
)

// Band edges: the lowest dial value of Trusted and of Autonomous.
const (
	TrustedFrom    = 0.34
	AutonomousFrom = 0.67
)

// BandOf returns the band of a dial value. NaN and values outside [0, 1] are errors.
func BandOf(autonomy float64) (Band, error) {
	switch {
	case math.IsNaN(autonomy) || autonomy < 0 || autonomy > 1:
		return BandSupervised, fmt.Errorf("policy: autonomy %v is outside [0, 1]", autonomy)
	case autonomy < TrustedFrom:
		return BandSupervised, nil
	case autonomy < AutonomousFrom:
		return BandTrusted, nil
	}
	return BandAutonomous, nil
}

// Dial returns a representative dial value of the band: 0.0, 0.5 or 1.0.
func (b Band) Dial() float64 {
	switch b {
	case BandTrusted:
		return 0.5
	case BandAutonomous:
		return 1.0
	}
	return 0
}

// String returns "supervised", "trusted" or "autonomous".
func (b Band) String() string {
	switch b {
	case BandSupervised:
		return "supervised"
	case BandTrusted:
		return "trusted"
	case BandAutonomous:
		return "autonomous"
	}
	return fmt.Sprintf("Band(%d)", uint8(b))
}

// ParseBand parses "supervised", "trusted" or "autonomous" (any case).
func ParseBand(name string) (Band, error) {
	for _, b := range []Band{BandSupervised, BandTrusted, BandAutonomous} {
		if strings.EqualFold(name, b.String()) {
			return b, nil
		}
	}
	return BandSupervised, fmt.Errorf("policy: unknown autonomy band %q (want supervised, trusted or autonomous)", name)
}

// Cell is one cell of the autonomy matrix: a verdict and its obligations.
type Cell struct {
	Verdict     Verdict
	Obligations Obligations
}

// String renders the cell the way the seed's table writes it, e.g. "ALLOW+checkpoint+notify".
func (c Cell) String() string {
	if c.Obligations == 0 {
		return c.Verdict.String()
	}
	return c.Verdict.String() + "+" + c.Obligations.String()
}

// matrix is the seed's autonomy gate, (band, level) -> decision, cell for cell:
//
//	Risk         Supervised  Trusted             Autonomous
//	ReadOnly     Allow       Allow               Allow
//	Mutating     Ask         Notify+Checkpoint   Allow+Checkpoint
//	Exec         Ask         Notify (sandbox)    Allow (sandbox)
//	Destructive  Deny        Ask                 Ask
//	Network      Ask         Allow               Allow
//
// "Ask" is Confirm; "Notify+Checkpoint" is Allow with Notify and Checkpoint; "Notify (sandbox)"
// is Allow with Notify and Sandbox; "Allow (sandbox)" is Allow with Sandbox.
var matrix = [3][6]Cell{
	BandSupervised: {
		risk.ReadOnly:    {Allow, 0},
		risk.Mutating:    {Confirm, 0},
		risk.Exec:        {Confirm, 0},
		risk.Destructive: {Deny, 0},
		risk.Network:     {Confirm, 0},
	},
	BandTrusted: {
		risk.ReadOnly:    {Allow, 0},
		risk.Mutating:    {Allow, Notify | Checkpoint},
		risk.Exec:        {Allow, Notify | Sandbox},
		risk.Destructive: {Confirm, 0},
		risk.Network:     {Allow, 0},
	},
	BandAutonomous: {
		risk.ReadOnly:    {Allow, 0},
		risk.Mutating:    {Allow, Checkpoint},
		risk.Exec:        {Allow, Sandbox},
		risk.Destructive: {Confirm, 0},
		risk.Network:     {Allow, 0},
	},
}

// Matrix returns the autonomy matrix cell for a band and a risk level. An invalid band or level
// is Deny.
func Matrix(b Band, l risk.Level) Cell {
	if b > BandAutonomous || !l.Valid() {
		return Cell{Verdict: Deny}
	}
	return matrix[b][l]
}
