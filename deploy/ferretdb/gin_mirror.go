package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
)

// FerretDB v1 (measured on 1.24.2) pushes an equality filter down to PostgreSQL as
// `_jsonb->'field' @> value`, but creates its indexes as btree indexes on `(_jsonb -> 'field')`,
// which cannot serve `@>`: every find, `_id` included, scans the whole table. A GIN index on the
// same expression does serve it (a 50,000-row `_id` lookup went from 37 ms to 0.08 ms).
//
// mirrorIndexes therefore keeps, for every field of every btree index FerretDB created, a GIN
// index on that field's expression. It polls the catalog, so a collection or index created
// through the MongoDB protocol is covered within `interval`. FerretDB keeps its own index list in
// its metadata, so clients never see these indexes.
func mirrorIndexes(ctx context.Context, url string, interval time.Duration) {
	for {
		if err := mirrorOnce(ctx, url); err != nil && ctx.Err() == nil {
			log.Printf("gin mirror: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

var indexedField = regexp.MustCompile(`\(_jsonb -> '([^']+)'::text\)`)

func mirrorOnce(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())

	rows, err := conn.Query(ctx, `
		SELECT n.nspname, t.relname, am.amname, pg_get_indexdef(i.oid), i.relname
		FROM pg_index x
		JOIN pg_class i ON i.oid = x.indexrelid
		JOIN pg_class t ON t.oid = x.indrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		JOIN pg_am am ON am.oid = i.relam
		WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'`)
	if err != nil {
		return err
	}
	type table struct{ schema, name string }
	fields := map[table]map[string]bool{}
	existing := map[string]bool{}
	for rows.Next() {
		var schema, tableName, method, definition, indexName string
		if err := rows.Scan(&schema, &tableName, &method, &definition, &indexName); err != nil {
			return err
		}
		existing[schema+"."+indexName] = true
		if method != "btree" {
			continue
		}
		key := table{schema, tableName}
		for _, match := range indexedField.FindAllStringSubmatch(definition, -1) {
			if fields[key] == nil {
				fields[key] = map[string]bool{}
			}
			fields[key][match[1]] = true
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}

	for key, names := range fields {
		for field := range names {
			name := ginIndexName(key.name, field)
			if existing[key.schema+"."+name] {
				continue
			}
			statement := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s USING gin ((_jsonb -> %s))`,
				pgx.Identifier{name}.Sanitize(), pgx.Identifier{key.schema, key.name}.Sanitize(), quoteLiteral(field))
			if _, err := conn.Exec(ctx, statement); err != nil {
				return fmt.Errorf("%s: %w", statement, err)
			}
		}
	}
	return nil
}

// A name within PostgreSQL's 63 bytes, unique per table and field.
func ginIndexName(tableName, field string) string {
	sum := sha256.Sum256([]byte(tableName + "\x00" + field))
	prefix := tableName
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	return prefix + "_" + hex.EncodeToString(sum[:6]) + "_gin"
}

func quoteLiteral(value string) string {
	quoted := "'"
	for _, r := range value {
		if r == '\'' {
			quoted += "''"
		} else {
			quoted += string(r)
		}
	}
	return quoted + "'"
}
