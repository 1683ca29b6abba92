package config

// Attributes as a run's config gives them (Attributes, Value): their
// parsing, names and checks (the SQL that writes ClickHouse's source of
// them is package chdriver's). What an attribute is, and what it costs, is
// package dict's.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
)

// attributeField is the field of attribute i (0-based): "attributes[i]".
func attributeField(i int) string { return "attributes[" + strconv.Itoa(i) + "]" }

// attributeAllowed is what an attribute's type may be.
func attributeAllowed() string {
	return strings.Join(core.TypeNames(), ", ") + ", String (values of 8 to 32 bytes), String(16) or String(4..16), and Nullable(T) of any of them"
}

// parseAttributeType reads one attribute's type: a fixed-size type, or
// String with the lengths of its values, or Nullable(T) of either; an
// error names field.
func parseAttributeType(field, s, typ string) (dict.Attribute, error) {
	a, problem, allowed, ok := attributeType(typ)
	switch {
	case !ok:
		return dict.Attribute{}, fault.New(field, s, "unknown type", attributeAllowed())
	case problem != "":
		return dict.Attribute{}, fault.New(field, s, problem, allowed)
	}
	return a, nil
}

// attributeType reads typ as an attribute's type. ok is false when typ
// names no type an attribute may have; problem says what is wrong with
// one it names (a String's lengths, a Nullable's parentheses or a Nullable
// in it), allowed what that type allows.
func attributeType(typ string) (a dict.Attribute, problem, allowed string, ok bool) {
	const nullable = "Nullable("
	// Any case, as the types inside it and String are (nullable(uint16)).
	if len(typ) >= len(nullable) && strings.EqualFold(typ[:len(nullable)], nullable) {
		if !strings.HasSuffix(typ, ")") {
			return dict.Attribute{}, "Nullable( without its closing parenthesis", "Nullable(T), e.g. Nullable(UInt32)", true
		}
		a, problem, allowed, ok := attributeType(strings.TrimSpace(typ[len(nullable) : len(typ)-1]))
		switch {
		case !ok || problem != "":
			return dict.Attribute{}, problem, allowed, ok
		case a.Nullable:
			return dict.Attribute{}, "a Nullable in a Nullable", "Nullable(T) of a type that is not Nullable, e.g. Nullable(UInt32)", true
		}
		a.Nullable = true
		return a, "", "", true
	}
	if lo, hi, problem, ok := dict.ParseString(typ); ok {
		if problem != "" {
			return dict.Attribute{}, problem, dict.StringAllowed, true
		}
		return dict.Attribute{Type: dict.StringRef, MinLen: lo, MaxLen: hi}, "", "", true
	}
	t, err := core.ParseType(typ)
	if err != nil {
		return dict.Attribute{}, "", "", false
	}
	return dict.Attribute{Type: t}, "", "", true
}

// fixedType reads s, given for field ("key" or "value"), once as a type
// an attribute may have, and is it when it is a fixed-size one. Else it
// refuses s: an unknown type (allowed: allowed), a type an attribute may
// have whose parameters are wrong, which the refusal names
// (String(40..20): its lengths), or a type only an attribute may have,
// which the refusal says: a Nullable key, a String or Nullable value (the
// value is the first attribute, of a fixed-size type).
func fixedType(field, s, allowed string) (core.Type, error) {
	a, problem, typeAllowed, ok := attributeType(strings.TrimSpace(s))
	switch {
	case ok && problem == "" && a.Fixed():
		return a.Type, nil
	case ok && problem != "":
		return core.Type{}, fault.New(field, s, problem, typeAllowed)
	case ok && field == "key" && a.Nullable:
		return core.Type{}, fault.New(field, s, "a key cannot be Nullable (Nullable(T) is for attributes, e.g. {attributes} UInt16,Nullable(UInt32))", allowed)
	case ok && field == "value":
		return core.Type{}, fault.New(field, s, "a String or Nullable value is an attribute after a fixed-size first one, e.g. {attributes} UInt16,String", allowed)
	}
	return core.Type{}, fault.New(field, s, "unknown type", allowed)
}

// TypeRefusal refuses s, given for field ("key" or "value") and not a
// fixed-size type, as fixedType does.
func TypeRefusal(field, s, allowed string) error {
	if _, err := fixedType(field, s, allowed); err != nil {
		return err
	}
	return fault.New(field, s, "unknown type", allowed)
}

// attributes resolves c.Attributes (after WithDefaults): at least one,
// the first the run's value type, which is a fixed-size one.
func (c Config) attributes() ([]dict.Attribute, error) { return c.attributesOf(true) }

