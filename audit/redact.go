package audit

import (
	"context"
	"errors"
	"strings"
)

// Redactor rewrites a record before a sink keeps it, typically to mask secrets. It may replace
// any field of *r, but must not modify the elements of r.Targets in place (the slice is shared
// with the caller): it assigns a new slice instead. It must be safe for concurrent use.
type Redactor func(r *Record)

// Mask is what [MaskSecrets] puts in place of a secret.
const Mask = "[REDACTED]"

// RedactSecrets is the default [Redactor]: it applies [MaskSecrets] to Command, Target,
// Targets, Reason, Error, Note and Input. It allocates only when it finds something to mask.
func RedactSecrets(r *Record) {
	r.Command = MaskSecrets(r.Command)
	r.Target = MaskSecrets(r.Target)
	r.Reason = MaskSecrets(r.Reason)
	r.Error = MaskSecrets(r.Error)
	r.Note = MaskSecrets(r.Note)
	r.Input = MaskSecrets(r.Input)
	for i, t := range r.Targets {
		if m := MaskSecrets(t); m != t {
			targets := append([]string(nil), r.Targets...)
			targets[i] = m
			for j := i + 1; j < len(targets); j++ {
				targets[j] = MaskSecrets(targets[j])
			}
			r.Targets = targets
			break
		}
	}
}

// Redact returns a Sink that applies fn to a copy of each record and writes the result to next.
// A nil fn means [RedactSecrets].
func Redact(next Sink, fn Redactor) Sink { return redacting{next: next, fn: fn} }

type redacting struct {
	next Sink
	fn   Redactor // nil: RedactSecrets (called directly, so r stays on the stack)
}

func (s redacting) Write(ctx context.Context, r Record) error {
	if s.next == nil {
		return errors.New("audit: redacting sink has no next sink")
	}
	if s.fn == nil {
		RedactSecrets(&r)
	} else {
		r = redactCopy(s.fn, r)
	}
	return s.next.Write(ctx, r)
}

// MaskSecrets returns s with the common secrets of command lines and URLs replaced by [Mask].
// It returns s itself, without allocating, when it finds none. It masks:
//   - the values of flags and key=value pairs whose name says secret: password, passwd,
//     passphrase, pwd, pass, secret, token, api key, access key, private key, credential,
//     signature, auth (--password=x, --token x, GITHUB_TOKEN=x, PGPASSWORD=x, ?token=x&...),
//     except names ending in file, path, dir, env, stdin, name, type or id, which hold
//     references to secrets rather than secrets;
//   - the password of a URL (https://user:pw@host) and a long token used as its user name, and
//     the password of -u/--user user:pw (curl);
//   - Authorization and Proxy-Authorization headers (keeping the scheme, e.g. "Bearer"),
//     X-Api-Key, Api-Key, X-Auth-Token, Private-Token and Cookie headers, and a bare "Bearer x";
//   - well-known token formats wherever they stand: GitHub (ghp_, gho_, ghu_, ghs_, ghr_,
//     github_pat_), GitLab (glpat-), Slack (xox?-), OpenAI-style sk-, Stripe (sk_live_,
//     sk_test_, rk_live_), npm (npm_), PyPI (pypi-), Google API keys (AIza), AWS access key ids
//     (AKIA, ASIA) and JSON web tokens (eyJ...);
//   - PEM private key blocks.
//
// It is a best effort over text, not a guarantee: a secret in an unusual form (a password as a
// positional argument, a short-flag value such as mysql -pSECRET, a secret a program computes)
// passes unmasked. Hosts with stricter needs install their own [Redactor].
func MaskSecrets(s string) string {
	if !maySecret(s) {
		return s
	}
	return maskSecrets(s)
}

