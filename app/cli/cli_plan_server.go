package cli

// packlab plan --verify --clickhouse URL: the plan's ClickHouse answer built
// on a user's server (experiments/server.Verify), beside the plan's model.

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/text"
)

func verifyPlanOnServer(ctx context.Context, plan planner.Plan, url, cluster, format string, stdout, stderr io.Writer) error {
	cfg, _, ok := planner.VerifyConfig(plan)
	if !ok {
		return fmt.Errorf("--verify: no setup of this plan is one ClickHouse builds (%s/%s)", plan.Request.Key, plan.Request.Value)
	}
	d, ok := dict.FindClickHouseDictionary(cfg.Layouts[0])
	if !ok {
		return fmt.Errorf("--verify: %s is not a ClickHouse layout", cfg.Layouts[0])
	}
	attrs, err := config.ParseAttributes(plan.Request.Value, plan.Request.Attributes)
	if err != nil {
		return err
	}
	s := server.Settings{URL: url, Password: os.Getenv(server.PasswordEnv)}
	if _, err := s.ParseURL(); err != nil {
		return err
	}
	where := text.Terminal(url)
	if cluster != "" {
		where += ", every replica of " + text.Terminal(cluster)
	}
	fmt.Fprintf(stderr, "packlab: verifying on ClickHouse at %s: %s at %s rows\n", where, d.Clause(cfg.Shards, cfg.MaxLoadFactor), text.Rows(cfg.Rows))
	req := server.VerifyRequest{Layout: d.Layout, Shards: cfg.Shards, MaxLoadFactor: cfg.MaxLoadFactor, Attributes: attrs, Rows: cfg.Rows}
	var vs []*server.Verification
	if cluster != "" {
		vs, err = server.VerifyCluster(ctx, s, cluster, req)
	} else {
		var v *server.Verification
		if v, err = server.Verify(ctx, s, req); v != nil {
			vs = append(vs, v)
		}
	}
	if err != nil {
		return fmt.Errorf("--verify: %w", err)
	}
	out, prefix := stdout, ""
	if format == "csv" || format == "json" {
		out, prefix = stderr, "packlab: "
	} else {
		fmt.Fprintln(out)
	}
	for _, v := range vs {
		for _, line := range v.Lines() {
			fmt.Fprintln(out, prefix+text.Terminal(line))
		}
	}
	return nil
}
