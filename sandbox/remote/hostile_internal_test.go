package remote

import "strings"

// hostileArgs must reach the far side byte for byte.
var hostileArgs = []string{
	"plain", "a b", "  two  spaces  ", "", "'", `"`, `\`, `\\n`, "a;b", "a&&b", "a|b", "a>b", "<in",
	"$(id)", "`id`", "$HOME", "${PATH}", "$'x'", "a\nb", "\n", "\t", "\r\n", "*", "?", "[a]", "~", "~root",
	"#comment", "a#b", "{a,b}", "!", "!!", "-n", "--", "-e", "a=b", "(", ")", "\x01\x7f", "\xff\xfe",
	"é", "日本語", `'"'"'`, "%s%n", "if", "then", strings.Repeat("long ", 2000),
}

func splitNUL(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}
