-- The role Tacho serves as on PostgreSQL: it reads and writes every table it needs, but may
-- only insert into and read the audit trail. Run as the role that owns the database and runs
-- the migrations (`tacho migrate`), after each migration; see docs/operations.md.
--
--   psql "postgres://app_owner@db/tacho" -f docs/postgres/app-role.sql
--
-- The app role needs no password here when the server trusts local connections; otherwise
-- give it one: ALTER ROLE app_service PASSWORD '...';
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'app_service') THEN
    CREATE ROLE app_service LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
  END IF;
END $$;
GRANT USAGE ON SCHEMA public TO app_service;
REVOKE CREATE ON SCHEMA public FROM app_service;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO app_service;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO app_service;
-- The audit trail: append and read, nothing else. Its triggers refuse UPDATE, DELETE and
-- TRUNCATE for every role; only the owner could drop them, and app_service is not the owner.
REVOKE ALL ON audit_events FROM app_service;
GRANT SELECT, INSERT ON audit_events TO app_service;
-- The migrations' own bookkeeping: read, so that `tacho serve` sees the schema is current.
REVOKE ALL ON seaql_migrations FROM app_service;
GRANT SELECT ON seaql_migrations TO app_service;