// maySecret is the single-pass pre-scan of [MaskSecrets]: it reports false only for text in
// which no rule of maskSecrets can fire, so that ordinary text (paths, reasons, commands with
// flags and key=value options) is never handed to the full scanner. It walks the bytes once,
// with one table lookup per byte, and tests each rule's trigger where it can start, on the
// same whitespace-separated words maskSecrets sees (until maskSecrets masks something, its
// words are exactly these):
//   - a '=' whose key (the run of key characters before it) is a secret name;
//   - a ':' whose header name (the run of [A-Za-z0-9-] before it) is a secret header, or a
//     "://" with a '@' in the authority after it;
//   - a word that is a flag (starts with '-', has no '=') named like a secret, followed by a
//     word that is not a flag; or -u/--user/--proxy-user followed by a word with a ':';
//   - a word that is "bearer" (any case, quotes around it), followed by a word that is not a
//     flag;
//   - a word that starts with "-----BEGIN" (after a quote or not);
//   - the prefix of a well-known token format where a token can start (not after a letter or
//     digit).
//
// Each test is a superset of its rule (it ignores the lengths and the values the rule also
// requires). FuzzMaySecret checks that whatever maySecret lets through, maskSecrets leaves
// unchanged.
func maySecret(s string) bool {
	secret, _ := scanText(s)
	return secret
}

// scanText is maySecret and, when it finds no secret, also reports whether appendString
// copies s as it is (plain): letters and digits are, and every other byte is looked up.
func scanText(s string) (secret, plain bool) {
	var bad uint8
	var w wordState
	ws := 0          // the current word starts at s[ws]
	key, hdr := 0, 0 // the current runs of key and header-name characters start here
	for i := 0; i < len(s); i++ {
		c := s[i]
		k := preClass[c]
		if k == preAlnum {
			// A token starts only here, after a byte that is not a letter or digit; skip the
			// rest of the run in a tight loop.
			if tokenStart[c] && tokenPrefixAt(s, i) {
				return true, false
			}
			for i+1 < len(s) && preClass[s[i+1]] == preAlnum {
				i++
			}
			continue
		}
		bad |= notPlain[c]
		// The frequent classes first, outside the switch.
		if k == preOther {
			key, hdr = i+1, i+1
			continue
		}
		if k == preKey { // '_', '.'
			hdr = i + 1
			continue
		}
		switch k {
		case preDash:
			if i == ws && strings.HasPrefix(s[i:], "-----BEGIN") {
				return true, false
			}
		case preQuote:
			if i == ws && strings.HasPrefix(s[i+1:], "-----BEGIN") {
				return true, false
			}
			key, hdr = i+1, i+1
		case preEq:
			if secretName(strings.TrimLeft(s[key:i], "-")) {
				return true, false
			}
			w.eq = true
			key, hdr = i+1, i+1
		case preColon:
			if secretHeader(s[hdr:i]) || strings.HasPrefix(s[i:], "://") && urlUserInfo(s, i+3) {
				return true, false
			}
			w.colon = true
			key, hdr = i+1, i+1
		case preSpace:
			if i > ws && w.special(s[ws:i]) && w.end(s[ws:i]) {
				return true, false
			}
			w.eq, w.colon = false, false
			ws, key, hdr = i+1, i+1, i+1
		}
	}
	if len(s) > ws && w.special(s[ws:]) && w.end(s[ws:]) {
		return true, false
	}
	return false, bad == 0
}

// notPlain is 1 for the bytes appendString does not copy as they are (see plainByte).
var notPlain = func() (t [256]uint8) {
	for c := range t {
		if !plainByte[c] {
			t[c] = 1
		}
	}
	return t
}()

// wordState is what maySecret knows about the word it is in and the one before it.
type wordState struct {
	pend      uint8 // pendWord, pendColon: the word before asks maskSecrets to look at this one
	eq, colon bool  // the current word has a '=', a ':'
}

const (
	pendWord  = 1 + iota // a secret flag or "bearer": a word that is not a flag is masked
	pendColon            // -u, --user or --proxy-user: a word with a ':' is masked
)

// special reports whether end has anything to do for the word w: the word before asks for it,
// or it is a flag or may be "bearer".
func (st *wordState) special(w string) bool {
	return st.pend != 0 || w[0] == '-' || len(w) >= len("bearer") && len(w) <= len(`"bearer"`)
}

