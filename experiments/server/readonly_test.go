//go:build !js

package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/server/servertest"
)

// TestReadOnlyUser: a user with readonly = 1 (a monitoring account) may
// not set a setting, and every query of a cluster's inspection set
// skip_unavailable_shards: it failed whole ("Cannot modify
// 'skip_unavailable_shards' setting in readonly mode"). It inspects now,
// saying what it gives up; a verification, which makes a database, is
// refused before anything is made. The test servers define no users: the
// session's readonly = 1 stands for one (sessionSettings).
func TestReadOnlyUser(t *testing.T) {
	nodes := servertest.StartCluster(t, "lab", 2)
	for _, n := range nodes {
		n.Table(t, "src", "s String", "number, repeat('r', 8)", 10000)
		n.Dictionary(t, "d", "src", "s String", "LIFETIME(0) LAYOUT(HASHED())")
	}
	sessionSettings = clickhouse.Settings{"readonly": 1}
	defer func() { sessionSettings = nil }()
	for _, url := range []string{nodes[0].NativeURL(), nodes[0].HTTPURL()} {
		ins, err := Inspect(context.Background(), Settings{URL: url}, Options{Cluster: "lab"})
		if err != nil {
			t.Fatalf("%s: a read-only user's inspection: %v", url, err)
		}
		if len(ins.Dictionaries) != 2 || !ins.Dictionaries[0].Modelled || !ins.Dictionaries[1].Modelled ||
			!strings.Contains(strings.Join(ins.Findings, " "), "the user is read-only (readonly = 1)") {
			t.Errorf("%s: %d dictionaries (modelled %v), findings %q", url, len(ins.Dictionaries), len(ins.Dictionaries) == 2 && ins.Dictionaries[0].Modelled, ins.Findings)
		}
		_, err = VerifyAdvice(context.Background(), Settings{URL: url}, ins, "d", nil)
		var ie *fault.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "nothing was made") {
			t.Errorf("%s: a read-only user's verification: %v, want a refusal before anything is made", url, err)
		}
	}
}
