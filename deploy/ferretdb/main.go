// Command ferretdb runs FerretDB v1 with its SQLite or PostgreSQL backend as a local MongoDB-protocol server.
//
// `go install github.com/FerretDB/FerretDB/cmd/ferretdb` panics on a version file the module does
// not ship, so local development and CI build this small main against the embeddable package.
package main

import (
	"context"
	"flag"
	"log"
	"log/slog"
	"net/http"
	_ "net/http/pprof" // served only on -debug-addr
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	sqliteDir := flag.String("sqlite-dir", "data/", "directory that holds one SQLite file per database")
	postgresURL := flag.String("postgresql-url", "", "use the PostgreSQL backend at this URL instead of SQLite")
	// WAL with synchronous=NORMAL (SQLite's own recommendation for WAL) skips the fsync on every
	// commit: a commit survives the crash or kill -9 of any process, and only an OS crash or power
	// loss can lose the last ones. FULL makes every commit wait for the disk (about 10 ms here).
	synchronous := flag.String("sqlite-synchronous", "normal", "SQLite synchronous pragma: off, normal, full or extra")
	ginMirror := flag.Duration("postgresql-gin-mirror-interval", time.Second, "with PostgreSQL: how often to add GIN indexes that FerretDB's queries can use (gin_mirror.go); 0 disables")
	// Go's profiles of this process (CPU, goroutines blocked, execution trace), for finding where a
	// slow command waits; off unless asked for (docs/performance.md, "The slow calls of the pages
	// that read several buckets at once").
	debugAddr := flag.String("debug-addr", os.Getenv("FERRETDB_DEBUG_ADDR"), "serve net/http/pprof on this address (default $FERRETDB_DEBUG_ADDR; empty: off)")
	flag.Parse()

	config := &ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: *listen},
		// FerretDB logs every refused write at WARN; unique-index refusals are routine here.
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		Handler: "sqlite",
		// The SQLite backend wants a directory URI that ends with a slash.
		SQLiteURL: "file:" + *sqliteDir + "?_pragma=synchronous(" + *synchronous + ")",
	}
	if *postgresURL != "" {
		config.Handler = "postgresql"
		config.PostgreSQLURL = *postgresURL
		config.SQLiteURL = ""
	}

	server, err := ferretdb.New(config)
	if err != nil {
		log.Fatalf("ferretdb: %v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	if *postgresURL != "" && *ginMirror > 0 {
		go mirrorIndexes(ctx, *postgresURL, *ginMirror)
	}

	if *debugAddr != "" {
		go func() {
			if err := http.ListenAndServe(*debugAddr, nil); err != nil {
				log.Printf("ferretdb: debug address: %v", err)
			}
		}()
	}

	log.Printf("ferretdb listening on %s", *listen)
	if err := server.Run(ctx); err != nil {
		log.Fatalf("ferretdb: %v", err)
	}
}
