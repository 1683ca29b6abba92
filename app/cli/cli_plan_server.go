package cli

// packlab plan --clickhouse URL: a plan for a dictionary over a table on a
// user's server (--from, usecase.PlanFrom), and the plan's ClickHouse answer
// built on that server (--verify, usecase.VerifyPlan), beside the plan's
// model.

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/server/table"
	"github.com/packlab/packlab/experiments/text"
	"github.com/packlab/packlab/experiments/usecase"
)

// planFrom plans the dictionary over a's --from table on --clickhouse,
// saying first what it read of the table.
func planFrom(ctx context.Context, a *planArgs, ask usecase.PlanAsk, stderr io.Writer) (usecase.PlanAnswer, error) {
	got, err := usecase.PlanFrom(ctx, usecase.PlanFromAsk{Settings: a.settings(), Table: a.from, Plan: ask, Read: func(t *table.Table) {
		fmt.Fprintln(stderr, "packlab: read", text.Terminal(t.Summary()))
	}})
	return got.PlanAnswer, err
}

func verifyPlanOnServer(ctx context.Context, plan planner.Plan, a *planArgs, stdout, stderr io.Writer) error {
	s := a.settings()
	if _, err := s.ParseURL(); err != nil {
		return err
	}
	where := text.Terminal(a.clickhouse)
	if a.cluster != "" {
		where += ", every replica of " + text.Terminal(a.cluster)
	}
	v, err := usecase.VerifyPlan(ctx, usecase.VerifyAsk{Plan: plan, Server: &s, Cluster: a.cluster, Starting: func(v usecase.Verifying) {
		fmt.Fprintf(stderr, "packlab: verifying on ClickHouse at %s: %s at %s rows\n", where, v.Clause, text.Rows(v.Rows))
	}})
	if err != nil {
		return fmt.Errorf("--verify: %w", err)
	}
	printVerified(v, a.format, stdout, stderr)
	return nil
}

// settings is the server of --clickhouse, the password from
// $CLICKHOUSE_PASSWORD.
func (a *planArgs) settings() server.Settings {
	return server.Settings{URL: a.clickhouse, Password: os.Getenv(server.PasswordEnv), QueryTimeout: a.queryTimeout, ConnectTimeout: a.connectTimeout}
}