// attributesOf is attributes, the first of a fixed-size type only where
// fixedFirst (a run's value; a plan's dictionary may begin with a String).
func (c Config) attributesOf(fixedFirst bool) ([]dict.Attribute, error) {
	list := c.Attributes
	if len(list) == 0 {
		list = []string{c.Value}
	}
	if len(list) > dict.MaxAttributes {
		return nil, &fault.FieldError{Field: "attributes", Problem: fmt.Sprintf("%d attributes", len(list)), Allowed: fmt.Sprintf("1 to %d", dict.MaxAttributes), Switch: true}
	}
	attrs := make([]dict.Attribute, len(list))
	for i, s := range list {
		name, typ := SplitAttribute(s)
		if typ == "" {
			problem := "attribute " + strconv.Itoa(i+1) + " is empty"
			if name != "" {
				problem = "attribute " + strconv.Itoa(i+1) + " (" + name + ") has no type after its name" // "a:"
			}
			return nil, fault.New("attributes", strings.Join(c.Attributes, ","), problem, "types, comma-separated, e.g. UInt16,UInt32,Float64")
		}
		a, err := parseAttributeType(attributeField(i), s, typ)
		if err != nil {
			return nil, err
		}
		if fixedFirst && i == 0 && (a.IsString() || a.Nullable) {
			return nil, fault.New(attributeField(i), s, "the first attribute is the value the lab sends and checks, of a fixed-size type",
				"a fixed-size type first, a String or Nullable after it, e.g. UInt16,String")
		}
		attrs[i] = a
	}
	return attrs, nil
}

// SplitAttribute is an Attributes entry's name ("" when none is given)
// and type: "country:UInt16", or "UInt16".
func SplitAttribute(s string) (name, typ string) {
	name, typ, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return "", name
	}
	return strings.TrimSpace(name), strings.TrimSpace(typ)
}

// AttributeNames is each attribute's column name: the one given
// ("country:UInt16"), else value for the first and a2, a3, ... for the
// others. A name that is not an identifier, is the key's, or is given
// twice is refused.
func AttributeNames(list []string) ([]string, error) {
	if len(list) == 0 {
		return []string{dict.AttributeName(0)}, nil
	}
	names := make([]string, len(list))
	seen := map[string]int{}
	for i, s := range list {
		name, _ := SplitAttribute(s)
		if name == "" && strings.Contains(s, ":") { // ":UInt16" named nothing, not the default
			return nil, fault.New(attributeField(i), s, "no name before the :", "a name, e.g. country:UInt16, or the type alone")
		}
		if name == "" {
			name = dict.AttributeName(i)
		} else if !dict.IsAttributeName(name) {
			return nil, fault.New(attributeField(i), s, "not a column name", "a letter or _ then letters, digits or _, at most 64, e.g. country:UInt16")
		}
		if name == "key" {
			return nil, fault.New(attributeField(i), s, "key is the key's column", "another name")
		}
		if j, ok := seen[name]; ok { // case-sensitive, as ClickHouse's names
			return nil, fault.New("attributes", strings.Join(list, ","), fmt.Sprintf("attributes %d and %d are both named %s", j+1, i+1, name), "each name once")
		}
		seen[name] = i
		names[i] = name
	}
	return names, nil
}

// resolveAttributes checks Attributes against the value (value, or
// valueErr, its refusal, when Value names no fixed-size type): a list of types whose
// first is the value. It returns the attributes and their names, nil when
// none are given (Value alone, checked as such).
func (c Config) resolveAttributes(value core.Type, valueErr error) ([]dict.Attribute, []string, error) {
	if len(c.Attributes) == 0 {
		return nil, nil, nil
	}
	types, err := c.attributes()
	if err != nil {
		return nil, nil, err
	}
	names, err := AttributeNames(c.Attributes)
	if err != nil {
		return nil, nil, err
	}
	if valueErr != nil || value.Name != types[0].Name {
		return nil, nil, fault.New("value", c.Value, "the value is the first of {attributes} ("+types[0].Name+")", "{attributes} alone, or {value} alone")
	}
	return types, names, nil
}

// checkAttributeLayouts checks the attributes (attrs) against the layouts
// (c.Layouts resolved): a row layout's rules, and more than one attribute
// only where every layout is ClickHouse's or a row layout.
func (c Config) checkAttributeLayouts(attrs []dict.Attribute, layouts []Layout) error {
	for i, l := range layouts {
		if l.Row {
			if err := c.checkRow(c.Layouts[i], attrs); err != nil {
				return err
			}
		}
	}
	if len(attrs) == 1 {
		return nil
	}
	for i, l := range layouts {
		if l.Row {
			continue
		}
		if _, ch := dict.FindClickHouseDictionary(c.Layouts[i]); !ch {
			return fault.New("attributes", strings.Join(c.Attributes, ","), "layout "+c.Layouts[i]+" holds one value (several attributes are ClickHouse's layouts and the row layouts)",
				"ch_ layouts or rows, e.g. {layouts} ch_hashed,ch_sparse_hashed,ch_hashed_array,packed_row,compact_row")
		}
	}
	return nil
}

