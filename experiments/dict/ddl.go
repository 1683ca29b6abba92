package dict

import "strings"

// A CREATE DICTIONARY statement as system.tables.create_table_query shows
// it, read clause by clause: its SOURCE, LAYOUT, LIFETIME, RANGE and
// SETTINGS clauses stand after the column list at the top level, outside
// quotes; the same words inside a COMMENT, a column's DEFAULT or a source
// QUERY are text, not clauses. ClickHouse 26.7 writes
//
//	CREATE DICTIONARY db.d (`k` UInt64, ...) PRIMARY KEY k SOURCE(CLICKHOUSE(TABLE 'src'))
//	LIFETIME(MIN 0 MAX 0) LAYOUT(SPARSE_HASHED(SHARDS 4)) COMMENT 'was LAYOUT(FLAT()) before'
//
// (one line), and a search of the text for "LAYOUT(" found the comment's.

// Span is a clause's place in the statement: all of it from its word to
// its closing parenthesis, and what its parentheses hold.
type Span struct{ Start, End, InnerStart, InnerEnd int }

// Clause finds the top-level clause word(...) of a CREATE DICTIONARY.
func Clause(ddl, word string) (Span, bool) {
	depth, afterColumns := 0, false
	for i := 0; i < len(ddl); {
		switch c := ddl[i]; {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(ddl, i)
		case c == '(':
			depth++
			i++
		case c == ')':
			depth--
			if depth == 0 {
				afterColumns = true
			}
			i++
		case isWordByte(c):
			j := i
			for j < len(ddl) && isWordByte(ddl[j]) {
				j++
			}
			if depth == 0 && afterColumns && (i == 0 || ddl[i-1] != '.') && strings.EqualFold(ddl[i:j], word) {
				k := j
				for k < len(ddl) && isSpace(ddl[k]) {
					k++
				}
				if k < len(ddl) && ddl[k] == '(' {
					if end, ok := closing(ddl, k); ok {
						return Span{i, end + 1, k + 1, end}, true
					}
				}
			}
			i = j
		default:
			i++
		}
	}
	return Span{}, false
}

// ClauseCall reads the top-level clause word(NAME(params)) of a CREATE
// DICTIONARY (LAYOUT(HASHED(SHARDS 4)), SOURCE(CLICKHOUSE(TABLE 't'))): the
// clause's place (Clause) and its call (Call); false where there is no
// such clause or it holds no call.
func ClauseCall(ddl, word string) (sp Span, name string, params []string, ok bool) {
	if sp, ok = Clause(ddl, word); !ok {
		return Span{}, "", nil, false
	}
	name, params, ok = Call(ddl[sp.InnerStart:sp.InnerEnd])
	return sp, name, params, ok
}

// Call reads NAME(params) (a layout or a source) into its upper-case name
// and its parameters' words, quoted strings unquoted; a NAME alone too, as
// ClickHouse takes and keeps it (LAYOUT(HASHED), LAYOUT(REGEXP_TREE): it
// said no LAYOUT clause could be read, and took REGEXPTREE from the type).
func Call(s string) (name string, params []string, ok bool) {
	s = strings.TrimSpace(s)
	j := 0
	for j < len(s) && isWordByte(s[j]) {
		j++
	}
	if j > 0 && j == len(s) {
		return strings.ToUpper(s), nil, true
	}
	open := j
	for open < len(s) && isSpace(s[open]) {
		open++
	}
	if j == 0 || open >= len(s) || s[open] != '(' {
		return "", nil, false
	}
	end, found := closing(s, open)
	if !found || strings.TrimSpace(s[end+1:]) != "" {
		return "", nil, false
	}
	return strings.ToUpper(s[:j]), sqlWords(s[open+1 : end]), true
}

// sqlWords splits a clause's parameters into words: a quoted string is one
// word, unquoted ('we\'ird' -> we'ird); parentheses stand alone.
func sqlWords(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case isSpace(c) || c == ',':
			i++
		case c == '\'' || c == '"' || c == '`':
			j := skipQuoted(s, i)
			out = append(out, unquote(s[i:j]))
			i = j
		case c == '(' || c == ')':
			out = append(out, s[i:i+1])
			i++
		default:
			j := i
			for j < len(s) && !isSpace(s[j]) && !strings.ContainsRune("'\"`(),", rune(s[j])) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out
}

