package typed

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text handling shared by the intent classifier, the target-hint extractor and the fact ranker.
// Everything is English-centred and deliberately small: the goal is predictable answers, not
// linguistics.

// words appends the lower-cased words of text to dst: maximal runs of letters and digits, so
// "where's" is "where", "s" and "trade-off" is "trade", "off". With parts, a camel-case word also
// yields its parts ("AuthHandler" -> "authhandler", "auth", "handler") so prose meets code.
func words(dst []string, text string, parts bool) []string {
	start := -1
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			dst = appendWord(dst, text[start:i], parts)
			start = -1
		}
	}
	if start >= 0 {
		dst = appendWord(dst, text[start:], parts)
	}
	return dst
}

func appendWord(dst []string, w string, parts bool) []string {
	dst = append(dst, strings.ToLower(w))
	if !parts || !hasInnerUpper(w) {
		return dst
	}
	if ps := camelParts(w); len(ps) > 1 {
		for _, p := range ps {
			dst = append(dst, strings.ToLower(p))
		}
	}
	return dst
}

// hasInnerUpper reports an upper-case letter after the first rune: the cheap test that spares
// most words the camel-case split.
func hasInnerUpper(w string) bool {
	for i, r := range w {
		if i > 0 && unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

// camelParts splits a camel-case word at its humps: "parseHTTPRequest" -> parse, HTTP, Request.
func camelParts(w string) []string {
	var parts []string
	start := 0
	runes := []rune(w)
	for i := 1; i < len(runes); i++ {
		prev, cur := runes[i-1], runes[i]
		next := rune(0)
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		lowerToUpper := unicode.IsLower(prev) && unicode.IsUpper(cur)
		acronymEnd := unicode.IsUpper(prev) && unicode.IsUpper(cur) && unicode.IsLower(next)
		if lowerToUpper || acronymEnd {
			parts = append(parts, string(runes[start:i]))
			start = i
		}
	}
	return append(parts, string(runes[start:]))
}

// isCamel reports a camel-case identifier such as AhpServer, handleEvent or HTTPServer; a
// capitalised prose word ("Where") or an acronym ("API") is not one.
func isCamel(w string) bool {
	if utf8.RuneCountInString(w) < 4 {
		return false
	}
	hasLower := false
	for _, r := range w {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
		hasLower = hasLower || unicode.IsLower(r)
	}
	return hasLower && len(camelParts(w)) > 1
}

// isSnake reports a snake_case identifier such as parse_config or __init__.
func isSnake(w string) bool {
	if !strings.Contains(w, "_") || strings.Trim(w, "_") == "" {
		return false
	}
	for _, r := range w {
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// stopWords carry no topic. The recall words (previous, remember, ...) describe the request, not
// the memory, so they are dropped too.
var stopWords = setOf(
	"a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by", "for", "with",
	"from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that",
	"these", "those", "i", "me", "my", "we", "our", "us", "you", "your", "he", "she", "they", "them",
	"their", "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "do", "does",
	"did", "done", "have", "has", "had", "can", "could", "would", "should", "will", "shall", "may",
	"might", "must", "not", "no", "so", "than", "then", "there", "here", "about", "into", "over",
	"under", "up", "down", "out", "all", "any", "some", "each", "every", "just", "also", "very",
	"too", "s", "t", "please", "there's", "let", "get", "got",
	"previous", "previously", "earlier", "remember", "recall", "recalled",
)

func setOf(values ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(values))
	for _, v := range values {
		m[v] = struct{}{}
	}
	return m
}

func isStopWord(w string) bool {
	_, ok := stopWords[w]
	return ok
}

// stem strips the commonest English inflections so "bugs", "tests", "testing" and "tested" meet
// their base form. Both sides of a comparison are stemmed the same way, so an odd stem ("statu")
// is harmless.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		return w[:n-3]
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return w[:n-2]
	case n > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") ||
		strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:n-1]
	}
	return w
}