// end ends the word w: it reports whether maskSecrets masks w for the word before it, and
// notes what w asks of the next word.
func (st *wordState) end(w string) bool {
	pend, eq, colon := st.pend, st.eq, st.colon
	*st = wordState{}
	if pend != 0 && w[0] != '-' {
		// maskSecrets masks w (a word after -u only if it has a ':') and looks no further at it.
		return pend == pendWord || colon
	}
	if w[0] == '-' && !eq {
		name := strings.TrimLeft(w, "-")
		switch {
		case name == "u" || name == "user" || name == "proxy-user":
			st.pend = pendColon
		case secretName(name) && !strings.HasSuffix(name, "stdin"):
			st.pend = pendWord
		}
	}
	if len(w) >= len("bearer") && len(w) <= len(`"bearer"`) && (lower(w[0]) == 'b' || w[0] == '"' || w[0] == '\'') &&
		equalFold(trimQuotes(w), "bearer") {
		st.pend = pendWord
	}
	return false
}

// The byte classes of maySecret.
const (
	preOther = iota
	preAlnum // [A-Za-z0-9]
	preKey   // '_' or '.': part of a key, not of a header name
	preDash  // '-': part of a key and of a header name; a flag when it starts a word
	preQuote // a quote
	preEq    // '='
	preColon // ':'
	preSpace // what ends a word for maskSecrets
)

var preClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case isAlnum(byte(c)):
			t[c] = preAlnum
		case spaceTab[c]:
			t[c] = preSpace
		}
	}
	t['_'], t['.'] = preKey, preKey
	t['-'] = preDash
	t['"'], t['\''] = preQuote, preQuote
	t['='], t[':'] = preEq, preColon
	return t
}()

// tokenPrefixAt reports whether the prefix of a well-known token format starts at s[i].
func tokenPrefixAt(s string, i int) bool {
	if len(s)-i < 3 {
		return false // the shortest prefixes are "sk-" and "eyJ"
	}
	if c, d := s[i], s[i+1]; tokenSecond[c][d>>6]&(1<<(d&63)) == 0 {
		return false
	}
	if s[i] == 'e' {
		return strings.HasPrefix(s[i:], "eyJ")
	}
	for _, t := range tokenPrefixesBy[s[i]] {
		if strings.HasPrefix(s[i:], t.prefix) {
			return true
		}
	}
	return false
}

// secretHeader reports whether name is a header whose value maskSecrets masks.
func secretHeader(name string) bool {
	return equalFold(name, "authorization") || equalFold(name, "proxy-authorization") || isSecretHeader(name)
}

// urlUserInfo reports whether the authority of a URL starting at s[a] (after "://") holds a
// '@', as maskSecrets reads it: up to a '/', '?', '#', a quote or the end of the word.
func urlUserInfo(s string, a int) bool {
	for ; a < len(s); a++ {
		switch s[a] {
		case '@':
			return true
		case '/', '?', '#', '"', '\'', ' ', '\t', '\n', '\r':
			return false
		}
	}
	return false
}