// AttributesText is a result's attributes as the table shows them:
// "UInt16,UInt32,Float64", or "country:UInt16,plan:UInt32" when names were
// given (the type names ClickHouse's, whatever case they were given in).
func AttributesText(given []string, types []dict.Attribute) string {
	parts := dict.AttributesList(types)
	named := slices.ContainsFunc(given, func(s string) bool { n, _ := SplitAttribute(s); return n != "" })
	if names, err := AttributeNames(given); err == nil && named {
		for i := range parts {
			parts[i] = names[i] + ":" + parts[i]
		}
	}
	return strings.Join(parts, ",")
}

// ParseDictionaryAttributes resolves the attributes of a dictionary a
// plan is for, which, unlike a run's, may begin with a String or a
// Nullable (an id → name dictionary): at least one, their names each once.
func ParseDictionaryAttributes(list []string) ([]dict.Attribute, error) {
	if len(list) == 0 {
		return nil, fault.New("attributes", "", "no attributes", "types, comma-separated, e.g. String or UInt16,String")
	}
	attrs, err := Config{Attributes: list}.attributesOf(false)
	if err != nil {
		return nil, err
	}
	if _, err := AttributeNames(list); err != nil {
		return nil, err
	}
	return attrs, nil
}

// DictionaryTypes are a plan's value and attributes, resolved
// (ParseDictionaryTypes).
type DictionaryTypes struct {
	Value core.Type        // the value: the first attribute's type, or its cell's (a String's reference)
	Attrs []dict.Attribute // the attributes, the first the value
	// Given is the attributes as given: the list, or the value as the one
	// attribute when it is a String or a Nullable.
	Given []string
	Names []string // the attributes' column names
}

// ParseDictionaryTypes resolves a plan's value and its attributes (list;
// empty: the value alone): as a run's config is checked, or, as no run's
// value is, with a String or a Nullable first (an id → name dictionary),
// the value then its cell's type. An error of the run's rules is the
// attributes' where a list is given ("--attributes String" was "--value
// String: unknown type").
func ParseDictionaryTypes(value string, list []string) (DictionaryTypes, error) {
	t := DictionaryTypes{Given: list}
	v, valueErr := fixedType("value", value, strings.Join(core.TypeNames(), ", ")+"; or a String or Nullable(T), as the dictionary's one attribute")
	attrs, runErr := Config{Value: value, Attributes: list}.runAttributes(v, valueErr)
	one := list // a value alone is the one attribute
	if len(one) == 0 {
		one = []string{value}
	}
	if d, err := ParseDictionaryAttributes(one); runErr != nil && err == nil && !d[0].Fixed() && firstType(value, one) {
		// A String or a Nullable first, which no run's value is:
		// ClickHouse's layouts and packlab's rows hold it, the value its
		// cell's type.
		t.Value, t.Attrs, t.Given = d[0].Type, d, one
	} else {
		if runErr != nil && len(list) > 0 {
			return t, runErr
		}
		if valueErr != nil {
			return t, valueErr
		}
		if runErr != nil {
			return t, runErr
		}
		t.Value, t.Attrs = v, attrs
	}
	t.Names, _ = AttributeNames(list)
	return t, nil
}

// firstType reports whether value is the type of the first of list, as
// a default value is taken from the attributes.
func firstType(value string, list []string) bool {
	_, first := SplitAttribute(list[0])
	return strings.EqualFold(strings.TrimSpace(value), first)
}

// ParseAttributes checks an Attributes list against its Value, as a
// run's config is checked, and resolves its types; an empty list is the
// value alone.
func ParseAttributes(value string, list []string) ([]dict.Attribute, error) {
	v, valueErr := fixedType("value", value, strings.Join(core.TypeNames(), ", "))
	return Config{Value: value, Attributes: list}.runAttributes(v, valueErr)
}

// runAttributes is ParseAttributes of c's Value (value, or valueErr) and
// Attributes.
func (c Config) runAttributes(value core.Type, valueErr error) ([]dict.Attribute, error) {
	attrs, _, err := c.resolveAttributes(value, valueErr)
	if err != nil || attrs != nil {
		return attrs, err
	}
	return c.attributes() // the value alone
}
