/* store_schema: the history's schema, as the SQL steps that migrate it forward one version at
 * a time (docs/history.md). */
#include "store.h"
#include "store_priv.h"

#include <stddef.h>

/* Migration v-1 -> v is migrations[v - 1]. Never edit a shipped step: add a new one. */
static const char *const migrations[STORE_SCHEMA_VERSION] = {
    /* v1: runs and what they measured */
    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY,"
    " test TEXT NOT NULL,"
    " udp INTEGER NOT NULL DEFAULT 0,"
    " role TEXT NOT NULL DEFAULT 'client' CHECK (role IN ('client', 'server')),"
    " title TEXT NOT NULL DEFAULT '',"
    " started_at TEXT NOT NULL,"
    " saved_at TEXT NOT NULL,"
    " peer TEXT NOT NULL DEFAULT '',"
    " client_version TEXT NOT NULL DEFAULT '',"
    " server_version TEXT NOT NULL DEFAULT '',"
    " partial INTEGER NOT NULL DEFAULT 0,"
    " error TEXT NOT NULL DEFAULT '',"
    " params TEXT NOT NULL,"
    " document TEXT NOT NULL);"
    "CREATE INDEX runs_started ON runs(started_at);"
    "CREATE TABLE metrics ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " name TEXT NOT NULL, value REAL NOT NULL, PRIMARY KEY (run_id, name)) WITHOUT ROWID;"
    "CREATE TABLE flows ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " flow INTEGER NOT NULL, direction TEXT NOT NULL,"
    " bytes INTEGER NOT NULL, sender_bytes INTEGER NOT NULL,"
    " throughput_bps REAL NOT NULL, sender_throughput_bps REAL NOT NULL,"
    " retransmits INTEGER, rtt_us INTEGER, min_rtt_us INTEGER, cwnd INTEGER, snd_wnd INTEGER,"
    " delivery_rate_bps REAL, busy_us INTEGER, rwnd_limited_us INTEGER,"
    " sndbuf_limited_us INTEGER, client_cpu INTEGER, server_cpu INTEGER,"
    " transactions INTEGER, timeouts INTEGER, datagrams_sent INTEGER,"
    " datagrams_received INTEGER, datagrams_lost INTEGER, jitter_us REAL,"
    " PRIMARY KEY (run_id, flow)) WITHOUT ROWID;"
    "CREATE TABLE intervals ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " side TEXT NOT NULL CHECK (side IN ('client', 'server')), seq INTEGER NOT NULL,"
    " start_s REAL NOT NULL, end_s REAL NOT NULL, omitted INTEGER NOT NULL,"
    " sent_bytes INTEGER NOT NULL, received_bytes INTEGER NOT NULL,"
    " retransmits INTEGER NOT NULL, transactions INTEGER NOT NULL,"
    " latency_sum_ns INTEGER NOT NULL, cpu_busy_pct REAL,"
    " PRIMARY KEY (run_id, side, seq)) WITHOUT ROWID;"
    "CREATE TABLE interval_flows ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL, flow INTEGER NOT NULL, bytes INTEGER NOT NULL,"
    " retransmits INTEGER NOT NULL, rtt_us INTEGER NOT NULL, cwnd INTEGER NOT NULL,"
    " PRIMARY KEY (run_id, seq, flow)) WITHOUT ROWID;"
    "CREATE TABLE latency ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " lo_ns INTEGER NOT NULL, hi_ns INTEGER NOT NULL, count INTEGER NOT NULL,"
    " PRIMARY KEY (run_id, lo_ns)) WITHOUT ROWID;"
    "CREATE TABLE host ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, key)) WITHOUT ROWID;",

    /* v2: tags, and sweeps stored as one unit */
    "CREATE TABLE tags ("
    " name TEXT NOT NULL, run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " PRIMARY KEY (name, run_id)) WITHOUT ROWID;"
    "CREATE INDEX tags_run ON tags(run_id);"
    "CREATE TABLE sweeps ("
    " id INTEGER PRIMARY KEY, test TEXT NOT NULL, title TEXT NOT NULL DEFAULT '',"
    " created_at TEXT NOT NULL, finished_at TEXT,"
    " status TEXT NOT NULL CHECK (status IN ('running', 'interrupted', 'done')),"
    " definition TEXT NOT NULL, metric TEXT NOT NULL, repeat_max INTEGER NOT NULL,"
    " ci_level REAL NOT NULL, ci_pct REAL NOT NULL);"
    "CREATE TABLE sweep_points ("
    " id INTEGER PRIMARY KEY,"
    " sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, settings TEXT NOT NULL,"
    " status TEXT NOT NULL CHECK (status IN ('pending', 'done')),"
    " runs INTEGER NOT NULL DEFAULT 0, mean REAL, ci_half REAL,"
    " UNIQUE (sweep_id, idx));"
    "ALTER TABLE runs ADD COLUMN sweep_point_id INTEGER"
    " REFERENCES sweep_points(id) ON DELETE SET NULL;"
    "CREATE INDEX runs_point ON runs(sweep_point_id);",

    /* v3: mesh plans stored as one unit; each cell's run is an ordinary run */
    "CREATE TABLE meshes ("
    " id INTEGER PRIMARY KEY, plan TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT,"
    " status TEXT NOT NULL CHECK (status IN ('running', 'interrupted', 'done')),"
    " parallel INTEGER NOT NULL DEFAULT 0, hosts TEXT NOT NULL, tests TEXT NOT NULL);"
    "CREATE TABLE mesh_cells ("
    " mesh_id INTEGER NOT NULL REFERENCES meshes(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, test_idx INTEGER NOT NULL, src INTEGER NOT NULL,"
    " dst INTEGER NOT NULL, test TEXT NOT NULL, source TEXT NOT NULL,"
    " destination TEXT NOT NULL,"
    " status TEXT NOT NULL CHECK (status IN ('pending', 'complete', 'partial', 'failed')),"
    " error TEXT NOT NULL DEFAULT '',"
    " run_id INTEGER UNIQUE REFERENCES runs(id) ON DELETE SET NULL,"
    " PRIMARY KEY (mesh_id, idx)) WITHOUT ROWID;",

    /* v4: a host snapshot per side of a run (client, server), and whether each side's was
     * recorded and if not why. The old host rows are the run's own side: the client's, or the
     * server's for a run a daemon served. */
    "CREATE TABLE host_v4 ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " side TEXT NOT NULL CHECK (side IN ('client', 'server')),"
    " key TEXT NOT NULL, value TEXT NOT NULL,"
    " PRIMARY KEY (run_id, side, key)) WITHOUT ROWID;"
    "INSERT INTO host_v4 SELECT h.run_id,"
    " CASE r.role WHEN 'server' THEN 'server' ELSE 'client' END, h.key, h.value"
    " FROM host h JOIN runs r ON r.id = h.run_id;"
    "DROP TABLE host;"
    "ALTER TABLE host_v4 RENAME TO host;"
    "CREATE TABLE host_sides ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " side TEXT NOT NULL CHECK (side IN ('client', 'server')),"
    " recorded INTEGER NOT NULL, note TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY (run_id, side)) WITHOUT ROWID;"
    "INSERT INTO host_sides SELECT r.id, s.side,"
    " EXISTS (SELECT 1 FROM host h WHERE h.run_id = r.id AND h.side = s.side),"
    " CASE WHEN EXISTS (SELECT 1 FROM host h WHERE h.run_id = r.id AND h.side = s.side) THEN ''"
    " WHEN EXISTS (SELECT 1 FROM mesh_cells c WHERE c.run_id = r.id)"
    " THEN 'a mesh cell: the test ran between two other hosts, which sent no settings'"
    " WHEN r.role = 'server' AND s.side = 'client'"
    " THEN 'a run this host''s daemon served: only the server''s settings are kept'"
    " WHEN s.side = 'server'"
    " THEN 'saved by a netrig that recorded only the client''s settings'"
    " ELSE 'no snapshot was stored with this run' END"
    " FROM runs r, (SELECT 'client' AS side UNION ALL SELECT 'server') s;",

    /* v5: run groups — the runs of one command that measured several targets at once
     * (-c A -c B: one run per target) or through another host (--from A: its one run) — with
     * every target's outcome, so a target that failed to run is still named. */
    "CREATE TABLE run_groups ("
    " id INTEGER PRIMARY KEY,"
    " kind TEXT NOT NULL CHECK (kind IN ('multi', 'third_party')),"
    " test TEXT NOT NULL, started_at TEXT NOT NULL,"
    " source TEXT NOT NULL DEFAULT '',"
    " targets TEXT NOT NULL, summary TEXT NOT NULL DEFAULT '{}');"
    "ALTER TABLE runs ADD COLUMN group_id INTEGER REFERENCES run_groups(id) ON DELETE SET NULL;"
    "ALTER TABLE runs ADD COLUMN group_idx INTEGER;"
    "CREATE INDEX runs_group ON runs(group_id);",

    /* v6: time series (--sample): each side's flows at every tick, with the series' period (a
     * load run's parts — its up and down tests, its TCP probe — each a series of its own);
     * and the latency probes of 'netrig load', one row per probe. */
    "CREATE TABLE sample_series ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " part TEXT NOT NULL DEFAULT '',"
    " side TEXT NOT NULL CHECK (side IN ('client', 'server')),"
    " period_us INTEGER NOT NULL, asked_us INTEGER NOT NULL, thinned INTEGER NOT NULL,"
    " origin_us INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (run_id, part, side)) WITHOUT ROWID;"
    "CREATE TABLE samples ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " part TEXT NOT NULL DEFAULT '',"
    " side TEXT NOT NULL CHECK (side IN ('client', 'server')),"
    " flow INTEGER NOT NULL, seq INTEGER NOT NULL, t_us INTEGER NOT NULL,"
    " bytes INTEGER NOT NULL, cwnd INTEGER, rtt_us INTEGER, retransmits INTEGER, mss INTEGER,"
    " delivery_rate_bps INTEGER, pacing_rate_bps INTEGER, busy_us INTEGER,"
    " rwnd_limited_us INTEGER, sndbuf_limited_us INTEGER,"
    " PRIMARY KEY (run_id, part, side, flow, seq)) WITHOUT ROWID;"
    "CREATE TABLE probes ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " probe TEXT NOT NULL CHECK (probe IN ('udp', 'tcp')), seq INTEGER NOT NULL,"
    " t_us INTEGER NOT NULL, latency_us REAL,"
    " PRIMARY KEY (run_id, probe, seq)) WITHOUT ROWID;",

    /* v7: what netrig tune --apply changed, where and when (its journal, summarized), so a
     * comparison of a run before and one after names the change between them. */
    "CREATE TABLE tune_journals ("
    " id INTEGER PRIMARY KEY, applied_at TEXT NOT NULL, journal TEXT NOT NULL,"
    " host TEXT NOT NULL DEFAULT '', machine_id TEXT NOT NULL DEFAULT '',"
    " netns_inode INTEGER NOT NULL DEFAULT 0, netns_name TEXT NOT NULL DEFAULT '',"
    " target TEXT NOT NULL DEFAULT '', changes TEXT NOT NULL);"
    "CREATE INDEX tune_journals_at ON tune_journals(applied_at);",

    /* v8: the probes' names beyond udp and tcp: load --icmp's echo probe and load --classes'
     * marked UDP probes (udp is best effort's). SQLite cannot change a CHECK: the table is
     * made anew and its rows copied. */
    "CREATE TABLE probes_v8 ("
    " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " probe TEXT NOT NULL CHECK (probe IN ('udp', 'tcp', 'icmp', 'udp_bk', 'udp_cs5',"
    " 'udp_ef')), seq INTEGER NOT NULL,"
    " t_us INTEGER NOT NULL, latency_us REAL,"
    " PRIMARY KEY (run_id, probe, seq)) WITHOUT ROWID;"
    "INSERT INTO probes_v8 SELECT run_id, probe, seq, t_us, latency_us FROM probes;"
    "DROP TABLE probes;"
    "ALTER TABLE probes_v8 RENAME TO probes;",
};

const char *store_migration_sql(int v)
{
    return v >= 1 && v <= STORE_SCHEMA_VERSION ? migrations[v - 1] : NULL;
}
