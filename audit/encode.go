package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/risk"
)

// AppendJSON appends the JSON encoding of r to dst and returns the extended buffer. The encoding
// is canonical: fields in [Record]'s order, omitted exactly when their tag says so, strings
// escaped the way encoding/json escapes them (including <, > and & as \u003c, \u003e and
// \u0026). For every record whose strings are valid UTF-8 the bytes equal json.Marshal(r); it
// simply does it without reflection or allocation. Invalid UTF-8 becomes U+FFFD written as
// itself (where encoding/json writes the escape \ufffd), so that decoding the encoding and
// encoding it again gives the same bytes.
//
// The canonical encoding is what a chained record's hash covers: Hash is the SHA-256 of
// AppendJSON of the record with Hash zero (so the hash field is omitted), and the line written
// to a log is that encoding with `,"hash":"<hex>"` inserted before the closing brace.
//
// It fails, leaving dst's contents unspecified beyond its original length, for a time outside
// the years 0 to 9999, an invalid verdict, and obligations or risk sets with unknown bits.
func AppendJSON(dst []byte, r *Record) ([]byte, error) { return appendJSON(dst, r, nil, false) }

// appendJSON is AppendJSON with an encoder's state from the records before (nil: none). With
// redact, it writes the record [RedactSecrets] would leave: each field RedactSecrets masks
// is scanned once, for secrets and for what JSON escapes together.
func appendJSON(dst []byte, r *Record, st *encState, redact bool) ([]byte, error) {
	var tc *timeCache
	var memo *[2]textMemo
	if st != nil {
		tc, memo = &st.time, &st.memo
	}
	dst = append(dst, `{"timestamp":"`...)
	var err error
	if dst, err = tc.appendTime(dst, r.Time); err != nil {
		return dst, fmt.Errorf("audit: timestamp: %w", err)
	}
	dst = append(dst, `","correlation_id":"`...)
	dst = appendUUID(dst, r.CorrelationID)
	dst = append(dst, `","active_profile":`...)
	dst = appendString(dst, r.Profile)
	dst = append(dst, `,"operation_type":`...)
	dst = appendString(dst, r.Operation)
	dst = append(dst, `,"target":`...)
	dst, targetAsIs := appendTextAsIs(dst, r.Target, redact)
	dst = append(dst, `,"decision":"`...)
	switch r.Decision {
	case policy.Deny:
		dst = append(dst, "DENY"...)
	case policy.Allow:
		dst = append(dst, "ALLOW"...)
	case policy.Confirm:
		dst = append(dst, "CONFIRM"...)
	default:
		return dst, fmt.Errorf("audit: decision: invalid verdict %d", uint8(r.Decision))
	}
	dst = append(dst, `","rule_matched":`...)
	dst = appendString(dst, r.RuleMatched)
	if r.UserOverride {
		dst = append(dst, `,"user_override":true,"kind":`...)
	} else {
		dst = append(dst, `,"user_override":false,"kind":`...)
	}
	dst = appendString(dst, string(r.Kind))
	dst = append(dst, `,"decision_id":"`...)
	dst = appendUUID(dst, r.DecisionID)
	if !r.Layer.Valid() {
		return dst, fmt.Errorf("audit: layer: invalid layer %d", uint8(r.Layer))
	}
	dst = append(dst, `","layer":"`...)
	dst = append(dst, r.Layer.String()...)
	dst = append(dst, '"')
	if r.DecidedBy != "" {
		dst = append(dst, `,"decided_by":`...)
		dst = appendString(dst, string(r.DecidedBy))
	}
	dst = append(dst, `,"reason":`...)
	if memo != nil {
		dst = memo[0].append(dst, r.Reason, redact)
	} else {
		dst = appendText(dst, r.Reason, redact)
	}
	dst = append(dst, `,"obligations":[`...)
	if r.Obligations&^allObligations != 0 {
		return dst, fmt.Errorf("audit: obligations: invalid bits %#x", uint8(r.Obligations))
	}
	n := 0
	for _, o := range obligationNames {
		if r.Obligations&o.o != 0 {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, o.quoted...)
			n++
		}
	}
	dst = append(dst, `],"risk_levels":[`...)
	if r.Risk&^riskMask != 0 {
		return dst, fmt.Errorf("audit: risk_levels: invalid bits %#x", uint8(r.Risk))
	}
	n = 0
	for l := risk.Level(1); l.Valid(); l++ {
		if r.Risk.Has(l) {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '"')
			dst = append(dst, l.String()...)
			dst = append(dst, '"')
			n++
		}
	}
	dst = append(dst, ']')
	dst = appendOptional(dst, `,"tool":`, r.Tool)
	dst = appendOptionalText(dst, `,"command":`, r.Command, redact)
	dst = appendOptional(dst, `,"host":`, r.Host)
	if len(r.Targets) > 0 {
		dst = append(dst, `,"targets":[`...)
		for i, t := range r.Targets {
			if i > 0 {
				dst = append(dst, ',')
			}
			if targetAsIs && t == r.Target { // the first of Targets is usually Target
				dst = appendQuoted(dst, t, true)
			} else {
				dst = appendText(dst, t, redact)
			}
		}
		dst = append(dst, ']')
	}
	if r.ProfileHash != "" {
		dst = append(dst, `,"profile_hash":`...)
		if memo != nil {
			dst = memo[1].append(dst, r.ProfileHash, false)
		} else {
			dst = appendString(dst, r.ProfileHash)
		}
	}
	if r.BundleVersion != 0 {
		dst = append(dst, `,"bundle_version":`...)
		dst = strconv.AppendUint(dst, r.BundleVersion, 10)
	}
	dst = appendOptional(dst, `,"requested_profile":`, r.RequestedProfile)
	dst = appendOptional(dst, `,"requested_profile_hash":`, r.RequestedProfileHash)
	dst = appendOptional(dst, `,"outcome":`, string(r.Outcome))
	dst = appendOptional(dst, `,"checkpoint_id":`, r.CheckpointID)
	dst = appendOptionalText(dst, `,"error":`, r.Error, redact)
	dst = appendOptional(dst, `,"approver":`, r.Approver)
	dst = appendOptional(dst, `,"approval_scope":`, r.ApprovalScope)
	dst = appendOptionalText(dst, `,"note":`, r.Note, redact)
	dst = appendOptionalText(dst, `,"input":`, r.Input, redact)
	if r.Seq != 0 {
		dst = append(dst, `,"seq":`...)
		dst = strconv.AppendUint(dst, r.Seq, 10)
	}
	if !r.Prev.IsZero() {
		dst = append(dst, `,"prev":"`...)
		dst = hex.AppendEncode(dst, r.Prev[:])
		dst = append(dst, '"')
	}
	if !r.Hash.IsZero() {
		dst = append(dst, `,"hash":"`...)
		dst = hex.AppendEncode(dst, r.Hash[:])
		dst = append(dst, '"')
	}
	return append(dst, '}'), nil
}