// maskSecrets is MaskSecrets without the pre-scan.
func maskSecrets(s string) string {
	var buf [8]span
	spans := buf[:0]
	const (
		nextNone = iota
		nextWord
		nextAfterColon
	)
	next := nextNone
	for i := 0; i < len(s); {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			break
		}
		ws := i
		for i < len(s) && !isSpace(s[i]) {
			i++
		}
		we := i
		w := s[ws:we]
		switch pending := next; {
		case pending == nextWord && w[0] != '-':
			next = nextNone
			lo, hi := unquote(s, ws, we)
			spans = addSpan(spans, lo, hi)
			i = max(i, hi)
			continue
		case pending == nextAfterColon && w[0] != '-':
			next = nextNone
			if c := strings.IndexByte(w, ':'); c >= 0 {
				_, hi := unquote(s, ws, we)
				spans = addSpan(spans, ws+c+1, hi)
				i = max(i, hi)
			}
			continue
		}
		next = nextNone
		resume := we
		eq := strings.IndexByte(w, '=') >= 0
		colon := strings.IndexByte(w, ':') >= 0

		// A flag whose value is the next word: --password x, --user u:pw.
		if w[0] == '-' && !eq {
			name := strings.TrimLeft(w, "-")
			switch {
			case name == "u" || name == "user" || name == "proxy-user":
				next = nextAfterColon
			case secretName(name) && !strings.HasSuffix(name, "stdin"):
				next = nextWord
			}
		}
		if len(w) >= len("bearer") && len(w) <= len(`"bearer"`) && equalFold(trimQuotes(w), "bearer") {
			next = nextWord
		}
		// key=value pairs: --password=x, TOKEN=x, ?token=x&...
		for off := ws; eq; {
			e := strings.IndexByte(s[off:we], '=')
			if e < 0 {
				break
			}
			p := off + e
			off = p + 1
			k := p
			for k > ws && isKeyChar(s[k-1]) {
				k--
			}
			if !secretName(strings.TrimLeft(s[k:p], "-")) || p+1 >= len(s) {
				continue
			}
			lo, hi := p+1, 0
			if q := s[lo]; q == '"' || q == '\'' {
				lo++
				hi = closing(s, lo, q)
			} else {
				hi = lo
				for hi < we && !isValueEnd(s[hi]) {
					hi++
				}
			}
			spans = addSpan(spans, lo, hi)
			resume = max(resume, hi)
		}
		// URL credentials: scheme://user:pw@host.
		if u := indexURL(w, colon); u >= 0 {
			a := ws + u + 3
			end := a
			for end < we && !strings.ContainsRune("/?#\"'", rune(s[end])) {
				end++
			}
			if at := strings.LastIndexByte(s[a:end], '@'); at >= 0 {
				info := s[a : a+at]
				if c := strings.IndexByte(info, ':'); c >= 0 {
					spans = addSpan(spans, a+c+1, a+at)
				} else if len(info) >= 20 {
					spans = addSpan(spans, a, a+at)
				}
			}
		}
		// Headers: Authorization: Bearer x, X-Api-Key: x.
		for off := ws; colon; {
			e := strings.IndexByte(s[off:we], ':')
			if e < 0 {
				break
			}
			p := off + e
			off = p + 1
			k := p
			for k > ws && (isAlnum(s[k-1]) || s[k-1] == '-') {
				k--
			}
			name := s[k:p]
			auth := equalFold(name, "authorization") || equalFold(name, "proxy-authorization")
			if !auth && !isSecretHeader(name) {
				continue
			}
			var quote byte
			if k > 0 && (s[k-1] == '"' || s[k-1] == '\'') {
				quote = s[k-1]
			}
			v := p + 1
			for v < len(s) && s[v] == ' ' {
				v++
			}
			if auth {
				// Keep the scheme ("Bearer", "Basic") when a credential follows it.
				e := v
				for e < len(s) && (isAlnum(s[e]) || s[e] == '-') {
					e++
				}
				if e > v && e < len(s) && s[e] == ' ' {
					v = e
					for v < len(s) && s[v] == ' ' {
						v++
					}
				}
			}
			hi := v
			if quote != 0 {
				hi = closing(s, v, quote)
			} else {
				for hi < len(s) && !isSpace(s[hi]) {
					hi++
				}
			}
			spans = addSpan(spans, v, hi)
			resume = max(resume, hi)
		}
		// Well-known token formats: only where one can start and fit.
		for p := ws; we-ws >= minToken && we-p >= minToken; p++ {
			if !tokenStart[s[p]] || p > 0 && isAlnum(s[p-1]) {
				continue
			}
			if lo, hi := tokenAt(s[:we], p); hi > lo {
				spans = addSpan(spans, lo, hi)
				p = hi - 1
			}
		}
		// PEM private keys.
		if b := indexPEM(w); b >= 0 {
			if e := strings.Index(s[ws+b:], "PRIVATE KEY-----"); e >= 0 {
				lo := ws + b + e + len("PRIVATE KEY-----")
				hi := len(s)
				if end := strings.Index(s[lo:], "-----END"); end >= 0 {
					hi = lo + end
				}
				spans = addSpan(spans, lo, hi)
				resume = max(resume, hi)
			}
		}
		i = max(i, resume)
	}
	if len(spans) == 0 {
		return s
	}
	return applySpans(s, spans)
}

type span struct{ lo, hi int }

func addSpan(spans []span, lo, hi int) []span {
	if hi <= lo {
		return spans
	}
	return append(spans, span{lo, hi})
}

