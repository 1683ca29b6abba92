//go:build !js

package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/usecase"
)

// timeoutField reads a timeout field: "" is 0 (the default).
func timeoutField(field, v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || f > 3600 {
		return 0, &Error{Field: field, Message: fmt.Sprintf("%q: not a timeout (allowed: seconds, more than 0 and at most 3600)", v)}
	}
	return time.Duration(f * float64(time.Second)), nil
}

// settings is the server f names; an error names the timeout's field.
func (f ClickHouseForm) settings() (server.Settings, error) {
	connect, err := timeoutField("connect_timeout", f.ConnectTimeout)
	if err != nil {
		return server.Settings{}, err
	}
	query, err := timeoutField("query_timeout", f.QueryTimeout)
	if err != nil {
		return server.Settings{}, err
	}
	return server.Settings{URL: strings.TrimSpace(f.URL), User: strings.TrimSpace(f.User), Database: strings.TrimSpace(f.Database),
		Password: f.Password, CAFile: strings.TrimSpace(f.CAFile), ConnectTimeout: connect, QueryTimeout: query}, nil
}

// InspectClickHouse inspects the server of f: every dictionary beside
// packlab's model, the findings and the advice (usecase.Inspect), and
// keeps the inspection in the history as a job (View.JobID). An error
// names the form's field ("url", "cluster", "ca_file") or "clickhouse".
// CancelInspect stops it.
func (l *Lab) InspectClickHouse(f ClickHouseForm) (ClickHouseView, error) {
	s, err := f.settings()
	if err != nil {
		return ClickHouseView{}, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l.inspectMu.Lock()
	if l.inspectStop == nil {
		l.inspectStop = map[int]context.CancelFunc{}
	}
	l.inspectSeq++
	id := l.inspectSeq
	l.inspectStop[id] = cancel
	l.inspectMu.Unlock()
	defer func() {
		l.inspectMu.Lock()
		delete(l.inspectStop, id)
		l.inspectMu.Unlock()
	}()
	// The client does not give up a handshake on its context's cancel (a
	// server that accepts and never answers holds it to the timeouts): the
	// inspection runs aside, and Cancel answers at once; it ends on its own.
	type answer struct {
		got usecase.Inspected
		err error
	}
	// The inspection is kept in the history as a job (usecase.Inspect) once
	// it is done, unless cancelled first.
	done := make(chan answer, 1)
	go func() {
		got, err := usecase.Inspect(ctx, usecase.InspectAsk{Settings: s, Options: server.Options{Cluster: strings.TrimSpace(f.Cluster), NoSample: f.NoSample},
			Store: l.store, Face: result.FaceDesktop, Verify: strings.TrimSpace(f.Verify), VerifyAll: f.VerifyAll})
		done <- answer{got, err}
	}()
	var got usecase.Inspected
	select {
	case a := <-done:
		got, err = a.got, a.err
	case <-ctx.Done():
	}
	if ctx.Err() != nil {
		return ClickHouseView{}, &Error{Field: "clickhouse", Message: "the inspection was cancelled"}
	}
	if err != nil && got.Inspection == nil {
		return ClickHouseView{}, clickHouseError(err)
	}
	v := inspectionView(got.Inspection)
	if got.Saved {
		v.JobID, v.JobName = got.Job.ID, got.Job.Name
	} else if err != nil {
		v.SaveProblem = err.Error() // inspected, not kept: shown, not lost
	}
	if got.VerifyErr != nil && !slices.ContainsFunc(got.Inspection.Dictionaries, func(d server.Dictionary) bool { return d.VerifyProblem != "" }) {
		v.VerifyProblem = clickHouseError(got.VerifyErr).Message // not a dictionary's own (its advice box says those)
	}
	return v, nil
}

// CancelInspect stops every inspection in progress: each returns the
// clickhouse field's error "the inspection was cancelled".
func (l *Lab) CancelInspect() {
	l.inspectMu.Lock()
	defer l.inspectMu.Unlock()
	for _, stop := range l.inspectStop {
		stop()
	}
}

func clickHouseError(err error) *Error {
	var fe *fault.FieldError
	if errors.As(err, &fe) {
		field := map[string]string{"url": "url", "user": "user", "database": "database", "cluster": "cluster", "ca_file": "ca_file"}[fe.Field]
		if field == "" {
			field = "clickhouse"
		}
		return &Error{Field: field, Message: fieldMessage(fe)}
	}
	return &Error{Field: "clickhouse", Message: fault.Render(err, formName)}
}
