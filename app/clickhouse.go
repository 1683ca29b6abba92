//go:build !js

package app

import (
	"context"
	"errors"
	"strings"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/server"
)

// ClickHouseForm is the "Your ClickHouse" tab's form as typed: a server to
// inspect (experiments/server). The password is the form's (a window has
// no environment to take it from); it is never returned, saved or logged.
type ClickHouseForm struct {
	URL      string `json:"url"` // clickhouse://host:9000, http://host:8123, https://host:8443
	User     string `json:"user"`
	Database string `json:"database"`
	Password string `json:"password"`
	CAFile   string `json:"ca_file"`
	Cluster  string `json:"cluster"`   // every replica of this cluster
	NoSample bool   `json:"no_sample"` // no query of a source's String lengths
}

// InspectClickHouse inspects the server of f: every dictionary beside
// packlab's model, the findings and the advice (server.Inspect). An error
// names the form's field ("url", "cluster", "ca_file") or "clickhouse".
func (l *Lab) InspectClickHouse(f ClickHouseForm) (*server.Inspection, error) {
	ins, err := server.Inspect(context.Background(), server.Settings{URL: strings.TrimSpace(f.URL), User: f.User, Database: f.Database, Password: f.Password, CAFile: f.CAFile},
		server.Options{Cluster: strings.TrimSpace(f.Cluster), NoSample: f.NoSample})
	if err != nil {
		return nil, clickHouseError(err)
	}
	return ins, nil
}

func clickHouseError(err error) *Error {
	var fe *experiments.FieldError
	if errors.As(err, &fe) {
		field := map[string]string{"--clickhouse": "url", "--cluster": "cluster", "--ca-file": "ca_file"}[fe.Flag]
		if field == "" {
			field = "clickhouse"
		}
		return &Error{Field: field, Message: strings.TrimPrefix(fe.Error(), fe.Flag+" ")}
	}
	return &Error{Field: "clickhouse", Message: err.Error()}
}