// terms appends the index terms of text to dst: words with camel parts, stop-words dropped,
// stemmed, each once.
func terms(dst []string, text string) []string {
	start := len(dst)
	dst = words(dst, text, true)
	out := dst[:start]
	for _, w := range dst[start:] {
		if isStopWord(w) {
			continue
		}
		w = stem(w)
		if !containsString(out[start:], w) {
			out = append(out, w)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// token is one whitespace-separated piece of a prompt with surrounding punctuation removed.
type token struct {
	// text keeps its case (identifiers are case-sensitive).
	text string
	// lower is text lower-cased.
	lower string
	// quoted: the token was written in backticks.
	quoted bool
	// call: the token was written as a call, foo().
	call bool
}

// tokens splits text at white space and strips sentence punctuation, quotes and brackets, keeping
// the characters identifiers and paths are made of.
func tokens(text string) []token {
	var out []token
	for _, f := range strings.Fields(text) {
		call := strings.Contains(f, "()")
		t := trimEdges(strings.ReplaceAll(f, "()", ""))
		quoted := len(t) > 2 && t[0] == '`' && t[len(t)-1] == '`'
		t = trimEdges(strings.Trim(t, "`"))
		if t == "" {
			continue
		}
		out = append(out, token{text: t, lower: strings.ToLower(t), quoted: quoted, call: call})
	}
	return out
}

// trimEdges removes punctuation and brackets around a word, and a sentence-ending dot.
func trimEdges(t string) string {
	const edge = `,;:!?"'()[]{}<>`
	for {
		u := strings.Trim(strings.TrimRight(strings.Trim(t, edge), "."), edge)
		if u == t {
			return t
		}
		t = u
	}
}

// sourceExtensions are file extensions that make a word a file name. A fixed list keeps prose
// ("e.g", "v1.2", "obj.method") from being mistaken for files.
var sourceExtensions = setOf(
	"go", "mod", "sum", "rs", "py", "pyi", "js", "mjs", "cjs", "ts", "tsx", "jsx", "java", "kt",
	"kts", "scala", "c", "h", "cc", "cpp", "hpp", "cs", "rb", "php", "swift", "m", "mm", "sh",
	"bash", "zsh", "fish", "ps1", "md", "rst", "txt", "json", "jsonl", "yaml", "yml", "toml",
	"xml", "html", "htm", "css", "scss", "sql", "proto", "lock", "cfg", "ini", "env", "conf",
	"gradle", "vue", "svelte", "lua", "r", "dart", "ex", "exs", "erl", "hs", "ml", "tf", "csv",
	"ipynb", "dockerfile", "mk", "cmake", "zig", "nix",
)

// frameworkNames end in ".js" but name a framework, not a file.
var frameworkNames = setOf("node.js", "next.js", "nuxt.js", "vue.js", "three.js", "chart.js", "react.js", "d3.js")

// slashWords are prose pairs written with a slash, not paths.
var slashWords = setOf("and/or", "i/o", "yes/no", "input/output", "read/write", "true/false", "on/off", "pros/cons", "either/or")

// pathKind says whether t names a file ("file"), a directory ("directory") or neither ("").
func pathKind(t string) string {
	if t == "" || strings.Contains(t, "://") || strings.ContainsAny(t, " \t*?") {
		return ""
	}
	lower := strings.ToLower(t)
	base := lower
	if i := strings.LastIndexByte(lower, '/'); i >= 0 {
		base = lower[i+1:]
	}
	if dot := strings.LastIndexByte(base, '.'); dot > 0 && dot < len(base)-1 {
		if _, ok := sourceExtensions[base[dot+1:]]; ok {
			if _, framework := frameworkNames[lower]; !framework {
				return "file"
			}
		}
	}
	switch base {
	case "makefile", "dockerfile", "license", "readme", "go.mod", "cargo.toml":
		return "file"
	}
	if _, prose := slashWords[lower]; prose {
		return ""
	}
	if strings.Contains(strings.Trim(t, "/"), "/") || (len(t) > 1 && (t[0] == '/' || t[len(t)-1] == '/')) {
		return "directory"
	}
	return ""
}
