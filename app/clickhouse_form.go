package app

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
	// Verify names a dictionary (database.name) whose advice is then built
	// on the server and measured there; "" for none.
	Verify    string `json:"verify"`
	VerifyAll bool   `json:"verify_all"` // every advice that changes a layout
	// Seconds as typed; "" is the default (server.DefaultConnectTimeout,
	// server.DefaultQueryTimeout).
	ConnectTimeout string `json:"connect_timeout"`
	QueryTimeout   string `json:"query_timeout"`
}
