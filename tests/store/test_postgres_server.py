"""The test PostgreSQL really runs and has pgvector with cosine ordering (HNSW included)."""

from __future__ import annotations

import psycopg


def test_fresh_database_has_pgvector_and_orders_by_cosine(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE v (id int PRIMARY KEY, e vector(3))")
        conn.execute("INSERT INTO v VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[1,1,0]')")
        conn.execute("CREATE INDEX ON v USING hnsw (e vector_cosine_ops)")
        rows = conn.execute("SELECT id FROM v ORDER BY e <=> '[1,0.1,0]' LIMIT 3").fetchall()
    assert [r[0] for r in rows] == [1, 3, 2]


def test_each_test_gets_its_own_database(postgres_url: str, postgres_server: object) -> None:
    with psycopg.connect(postgres_url) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
    assert tables == (0,)