// hashSuffix is what follows the canonical bytes' last field on a chained line:
// `,"hash":"` + 64 hex digits + `"}`.
const hashSuffixLen = len(`,"hash":"`) + 64 + len(`"}`)

// appendChained appends the chained line for r (Seq and Prev already set, Hash ignored): the
// canonical encoding with its hash inserted, and a newline. It returns the record's hash.
func appendChained(dst []byte, r *Record) ([]byte, Digest, error) {
	start := len(dst)
	r.Hash = Digest{}
	dst, err := AppendJSON(dst, r)
	if err != nil {
		return dst[:start], Digest{}, err
	}
	h := sha256.Sum256(dst[start:])
	dst = append(dst[:len(dst)-1], `,"hash":"`...)
	dst = hex.AppendEncode(dst, h[:])
	dst = append(dst, '"', '}', '\n')
	r.Hash = h
	return dst, h, nil
}

// ParseJSON decodes one record from its canonical encoding (a line of a JSONL log, without the
// newline). It is strict: unknown fields, a missing required field, a value in any other
// form than [AppendJSON] writes it (other escapes, other spacing, other field order, "ask"
// for CONFIRM) are errors, so whatever ParseJSON accepts re-encodes to exactly the same bytes.
// It does not check the hash; see [Verify].
func ParseJSON(line []byte) (Record, error) {
	var r Record
	if len(line) == 0 || line[0] != '{' {
		return Record{}, errors.New("audit: record is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("audit: record: %w", err)
	}
	if dec.InputOffset() != int64(len(line)) {
		return Record{}, errors.New("audit: record: trailing data after the JSON object")
	}
	again, err := AppendJSON(make([]byte, 0, len(line)), &r)
	if err != nil {
		return Record{}, err
	}
	if !bytes.Equal(again, line) {
		return Record{}, fmt.Errorf("audit: record is not in canonical form (first difference at byte %d)", firstDiff(again, line))
	}
	return r, nil
}

// verifyHash checks that a canonical chained line (as ParseJSON accepted it into r) carries the
// hash of its own content.
func verifyHash(line []byte, r *Record) error {
	if r.Hash.IsZero() {
		return errors.New("the record has no hash")
	}
	if len(line) < hashSuffixLen+1 {
		return errors.New("the record is too short to carry a hash")
	}
	body := line[:len(line)-hashSuffixLen]
	h := sha256.New()
	h.Write(body)
	h.Write([]byte{'}'})
	var sum Digest
	h.Sum(sum[:0])
	if sum != r.Hash {
		return fmt.Errorf("hash %s does not match the record's content (%s)", r.Hash, sum)
	}
	return nil
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

var obligationNames = [...]struct {
	o      policy.Obligations
	quoted string
}{{policy.Checkpoint, `"checkpoint"`}, {policy.Notify, `"notify"`}, {policy.Sandbox, `"sandbox"`}}

const allObligations = policy.Checkpoint | policy.Notify | policy.Sandbox

var riskMask = func() risk.Set {
	var s risk.Set
	for l := risk.Level(1); l.Valid(); l++ {
		s = s.With(l)
	}
	return s
}()

func appendOptional(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	dst = append(dst, key...)
	return appendString(dst, s)
}

func appendOptionalText(dst []byte, key, s string, redact bool) []byte {
	if s == "" {
		return dst
	}
	dst = append(dst, key...)
	return appendText(dst, s, redact)
}

// appendText appends s as appendString does, after MaskSecrets when redact is set. Text without
// secrets is scanned once, for both.
func appendText(dst []byte, s string, redact bool) []byte {
	dst, _ = appendTextAsIs(dst, s, redact)
	return dst
}

// appendTextAsIs is appendText that also reports whether it copied s as it is (no secret, no
// escape).
func appendTextAsIs(dst []byte, s string, redact bool) ([]byte, bool) {
	secret, plain := false, false
	if redact {
		secret, plain = scanText(s)
	} else {
		plain = plainString(s)
	}
	if secret {
		s = maskSecrets(s)
		plain = plainString(s)
	}
	return appendQuoted(dst, s, plain), plain && !secret
}

// appendQuoted appends s quoted, escaped unless plain says appendString copies it as it is.
func appendQuoted(dst []byte, s string, plain bool) []byte {
	dst = append(dst, '"')
	if plain {
		dst = append(dst, s...)
	} else {
		dst = appendEscaped(dst, s)
	}
	return append(dst, '"')
}

// encState is what an encoder keeps from one record to the next: the last second it formatted,
// and the last Reason and ProfileHash, which repeat from record to record (a rule's reason,
// the active profile's hash).
type encState struct {
	time timeCache
	memo [2]textMemo // Reason, ProfileHash
}

// textMemo remembers the last text of a field when it was plain and, if redacted, held no
// secret: the same text again (compared by content) is copied as it is without scanning.
type textMemo struct {
	text   []byte
	redact bool // text held no secret (else it was not redacted)
	ok     bool
}

func (m *textMemo) append(dst []byte, s string, redact bool) []byte {
	if m.ok && m.redact == redact && string(m.text) == s {
		return appendQuoted(dst, s, true)
	}
	secret, plain := false, plainString(s)
	if redact {
		secret, plain = scanText(s)
	}
	if secret || !plain {
		m.ok = false
		return appendText(dst, s, redact)
	}
	m.text, m.redact, m.ok = append(m.text[:0], s...), redact, true
	return appendQuoted(dst, s, true)
}

const hexDigits = "0123456789abcdef"

// hexPairs[b] is b as two lower-case hex digits.
var hexPairs = func() (t [256][2]byte) {
	for b := range t {
		t[b] = [2]byte{hexDigits[b>>4], hexDigits[b&0xf]}
	}
	return t
}()

// appendUUID appends u in its canonical text form (8-4-4-4-12 lower-case hex digits).
func appendUUID(dst []byte, u uuid.UUID) []byte {
	var t [36]byte
	for i, at := range uuidAt {
		t[at], t[at+1] = hexPairs[u[i]][0], hexPairs[u[i]][1]
	}
	t[8], t[13], t[18], t[23] = '-', '-', '-', '-'
	return append(dst, t[:]...)
}

// uuidAt[i] is where the hex digits of a UUID's byte i go in its text form.
var uuidAt = [16]uint8{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special8 reports whether any of the eight bytes in x is one appendString cannot copy as it
// is: a byte of 0x80 or more (UTF-8 to check, U+2028 and U+2029 to escape), a control byte
// below 0x20, or one of " \\ < > &. The tests are exact as booleans (the classic has-zero and
// has-less tricks), so a false answer means all eight bytes are plain. '"' (0x22) and '&'
// (0x26) are the bytes b with b|0x04 == 0x26, '<' (0x3c) and '>' (0x3e) those with
// b|0x02 == 0x3e.
func special8(x uint64) bool {
	v := x | (x-0x20*ones)&^x // bytes >= 0x80, bytes < 0x20
	v |= hasZero((x | 0x04*ones) ^ 0x26*ones)
	v |= hasZero((x | 0x02*ones) ^ 0x3e*ones)
	v |= hasZero(x ^ '\\'*ones)
	return v&highs != 0
}

// load8 reads s[i:i+8] as a little-endian word (the compiler merges the loads).
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func hasZero(x uint64) uint64 { return (x - ones) &^ x }

// appendString appends s as a quoted JSON string, escaped as encoding/json escapes it except
// that invalid UTF-8 becomes a literal U+FFFD.
func appendString(dst []byte, s string) []byte { return appendQuoted(dst, s, plainString(s)) }

// plainString reports whether appendString copies every byte of s as it is. It tests eight
// bytes at a time; a tail shorter than eight is tested as the last eight bytes of s, or byte
// by byte when s is that short.
func plainString(s string) bool {
	if len(s) < 8 {
		for i := 0; i < len(s); i++ {
			if !plainByte[s[i]] {
				return false
			}
		}
		return true
	}
	for i := 0; i+8 < len(s); i += 8 {
		if special8(load8(s, i)) {
			return false
		}
	}
	return !special8(load8(s, len(s)-8))
}

// plainByte marks the bytes a JSON string holds as they are; every other ASCII byte is escaped
// (controls, the quote, the backslash, and <, > and & as encoding/json does), and bytes of
// 0x80 and more are UTF-8 to check.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// appendEscaped appends s, without quotes, escaped as appendString escapes it.
func appendEscaped(dst []byte, s string) []byte {
	done := 0 // s[:done] is already in dst
	for i := 0; i < len(s); {
		// Skip eight plain ASCII bytes at a time; a word holding anything else goes byte by byte.
		for i+8 <= len(s) && !special8(load8(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if plainByte[c] {
				i++
				continue
			}
			dst = append(dst, s[done:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			done = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[done:i]...)
			dst = append(dst, "\uFFFD"...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[done:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		done = i
	}
	return append(dst, s[done:]...)
}

// timeCache holds the text of the last second appendTime formatted, "YYYY-MM-DDTHH:MM:SS".
// A nil *timeCache formats every time.
type timeCache struct {
	sec  int64
	text [19]byte
	ok   bool
}

// appendTime appends t as time.Time.AppendText does (RFC 3339 with nanoseconds, trailing zeros
// dropped). A UTC time of the years 0 to 9999, which is what the JSONL sink writes, is
// formatted here without the calendar tables (and its second taken from tc when tc holds it);
// anything else goes to AppendText.
func (tc *timeCache) appendTime(dst []byte, t time.Time) ([]byte, error) {
	const (
		minUnix = -62167219200 // 0000-01-01T00:00:00Z
		maxUnix = 253402300800 // 10000-01-01T00:00:00Z
	)
	sec := t.Unix()
	if t.Location() != time.UTC || sec < minUnix || sec >= maxUnix {
		return t.AppendText(dst)
	}
	if tc != nil && tc.ok && tc.sec == sec {
		dst = append(dst, tc.text[:]...)
	} else {
		text := formatSecond(sec)
		if tc != nil {
			tc.sec, tc.text, tc.ok = sec, text, true
		}
		dst = append(dst, text[:]...)
	}
	if ns := t.Nanosecond(); ns != 0 {
		// Nine digits, two at a time, then the trailing zeros dropped.
		var frac [10]byte
		frac[0] = '.'
		d := [4]int{ns / 10000000, ns / 100000 % 100, ns / 1000 % 100, ns / 10 % 100}
		for i, p := range d {
			frac[1+2*i], frac[2+2*i] = decPairs[p][0], decPairs[p][1]
		}
		frac[9] = byte('0' + ns%10)
		n := 10
		for frac[n-1] == '0' {
			n--
		}
		dst = append(dst, frac[:n]...)
	}
	return append(dst, 'Z'), nil
}

// appendTime formats t without a cache.
func appendTime(dst []byte, t time.Time) ([]byte, error) { return (*timeCache)(nil).appendTime(dst, t) }

// decPairs[n] is n (0 to 99) as two decimal digits.
var decPairs = func() (t [100][2]byte) {
	for n := range t {
		t[n] = [2]byte{byte('0' + n/10), byte('0' + n%10)}
	}
	return t
}()

// formatSecond formats the UTC second sec (of the years 0 to 9999) as "YYYY-MM-DDTHH:MM:SS".
func formatSecond(sec int64) [19]byte {
	days := sec / 86400
	rem := sec - days*86400
	if rem < 0 {
		days--
		rem += 86400
	}
	y, m, d := civil(days)
	var b [19]byte
	b[0], b[1] = decPairs[y/100][0], decPairs[y/100][1]
	b[2], b[3] = decPairs[y%100][0], decPairs[y%100][1]
	b[4] = '-'
	b[5], b[6] = decPairs[m][0], decPairs[m][1]
	b[7] = '-'
	b[8], b[9] = decPairs[d][0], decPairs[d][1]
	b[10] = 'T'
	b[11], b[12] = decPairs[rem/3600][0], decPairs[rem/3600][1]
	b[13] = ':'
	b[14], b[15] = decPairs[rem%3600/60][0], decPairs[rem%3600/60][1]
	b[16] = ':'
	b[17], b[18] = decPairs[rem%60][0], decPairs[rem%60][1]
	return b
}

// civil converts days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
// days-to-civil algorithm, with a floor division for days before the year 0 era boundary).
func civil(days int64) (y, m, d int64) {
	z := days + 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}