// applySpans replaces the (possibly overlapping) spans of s by Mask.
func applySpans(s string, spans []span) string {
	for i := 1; i < len(spans); i++ { // insertion sort: spans are few
		for j := i; j > 0 && spans[j].lo < spans[j-1].lo; j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
	var b strings.Builder
	b.Grow(len(s) + len(spans)*len(Mask))
	at := 0
	for i := 0; i < len(spans); {
		lo, hi := spans[i].lo, spans[i].hi
		for i++; i < len(spans) && spans[i].lo <= hi; i++ {
			hi = max(hi, spans[i].hi)
		}
		lo = max(lo, at)
		b.WriteString(s[at:lo])
		b.WriteString(Mask)
		at = hi
	}
	b.WriteString(s[at:])
	return b.String()
}

// unquote returns the span of the word s[ws:we] without its quotes; an opening quote whose
// closing one is in a later word extends the span to it.
func unquote(s string, ws, we int) (int, int) {
	if q := s[ws]; q == '"' || q == '\'' {
		return ws + 1, closing(s, ws+1, q)
	}
	for we > ws && (s[we-1] == '"' || s[we-1] == '\'') {
		we--
	}
	return ws, we
}

// closing returns the index of the quote q at or after i, or len(s).
func closing(s string, i int, q byte) int {
	if i > len(s) {
		return len(s)
	}
	if e := strings.IndexByte(s[i:], q); e >= 0 {
		return i + e
	}
	return len(s)
}

func trimQuotes(w string) string { return strings.Trim(w, `"'`) }

func isSpace(c byte) bool { return spaceTab[c] }

var spaceTab = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isKeyChar(c byte) bool { return isAlnum(c) || c == '_' || c == '-' || c == '.' }

func isValueEnd(c byte) bool { return c == '&' || c == ';' || c == ',' || c == '"' || c == '\'' }

func isSep(c byte) bool { return c == '_' || c == '-' || c == '.' }

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// equalFold reports whether s equals the lower-case ASCII word w, ignoring ASCII case.
func equalFold(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lower(s[i]) != w[i] {
			return false
		}
	}
	return true
}

func hasSuffixFold(s, w string) bool { return len(s) >= len(w) && equalFold(s[len(s)-len(w):], w) }

// secretWords are the words that make a flag or key name secret. A word must end the name or a
// part of it (tokenizer is not token); a short word must also start one (bypass is not pass).
type secretWord struct {
	word  string
	short bool
}

var secretWords = [...]secretWord{
	{"password", false}, {"passwd", false}, {"passphrase", false}, {"secret", false},
	{"secrets", false}, {"token", false}, {"apikey", false}, {"api_key", false}, {"api-key", false},
	{"accesskey", false}, {"access_key", false}, {"access-key", false}, {"privatekey", false},
	{"private_key", false}, {"private-key", false}, {"credential", false}, {"credentials", false},
	{"signature", false}, {"pwd", true}, {"pass", true}, {"pw", true}, {"auth", true},
}

var notSecretSuffixes = [...]string{"file", "path", "dir", "env", "stdin", "name", "type", "id"}

func secretName(name string) bool {
	for lo := 0; lo < len(name); lo++ {
		for _, sw := range secretWordsBy[lower(name[lo])] {
			hi := lo + len(sw.word)
			if hi <= len(name) && equalFold(name[lo:hi], sw.word) &&
				(hi == len(name) || isSep(name[hi])) && (!sw.short || lo == 0 || isSep(name[lo-1])) {
				for _, sfx := range notSecretSuffixes {
					if hasSuffixFold(name, sfx) {
						return false
					}
				}
				return true
			}
		}
	}
	return false
}

// secretWordsBy lists the secret words by their first letter.
var secretWordsBy = func() (t [256][]secretWord) {
	for _, sw := range secretWords {
		t[sw.word[0]] = append(t[sw.word[0]], sw)
	}
	return t
}()

// indexPEM returns the index of "-----BEGIN" at the start of w or after an opening quote, or -1.
func indexPEM(w string) int {
	if strings.HasPrefix(w, "-----BEGIN") {
		return 0
	}
	if len(w) > 0 && (w[0] == '"' || w[0] == '\'') && strings.HasPrefix(w[1:], "-----BEGIN") {
		return 1
	}
	return -1
}

// indexURL returns the index of "://" in w, or -1; colon says whether w has a colon at all.
func indexURL(w string, colon bool) int {
	if !colon {
		return -1
	}
	return strings.Index(w, "://")
}

