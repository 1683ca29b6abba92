// Package store is where results live: the results folder, one JSON file
// per measured result, written whole or not at all (Store), the jobs they
// group into (Jobs), and the files a user asks the lab to write, a report
// or an export (CreateOutput), by rules that an odd folder cannot turn into
// a hang or the loss of a system file. It sits above the engine
// (experiments), whose Result and Job it keeps; the faces and the planner's
// history read it.
package store
