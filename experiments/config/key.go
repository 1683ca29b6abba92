package config

// A run's key (Config.Key): a fixed-size type, or a String or tuple key
// for ClickHouse's COMPLEX_KEY_ layouts, generated from the lab's keys
// (what a key is, and what it costs, is package dict's; the SQL that
// derives it is package chdriver's).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
)

// keyAllowed is what Config.Key may be.
func keyAllowed() string {
	return fmt.Sprintf("%s; in the ch_complex_key_ layouts also String (8 to 32 bytes), String(16) or String(8..32) "+
		"(%d or more bytes when no fixed-size part carries the keys), or a Tuple of up to %d of them, e.g. Tuple(String, UInt64)",
		strings.Join(core.TypeNames(), ", "), dict.KeyCarrierMinLen, dict.MaxKeyParts)
}

// complexKeyLayouts are the layouts that hold a String or tuple key.
func complexKeyLayouts() []string {
	var names []string
	for _, d := range dict.ClickHouseDictionaries() {
		if d.ComplexKey {
			names = append(names, d.Name)
		}
	}
	return names
}

// dictKey is c's key (after WithDefaults), parsed.
func (c Config) dictKey() (dict.Key, error) {
	k, problem, ok := dict.ParseKey(c.Key)
	switch {
	case !ok:
		return k, TypeRefusal("key", c.Key, keyAllowed())
	case problem != "":
		return k, fault.New("key", c.Key, problem, keyAllowed())
	}
	return k, nil
}

// validateKey checks Key (k, parsed): a fixed-size type, or a String or tuple key
// where every layout holds one (ClickHouse's COMPLEX_KEY_ layouts), from
// generated keys, its columns not named as an attribute is.
func (c Config) validateKey(k dict.Key) error {
	if !k.Derived() {
		return nil
	}
	for _, name := range c.Layouts {
		if d, ok := dict.FindClickHouseDictionary(name); !ok || !d.ComplexKey {
			return fault.New("key", c.Key, "layout "+name+" cannot hold a String or tuple key (only ClickHouse's COMPLEX_KEY_ layouts do)",
				"only {layouts} "+strings.Join(complexKeyLayouts(), ", ")+", or a fixed-size type ("+strings.Join(core.TypeNames(), ", ")+")")
		}
	}
	if c.Source != "" {
		return fault.New("key", c.Key, "is generated from the lab's keys, and a file's keys are read as a fixed-size type",
			"a fixed-size type with {source}; a String or tuple key with {keys}")
	}
	names, _ := AttributeNames(c.Attributes)
	for i, n := range names {
		if slices.Contains(k.ColumnNames(), n) {
			return fault.New(attributeField(i), c.Attributes[i], n+" is a column of the key "+k.String(), "another name")
		}
	}
	return nil
}
