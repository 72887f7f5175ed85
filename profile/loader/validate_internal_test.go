package loader

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/require"
)

// validateWhole is what validateSchema did before it validated in pieces: the whole document
// at once, every problem reported. validateIn must agree with it.
func validateWhole(t *testing.T, doc *document) []string {
	t.Helper()
	sch, err := compiledSchema()
	require.NoError(t, err)
	var out []string
	err = sch.Validate(doc.value)
	if err == nil {
		return nil
	}
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			for _, x := range translate(doc, rfcPointer(e.InstanceLocation), e) {
				out = append(out, x.Pointer+" "+x.Reason)
			}
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(err.(*jsonschema.ValidationError))
	slices.Sort(out)
	return slices.Compact(out)
}

// mutate makes a random change to a decoded document that is often invalid: a value of the
// wrong type, an unknown key, a list over its maximum, a bad name or id, a missing key.
func mutate(rng *rand.Rand, v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			m[k] = e
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		})
		switch rng.IntN(7) {
		case 6: // a rule whose operation_type list is over its maximum of 100
			if depth == 0 {
				ops := make([]any, 100+rng.IntN(3))
				for i := range ops {
					ops[i] = "read"
				}
				rules, _ := m["custom_rules"].([]any)
				m["custom_rules"] = append(slices.Clone(rules), map[string]any{"id": "big", "action": "DENY", "condition": map[string]any{"operation_type": ops}})
			}
		case 0:
			m["unknwon_key"] = 1
		case 1:
			if len(keys) > 0 {
				delete(m, keys[rng.IntN(len(keys))])
			}
		case 2:
			m["bad name!"] = []any{"x"}
		default:
			if len(keys) > 0 {
				k := keys[rng.IntN(len(keys))]
				m[k] = mutate(rng, m[k], depth+1)
			}
		}
		return m
	case []any:
		a := slices.Clone(x)
		switch rng.IntN(6) {
		case 5: // over a condition list's maximum of 100, with valid entries
			if len(a) > 0 {
				a = slices.Repeat(a[:1], 101)
			}
		case 0:
			for range 90 + rng.IntN(30) {
				a = append(a, "more")
			}
		case 1:
			a = append(a, 3, nil, map[string]any{"id": "x"})
		case 2:
			if len(a) > 0 {
				i := rng.IntN(len(a))
				a[i] = mutate(rng, a[i], depth+1)
			}
		default:
			for range 70 {
				a = append(a, a...)
				if len(a) > 150 {
					break
				}
			}
		}
		return a
	case string:
		switch rng.IntN(4) {
		case 0:
			return ""
		case 1:
			return strings.Repeat("y", 5000)
		case 2:
			return json.Number("7")
		}
		return x + "!"
	case json.Number:
		return []any{x}
	}
	return "x"
}

// TestValidateInPiecesAgrees: validating in pieces (every array apart, in chunks) reports
// exactly the problems validating the whole document does, on the test profiles and random
// mutations of them. So the pieces, and the lengths checked against maxItems apart from the
// library, change nothing but when the context is looked at.
func TestValidateInPiecesAgrees(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("testdata", "profiles", "*.json"))
	require.NoError(t, err)
	var docs []*document
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		doc, err := decode(context.Background(), p, data, false)
		require.NoError(t, err)
		docs = append(docs, doc)
	}
	rng := rand.New(rand.NewPCG(23, 7))
	checked, invalid, overMax := 0, 0, 0
	for i := range 600 {
		base := docs[i%len(docs)]
		v := base.value
		for range 1 + rng.IntN(3) {
			v = mutate(rng, v, 0)
		}
		raw, err := json.Marshal(v)
		require.NoError(t, err)
		doc, err := decode(context.Background(), "m.json", raw, false)
		require.NoError(t, err)
		want := validateWhole(t, doc)
		if len(want) >= maxProblems {
			continue
		}
		for _, large := range []int{0, 5, largePiece} {
			errs, err := validateIn(context.Background(), doc, large)
			require.NoError(t, err)
			var got []string
			for _, e := range errs {
				got = append(got, e.Pointer+" "+e.Reason)
			}
			slices.Sort(got)
			require.Equal(t, want, got, "large=%d, document %s", large, raw)
		}
		checked++
		if len(want) > 0 {
			invalid++
		}
		if slices.ContainsFunc(want, func(e string) bool { return strings.Contains(e, "maximum") }) {
			overMax++
		}
	}
	require.Greater(t, invalid, 300, "most mutations are invalid")
	require.Greater(t, overMax, 20, "some lists are over their maximum")
	t.Logf("%d documents checked, %d invalid, %d with a list over its maximum", checked, invalid, overMax)
}
