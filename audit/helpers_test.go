package audit

import (
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// sample is a realistic decision record, the shape the gate writes.
func sample(i int) Record {
	var id uuid.UUID
	id[0], id[1], id[15] = byte(i>>8), byte(i), 0x42
	return Record{
		Time:          time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC).Add(time.Duration(i) * time.Millisecond),
		CorrelationID: uuid.MustParse("0195a7c4-8d2e-7c1a-9b3f-4e5d6c7b8a90"),
		Profile:       "PROFILE-DEV",
		Operation:     "shell",
		Target:        "internal/server/handler.go",
		Decision:      policy.Allow,
		RuleMatched:   "allow-low-med-risk",
		Kind:          KindDecision,
		DecisionID:    id,
		Layer:         policy.LayerRule,
		DecidedBy:     DecidedByRule,
		Reason:        "low and medium risk actions run automatically in the DEV profile",
		Obligations:   policy.Checkpoint | policy.Notify,
		Risk:          risk.Of(risk.Exec, risk.Mutating),
		Tool:          "bash",
		Command:       "go test ./internal/server/... -run TestHandler -count=1",
		Targets:       []string{"internal/server/handler.go"},
		ProfileHash:   "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	}
}

// randomRecord fills every field from rng, including strings with characters JSON escapes.
func randomRecord(rng *rand.Rand) Record {
	str := func() string {
		const alphabet = "abcXYZ 019_-./:\"\\<>&\n\t\r\x00\x1f\x7fé€😀\u2028\u2029"
		var b strings.Builder
		n := rng.IntN(12)
		runes := []rune(alphabet)
		for range n {
			b.WriteRune(runes[rng.IntN(len(runes))])
		}
		if rng.IntN(10) == 0 {
			b.WriteByte(0xff) // invalid UTF-8
		}
		return b.String()
	}
	var cid, did uuid.UUID
	for i := range cid {
		cid[i], did[i] = byte(rng.Uint32()), byte(rng.Uint32())
	}
	r := Record{
		Time:                 time.Unix(rng.Int64N(253402300799), rng.Int64N(1e9)).In(time.FixedZone("", (rng.IntN(48)-24)*1800)),
		CorrelationID:        cid,
		Profile:              str(),
		Operation:            str(),
		Target:               str(),
		Decision:             policy.Verdict(rng.IntN(3)),
		RuleMatched:          str(),
		UserOverride:         rng.IntN(2) == 0,
		Kind:                 Kind(str()),
		DecisionID:           did,
		Layer:                policy.Layer(rng.IntN(int(policy.LayerObligation) + 1)),
		DecidedBy:            DecidedBy(str()),
		Reason:               str(),
		Obligations:          policy.Obligations(rng.IntN(8)),
		Risk:                 risk.Set(rng.IntN(32) << 1),
		Tool:                 str(),
		Command:              str(),
		Host:                 str(),
		ProfileHash:          str(),
		RequestedProfile:     str(),
		RequestedProfileHash: str(),
		Outcome:              Outcome(str()),
		CheckpointID:         str(),
		Error:                str(),
		Seq:                  rng.Uint64() >> rng.IntN(64),
	}
	for range rng.IntN(3) {
		r.Targets = append(r.Targets, str())
	}
	if rng.IntN(2) == 0 {
		r.Targets = []string{}
	}
	if rng.IntN(2) == 0 {
		for i := range r.Prev {
			r.Prev[i] = byte(rng.Uint32())
		}
	}
	if rng.IntN(2) == 0 {
		for i := range r.Hash {
			r.Hash[i] = byte(rng.Uint32())
		}
	}
	return r
}
