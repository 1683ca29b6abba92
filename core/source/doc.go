// Package source is where a load's keys come from: a generator (the lab's
// --keys: sequential, random, range:M, zipf:S) or a TSV or CSV file (its
// --source), opened as a core.Source that core's Load and Read consume in
// blocks. It imports core; core does not import it.
//
//   - Spec describes a source, Parse reads the short form users type
//     ("random", "range:1M", "zipf:1.1", a path, "file:PATH"), and Open,
//     OpenContext and FromFile open it for a key and a value type.
//   - A generator's row i is a pure function of (Seed, i): it keeps no rows,
//     only the next row number (and zipf's 10 KiB of tables), and is a
//     core.IndexedSource, so the read phase looks rows up in any order
//     without holding them (synth.go).
//   - A file is read as ClickHouse writes FORMAT TSV, TSVWithNames, CSV and
//     CSVWithNames, gzip-compressed or not (recognised by its magic bytes),
//     in constant memory: a 256 KiB read buffer, the current record and the
//     longest line seen, at most 16 MiB. A bad row's error names the file,
//     the line, the column and the value (file.go). With Spec.Columns it is
//     a core.CellSource.
//   - ParseValue and FormatValue turn ClickHouse's text of a value of any
//     core.Type into its bits (lo, hi) and back (value.go).
//   - OpenFile opens a file so that a cancel ends the wait for a stream (a
//     pipe, a FIFO, /dev/stdin), which IsStream recognises (open.go).
package source
