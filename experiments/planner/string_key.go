package planner

import (
	"math"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
)

// parseKey reads r's key: a fixed-size type, or a String (String,
// String(16), String(8..32): its lengths in bytes; over a table, the
// table's mean length), which ClickHouse's COMPLEX_KEY_ layouts hold and
// no table of core does.
func parseKey(r PlanRequest) (dict.KeyPart, error) {
	part, problem, ok := dict.ParseKeyPart(r.Key)
	switch {
	case ok && problem == "" && !part.IsString():
		return part, nil
	case ok && problem != "":
		return part, fault.New("key", r.Key, problem, dict.StringAllowed)
	case !ok:
		return part, config.TypeRefusal("key", r.Key, strings.Join(core.TypeNames(), ", ")+"; or String, String(16) or String(8..32) (its lengths in bytes)")
	case r.MaxKey != 0:
		return part, fault.New("max_key", strconv.FormatInt(r.MaxKey, 10), "FLAT indexes its arrays by an integer key, not a String", "{max_key} with an integer key of at most 8 bytes")
	case r.For == EngineGo:
		return part, fault.New("for", r.For, "packlab's core holds no String key", "clickhouse (its COMPLEX_KEY_ layouts), or empty")
	}
	return part, nil
}

// keyType is the key's type as ClickHouse's dictionary and the plan's
// setups name it.
func (p ParsedRequest) keyType() string {
	if p.stringKey {
		return "String"
	}
	return p.key.Name
}

// chKey is the key as dict's COMPLEX_KEY_ models take it: a String with
// its lengths and, over a table, its mean length.
func (p ParsedRequest) chKey() dict.PlanKey {
	if !p.stringKey {
		return dict.PlanKey{Type: p.key.Name}
	}
	k := dict.PlanKey{Type: p.Key}
	if p.From != nil {
		k.MeanLen = p.From.KeyMeanLen
	}
	return k
}

// labKey is the key of the lab's runs that give the plan its speeds: the
// key's type, or a String key's lengths (over a table its mean, rounded),
// at least dict.KeyCarrierMinLen bytes, which carry the lab's keys.
func (p ParsedRequest) labKey() string {
	if !p.stringKey {
		return p.key.Name
	}
	lo, hi := p.keyPart.MinLen, p.keyPart.MaxLen
	if p.From != nil && p.From.KeyMeanLen > 0 {
		lo = int(math.Round(p.From.KeyMeanLen))
		hi = lo
	}
	return dict.Attribute{Type: dict.StringRef, MinLen: max(lo, dict.KeyCarrierMinLen), MaxLen: max(hi, dict.KeyCarrierMinLen)}.String()
}