func isSecretHeader(name string) bool {
	return equalFold(name, "x-api-key") || equalFold(name, "api-key") || equalFold(name, "x-auth-token") ||
		equalFold(name, "private-token") || equalFold(name, "cookie")
}

// tokenPrefixes are the well-known token formats: the prefix is kept, a body of at least min
// characters of [A-Za-z0-9_-] is masked. upper restricts the body to [A-Z0-9] and exactly min
// characters (AWS access key ids).
type tokenPrefix struct {
	prefix string
	min    int
	upper  bool
}

var tokenPrefixes = [...]tokenPrefix{
	{"ghp_", 30, false}, {"gho_", 30, false}, {"ghu_", 30, false}, {"ghs_", 30, false},
	{"ghr_", 30, false}, {"github_pat_", 30, false}, {"glpat-", 20, false},
	{"xoxb-", 10, false}, {"xoxp-", 10, false}, {"xoxa-", 10, false}, {"xoxr-", 10, false},
	{"xoxs-", 10, false}, {"sk_live_", 16, false}, {"sk_test_", 16, false},
	{"rk_live_", 16, false}, {"sk-", 20, false}, {"npm_", 30, false}, {"pypi-", 40, false},
	{"AIza", 30, false}, {"AKIA", 16, true}, {"ASIA", 16, true},
}

// tokenStart marks the bytes a well-known token starts with; minToken is the shortest token
// (a prefix and its shortest body).
var tokenStart, minToken = func() (t [256]bool, n int) {
	n = len("eyJ") + 17
	t['e'] = true
	for _, p := range tokenPrefixes {
		t[p.prefix[0]] = true
		n = min(n, len(p.prefix)+p.min)
	}
	return t, n
}()

// tokenSecond[c] is the set of second bytes of the well-known token formats whose prefix starts
// with c.
var tokenSecond = func() (t [256][4]uint64) {
	add := func(p string) { t[p[0]][p[1]>>6] |= 1 << (p[1] & 63) }
	add("eyJ")
	for _, p := range tokenPrefixes {
		add(p.prefix)
	}
	return t
}()

// tokenPrefixesBy lists the token formats by the first byte of their prefix.
var tokenPrefixesBy = func() (t [256][]tokenPrefix) {
	for _, p := range tokenPrefixes {
		t[p.prefix[0]] = append(t[p.prefix[0]], p)
	}
	return t
}()

// tokenAt returns the span to mask of a well-known token starting at s[p], or an empty span.
func tokenAt(s string, p int) (int, int) {
	if s[p] == 'e' {
		return jwtAt(s, p)
	}
	for _, t := range tokenPrefixesBy[s[p]] {
		if !strings.HasPrefix(s[p:], t.prefix) {
			continue
		}
		lo := p + len(t.prefix)
		hi := lo
		if t.upper {
			for hi < len(s) && ('A' <= s[hi] && s[hi] <= 'Z' || '0' <= s[hi] && s[hi] <= '9') {
				hi++
			}
			if hi-lo != t.min || hi < len(s) && isAlnum(s[hi]) {
				return 0, 0
			}
			return lo, hi
		}
		for hi < len(s) && (isAlnum(s[hi]) || s[hi] == '_' || s[hi] == '-') {
			hi++
		}
		if hi-lo >= t.min {
			return lo, hi
		}
		return 0, 0
	}
	return 0, 0
}

// jwtAt returns the span of a JSON web token (eyJ<header>.<payload>.<signature>) at s[p].
func jwtAt(s string, p int) (int, int) {
	if !strings.HasPrefix(s[p:], "eyJ") {
		return 0, 0
	}
	hi := p
	dots := 0
	for hi < len(s) && (isAlnum(s[hi]) || s[hi] == '_' || s[hi] == '-' || s[hi] == '.') {
		if s[hi] == '.' {
			dots++
		}
		hi++
	}
	if dots != 2 || hi-p < 20 {
		return 0, 0
	}
	return p, hi
}

// redactCopy applies fn to r and returns it. Calling fn through a func value makes r escape, so
// only this copy moves to the heap, not the caller's record on the default path.
//
//go:noinline
func redactCopy(fn Redactor, r Record) Record {
	fn(&r)
	return r
}
