package app

// A stand-in for experiments' results store until it lands: one JSON file
// per result in a folder, written atomically. The app only uses Save,
// List, Load and Delete.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/packlab/packlab/experiments"
)

type resultStore struct{ dir string }

func defaultResultsDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "packlab", "results"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share", "packlab", "results"), nil
}

func openStore(dir string) (*resultStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &resultStore{dir: dir}, nil
}

func (s *resultStore) path(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return "", fmt.Errorf("%q is not a result id", id)
	}
	return filepath.Join(s.dir, id+".json"), nil
}

func (s *resultStore) Save(r experiments.Result) error {
	p, err := s.path(r.ID)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(p, append(b, '\n'))
}

func (s *resultStore) Load(id string) (experiments.Result, error) {
	p, err := s.path(id)
	if err != nil {
		return experiments.Result{}, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return experiments.Result{}, fmt.Errorf("no such result in %s", s.dir)
	}
	if err != nil {
		return experiments.Result{}, err
	}
	var r experiments.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %v", p, err)
	}
	return r, nil
}

// List returns every result, oldest first (ids sort by time).
func (s *resultStore) List() ([]experiments.Result, error) {
	m, err := filepath.Glob(filepath.Join(s.dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(m)
	var out []experiments.Result
	for _, p := range m {
		r, err := s.Load(strings.TrimSuffix(filepath.Base(p), ".json"))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (s *resultStore) Delete(id string) error {
	p, err := s.path(id)
	if err != nil {
		return err
	}
	return os.Remove(p)
}