// ColumnExpressions is the EXPRESSION of each column of a CREATE
// DICTIONARY that has one ("s2 String EXPRESSION 'concat(s, s)'": the
// source query computes s2, the table has no such column), by name. It
// reads the column list, the statement's first parentheses, definition by
// definition (top-level commas), a quoted word text, not a keyword.
func ColumnExpressions(ddl string) map[string]string {
	open, end, ok := ColumnList(ddl)
	if !ok {
		return nil
	}
	out := map[string]string{}
	// One column definition's tokens: its words and quoted texts.
	var toks []string
	flush := func() {
		if len(toks) == 0 {
			return
		}
		for k := 1; k+1 < len(toks); k++ {
			if strings.EqualFold(toks[k], "EXPRESSION") && toks[k+1][0] == '\'' {
				name := toks[0]
				if c := name[0]; c == '`' || c == '"' {
					name = unquote(name)
				}
				out[name] = unquote(toks[k+1])
			}
		}
		toks = toks[:0]
	}
	depth := 0
	for i := open + 1; i < end; {
		switch c := ddl[i]; {
		case c == '\'' || c == '"' || c == '`':
			j := skipQuoted(ddl, i)
			if depth == 0 {
				toks = append(toks, ddl[i:j])
			}
			i = j
		case c == '(':
			depth++
			i++
		case c == ')':
			depth--
			i++
		case c == ',' && depth == 0:
			flush()
			i++
		case isWordByte(c):
			j := i
			for j < end && isWordByte(ddl[j]) {
				j++
			}
			if depth == 0 {
				toks = append(toks, ddl[i:j])
			}
			i = j
		default:
			i++
		}
	}
	flush()
	return out
}

// ColumnList is the place of the statement's column list: its first
// parentheses outside quoted text (the dictionary's name may be quoted and
// hold one), open and end the indexes of the two.
func ColumnList(ddl string) (open, end int, ok bool) {
	for i := 0; i < len(ddl); {
		switch ddl[i] {
		case '\'', '"', '`':
			i = skipQuoted(ddl, i)
		case '(':
			end, ok := closing(ddl, i)
			return i, end, ok
		default:
			i++
		}
	}
	return 0, 0, false
}

// closing is the index of the parenthesis that closes the one at open,
// quoted text skipped.
func closing(s string, open int) (int, bool) {
	depth := 0
	for i := open; i < len(s); {
		switch s[i] {
		case '\'', '"', '`':
			i = skipQuoted(s, i)
			continue
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i, true
			}
		}
		i++
	}
	return 0, false
}

// skipQuoted is the index after the quoted text that starts at i: ClickHouse
// escapes a quote inside with a backslash, and reads two in a row as one.
func skipQuoted(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// unquote is quoted text's content, its escapes undone.
func unquote(s string) string {
	if len(s) < 2 {
		return s
	}
	q := s[0]
	s = strings.TrimSuffix(s[1:], string(q))
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
		case s[i] == q && i+1 < len(s) && s[i+1] == q:
			b.WriteByte(q)
			i++
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SplitTableName reads DATABASE.TABLE or TABLE ("" for the database),
// either part in backquotes when it holds a dot (`my.db`.t; a doubled
// backquote inside stands for one).
func SplitTableName(s string) (db, table string, ok bool) {
	var parts []string
	for s != "" {
		var part string
		if rest, quoted := strings.CutPrefix(s, "`"); quoted {
			var b strings.Builder
			for {
				i := strings.IndexByte(rest, '`')
				if i < 0 {
					return "", "", false // no closing backquote
				}
				b.WriteString(rest[:i])
				rest = rest[i+1:]
				if !strings.HasPrefix(rest, "`") {
					break
				}
				b.WriteByte('`') // a doubled backquote
				rest = rest[1:]
			}
			part, s = b.String(), rest
		} else {
			i := strings.IndexByte(s, '.')
			if i < 0 {
				i = len(s)
			}
			part, s = s[:i], s[i:]
		}
		parts = append(parts, part)
		if s == "" {
			break
		}
		if s[0] != '.' || len(parts) == 2 {
			return "", "", false
		}
		s = s[1:]
		if s == "" {
			return "", "", false // "db."
		}
	}
	switch len(parts) {
	case 1:
		if parts[0] != "" {
			return "", parts[0], true
		}
	case 2:
		if parts[0] != "" && parts[1] != "" {
			return parts[0], parts[1], true
		}
	}
	return "", "", false
}

// MeanLengthSQL is a String column's (or expression's) mean length over
// its values, as dict.FileColumn's MeanLen: a NULL counted as a length of
// 0 took a third off a third-NULL column's.
func MeanLengthSQL(q string) string {
	return "avgOrDefaultIf(length(assumeNotNull(" + q + ")), isNotNull(" + q + "))"
}

// NullsSQL is how many of a column's rows are NULL.
func NullsSQL(q string) string { return "countIf(isNull(" + q + "))" }
